//! What `printf` and `echo -e` print, rendered statically, so a printer whose output feeds
//! another command (`cat $(printf '%s/.ssh/id_rsa' ~)`, `echo -e '\x2eenv' | xargs cat`) is
//! checked for the paths its output names, not only for its literal arguments.
//!
//! Conversions (`%s`, `%d`, ...) take the arguments' text in order, and the format is reused
//! while arguments remain, as printf does; `%b` and `echo -e` decode backslash escapes
//! (`\n`, `\xHH`, `\0NNN`, `\uHHHH`). The output is split on whitespace. Rendering only adds
//! candidate paths: a word the real printf would print differently is also checked as written.

use super::shell::Word;

/// Most times the format is reused for leftover arguments.
const MAX_ROUNDS: usize = 64;

/// The whitespace-separated words `program` prints with `arguments` (words after the program),
/// for `printf` and `echo` with `-e`; empty for anything else.
pub(crate) fn printed_words(program: &str, arguments: &[Word]) -> Vec<String> {
    let texts: Vec<&str> = arguments.iter().map(|w| w.text.as_str()).collect();
    let output = match program {
        "printf" => printf(&texts),
        "echo" => echo(&texts),
        _ => String::new(),
    };
    output.split_whitespace().map(str::to_string).collect()
}

fn echo(arguments: &[&str]) -> String {
    let options = arguments
        .iter()
        .take_while(|a| {
            a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| "neE".contains(c))
        })
        .count();
    let escapes = arguments[..options].iter().any(|a| a.contains('e'));
    if !escapes {
        return String::new();
    }
    unescape(&arguments[options..].join(" "))
}

fn printf(arguments: &[&str]) -> String {
    let mut rest = arguments;
    if rest.first() == Some(&"--") {
        rest = &rest[1..];
    }
    let Some((format, mut args)) = rest.split_first() else {
        return String::new();
    };
    if format.starts_with("-v") {
        return String::new();
    }
    let mut out = String::new();
    for _ in 0..MAX_ROUNDS {
        let consumed = render(format, args, &mut out);
        args = &args[consumed.min(args.len())..];
        if consumed == 0 || args.is_empty() {
            break;
        }
    }
    out
}

/// Renders `format` once into `out`; returns how many arguments it took.
fn render(format: &str, args: &[&str], out: &mut String) -> usize {
    let mut taken = 0;
    let mut chars = format.chars().peekable();
    let mut literal = String::new();
    while let Some(c) = chars.next() {
        if c != '%' {
            literal.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            literal.push('%');
            continue;
        }
        while chars
            .next_if(|c| "-+ #0123456789.*'".contains(*c))
            .is_some()
        {}
        let conversion = chars.next();
        out.push_str(&unescape(&std::mem::take(&mut literal)));
        let arg = args.get(taken).copied().unwrap_or("");
        taken += 1;
        match conversion {
            Some('b') => out.push_str(&unescape(arg)),
            Some(_) => out.push_str(arg),
            None => {}
        }
    }
    out.push_str(&unescape(&literal));
    taken
}

/// Decodes printf/echo backslash escapes; an unknown escape stays as written.
fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(kind) = chars.next() else {
            out.push('\\');
            break;
        };
        let (radix, most) = match kind {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 3),
            'n' | 't' | 'r' | 'v' | 'f' => {
                out.push(' ');
                continue;
            }
            other => {
                out.push(other);
                continue;
            }
        };
        let mut digits = String::new();
        if kind != '0' && radix == 8 {
            digits.push(kind);
        }
        while digits.len() < most {
            match chars.next_if(|c| c.is_digit(radix)) {
                Some(d) => digits.push(d),
                None => break,
            }
        }
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(decoded) => out.push(decoded),
            None => out.push_str(&digits),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(program: &str, args: &[&str]) -> Vec<String> {
        let args: Vec<Word> = args.iter().map(|a| Word::literal(a)).collect();
        printed_words(program, &args)
    }

    #[test]
    fn renders_printf_formats_and_escapes() {
        assert_eq!(words("printf", &["%s/.ssh/id_rsa", "~"]), ["~/.ssh/id_rsa"]);
        assert_eq!(words("printf", &[".en%s", "v"]), [".env"]);
        assert_eq!(words("printf", &["%s\\n", "a", "b"]), ["a", "b"]);
        assert_eq!(words("printf", &["\\x2eenv"]), [".env"]);
        assert_eq!(words("printf", &["\\056env"]), [".env"]);
        assert_eq!(words("printf", &["%b", "\\0056env"]), [".env"]);
        assert_eq!(words("printf", &["100%%"]), ["100%"]);
        assert!(words("printf", &["-v", "x", "%s", ".env"]).is_empty());
    }

    #[test]
    fn renders_echo_only_with_escapes() {
        assert_eq!(
            words("echo", &["-e", "\\x7e/.ssh/id_rsa"]),
            ["~/.ssh/id_rsa"]
        );
        assert_eq!(words("echo", &["-ne", "a\\tb"]), ["a", "b"]);
        assert!(words("echo", &["\\x7e/.ssh/id_rsa"]).is_empty());
        assert!(words("cat", &["x"]).is_empty());
    }
}
