//! Streaming markdown for the terminal: text is rendered as it arrives, not when the message
//! ends.
//!
//! How it streams (and why it never has to take back what it printed):
//! - Each source line is classified on its own (heading, list item, quote, rule, fence,
//!   table row, paragraph) as soon as its first characters decide the kind; a complete line
//!   is rendered at once.
//! - Within a list item, quote or paragraph line, words are printed while the line is still
//!   arriving: up to the last whitespace at which every inline construct that opened (code
//!   span, emphasis, link, `<tag>`) has closed ([`inline::settled_prefix`]), rendered with
//!   pulldown-cmark. Printing stops at whitespace, so the rest always starts a word and parses
//!   the same alone as in context. Headings (short) wait for their newline.
//! - Fenced code is printed line by line, highlighted (syntect keeps state across lines).
//! - Tables wait for their last row, to align the columns; one too wide for the terminal is
//!   printed as its source lines.
//! - Paragraph text is word-wrapped to the terminal width with hanging indents for list items
//!   and a bar for quotes; code lines are not wrapped (copying them must give the code).
//!
//! Source line breaks are kept (models use them deliberately); emphasis spanning two source
//! lines shows its markers; setext headings and indented code blocks render as paragraphs.
//! Only for colour output: plain mode prints the model's text unchanged.

use super::highlight::CodeHighlighter;
use super::inline;
use super::style::{Painter, Style};
use super::theme;
use super::wrap::Wrapper;
use super::{table, text};

/// Characters that may open inline markup: text without them is printed as it is.
const SPECIAL: &[char] = &['`', '*', '_', '[', '<', '\\', '~', '&'];
/// Bytes of a line that may wait for an inline construct to close before the line is held
/// whole until its newline (bounds rescanning to linear time).
const MAX_UNSETTLED: usize = 4096;
/// Width of rules and code indentation.
const MAX_RULE: usize = 80;
const CODE_INDENT: &str = "  ";

/// Renders one assistant message as it streams. Feed it with [`MarkdownStream::push`] and end
/// it with [`MarkdownStream::finish`]; it can then be reused for the next message.
pub struct MarkdownStream {
    painter: Painter,
    width: usize,
    /// The line being received (no newline).
    line: String,
    /// Bytes of `line` already printed.
    streamed: usize,
    /// The kind of `line`, once streaming of it started.
    pending: Option<LineKind>,
    /// `line` holds an inline-markup character: the rest waits for the newline.
    held: bool,
    block: Block,
    wrap: Wrapper,
    /// The last line printed was blank (or nothing was printed yet).
    last_blank: bool,
    /// Code blocks wait for the grammars to load (false: shown plain until they are).
    wait_for_grammars: bool,
}

enum Block {
    Text,
    Code(Box<Fence>),
    Table(Vec<String>),
}

struct Fence {
    marker: char,
    len: usize,
    indent: usize,
    code: CodeHighlighter,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum LineKind {
    Blank,
    Fence {
        marker: char,
        len: usize,
        indent: usize,
        lang: String,
    },
    Heading {
        level: usize,
        start: usize,
    },
    Rule,
    TableRow,
    Quote {
        depth: usize,
        start: usize,
    },
    Item {
        indent: usize,
        bullet: String,
        start: usize,
    },
    Para {
        indent: usize,
    },
}

impl LineKind {
    /// Where the inline content starts, for kinds whose content streams before the line
    /// ends (headings are short and may end with closing `#`s: they wait for the newline).
    fn streaming_start(&self) -> Option<usize> {
        match self {
            LineKind::Heading { .. } => None,
            other => other.content_start(),
        }
    }

    /// Where the inline content starts.
    fn content_start(&self) -> Option<usize> {
        match self {
            LineKind::Heading { start, .. }
            | LineKind::Quote { start, .. }
            | LineKind::Item { start, .. } => Some(*start),
            LineKind::Para { indent } => Some(*indent),
            _ => None,
        }
    }

    fn base_style(&self) -> Style {
        match self {
            LineKind::Heading { level, .. } => theme::heading(*level),
            LineKind::Quote { .. } => theme::QUOTE,
            _ => Style::default(),
        }
    }
}

impl MarkdownStream {
    /// `width` in columns; 0 turns wrapping off.
    pub fn new(painter: Painter, width: usize) -> Self {
        Self {
            painter,
            width,
            line: String::new(),
            streamed: 0,
            pending: None,
            held: false,
            block: Block::Text,
            wrap: Wrapper::default(),
            last_blank: true,
            wait_for_grammars: true,
        }
    }

    /// Never waits for the highlighting grammars: a code block that starts while they are
    /// still loading is shown without colours (live output must not stall).
    pub(crate) fn without_waiting(mut self) -> Self {
        self.wait_for_grammars = false;
        self
    }

    /// Changes the width for lines started from now on (the terminal was resized).
    pub(crate) fn set_width(&mut self, width: usize) {
        self.width = width;
    }

    /// Adds streamed text; appends what can be shown now to `out`.
    pub fn push(&mut self, delta: &str, out: &mut String) {
        for piece in delta.split_inclusive('\n') {
            match piece.strip_suffix('\n') {
                Some(rest) => {
                    self.line.push_str(rest.strip_suffix('\r').unwrap_or(rest));
                    self.complete_line(out);
                }
                None => self.line.push_str(piece),
            }
        }
        self.stream_partial(out);
    }

    /// Ends the message: renders whatever is waiting and ends the last line.
    pub fn finish(&mut self, out: &mut String) {
        if !self.line.is_empty() || self.pending.is_some() {
            self.complete_line(out);
        }
        self.flush_table(out);
        if self.wrap.in_line() {
            self.wrap.end(out);
        }
        self.block = Block::Text;
        self.last_blank = true;
    }

    fn complete_line(&mut self, out: &mut String) {
        let line = std::mem::take(&mut self.line);
        let streamed = std::mem::take(&mut self.streamed);
        let pending = self.pending.take();
        self.held = false;
        if let Block::Code(fence) = &mut self.block {
            if closes(fence, &line) {
                self.block = Block::Text;
            } else {
                out.push_str(CODE_INDENT);
                fence.code.line(out, strip_indent(&line, fence.indent));
                out.push('\n');
                self.last_blank = false;
            }
            return;
        }
        if let Some(kind) = pending {
            self.push_inline(out, &line[streamed.min(line.len())..], kind.base_style());
            self.wrap.end(out);
            return;
        }
        let kind = classify(&line, true).unwrap_or(LineKind::Para { indent: 0 });
        if kind == LineKind::TableRow {
            match &mut self.block {
                Block::Table(rows) => rows.push(line),
                _ => self.block = Block::Table(vec![line]),
            }
            return;
        }
        self.flush_table(out);
        self.render_line(out, &line, kind);
    }

    fn render_line(&mut self, out: &mut String, line: &str, kind: LineKind) {
        match kind {
            LineKind::Blank => {
                if !self.last_blank {
                    out.push('\n');
                    self.last_blank = true;
                }
            }
            LineKind::Fence {
                marker,
                len,
                indent,
                lang,
            } => {
                let code = if self.wait_for_grammars {
                    CodeHighlighter::new(&lang, self.painter)
                } else {
                    CodeHighlighter::if_ready(&lang, self.painter)
                };
                self.block = Block::Code(Box::new(Fence {
                    marker,
                    len,
                    indent,
                    code,
                }));
            }
            LineKind::Rule => {
                let width = if self.width == 0 {
                    40
                } else {
                    self.width.min(MAX_RULE)
                };
                self.painter
                    .paint_into(out, theme::RULE, &"─".repeat(width));
                out.push('\n');
                self.last_blank = false;
            }
            LineKind::TableRow => {}
            kind => {
                let start = kind.content_start().unwrap_or(0).min(line.len());
                let mut content = &line[start..];
                if matches!(kind, LineKind::Heading { .. }) {
                    content = strip_closing_hashes(content);
                }
                self.begin(out, &kind);
                self.push_inline(out, content, kind.base_style());
                self.wrap.end(out);
            }
        }
    }

    /// Prints the streamable part of the incomplete line.
    fn stream_partial(&mut self, out: &mut String) {
        if self.held || self.line.is_empty() || matches!(self.block, Block::Code(_)) {
            return;
        }
        if self.pending.is_none() {
            let Some(kind) = classify(&self.line, false) else {
                return;
            };
            let Some(start) = kind.streaming_start() else {
                self.held = true;
                return;
            };
            self.flush_table(out);
            self.begin(out, &kind);
            self.streamed = start.min(self.line.len());
            self.pending = Some(kind);
        }
        let base = self
            .pending
            .as_ref()
            .map_or(Style::default(), LineKind::base_style);
        let candidate = &self.line[self.streamed..];
        let end = inline::settled_prefix(candidate);
        if end > 0 {
            let piece = &candidate[..end];
            if piece.contains(SPECIAL) {
                for span in inline::spans(piece, base) {
                    self.wrap.push(out, self.painter, &span.text, span.style);
                }
                // The parser drops the trailing whitespace; it still ends a word.
                self.wrap.push(out, self.painter, " ", base);
            } else {
                self.wrap.push(out, self.painter, piece, base);
            }
            self.streamed += end;
        } else if candidate.len() > MAX_UNSETTLED {
            // An unclosed construct on a very long line: stop rescanning until the newline.
            self.held = true;
        }
    }

    /// Starts an output line for `kind`: its prefix now, its continuation for wrapped lines.
    fn begin(&mut self, out: &mut String, kind: &LineKind) {
        let (prefix, prefix_width, continuation) = match kind {
            LineKind::Quote { depth, .. } => {
                let bar = "│ ".repeat(*depth);
                let painted = self.painter.paint(theme::QUOTE_BAR, &bar);
                (painted.clone(), 2 * depth, (painted, 2 * depth))
            }
            LineKind::Item { indent, bullet, .. } => {
                let lead = " ".repeat(*indent);
                let painted = format!("{lead}{} ", self.painter.paint(theme::BULLET, bullet));
                let width = indent + text::width(bullet) + 1;
                (painted, width, (" ".repeat(width), width))
            }
            LineKind::Para { indent } => {
                let lead = " ".repeat(*indent);
                (lead.clone(), *indent, (lead, *indent))
            }
            _ => (String::new(), 0, (String::new(), 0)),
        };
        self.wrap
            .start(out, self.width, &prefix, prefix_width, continuation);
        self.last_blank = false;
    }

    fn push_inline(&mut self, out: &mut String, content: &str, base: Style) {
        if !content.trim().is_empty() {
            for span in inline::spans(content, base) {
                self.wrap.push(out, self.painter, &span.text, span.style);
            }
        }
    }

    fn flush_table(&mut self, out: &mut String) {
        let Block::Table(rows) = std::mem::replace(&mut self.block, Block::Text) else {
            return;
        };
        match table::render(&rows, self.width, self.painter) {
            Some(rendered) => out.push_str(&rendered),
            None => {
                for row in &rows {
                    self.render_line(out, row, LineKind::Para { indent: 0 });
                }
            }
        }
        self.last_blank = false;
    }
}

/// The kind of `line`; `None` while an incomplete line could still become several kinds.
fn classify(line: &str, complete: bool) -> Option<LineKind> {
    let trimmed = line.trim_start();
    let indent = line.len() - trimmed.len();
    let Some(first) = trimmed.chars().next() else {
        return complete.then_some(LineKind::Blank);
    };
    let undecided = if complete {
        Some(LineKind::Para { indent })
    } else {
        None
    };
    match first {
        '`' | '~' => {
            let len = trimmed.chars().take_while(|c| *c == first).count();
            let info = trimmed[len..].trim();
            if !complete {
                None
            } else if len >= 3 && !(first == '`' && info.contains('`')) {
                let lang = info.split_whitespace().next().unwrap_or("").to_string();
                Some(LineKind::Fence {
                    marker: first,
                    len,
                    indent,
                    lang,
                })
            } else {
                undecided
            }
        }
        '|' => complete.then_some(LineKind::TableRow),
        '<' => undecided,
        '#' => heading(trimmed, indent, complete),
        '>' if !complete && trimmed.chars().all(|c| c == '>' || c.is_whitespace()) => None,
        '>' => Some(quote(trimmed, indent)),
        '-' | '*' | '+' | '_' => bullet_or_rule(trimmed, indent, complete),
        '0'..='9' => numbered(trimmed, indent, complete),
        _ => Some(LineKind::Para { indent }),
    }
}

fn heading(trimmed: &str, indent: usize, complete: bool) -> Option<LineKind> {
    let level = trimmed.chars().take_while(|c| *c == '#').count();
    match trimmed[level..].chars().next() {
        _ if level > 6 => Some(LineKind::Para { indent }),
        Some(' ' | '\t') => {
            let after = &trimmed[level..];
            let spaces = after.len() - after.trim_start().len();
            Some(LineKind::Heading {
                level,
                start: indent + level + spaces,
            })
        }
        None if complete => Some(LineKind::Heading {
            level,
            start: indent + level,
        }),
        None => None,
        Some(_) => Some(LineKind::Para { indent }),
    }
}

fn quote(trimmed: &str, indent: usize) -> LineKind {
    let mut depth = 0;
    let mut start = indent;
    let mut rest = trimmed;
    while let Some(after) = rest.strip_prefix('>') {
        depth += 1;
        let inner = after.strip_prefix(' ').unwrap_or(after);
        start += rest.len() - inner.len();
        rest = inner;
    }
    LineKind::Quote { depth, start }
}

fn bullet_or_rule(trimmed: &str, indent: usize, complete: bool) -> Option<LineKind> {
    let first = trimmed.chars().next()?;
    let only_marks = trimmed
        .chars()
        .all(|c| matches!(c, '-' | '*' | '_' | '+' | ' ' | '\t'));
    if only_marks && !complete {
        return None;
    }
    let marks: Vec<char> = trimmed.chars().filter(|c| !c.is_whitespace()).collect();
    if only_marks && marks.len() >= 3 && first != '+' && marks.iter().all(|c| *c == first) {
        return Some(LineKind::Rule);
    }
    let after = &trimmed[1..];
    if first != '_' && (after.starts_with([' ', '\t']) || (after.is_empty() && complete)) {
        let spaces = after.len() - after.trim_start().len();
        return Some(LineKind::Item {
            indent,
            bullet: "•".to_string(),
            start: indent + 1 + spaces,
        });
    }
    Some(LineKind::Para { indent })
}

fn numbered(trimmed: &str, indent: usize, complete: bool) -> Option<LineKind> {
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    let rest = &trimmed[digits..];
    let mut chars = rest.chars();
    match (chars.next(), chars.next()) {
        (None, _) | (Some('.' | ')'), None) if !complete => None,
        (Some('.' | ')'), Some(' ' | '\t')) if digits <= 9 => {
            let after = &rest[1..];
            let spaces = after.len() - after.trim_start().len();
            Some(LineKind::Item {
                indent,
                bullet: trimmed[..=digits].to_string(),
                start: indent + digits + 1 + spaces,
            })
        }
        _ => Some(LineKind::Para { indent }),
    }
}

/// A line closing `fence`: the same marker at least as long, nothing else after it.
fn closes(fence: &Fence, line: &str) -> bool {
    let trimmed = line.trim();
    let len = trimmed.chars().take_while(|c| *c == fence.marker).count();
    len >= fence.len && trimmed.chars().all(|c| c == fence.marker)
}

/// `line` without up to `indent` leading spaces (the fence's own indentation).
fn strip_indent(line: &str, indent: usize) -> &str {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    &line[spaces.min(indent)..]
}

/// `Title ##` → `Title` (the optional closing sequence of an ATX heading).
fn strip_closing_hashes(content: &str) -> &str {
    let trimmed = content.trim_end();
    let without = trimmed.trim_end_matches('#');
    if without.len() < trimmed.len() && (without.is_empty() || without.ends_with([' ', '\t'])) {
        without.trim_end()
    } else {
        trimmed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(chunks: &[&str], width: usize) -> String {
        let mut md = MarkdownStream::new(Painter::PLAIN, width);
        let mut out = String::new();
        for chunk in chunks {
            md.push(chunk, &mut out);
        }
        md.finish(&mut out);
        out
    }

    #[test]
    fn classifies_lines() {
        let para = Some(LineKind::Para { indent: 0 });
        assert_eq!(classify("#", false), None);
        assert_eq!(
            classify("# T", false),
            Some(LineKind::Heading { level: 1, start: 2 })
        );
        assert_eq!(classify("#tag", false), para);
        assert_eq!(classify("--", false), None);
        assert_eq!(classify("---", true), Some(LineKind::Rule));
        assert_eq!(classify("1", false), None);
        assert_eq!(classify("1.", false), None);
        assert_eq!(classify("1.5 is", false), para);
        assert_eq!(classify("2024 was", false), para);
        assert!(matches!(
            classify("- a", false),
            Some(LineKind::Item { .. })
        ));
        assert!(matches!(
            classify("12) a", false),
            Some(LineKind::Item { start: 4, .. })
        ));
        assert_eq!(classify("``", false), None);
        assert!(matches!(
            classify("```rust", true),
            Some(LineKind::Fence { .. })
        ));
        assert_eq!(
            classify("> > q", false),
            Some(LineKind::Quote { depth: 2, start: 4 })
        );
        assert_eq!(classify("**bold** x", false), para);
    }

    #[test]
    fn streams_words_before_the_newline() {
        let mut md = MarkdownStream::new(Painter::PLAIN, 80);
        let mut out = String::new();
        md.push("Hello wor", &mut out);
        assert_eq!(out, "Hello");
        md.push("ld and `code", &mut out);
        assert_eq!(out, "Hello world and");
        md.push("` end\n", &mut out);
        assert_eq!(out, "Hello world and code end\n");
    }

    #[test]
    fn chunking_does_not_change_the_result() {
        let source = "# Title\n\nSome *emphasis* and `code`.\n\n- one\n- two **bold**\n\n```rust\nfn main() {}\n```\n> quoted\n---\n| a | b |\n|---|---|\n| 1 | 2 |\nend";
        let whole = render(&[source], 60);
        let bytes: Vec<String> = source.chars().map(String::from).collect();
        let pieces: Vec<&str> = bytes.iter().map(String::as_str).collect();
        assert_eq!(render(&pieces, 60), whole);
    }
}
