//! First-version command splitting: a compound command is cut into simple commands at
//! `|`, `;`, `&&`, `||`, `&` and newlines outside quotes. Anything it cannot split with
//! certainty (substitutions, unbalanced quotes) is reported as opaque, so the caller rates it
//! `ask`. The full shell-grammar analysis (§5.2) replaces this module.

/// A simple command found in a compound command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Words after dequoting, joined by single spaces.
    pub text: String,
    /// The first word (the program), dequoted.
    pub program: String,
}

/// The result of analysing one command line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Analysis {
    pub commands: Vec<SimpleCommand>,
    /// Why parts of the command could not be rated (at least `ask`).
    pub opaque: Vec<String>,
}

/// Splits `command` into simple commands.
pub fn analyze(command: &str) -> Analysis {
    let mut analysis = Analysis::default();
    let mut current = String::new();
    let mut chars = command.chars().peekable();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        match c {
            '\\' if !single => {
                current.push(c);
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            '\'' if !double => {
                single = !single;
                current.push(c);
            }
            '"' if !single => {
                double = !double;
                current.push(c);
            }
            '$' | '`' if !single && matches!(chars.peek(), Some('(')) || c == '`' && !single => {
                analysis
                    .opaque
                    .push("command substitution is not analysed".into());
                current.push(c);
            }
            '<' | '>' if !single && !double && matches!(chars.peek(), Some('(')) => {
                analysis
                    .opaque
                    .push("process substitution is not analysed".into());
                current.push(c);
            }
            '|' | ';' | '&' | '\n' if !single && !double => {
                let redirect_amp = c == '&'
                    && (current.ends_with('>') || current.ends_with('<') || chars.peek() == Some(&'>'));
                if redirect_amp {
                    current.push(c);
                    continue;
                }
                if matches!((c, chars.peek()), ('|', Some('|')) | ('&', Some('&')) | (';', Some(';'))) {
                    chars.next();
                }
                push_command(&mut analysis, &current);
                current.clear();
            }
            _ => current.push(c),
        }
    }
    if single || double {
        analysis.opaque.push("unbalanced quotes".into());
    }
    push_command(&mut analysis, &current);
    analysis
}

fn push_command(analysis: &mut Analysis, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    match shell_words::split(text) {
        Ok(words) if !words.is_empty() => analysis.commands.push(SimpleCommand {
            program: words[0].clone(),
            text: words.join(" "),
        }),
        Ok(_) => {}
        Err(_) => analysis.opaque.push(format!("cannot parse `{}`", text.trim())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(command: &str) -> Vec<String> {
        analyze(command).commands.into_iter().map(|c| c.text).collect()
    }

    #[test]
    fn splits_outside_quotes() {
        assert_eq!(texts("git status && rm -rf build"), vec!["git status", "rm -rf build"]);
        assert_eq!(texts("ls\nrm x"), vec!["ls", "rm x"]);
        assert_eq!(texts("ls&curl x"), vec!["ls", "curl x"]);
        assert_eq!(texts("grep -E \"foo|bar\" f"), vec!["grep -E foo|bar f"]);
        assert_eq!(texts("pytest -q 2>&1"), vec!["pytest -q 2>&1"]);
        assert_eq!(texts("ls &>/dev/null"), vec!["ls &>/dev/null"]);
        assert_eq!(texts("r''m -rf build"), vec!["rm -rf build"]);
    }

    #[test]
    fn substitutions_are_opaque() {
        assert!(!analyze("ls $(rm x)").opaque.is_empty());
        assert!(!analyze("ls `rm x`").opaque.is_empty());
        assert!(analyze("cat '$(rm x)'").opaque.is_empty());
    }
}
