//! `sed` as a reader: prompt-free only when it cannot write or run anything.
//!
//! GNU sed writes files with `-i`/`--in-place`, the `w`/`W` commands and the `w` flag of `s`,
//! runs commands with `e` and the `e` flag of `s`, and reads arbitrary files with `r`/`R`.
//! The script is parsed just enough to find those; anything we do not recognise, a script
//! from a file (`-f`) or a script only known at run time is a floor (`ask`).

use super::Unclear;
use super::options::long_match;
use super::words::Word;

const LONG: &[(&str, &str)] = &[
    ("--in-place", "edits files in place"),
    ("--file", "reads its script from a file that is not checked"),
];

/// Why this sed invocation is at least `ask`, if it is.
pub(crate) fn hazard(args: &[Word]) -> Option<String> {
    let invocation = match parse_args(args) {
        Ok(invocation) => invocation,
        Err(reason) => return Some(reason.0),
    };
    let mut scripts = invocation.scripts;
    if !invocation.explicit {
        let first = invocation.operands.first()?;
        if first.dynamic {
            return Some("the sed script is only known at run time".into());
        }
        scripts.push(&first.text);
    }
    scripts.into_iter().find_map(script_hazard)
}

/// A sed command line split into scripts (`-e`, `--expression`) and operands.
struct Invocation<'a> {
    scripts: Vec<&'a str>,
    /// A script came from `-e`/`--expression`; otherwise it is the first operand.
    explicit: bool,
    operands: Vec<&'a Word>,
}

fn parse_args(args: &[Word]) -> Result<Invocation<'_>, Unclear> {
    let mut found = Invocation {
        scripts: Vec::new(),
        explicit: false,
        operands: Vec::new(),
    };
    let mut options_done = false;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        let text = word.text.as_str();
        if word.dynamic && word.may_be_option && !options_done {
            return Err(format!(
                "`{text}` is only known at run time and could be a sed option or script"
            )
            .into());
        }
        if options_done || !text.starts_with('-') || text == "-" {
            found.operands.push(word);
        } else if text == "--" {
            options_done = true;
        } else if let Some(long) = text.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            if let Some((option, what)) = long_match(LONG, name) {
                return Err(format!("`sed {option}` {what}").into());
            }
            if !name.is_empty() && "expression".starts_with(name) {
                found.explicit = true;
                let script = match value {
                    Some(v) => v,
                    None => next_script(args, &mut i)?,
                };
                found.scripts.push(script);
            }
        } else {
            match short_cluster(&text[1..]) {
                Cluster::Hazard(what) => return Err(Unclear(what)),
                Cluster::Script(script) => {
                    found.explicit = true;
                    let script = match script {
                        Some(s) => s,
                        None => next_script(args, &mut i)?,
                    };
                    found.scripts.push(script);
                }
                Cluster::Value => i += 1,
                Cluster::Flags => {}
            }
        }
    }
    Ok(found)
}

/// The script given as the word after `-e` / `--expression`.
fn next_script<'a>(args: &'a [Word], i: &mut usize) -> Result<&'a str, Unclear> {
    let next = args.get(*i).ok_or("`sed -e` without a script")?;
    *i += 1;
    if next.dynamic {
        return Err("the sed script is only known at run time".into());
    }
    Ok(&next.text)
}

enum Cluster<'a> {
    Hazard(String),
    /// `-e`: the script (attached, or `None` for the next word).
    Script(Option<&'a str>),
    /// An option whose value is the next word (`-l 80`).
    Value,
    Flags,
}

fn short_cluster(cluster: &str) -> Cluster<'_> {
    for (i, c) in cluster.char_indices() {
        let rest = &cluster[i + c.len_utf8()..];
        match c {
            'i' | 'I' => return Cluster::Hazard("`sed -i` edits files in place".into()),
            'f' => {
                return Cluster::Hazard(
                    "`sed -f` reads its script from a file that is not checked".into(),
                );
            }
            'e' => return Cluster::Script((!rest.is_empty()).then_some(rest)),
            'l' if rest.is_empty() => return Cluster::Value,
            'l' => return Cluster::Flags,
            'n' | 'r' | 'E' | 's' | 'u' | 'z' => {}
            other => {
                return Cluster::Hazard(format!("`sed -{other}` is not a known read-only option"));
            }
        }
    }
    Cluster::Flags
}

/// Why a sed script is at least `ask`, if it is.
pub(crate) fn script_hazard(script: &str) -> Option<String> {
    let chars: Vec<char> = script.chars().collect();
    let mut p = Parser { chars, pos: 0 };
    p.script().err().map(|reason| reason.0)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

type Step = Result<(), Unclear>;

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.pos += 1;
        c
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    fn script(&mut self) -> Step {
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';' | '{' | '}')) {
                self.pos += 1;
            }
            let Some(_) = self.peek() else {
                return Ok(());
            };
            self.address()?;
            self.skip_blanks();
            if self.peek() == Some(',') {
                self.pos += 1;
                self.skip_blanks();
                self.address()?;
            }
            self.skip_blanks();
            while self.peek() == Some('!') {
                self.pos += 1;
                self.skip_blanks();
            }
            self.command()?;
        }
    }

    fn address(&mut self) -> Step {
        match self.peek() {
            Some('0'..='9') => {
                while matches!(self.peek(), Some('0'..='9' | '~')) {
                    self.pos += 1;
                }
            }
            Some('+' | '~') => {
                self.pos += 1;
                while matches!(self.peek(), Some('0'..='9')) {
                    self.pos += 1;
                }
            }
            Some('$') => self.pos += 1,
            Some('/') => {
                self.pos += 1;
                self.delimited('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.pos += 1;
                let delimiter = self.next().ok_or_else(incomplete)?;
                self.delimited(delimiter)?;
                self.regex_flags();
            }
            _ => {}
        }
        Ok(())
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.pos += 1;
        }
    }

    /// Skips to the unescaped `delimiter` (consumed).
    fn delimited(&mut self, delimiter: char) -> Step {
        loop {
            match self.next() {
                None | Some('\n') => return Err(incomplete()),
                Some('\\') => {
                    self.next();
                }
                Some(c) if c == delimiter => return Ok(()),
                Some(_) => {}
            }
        }
    }

    fn command(&mut self) -> Step {
        let Some(c) = self.next() else {
            return Err(incomplete());
        };
        match c {
            '{' | '}' => Ok(()),
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {
                self.end()
            }
            'l' | 'q' | 'Q' | 'L' => {
                self.skip_blanks();
                while matches!(self.peek(), Some('0'..='9')) {
                    self.pos += 1;
                }
                self.end()
            }
            ':' | 'b' | 't' | 'T' | 'v' => {
                while !matches!(self.peek(), None | Some('\n' | ';' | '}')) {
                    self.pos += 1;
                }
                Ok(())
            }
            '#' | 'a' | 'i' | 'c' => {
                self.skip_line();
                Ok(())
            }
            's' => self.substitute(),
            'y' => {
                let delimiter = self.next().ok_or_else(incomplete)?;
                self.delimited(delimiter)?;
                self.delimited(delimiter)?;
                self.end()
            }
            'w' | 'W' => Err("the sed script writes a file (`w`)".into()),
            'e' => Err("the sed script runs a command (`e`)".into()),
            'r' | 'R' => Err("the sed script reads another file (`r`)".into()),
            other => Err(format!("the sed command `{other}` is not known to be read-only").into()),
        }
    }

    fn substitute(&mut self) -> Step {
        let delimiter = self.next().ok_or_else(incomplete)?;
        if delimiter == '\n' || delimiter == '\\' {
            return Err(incomplete());
        }
        self.delimited(delimiter)?;
        self.delimited(delimiter)?;
        while let Some(flag) = self.peek() {
            match flag {
                'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => self.pos += 1,
                'w' => return Err("the sed `s///w` flag writes a file".into()),
                'e' => return Err("the sed `s///e` flag runs the result as a command".into()),
                _ => break,
            }
        }
        self.end()
    }

    /// After a command: blanks, then the end of the script, a newline, `;`, `}` or `#`.
    fn end(&mut self) -> Step {
        self.skip_blanks();
        match self.peek() {
            None | Some('\n' | ';' | '}' | '#') => Ok(()),
            Some(other) => Err(format!("unexpected `{other}` in the sed script").into()),
        }
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.next() {
            if c == '\\' {
                self.next();
            } else if c == '\n' {
                break;
            }
        }
    }
}

fn incomplete() -> Unclear {
    Unclear("the sed script could not be checked".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(args: &[&str]) -> Option<String> {
        let words: Vec<Word> = args.iter().map(|a| Word::literal(a)).collect();
        hazard(&words)
    }

    #[test]
    fn readers_pass() {
        assert_eq!(rate(&["-n", "1,20p", "f"]), None);
        assert_eq!(rate(&["-n", "/foo/,/bar/p", "f"]), None);
        assert_eq!(rate(&["s/a/b/g", "f"]), None);
        assert_eq!(rate(&["-E", "s|x+|y|2", "f"]), None);
        assert_eq!(rate(&["-e", "1d", "-e", "$d", "f"]), None);
        assert_eq!(rate(&["-n", "$p;1p", "f"]), None);
        assert_eq!(rate(&["/^#/d; s/hello/world/", "f"]), None);
        assert_eq!(rate(&["10q", "f"]), None);
        assert_eq!(rate(&["-n", "/x/{p;q}", "f"]), None);
        assert_eq!(rate(&["y/abc/xyz/"]), None);
    }

    #[test]
    fn writers_and_runners_ask() {
        assert!(rate(&["-i", "s/a/b/", "f"]).is_some());
        assert!(rate(&["-ni", "p", "f"]).is_some());
        assert!(rate(&["--in-place=.bak", "s/a/b/", "f"]).is_some());
        assert!(rate(&["--in", "s/a/b/", "f"]).is_some());
        assert!(rate(&["-f", "script.sed", "f"]).is_some());
        assert!(rate(&["s/a/b/w out", "f"]).is_some());
        assert!(rate(&["s/a/b/e", "f"]).is_some());
        assert!(rate(&["1e rm -rf x", "f"]).is_some());
        assert!(rate(&["w out", "f"]).is_some());
        assert!(rate(&["r /etc/passwd", "f"]).is_some());
        assert!(rate(&["-n", "1p;w x", "f"]).is_some());
        assert!(rate(&["-e", "p", "-e", "W x"]).is_some());
        assert!(rate(&["s/a/b"]).is_some());
    }

    #[test]
    fn dynamic_scripts_ask() {
        let args = vec![Word::runtime("$script", true), Word::literal("f")];
        assert!(hazard(&args).is_some());
        let args = vec![
            Word::literal("-n"),
            Word::literal("1p"),
            Word::runtime("src/$f", false),
        ];
        assert_eq!(hazard(&args), None);
    }
}
