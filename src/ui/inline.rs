//! Inline markdown of one line (emphasis, strong, strikethrough, `code`, links, images) to
//! styled spans, parsed with pulldown-cmark.
//!
//! The block structure (headings, lists, quotes, fences, tables) is decided line by line by
//! [`super::markdown`]; this module only sees the content of one line, so emphasis that spans
//! several source lines is shown with its markers (a known limit of line-wise streaming).

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::style::Style;
use super::theme;

/// A piece of text in one style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) text: String,
    pub(crate) style: Style,
}

/// Parsed in front of a line's content so that it never starts a block.
const LEAD: &str = "x ";

/// The spans of `line` (no newline in it), each style merged over `base`.
pub(crate) fn spans(line: &str, base: Style) -> Vec<Span> {
    let mut builder = Builder {
        out: Vec::new(),
        stack: vec![base],
        links: Vec::new(),
    };
    // The content is never at the start of a block: `* 4` mid-line is not a list item. Parse
    // it after an inert word and drop that word again.
    let source = format!("{LEAD}{}", line.trim_start());
    let mut skip = LEAD.len();
    for event in Parser::new_ext(&source, Options::ENABLE_STRIKETHROUGH) {
        let style = builder.current();
        match event {
            Event::Text(text) if skip > 0 => {
                let cut = skip.min(text.len());
                skip -= cut;
                push(&mut builder.out, &text[cut..], style);
            }
            Event::Start(tag) => builder.start(tag),
            Event::End(end) => builder.end(end),
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                push(&mut builder.out, &text, style);
            }
            Event::Code(code) => push(&mut builder.out, &code, style.merge(theme::CODE)),
            Event::SoftBreak | Event::HardBreak => push(&mut builder.out, " ", style),
            Event::FootnoteReference(label) => {
                push(&mut builder.out, &format!("[^{label}]"), style);
            }
            Event::TaskListMarker(done) => {
                push(&mut builder.out, if done { "[x] " } else { "[ ] " }, style);
            }
            _ => {}
        }
    }
    builder.out
}

/// The spans so far and the styles and links open at this point.
struct Builder {
    out: Vec<Span>,
    stack: Vec<Style>,
    /// Where each open link's text starts in `out`, and its URL.
    links: Vec<(usize, String)>,
}

impl Builder {
    fn current(&self) -> Style {
        self.stack.last().copied().unwrap_or_default()
    }

    fn start(&mut self, tag: Tag<'_>) {
        let style = match tag {
            Tag::Emphasis => Style::default().italic(),
            Tag::Strong => Style::default().bold(),
            Tag::Strikethrough => Style {
                strike: true,
                ..Style::default()
            },
            Tag::Link { dest_url, .. } => {
                self.links.push((self.out.len(), dest_url.to_string()));
                theme::LINK
            }
            Tag::Image { dest_url, .. } => {
                let style = self.current().merge(theme::URL);
                push(&mut self.out, "[image: ", style);
                self.links.push((self.out.len(), dest_url.to_string()));
                theme::URL
            }
            _ => return,
        };
        self.stack.push(self.current().merge(style));
    }

    fn end(&mut self, end: TagEnd) {
        match end {
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.stack.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.stack.pop();
                if let Some((start, url)) = self.links.pop() {
                    let style = self.current();
                    close_link(&mut self.out, start, &url, style, end == TagEnd::Image);
                }
            }
            _ => {}
        }
    }
}

/// Bytes of the longest prefix of `text` that ends just after whitespace and in which every
/// inline construct that opened has closed: code spans, `*`/`_`/`~` delimiter runs (a run
/// that can open adds to the open count, one that can close takes from it; `_` inside a word
/// and delimiters between spaces count for nothing), `[...]` with its `(...)`, `<...>`, and no
/// dangling `\`. Such a prefix renders the same alone as at the start of its line, so it can
/// be shown before the line ends. 0 when there is none.
pub(crate) fn settled_prefix(text: &str) -> usize {
    let mut settled = 0;
    let mut code_run = 0usize; // length of the backtick run that opened a code span
    let mut open = [0usize; 3]; // open `*`, `_`, `~` delimiters
    let (mut brackets, mut parens, mut angle) = (0usize, 0usize, false);
    let mut previous = ' ';
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if code_run > 0 {
            if c == '`' {
                let run = 1 + count_run(&mut chars, '`');
                if run == code_run {
                    code_run = 0;
                }
            }
            previous = c;
            continue;
        }
        let next = chars.peek().map_or(' ', |(_, n)| *n);
        match c {
            '\\' => {
                // The escaped character is taken as it is.
                let Some((_, escaped)) = chars.next() else {
                    return settled;
                };
                previous = escaped;
                continue;
            }
            '`' => code_run = 1 + count_run(&mut chars, '`'),
            '*' | '_' | '~' => {
                let run = 1 + count_run(&mut chars, c);
                let after = chars.peek().map_or(' ', |(_, n)| *n);
                let slot = match c {
                    '*' => 0,
                    '_' => 1,
                    _ => 2,
                };
                delimiter_run(&mut open[slot], run, previous, after, c == '_');
            }
            '[' => brackets += 1,
            ']' if brackets > 0 => {
                brackets -= 1;
                if next == '(' {
                    parens += 1;
                    chars.next();
                }
            }
            ')' if parens > 0 => parens -= 1,
            '<' if next.is_ascii_alphabetic() || next == '/' => angle = true,
            '>' => angle = false,
            c if c.is_whitespace() && open == [0; 3] && brackets == 0 && parens == 0 && !angle => {
                settled = i + c.len_utf8();
            }
            _ => {}
        }
        previous = c;
    }
    settled
}

/// Consumes the rest of a run of `c`; returns how many more there were.
fn count_run(chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>, c: char) -> usize {
    let mut more = 0;
    while chars.next_if(|(_, n)| *n == c).is_some() {
        more += 1;
    }
    more
}

/// Updates the open count of one delimiter kind for a run of `run` characters between
/// `before` and `after` (CommonMark's flanking rules, simplified).
fn delimiter_run(open: &mut usize, run: usize, before: char, after: char, underscore: bool) {
    let can_open = !after.is_whitespace();
    let can_close = !before.is_whitespace();
    if underscore && before.is_alphanumeric() && after.is_alphanumeric() {
        return;
    }
    if can_close && *open > 0 {
        *open = open.saturating_sub(run);
    } else if can_open {
        *open += run;
    }
}

/// After a link's text: ` (url)` unless the text already is the URL.
fn close_link(out: &mut Vec<Span>, start: usize, url: &str, style: Style, image: bool) {
    let text: String = out[start.min(out.len())..]
        .iter()
        .map(|s| s.text.as_str())
        .collect();
    let bare = url.strip_prefix("mailto:").unwrap_or(url);
    if image {
        push(out, &format!(" {url}]"), style.merge(theme::URL));
    } else if !url.is_empty() && text != url && text != bare {
        push(out, &format!(" ({url})"), style.merge(theme::URL));
    }
}

/// Appends `text`, joining it to the last span when the style is the same.
fn push(out: &mut Vec<Span>, text: &str, style: Style) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(last) if last.style == style => last.text.push_str(text),
        _ => out.push(Span {
            text: text.to_string(),
            style,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::style::Color;

    fn plain(line: &str) -> String {
        spans(line, Style::default())
            .into_iter()
            .map(|s| s.text)
            .collect()
    }

    #[test]
    fn strips_markup() {
        assert_eq!(plain("a **b** _c_ `d` ~~e~~"), "a b c d e");
        assert_eq!(
            plain("see [docs](https://x.io) now"),
            "see docs (https://x.io) now"
        );
        assert_eq!(plain("<https://x.io>"), "https://x.io");
        assert_eq!(plain("![logo](a.png)"), "[image: logo a.png]");
        assert_eq!(
            plain("unclosed `code and *star"),
            "unclosed `code and *star"
        );
        assert_eq!(plain("snake_case_name"), "snake_case_name");
        assert_eq!(plain("* 4 = 12"), "* 4 = 12");
        assert_eq!(
            plain("1. not a list, # not a heading"),
            "1. not a list, # not a heading"
        );
        assert_eq!(plain("    not code"), "not code");
    }

    #[test]
    fn settled_prefixes() {
        let cases = [
            ("plain words here", "plain words "),
            ("a `b c` d", "a `b c` "),
            ("a `b c", "a "),
            ("a ``x ` y`` z", "a ``x ` y`` "),
            ("**bold** and *it", "**bold** and "),
            ("snake_case_name and _em", "snake_case_name and "),
            (
                "see [docs](https://x.io) then [open",
                "see [docs](https://x.io) then ",
            ),
            ("see [docs](https://x y) z", "see [docs](https://x y) "),
            ("a <b>tag</b> c", "a <b>tag</b> "),
            ("3 < 4 and", "3 < 4 "),
            ("~~gone~~ ok ~~x", "~~gone~~ ok "),
            ("trailing\\", ""),
        ];
        for (text, settled) in cases {
            assert_eq!(&text[..settled_prefix(text)], settled, "{text:?}");
        }
    }

    #[test]
    fn styles_nest() {
        let base = Style::fg(Color::Magenta);
        let got = spans("x **`y`**", base);
        assert_eq!(
            got[0],
            Span {
                text: "x ".into(),
                style: base
            }
        );
        assert_eq!(got[1].text, "y");
        assert!(got[1].style.bold);
        assert_eq!(got[1].style.fg, Some(Color::Cyan));
    }
}
