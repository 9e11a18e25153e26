//! Shell words after quote removal (§5.2 "words are unquoted before matching").
//!
//! A word is built from segments (unquoted text, quoted text, expansions) and then finished
//! into a [`Word`]: its dequoted text, whether bash only knows it at run time (variables,
//! substitutions, globs, brace expansion, `~user`), whether it could turn into an option or
//! several words at run time, and the file path it names when that is static.
//!
//! Invariant: nothing here guesses in the permissive direction. A segment whose value is not
//! certain makes the word dynamic; a dynamic word that could start with `-` says so.

/// One shell word as bash would pass it to a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// Quote-removed text; parts only known at run time appear as written (`$X`, `$(...)`).
    pub(crate) text: String,
    /// Some part is only known at run time.
    pub(crate) dynamic: bool,
    /// At run time the word could start with `-` or split into several words.
    pub(crate) may_be_option: bool,
    /// The word as a file path, when that is known without running anything.
    pub(crate) path: Option<PathArg>,
    /// The paths a word with brace expansion names (`~/.ssh/{id_rsa,x}`), otherwise static;
    /// empty for other words.
    pub(crate) alternatives: Vec<PathArg>,
    /// The word is a process substitution (`<(...)`, `>(...)`): a pipe, not a file.
    pub(crate) pipe: bool,
}

impl Word {
    /// A literal word (used for words we synthesise, such as xargs' default `echo`).
    pub(crate) fn literal(text: &str) -> Self {
        Self {
            text: text.to_string(),
            dynamic: false,
            may_be_option: false,
            path: Some(PathArg {
                root: None,
                text: text.to_string(),
                glob: false,
            }),
            alternatives: Vec::new(),
            pipe: false,
        }
    }

    /// Text a command prints or reads as data (xargs' known stdin, what `printf` renders),
    /// as the path it may name once the shell or a later command takes it as one: a leading
    /// `~` is home and a leading `$NAME` that variable, as in the shell that printed it.
    pub(crate) fn printed(text: &str) -> Self {
        let mut word = Self::literal(text);
        let glob = text.contains(['*', '?', '[']);
        if text == "~" || text.starts_with("~/") {
            word.path = Some(path_arg(text, text, Some("HOME".into()), true, glob));
        } else if let Some(rest) = text.strip_prefix('$') {
            let inner = rest.strip_prefix('{').unwrap_or(rest);
            let name: String = inner
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            word.path = (!name.is_empty()).then(|| path_arg(text, text, Some(name), false, glob));
        }
        word
    }

    /// A word only known at run time (file names from xargs' stdin, find's `{}`).
    pub(crate) fn runtime(text: &str, may_be_option: bool) -> Self {
        Self {
            text: text.to_string(),
            dynamic: true,
            may_be_option,
            path: None,
            alternatives: Vec::new(),
            pipe: false,
        }
    }

    /// Literal and an option (`-x`, `--long`, `--long=value`).
    pub(crate) fn is_option(&self) -> bool {
        self.text.starts_with('-') && self.text.len() > 1
    }
}

/// A statically known path argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathArg {
    /// The path starts at the value of this variable (`HOME` for `~/x` and `$HOME/x`,
    /// `AGENT_HOME` for `$AGENT_HOME/env`); `text` is the rest.
    pub(crate) root: Option<String>,
    /// The path (relative to `root` when set), or a glob pattern when `glob`.
    pub(crate) text: String,
    /// `text` is a glob pattern with quoted metacharacters escaped.
    pub(crate) glob: bool,
}

/// A piece of a word, in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// Literal text; `quoted` when it came from quotes or a backslash escape.
    Literal { text: String, quoted: bool },
    /// `$NAME` or `${NAME}`: only `HOME` is treated as known (the user's home directory);
    /// other values are only known at run time, but a path starting with one can still be
    /// checked when the engine knows the variable (`$AGENT_HOME/env`).
    Var {
        name: String,
        source: String,
        quoted: bool,
    },
    /// An expansion or substitution only known at run time.
    Dynamic { source: String, quoted: bool },
    /// A process substitution: a `/dev/fd/N` path, never an option.
    Pipe { source: String },
}

/// Builds a [`Word`] from segments.
#[derive(Debug, Default)]
pub(crate) struct WordBuilder {
    segments: Vec<Segment>,
}

impl WordBuilder {
    pub(crate) fn push(&mut self, segment: Segment) {
        self.segments.push(segment);
    }

    pub(crate) fn literal(&mut self, text: &str, quoted: bool) {
        if let Some(Segment::Literal {
            text: last,
            quoted: q,
        }) = self.segments.last_mut()
            && *q == quoted
        {
            last.push_str(text);
            return;
        }
        self.segments.push(Segment::Literal {
            text: text.to_string(),
            quoted,
        });
    }

    /// Adds unquoted word text, removing backslash escapes as bash does.
    pub(crate) fn unquoted(&mut self, raw: &str) {
        let mut chars = raw.chars();
        let mut plain = String::new();
        while let Some(c) = chars.next() {
            if c != '\\' {
                plain.push(c);
                continue;
            }
            match chars.next() {
                Some('\n') | None => {}
                Some(escaped) => {
                    self.literal(&plain, false);
                    plain.clear();
                    self.literal(&escaped.to_string(), true);
                }
            }
        }
        self.literal(&plain, false);
    }

    pub(crate) fn finish(self) -> Word {
        finish(&self.segments)
    }
}

fn finish(segments: &[Segment]) -> Word {
    let mut text = String::new();
    // Unquoted literal characters, with quoted ones replaced by a neutral placeholder, to
    // find globs, braces and a leading tilde the way bash sees them.
    let mut shape = String::new();
    let mut pattern = String::new();
    let mut dynamic = false;
    let mut splits = false;
    let mut root: Option<String> = None;
    for (index, segment) in segments.iter().enumerate() {
        match segment {
            Segment::Literal { text: t, quoted } => {
                text.push_str(t);
                if *quoted {
                    shape.extend(t.chars().map(|_| 'q'));
                    pattern.push_str(&glob::Pattern::escape(t));
                } else {
                    shape.push_str(t);
                    pattern.push_str(t);
                }
            }
            Segment::Var {
                name,
                source,
                quoted,
            } => {
                text.push_str(source);
                pattern.push_str(source);
                if index == 0 {
                    root = Some(name.clone());
                }
                dynamic |= index != 0 || name != "HOME";
                splits |= !quoted && name != "HOME";
                shape.push('q');
            }
            Segment::Dynamic { source, quoted } => {
                text.push_str(source);
                dynamic = true;
                splits |= !quoted;
                shape.push('q');
            }
            Segment::Pipe { source } => {
                text.push_str(source);
                dynamic = true;
                shape.push('q');
            }
        }
    }
    let glob = shape.contains(['*', '?', '[']);
    let brace = has_brace_expansion(&shape);
    let tilde = shape.starts_with('~');
    let tilde_home = shape == "~" || shape.starts_with("~/");
    // `~user/...`: another user's home; the engine knows a few (its own user, root).
    let tilde_user = tilde
        .then(|| shape[1..].split('/').next().unwrap_or(""))
        .filter(|user| {
            !user.is_empty()
                && user
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        });
    let first = segments
        .iter()
        .find(|s| !matches!(s, Segment::Literal { text, .. } if text.is_empty()));
    let first_dynamic = match first {
        Some(Segment::Dynamic { .. }) => true,
        Some(Segment::Var { name, .. }) => name != "HOME",
        _ => false,
    };
    let glob_first = glob && shape.find(['*', '?', '[']) == Some(0);
    let may_be_option =
        dynamic && (first_dynamic || splits) || glob_first || brace && shape.starts_with('{');
    let dynamic = dynamic || glob || brace || (tilde && !tilde_home);
    let static_path = !segments
        .iter()
        .any(|s| matches!(s, Segment::Dynamic { .. } | Segment::Pipe { .. }))
        && !brace
        && (!tilde || tilde_home || tilde_user.is_some())
        && !segments
            .iter()
            .skip(1)
            .any(|s| matches!(s, Segment::Var { .. }));
    let root = match (tilde_home, tilde_user) {
        (true, _) => Some("HOME".to_string()),
        (false, Some(user)) => Some(format!("~{user}")),
        _ => root,
    };
    let braced_static = brace
        && !segments
            .iter()
            .any(|s| matches!(s, Segment::Dynamic { .. } | Segment::Pipe { .. }))
        && !segments
            .iter()
            .skip(1)
            .any(|s| matches!(s, Segment::Var { .. }));
    let alternatives = if braced_static {
        brace_alternatives(&text, root.as_deref())
    } else {
        Vec::new()
    };
    let path = static_path.then(|| path_arg(&text, &pattern, root, tilde, glob));
    let pipe = matches!(segments, [Segment::Pipe { .. }]);
    Word {
        text,
        dynamic,
        may_be_option,
        path,
        alternatives,
        pipe,
    }
}

/// The paths of a brace word: each expansion as a path (a leading `~/` is home, as bash
/// expands the tilde after the braces; a leading `$NAME` is that variable). Past
/// [`super::braces::MAX_EXPANSIONS`] nothing is listed (the word stays unknown, as before).
fn brace_alternatives(text: &str, root: Option<&str>) -> Vec<PathArg> {
    let var_root = root.filter(|_| text.starts_with('$'));
    let expanded = super::braces::expand(text).unwrap_or_default();
    expanded
        .iter()
        .map(|alt| {
            let tilde_home = alt == "~" || alt.starts_with("~/");
            let root = if tilde_home {
                Some("HOME".to_string())
            } else {
                var_root.map(str::to_string)
            };
            let glob = alt.contains(['*', '?', '[']);
            path_arg(alt, alt, root, tilde_home, glob)
        })
        .collect()
}

/// The path of a static word: relative to a variable's value for `~/x` and `$NAME/x`.
fn path_arg(text: &str, pattern: &str, root: Option<String>, tilde: bool, glob: bool) -> PathArg {
    let source = if glob { pattern } else { text };
    let rest = match &root {
        Some(name) if tilde && name.starts_with('~') => {
            source.strip_prefix(name.as_str()).unwrap_or(source)
        }
        Some(_) if tilde => source.strip_prefix('~').unwrap_or(source),
        Some(name) => {
            let braced = format!("${{{name}}}");
            let plain = format!("${name}");
            source
                .strip_prefix(braced.as_str())
                .or_else(|| source.strip_prefix(plain.as_str()))
                .unwrap_or(source)
        }
        None => source,
    };
    let text = if root.is_some() {
        rest.trim_start_matches('/')
    } else {
        rest
    };
    PathArg {
        root,
        text: text.to_string(),
        glob,
    }
}

/// Whether unquoted text holds a `{a,b}` or `{1..3}` brace expansion.
fn has_brace_expansion(shape: &str) -> bool {
    let bytes = shape.as_bytes();
    let mut open: Vec<usize> = Vec::new();
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'{' => open.push(i),
            b'}' => {
                if let Some(start) = open.pop() {
                    let inner = &shape[start + 1..i];
                    if inner.contains(',') || inner.contains("..") {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// The content of a double-quoted string piece with bash's escapes removed: inside double
/// quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and newline.
pub(crate) fn unescape_double_quoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    out.extend(chars.next());
                    continue;
                }
                Some('\n') => {
                    chars.next();
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

/// Decodes the body of a `$'...'` string (bash ANSI-C quoting). `None` when the result is
/// not certain (a NUL byte, which bash cuts the string at, a raw non-ASCII byte, or an
/// invalid code point).
pub(crate) fn decode_ansi_c(body: &str) -> Option<String> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let decoded = match e {
            'a' => '\x07',
            'b' => '\x08',
            'e' | 'E' => '\x1b',
            'f' => '\x0c',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\x0b',
            '\\' | '\'' | '"' | '?' => e,
            '0'..='7' => {
                let mut digits = e.to_string();
                take_digits(&mut chars, &mut digits, 3, 8);
                byte_char(u32::from_str_radix(&digits, 8).ok()? & 0xff)?
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut digits = String::new();
                take_digits(&mut chars, &mut digits, max, 16);
                if digits.is_empty() {
                    out.push('\\');
                    out.push(e);
                    continue;
                }
                let value = u32::from_str_radix(&digits, 16).ok()?;
                if e == 'x' {
                    byte_char(value)?
                } else {
                    char::from_u32(value)?
                }
            }
            'c' => {
                let control = chars.next()?;
                char::from_u32(u32::from(control.to_ascii_uppercase()) ^ 0x40)?
            }
            other => {
                out.push('\\');
                other
            }
        };
        if decoded == '\0' {
            return None;
        }
        out.push(decoded);
    }
    Some(out)
}

/// A byte written as `\xHH` or `\NNN`: bash emits the raw byte, which is only the same
/// character for ASCII.
fn byte_char(value: u32) -> Option<char> {
    (value < 0x80).then(|| char::from_u32(value)).flatten()
}

fn take_digits(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    into: &mut String,
    max: usize,
    radix: u32,
) {
    while into.len() < max {
        match chars.peek() {
            Some(d) if d.is_digit(radix) => {
                into.push(*d);
                chars.next();
            }
            _ => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(segments: Vec<Segment>) -> Word {
        finish(&segments)
    }

    fn lit(text: &str, quoted: bool) -> Segment {
        Segment::Literal {
            text: text.into(),
            quoted,
        }
    }

    #[test]
    fn unquoted_escapes() {
        let mut b = WordBuilder::default();
        b.unquoted("r\\m");
        assert_eq!(b.finish().text, "rm");
        let mut b = WordBuilder::default();
        b.unquoted("\\*");
        let w = b.finish();
        assert_eq!((w.text.as_str(), w.dynamic), ("*", false));
    }

    #[test]
    fn globs_braces_and_tilde() {
        assert!(word(vec![lit("*.rs", false)]).dynamic);
        assert!(!word(vec![lit("*.rs", true)]).dynamic);
        assert!(word(vec![lit("{a,b}", false)]).dynamic);
        assert!(!word(vec![lit("{}", false)]).dynamic);
        assert!(!word(vec![lit("HEAD@{1}", false)]).dynamic);
        let home = word(vec![lit("~/.ssh/id_rsa", false)]);
        assert_eq!(
            home.path,
            Some(PathArg {
                root: Some("HOME".into()),
                text: ".ssh/id_rsa".into(),
                glob: false
            })
        );
        let other = word(vec![lit("~root/.ssh/id_rsa", false)]);
        assert!(other.dynamic && !other.may_be_option);
        assert_eq!(
            other.path,
            Some(PathArg {
                root: Some("~root".into()),
                text: ".ssh/id_rsa".into(),
                glob: false
            })
        );
        assert_eq!(word(vec![lit("~/x", true)]).path.and_then(|p| p.root), None);
    }

    #[test]
    fn option_shapes() {
        let quoted_var = word(vec![Segment::Dynamic {
            source: "$x".into(),
            quoted: true,
        }]);
        assert!(quoted_var.may_be_option);
        let prefixed = word(vec![
            lit("src/", false),
            Segment::Dynamic {
                source: "$x".into(),
                quoted: true,
            },
        ]);
        assert!(prefixed.dynamic && !prefixed.may_be_option);
        let split = word(vec![
            lit("src/", false),
            Segment::Dynamic {
                source: "$x".into(),
                quoted: false,
            },
        ]);
        assert!(split.may_be_option);
        assert!(word(vec![lit("*", false)]).may_be_option);
        assert!(!word(vec![lit("src/*", false)]).may_be_option);
        let pipe = word(vec![Segment::Pipe {
            source: "<(ls)".into(),
        }]);
        assert!(pipe.dynamic && !pipe.may_be_option);
        let home = word(vec![
            Segment::Var {
                name: "HOME".into(),
                source: "$HOME".into(),
                quoted: false,
            },
            lit("/.ssh", false),
        ]);
        assert_eq!(
            home.path,
            Some(PathArg {
                root: Some("HOME".into()),
                text: ".ssh".into(),
                glob: false
            })
        );
        assert!(!home.dynamic);
        let agent = word(vec![
            Segment::Var {
                name: "AGENT_HOME".into(),
                source: "${AGENT_HOME}".into(),
                quoted: true,
            },
            lit("/env", true),
        ]);
        assert!(agent.dynamic && agent.may_be_option);
        assert_eq!(
            agent.path,
            Some(PathArg {
                root: Some("AGENT_HOME".into()),
                text: "env".into(),
                glob: false
            })
        );
    }

    #[test]
    fn ansi_c() {
        assert_eq!(decode_ansi_c("\\x72m").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c("\\162m").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c("\\u0072m").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c("a\\nb\\'").as_deref(), Some("a\nb'"));
        assert_eq!(decode_ansi_c("r\\x00m"), None);
        assert_eq!(decode_ansi_c("\\q").as_deref(), Some("\\q"));
        assert_eq!(decode_ansi_c("\\xff"), None);
        assert_eq!(decode_ansi_c("\\u00e9").as_deref(), Some("é"));
    }

    #[test]
    fn double_quoted() {
        assert_eq!(unescape_double_quoted("a\\\"b\\n\\$"), "a\"b\\n$");
        assert_eq!(unescape_double_quoted("a\\\nb"), "ab");
    }
}
