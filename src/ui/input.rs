//! The line editor's helper (rustyline): completion of slash commands and file paths, a hint
//! for a unique slash command, multi-line input with a trailing `\`, and Ctrl-C that clears a
//! non-empty line in place.
//!
//! Path completion works on the word before the cursor (an `@` in front is kept, as in
//! `@src/ma`), relative to the session's working directory (which `-C` may set), listing
//! hidden entries only when the typed name starts with `.`; directories end with `/`.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{
    Cmd, ConditionalEventHandler, Context, Event, EventContext, Helper, Movement, RepeatCount,
};

use super::style::{Color, Painter, Style};
use super::theme;

/// Most path candidates listed at once.
const MAX_CANDIDATES: usize = 200;

/// Completion, hints and validation for the REPL prompt.
pub(crate) struct InputHelper {
    /// `(name, description)` of every slash command, built-in and custom.
    commands: Vec<(String, String)>,
    /// Relative paths are completed from here.
    base: PathBuf,
    painter: Painter,
}

impl InputHelper {
    pub(crate) fn new(commands: Vec<(String, String)>, base: PathBuf, painter: Painter) -> Self {
        Self {
            commands,
            base,
            painter,
        }
    }

    /// Candidates for the text before the cursor: `(start byte, candidates)`.
    pub(crate) fn candidates(&self, before_cursor: &str) -> (usize, Vec<Pair>) {
        if before_cursor.starts_with('/') && !before_cursor.contains(char::is_whitespace) {
            let pairs = self
                .commands
                .iter()
                .filter(|(name, _)| name.starts_with(before_cursor))
                .map(|(name, _)| Pair {
                    display: name.clone(),
                    replacement: name.clone(),
                })
                .collect();
            return (0, pairs);
        }
        let start = before_cursor.rfind(char::is_whitespace).map_or(0, |i| {
            i + before_cursor[i..].chars().next().map_or(1, char::len_utf8)
        });
        let word = &before_cursor[start..];
        let (at, path) = match word.strip_prefix('@') {
            Some(path) => (1, path),
            None => (0, word),
        };
        (start + at, complete_path(&self.base, path))
    }
}

/// Entries matching `typed` (a relative, absolute or `~/` path prefix), sorted.
pub(crate) fn complete_path(base: &Path, typed: &str) -> Vec<Pair> {
    let (dir_part, prefix) = match typed.rfind('/') {
        Some(i) => (&typed[..=i], &typed[i + 1..]),
        None => ("", typed),
    };
    let dir = if let Some(rest) = dir_part.strip_prefix("~/") {
        match dirs::home_dir() {
            Some(home) => home.join(rest),
            None => return Vec::new(),
        }
    } else if dir_part.is_empty() {
        base.to_path_buf()
    } else {
        base.join(dir_part)
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut pairs: Vec<Pair> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            let slash = if entry.path().is_dir() { "/" } else { "" };
            Some(Pair {
                display: format!("{name}{slash}"),
                replacement: format!("{dir_part}{name}{slash}"),
            })
        })
        .take(MAX_CANDIDATES)
        .collect();
    pairs.sort_by(|a, b| a.display.cmp(&b.display));
    pairs
}

impl Completer for InputHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        Ok(self.candidates(line.get(..pos).unwrap_or(line)))
    }
}

impl Hinter for InputHelper {
    type Hint = String;

    /// The rest of the only slash command that starts with what was typed.
    fn hint(&self, line: &str, pos: usize, _: &Context<'_>) -> Option<String> {
        if pos != line.len() || !line.starts_with('/') || line.contains(char::is_whitespace) {
            return None;
        }
        let mut matching = self
            .commands
            .iter()
            .filter(|(name, _)| name.starts_with(line));
        let (name, _) = matching.next()?;
        if matching.next().is_some() || name.len() == line.len() {
            return None;
        }
        Some(name[line.len()..].to_string())
    }
}

impl Highlighter for InputHelper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _default: bool,
    ) -> Cow<'b, str> {
        match prompt.strip_suffix(' ') {
            Some(symbol) if !self.painter.is_plain() => {
                Cow::Owned(self.painter.paint(Style::fg(Color::Cyan).bold(), symbol) + " ")
            }
            _ => Cow::Borrowed(prompt),
        }
    }

    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        if self.painter.is_plain() {
            Cow::Borrowed(hint)
        } else {
            Cow::Owned(self.painter.paint(theme::SECONDARY, hint))
        }
    }

    fn highlight_char(&self, _line: &str, _pos: usize, _kind: CmdKind) -> bool {
        false
    }
}

impl Validator for InputHelper {
    /// A line ending with `\` continues on the next line.
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        if ctx.input().ends_with('\\') {
            Ok(ValidationResult::Incomplete)
        } else {
            Ok(ValidationResult::Valid(None))
        }
    }
}

impl Helper for InputHelper {}

/// Ctrl-C: clears a line that has text; on an empty line it interrupts (the REPL counts
/// interrupts and exits on the second).
pub(crate) struct ClearOrInterrupt;

impl ConditionalEventHandler for ClearOrInterrupt {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext<'_>) -> Option<Cmd> {
        if ctx.line().is_empty() {
            None
        } else {
            Some(Cmd::Kill(Movement::WholeBuffer))
        }
    }
}

/// The text of an accepted input: `\` + newline pairs (continuation) become newlines.
pub(crate) fn join_continuations(input: &str) -> String {
    input.replace("\\\r\n", "\n").replace("\\\n", "\n")
}

/// The prompt (coloured by [`InputHelper`] when colour is on).
pub(crate) const PROMPT: &str = "› ";

#[cfg(test)]
mod tests {
    use super::*;

    fn helper(base: &Path) -> InputHelper {
        InputHelper::new(
            [
                ("/help", "h"),
                ("/exit", "e"),
                ("/clear", "c"),
                ("/compact", "k"),
            ]
            .iter()
            .map(|(n, d)| (n.to_string(), d.to_string()))
            .collect(),
            base.to_path_buf(),
            Painter::PLAIN,
        )
    }

    fn names(pairs: &[Pair]) -> Vec<&str> {
        pairs.iter().map(|p| p.replacement.as_str()).collect()
    }

    #[test]
    fn completes_commands() {
        let dir = tempfile::tempdir().unwrap();
        let h = helper(dir.path());
        let (start, pairs) = h.candidates("/c");
        assert_eq!((start, names(&pairs)), (0, vec!["/clear", "/compact"]));
        assert_eq!(names(&h.candidates("/he").1), vec!["/help"]);
    }

    #[test]
    fn completes_paths_relative_to_base() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/ui")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("src/.hidden"), "").unwrap();
        let h = helper(dir.path());
        let (start, pairs) = h.candidates("look at src/");
        assert_eq!((start, names(&pairs)), (8, vec!["src/main.rs", "src/ui/"]));
        let (start, pairs) = h.candidates("fix @src/m");
        assert_eq!((start, names(&pairs)), (5, vec!["src/main.rs"]));
        assert_eq!(names(&h.candidates("src/.h").1), vec!["src/.hidden"]);
        assert!(h.candidates("nothing/here").1.is_empty());
    }

    #[test]
    fn joins_continued_lines() {
        assert_eq!(join_continuations("a \\\nb\\\nc"), "a \nb\nc");
    }
}
