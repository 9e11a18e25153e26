//! Shell analysis (SPEC §5.2): a command line → every simple command bash would execute.
//!
//! The line is parsed with tree-sitter-bash, never split on characters. The walk visits lists,
//! pipelines (`|`, `;`, `&&`, `||`, `&`, newlines), subshells, brace groups, function bodies,
//! `if`/`for`/`while`/`case`, `$(...)` and backticks (also inside double quotes, assignment
//! values and unquoted heredocs), `<(...)`/`>(...)`, heredocs fed to a shell, and the payloads
//! of `bash -c`, `eval`, `trap`, `xargs`, `find -exec` and the known wrappers (see
//! `unwrap`). Each simple command comes out with its dequoted words, its redirections and
//! the *floors* that keep it at least `ask` whatever the rules say: writes or code execution
//! hidden in options ([`hazards`], [`git`], [`sed`]), output redirection to a file, risky
//! variable assignments ([`names`]).
//!
//! Fail closed: a parse error, a construct this module does not know, text the parser skipped,
//! a command name or `-c` payload only known at run time, and nesting beyond
//! [`MAX_SCRIPT_DEPTH`] produce an [`Opaque`] item, which the engine rates `ask`. Commands
//! that are visible are still reported next to it, so a visible `rm` stays `deny`.
//!
//! Deliberate limits (documented for users): values of variables are not tracked (a dynamic
//! argument is only a floor for programs with dangerous options); globs are expanded only for
//! path checks; zsh/ksh payloads are parsed with the bash grammar and rated at least `ask`.

mod braces;
mod command;
mod coverage;
mod exprs;
pub(crate) mod git;
pub(crate) mod hazards;
pub(crate) mod names;
mod options;
mod redirects;
pub(crate) mod sed;
mod unwrap;
mod walk;
pub(crate) mod words;

/// Why a command, or a part of it, cannot be rated from its words alone: the part is `ask`
/// and this is the reason shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Unclear(pub(crate) String);

impl From<String> for Unclear {
    fn from(reason: String) -> Self {
        Self(reason)
    }
}

impl From<&str> for Unclear {
    fn from(reason: &str) -> Self {
        Self(reason.to_string())
    }
}
use std::cell::RefCell;

pub(crate) use words::{PathArg, Word};

/// How many `bash -c` / `eval` levels are followed before the rest is rated `ask`.
pub(crate) const MAX_SCRIPT_DEPTH: usize = 8;
/// Syntax nesting followed before the rest is rated `ask` (keeps the walk's stack bounded).
pub(crate) const MAX_NESTING: usize = 150;
/// Longest command line analysed, in bytes; longer ones are `ask` without parsing.
pub(crate) const MAX_COMMAND_BYTES: usize = 256 * 1024;

/// What a simple command is, for rating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// An ordinary command: every rule applies.
    Command,
    /// Runs another command that is rated on its own (`timeout 5 X`, `bash -c X`, `xargs X`):
    /// only `deny` rules apply to the wrapper itself.
    Wrapper,
    /// Runs no program (`X=1`, `[ -f x ]`, `export X`, a redirection alone): only `deny` rules
    /// apply; the string says what it does.
    Neutral(String),
}

/// How a redirection uses its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirectKind {
    /// `< file`.
    Read,
    /// `> file`, `>> file`, `>| file`, `&> file`, `>& file`.
    Write,
    /// `2>&1`, `>&-`: duplicates or closes a descriptor.
    Descriptor,
}

/// One redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// The operator as written, with its descriptor (`2>`, `>>`, `&>`).
    pub(crate) operator: String,
    /// The target (empty text for `>&-`).
    pub(crate) target: Word,
    pub(crate) kind: RedirectKind,
}

/// A simple command bash would execute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    /// argv after quote removal (assignment prefixes removed; harmless `git` global options
    /// removed, see [`git::normalize`]).
    pub(crate) words: Vec<Word>,
    pub(crate) redirects: Vec<Redirect>,
    /// Why this command is at least `ask`, whatever rule matches.
    pub(crate) floors: Vec<String>,
    pub(crate) role: Role,
    /// Other spellings `deny` rules also see (`git -C . push` is also `git push`).
    pub(crate) deny_aliases: Vec<String>,
    /// Its standard output feeds another command (a pipe stage before the last, or inside
    /// `$(...)`, backticks or `<(...)`): what it prints can become arguments or paths.
    pub(crate) feeds: bool,
}

impl SimpleCommand {
    /// The words joined by single spaces: what bash rules are matched against.
    pub(crate) fn text(&self) -> String {
        join(&self.words)
    }

    /// The words (requoted where the shell would need quotes) followed by the redirections,
    /// as shown to the user and remembered by session approvals.
    pub(crate) fn display(&self) -> String {
        let mut shown = String::new();
        for (i, word) in self.words.iter().enumerate() {
            if i > 0 {
                shown.push(' ');
            }
            if matches!(self.role, Role::Neutral(_)) {
                // A neutral part's word is its source text, shown as written.
                shown.push_str(&word.text);
            } else {
                shown.push_str(&shown_word(word));
            }
        }
        for redirect in &self.redirects {
            if !shown.is_empty() {
                shown.push(' ');
            }
            shown.push_str(&redirect.operator);
            if redirect.kind != RedirectKind::Descriptor && !redirect.target.text.is_empty() {
                shown.push(' ');
            }
            shown.push_str(&redirect.target.text);
        }
        shown
    }

    /// The program as written (first word), if any.
    pub(crate) fn program(&self) -> Option<&str> {
        self.words.first().map(|w| w.text.as_str())
    }
}

/// A word as the user should read it: literal words that the shell would split or expand
/// are single-quoted; run-time words and an expanding leading `~` are shown as written.
fn shown_word(word: &Word) -> std::borrow::Cow<'_, str> {
    let tilde = word.text.starts_with('~')
        && word
            .path
            .as_ref()
            .is_some_and(|p| p.root.as_deref() == Some("HOME"));
    if word.dynamic {
        return word.text.as_str().into();
    }
    if tilde {
        let rest = &word.text[1..];
        if rest.is_empty() {
            return "~".into();
        }
        return format!("~{}", shell_words::quote(rest)).into();
    }
    shell_words::quote(&word.text)
}

/// Words joined by single spaces.
pub(crate) fn join(words: &[Word]) -> String {
    let mut text = String::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            text.push(' ');
        }
        text.push_str(&word.text);
    }
    text
}

/// The last path component of a command word (`/bin/rm` → `rm`).
pub(crate) fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Something that cannot be rated statically; always at least `ask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Opaque {
    /// The source text concerned.
    pub(crate) text: String,
    /// Why it cannot be rated.
    pub(crate) reason: String,
}

/// One result of the analysis, in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Item {
    Command(SimpleCommand),
    Opaque(Opaque),
}

/// Everything bash would execute for one command line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Analysis {
    pub(crate) items: Vec<Item>,
    /// Literal `cd` targets: relative paths are also checked against these directories.
    pub(crate) directories: Vec<Word>,
    /// Literal values assigned to variables anywhere in the line (`f=.env`, `for f in a b`),
    /// so `cat $f` is checked against file rules with every value `f` may hold.
    pub(crate) variables: Vec<(String, String)>,
}

impl Analysis {
    fn opaque_item(&mut self, text: &str, reason: impl Into<String>) {
        self.items.push(Item::Opaque(Opaque {
            text: text.to_string(),
            reason: reason.into(),
        }));
    }
}

/// What a command reads on standard input, as far as it matters for shells reading scripts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stdin {
    /// Not redirected: the bash tool gives commands `/dev/null`.
    Inherited,
    /// Statically known text (a quoted heredoc, `echo 'x' |`).
    Known(String),
    /// Produced at run time.
    Unknown,
}

/// Analyses a command line.
pub fn analyze(command: &str) -> Analysis {
    let mut analysis = Analysis::default();
    analyze_into(command, 0, &mut analysis);
    analysis
}

/// Analyses `script` found at `depth` levels of `bash -c`/`eval` into `out`.
fn analyze_into(script: &str, depth: usize, out: &mut Analysis) {
    if depth > MAX_SCRIPT_DEPTH {
        out.opaque_item(script, "commands nested this deeply are not analysed");
        return;
    }
    if script.len() > MAX_COMMAND_BYTES {
        out.opaque_item(
            "",
            format!(
                "a command of {} bytes is longer than the {MAX_COMMAND_BYTES} analysed",
                script.len()
            ),
        );
        return;
    }
    if let Some(reason) = coverage::suspicious_characters(script) {
        out.opaque_item(script, reason);
    }
    let Some((tree, masked)) = parse_repaired(script, out) else {
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        out.opaque_item(script, "the command could not be parsed completely");
    }
    if let Some(reason) = coverage::skipped_text(root, script) {
        out.opaque_item(script, reason);
    }
    let mut walker = walk::Walker::new(script, depth, out);
    walker.masked = masked;
    walker.node(root, &Stdin::Inherited);
}

/// Parses `script`, working around the grammar's misreadings (see [`coverage`]): heredoc
/// bodies that other nodes reach into are masked, backslashes that make the parser swallow a
/// newline are replaced, `!` before a compound command is blanked. Returns the tree (byte offsets match `script`) and the masked bodies.
fn parse_repaired(
    script: &str,
    out: &mut Analysis,
) -> Option<(tree_sitter::Tree, Vec<std::ops::Range<usize>>)> {
    let mut text = std::borrow::Cow::Borrowed(script);
    let mut masked = Vec::new();
    for _ in 0..4 {
        let Some(tree) = parse(&text) else {
            out.opaque_item(script, "the shell parser failed");
            return None;
        };
        let heredocs = coverage::misparsed_heredocs(tree.root_node(), &text);
        let slashes = match coverage::swallowed_newlines(tree.root_node(), &text) {
            Ok(slashes) => slashes,
            Err(reason) => {
                out.opaque_item(script, reason.0);
                Vec::new()
            }
        };
        let root = tree.root_node();
        let bangs = coverage::misparsed_negations(root, &text, root.has_error());
        if heredocs.is_empty() && slashes.is_empty() && bangs.is_empty() {
            return Some((tree, masked));
        }
        let repaired = coverage::blank_at(
            &coverage::unescape_at(&coverage::mask(&text, &heredocs), &slashes),
            &bangs,
        );
        masked.extend(heredocs);
        text = std::borrow::Cow::Owned(repaired);
    }
    out.opaque_item(script, "the command could not be parsed reliably");
    parse(&text).map(|tree| (tree, masked))
}

thread_local! {
    static PARSER: RefCell<Option<tree_sitter::Parser>> = const { RefCell::new(None) };
}

/// Parses with this thread's bash parser (created on first use).
///
/// Every non-ASCII character is parsed as that many `x` bytes (offsets stay those of
/// `script`; the walker reads node text from `script`): tree-sitter-bash 0.25's scanner calls
/// `isdigit` on a code point and crashes the process on a brace followed by one above U+00FF
/// (`{` U+E01C9). Bash itself splits words only on ASCII blanks and treats every other
/// character as part of a word, which is what a letter stand-in keeps.
fn parse(script: &str) -> Option<tree_sitter::Tree> {
    if !script.is_ascii() {
        let stand_in: String = script
            .chars()
            .flat_map(|c| {
                let n = if c.is_ascii() { 0 } else { c.len_utf8() };
                let keep = c.is_ascii().then_some(c);
                keep.into_iter().chain(std::iter::repeat_n('x', n))
            })
            .collect();
        return parse_ascii(&stand_in);
    }
    parse_ascii(script)
}

/// [`parse`] of text that is all ASCII.
fn parse_ascii(script: &str) -> Option<tree_sitter::Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(script, None)
    })
}
