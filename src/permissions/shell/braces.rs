//! Bash brace expansion (`{a,b}`, `{1..3}`, `{a..c}`, nested) of a word's text, so the paths a
//! word with braces names can be checked like any static path: `cat ~/.ssh/{id_rsa,x}` names
//! `~/.ssh/id_rsa`.
//!
//! The expansion runs on quote-removed text, so a quoted brace is expanded too: that only adds
//! candidate paths (a stricter verdict), never hides one. More than [`MAX_EXPANSIONS`] results
//! give `None`, and the caller treats the word as unknown.

/// Most words one brace word may expand to before the checker gives up on listing them.
pub(crate) const MAX_EXPANSIONS: usize = 256;

/// Every word `text` expands to, in bash's order; `None` past [`MAX_EXPANSIONS`].
pub(crate) fn expand(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    expand_into(text, &mut out)?;
    Some(out)
}

fn expand_into(text: &str, out: &mut Vec<String>) -> Option<()> {
    let Some((start, end, options)) = first_group(text) else {
        if out.len() >= MAX_EXPANSIONS {
            return None;
        }
        out.push(text.to_string());
        return Some(());
    };
    let (prefix, suffix) = (&text[..start], &text[end + 1..]);
    for option in options {
        expand_into(&format!("{prefix}{option}{suffix}"), out)?;
    }
    Some(())
}

/// The first `{...}` that expands: its byte range and its options.
fn first_group(text: &str) -> Option<(usize, usize, Vec<String>)> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(offset) = text[from..].find('{') {
        let start = from + offset;
        let mut depth = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for (i, &b) in bytes.iter().enumerate().skip(start) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                b',' if depth == 1 => commas.push(i),
                _ => {}
            }
        }
        let end = close?;
        let inner = &text[start + 1..end];
        if !commas.is_empty() {
            let mut options = Vec::new();
            let mut piece = start + 1;
            for comma in commas {
                options.push(text[piece..comma].to_string());
                piece = comma + 1;
            }
            options.push(text[piece..end].to_string());
            return Some((start, end, options));
        }
        if let Some(options) = sequence(inner) {
            return Some((start, end, options));
        }
        from = start + 1;
    }
    None
}

/// `1..3`, `3..1`, `1..9..2`, `a..e`: the items, at most [`MAX_EXPANSIONS`] + 1.
fn sequence(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    let (from, to, step) = match parts.as_slice() {
        [from, to] => (*from, *to, 1i64),
        [from, to, step] => (*from, *to, step.parse::<i64>().ok()?.abs().max(1)),
        _ => return None,
    };
    let items: Vec<String> = if let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) {
        let up = a <= b;
        std::iter::successors(Some(a), |&n| {
            let next = if up { n + step } else { n - step };
            (if up { next <= b } else { next >= b }).then_some(next)
        })
        .take(MAX_EXPANSIONS + 1)
        .map(|n| n.to_string())
        .collect()
    } else {
        let (a, b) = (single_char(from)?, single_char(to)?);
        let (lo, hi) = (a.min(b) as u32, a.max(b) as u32);
        let mut chars: Vec<String> = (lo..=hi)
            .step_by(usize::try_from(step).unwrap_or(1))
            .filter_map(char::from_u32)
            .take(MAX_EXPANSIONS + 1)
            .map(String::from)
            .collect();
        if a > b {
            chars.reverse();
        }
        chars
    };
    Some(items)
}

fn single_char(text: &str) -> Option<char> {
    let mut chars = text.chars();
    let c = chars.next()?;
    (chars.next().is_none() && c.is_ascii_alphabetic()).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(text: &str) -> Vec<String> {
        expand(text).unwrap_or_default()
    }

    #[test]
    fn lists_sequences_and_nesting() {
        assert_eq!(ex("~/.ssh/{id_rsa,x}"), ["~/.ssh/id_rsa", "~/.ssh/x"]);
        assert_eq!(ex("~/.ssh/id_rsa{,}"), ["~/.ssh/id_rsa", "~/.ssh/id_rsa"]);
        assert_eq!(ex("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
        assert_eq!(ex("f{1..3}"), ["f1", "f2", "f3"]);
        assert_eq!(ex("f{3..1}"), ["f3", "f2", "f1"]);
        assert_eq!(ex("{a..c}"), ["a", "b", "c"]);
        assert_eq!(ex("{x,y}/{1,2}"), ["x/1", "x/2", "y/1", "y/2"]);
    }

    #[test]
    fn leaves_what_bash_leaves() {
        assert_eq!(ex("{}"), ["{}"]);
        assert_eq!(ex("{a}"), ["{a}"]);
        assert_eq!(ex("x{a"), ["x{a"]);
        assert_eq!(ex("{a}{b,c}"), ["{a}b", "{a}c"]);
    }

    #[test]
    fn gives_up_past_the_limit() {
        assert_eq!(expand("{1..100000}"), None);
        assert_eq!(
            expand("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"),
            None
        );
    }
}
