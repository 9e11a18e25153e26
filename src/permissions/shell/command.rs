//! Simple commands: words, assignment prefixes, redirections, then what the command runs.
//!
//! A command whose name is only known at run time (`$X`, `$(...)`, a glob) is [`Opaque`]:
//! we cannot tell which program runs. Otherwise the command is emitted with its floors, and
//! whatever it runs (wrapped commands, `-c` payloads, `eval` text) is analysed in turn, up to
//! [`super::MAX_SCRIPT_DEPTH`] levels.
//!
//! [`Opaque`]: super::Opaque

use tree_sitter::Node;

use super::unwrap::{Run, unwrap};
use super::walk::Walker;
use super::words::Word;
use super::{
    Redirect, RedirectKind, Role, SimpleCommand, Stdin, analyze_into, basename, git, hazards,
};

/// Reserved words: never a command name for bash when unquoted at a command's start.
const RESERVED: &[&str] = &[
    "{", "}", "!", "if", "then", "elif", "else", "fi", "case", "esac", "for", "select", "while",
    "until", "do", "done", "in", "function", "[[", "]]",
];

/// Reserved words followed by a command.
const OPENERS: &[&str] = &["if", "then", "elif", "else", "while", "until", "do", "!"];

/// Redirection targets that are not files.
const NOT_FILES: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];

impl Walker<'_, '_> {
    /// A `command` node, with redirections and arguments from an enclosing heredoc statement.
    pub(super) fn command(
        &mut self,
        node: Node<'_>,
        mut redirects: Vec<Redirect>,
        mut stdin: Stdin,
        extra: Vec<Node<'_>>,
    ) {
        let mut words = Vec::new();
        let mut floors = Vec::new();
        let kids = super::walk::fields(node);
        let name = kids
            .iter()
            .find(|(field, _)| *field == Some("name"))
            .map(|(_, n)| self.text(*n));
        // The grammar reads `! { cmd; }` and `! if a; then b; fi` as commands named `{`,
        // `if`, `then`...: bash runs the words after the keyword as a command, so the keyword
        // is dropped; a keyword other than `{` also makes the line `ask` (the parse is off).
        let keyword = name.filter(|n| RESERVED.contains(n));
        match keyword {
            Some("}" | "fi" | "done" | "esac") if kids.len() == 1 => return,
            Some("{") | None => {}
            Some(word) if OPENERS.contains(&word) => self.opaque(
                node,
                format!("`{word}` is shell syntax here, but the parser read it as a command"),
            ),
            Some(word) => {
                self.opaque(
                    node,
                    format!("`{word}` is shell syntax here, but the parser read it as a command"),
                );
                return;
            }
        }
        for (field, child) in kids
            .into_iter()
            .chain(extra.into_iter().map(|n| (Some("argument"), n)))
        {
            match (field, child.kind()) {
                (_, "variable_assignment") => floors.extend(self.assignment(child)),
                (Some("name" | "argument"), _) => words.push(self.word(child)),
                (_, "herestring_redirect") => {
                    stdin = self.herestring(child);
                    self.redirect(child);
                }
                (Some("redirect"), _) => redirects.extend(self.redirect(child)),
                (_, "comment") => {}
                _ if child.is_named() => self.node(child, &Stdin::Unknown),
                _ => {}
            }
        }
        if keyword.is_some() && !words.is_empty() {
            words.remove(0);
        }
        let Some(program) = words.first() else {
            // Assignments alone, or a line that is only a redirection (`> FILE` empties or
            // creates FILE): rated like `true > FILE`.
            floors.extend(redirect_floors(&redirects));
            self.push(SimpleCommand {
                words: vec![Word::literal(self.text(node))],
                redirects,
                floors,
                role: Role::Neutral("sets shell variables".into()),
                deny_aliases: Vec::new(),
                feeds: false,
            });
            return;
        };
        if program.dynamic {
            let reason = format!(
                "the command name `{}` is only known at run time",
                program.text
            );
            self.opaque(node, reason);
            return;
        }
        self.run(words, redirects, floors, &stdin);
    }

    /// Emits `words` as a command and analyses whatever it runs.
    fn run(
        &mut self,
        words: Vec<Word>,
        redirects: Vec<Redirect>,
        floors: Vec<String>,
        stdin: &Stdin,
    ) {
        let unwrapped = unwrap(&words, stdin);
        let (role, runs, mut floors, inner_floors) = match unwrapped {
            Some(u) => {
                let mut all = floors;
                all.extend(u.floors);
                (u.role.unwrap_or(Role::Command), u.runs, all, u.inner_floors)
            }
            None => (Role::Command, Vec::new(), floors, Vec::new()),
        };
        let shown = super::join(&words);
        floors.extend(redirect_floors(&redirects));
        self.emit(words, redirects, floors, role);
        for run in runs {
            match run {
                Run::Command(inner) => match inner.first() {
                    Some(first) if first.dynamic => self.out.opaque_item(
                        &shown,
                        format!("runs `{}`, a command only known at run time", first.text),
                    ),
                    Some(_) => self.nested(inner, inner_floors.clone(), stdin),
                    None => {}
                },
                Run::Script(script) => {
                    let first = self.out.items.len();
                    analyze_into(&script, self.depth + 1, self.out);
                    if self.is_feeding() {
                        for item in &mut self.out.items[first..] {
                            if let super::Item::Command(command) = item {
                                command.feeds = true;
                            }
                        }
                    }
                }
                Run::Unknown(reason) => self.out.opaque_item(&shown, reason),
            }
        }
    }

    fn nested(&mut self, words: Vec<Word>, floors: Vec<String>, stdin: &Stdin) {
        if self.depth >= super::MAX_SCRIPT_DEPTH {
            self.out.opaque_item(
                &super::join(&words),
                "commands nested this deeply are not analysed",
            );
            return;
        }
        self.depth += 1;
        self.run(words, Vec::new(), floors, stdin);
        self.depth -= 1;
    }

    /// Adds program-specific floors and spellings, then records the command.
    fn emit(
        &mut self,
        words: Vec<Word>,
        redirects: Vec<Redirect>,
        mut floors: Vec<String>,
        role: Role,
    ) {
        let program = words
            .first()
            .map_or(String::new(), |w| basename(&w.text).to_string());
        let program = program.as_str();
        let (words, deny_aliases) = if program == "git" {
            let view = git::normalize(&words);
            floors.extend(view.floors);
            (view.words, view.alias.into_iter().collect())
        } else {
            (words, Vec::new())
        };
        floors.extend(hazards::inspect(&words));
        if let Some(first) = words.first()
            && (first.text.is_empty() || first.text.contains(char::is_whitespace))
        {
            floors.push(format!(
                "the program name `{}` contains a space, which no ordinary program has",
                first.text
            ));
        }
        if matches!(program, "cd" | "pushd") && words[0].text == program {
            self.out
                .directories
                .extend(cd_targets(program, &words[1..]));
        }
        self.push(SimpleCommand {
            words,
            redirects,
            floors,
            role,
            deny_aliases,
            feeds: false,
        });
    }
}

/// The directories a literal `cd`/`pushd` may move to: its operand, or `$HOME` for a bare
/// `cd` (also `cd --`, `cd -P`, `cd -L`; through `builtin cd` and `command cd` too, which
/// reach here unwrapped). `cd -` and a dynamic operand are floors in [`hazards`].
fn cd_targets(program: &str, args: &[Word]) -> Vec<Word> {
    let mut operands = Vec::new();
    let mut options_done = false;
    for word in args {
        if !options_done && word.text == "--" {
            options_done = true;
        } else if options_done || !word.is_option() {
            operands.push(word);
        }
    }
    if operands.is_empty() && program == "cd" {
        return vec![Word::printed("~")];
    }
    operands
        .into_iter()
        .filter(|w| !w.dynamic && w.text != "-")
        .cloned()
        .collect()
}

/// Output redirection to a file (anything but `/dev/null` and friends, a descriptor or a
/// process substitution) keeps a command at least `ask`: a simple command, a compound
/// command (`{ ...; } > FILE`, `if ...; fi > FILE`) or a line that is only a redirection.
pub(super) fn redirect_floors(redirects: &[Redirect]) -> Vec<String> {
    redirects
        .iter()
        .filter(|r| r.kind == RedirectKind::Write && !r.target.pipe)
        .filter(|r| {
            r.target.dynamic
                || !(NOT_FILES.contains(&r.target.text.as_str())
                    || r.target.text.starts_with("/dev/fd/"))
        })
        .map(|r| {
            if r.target.dynamic {
                format!(
                    "writes to `{}`, a file only known at run time",
                    r.target.text
                )
            } else {
                format!("writes to the file `{}`", r.target.text)
            }
        })
        .collect()
}
