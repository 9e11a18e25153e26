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
pub struct Span {
    pub text: String,
    pub style: Style,
}

/// The spans of `line` (no newline in it), each style merged over `base`.
pub fn spans(line: &str, base: Style) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    let mut stack: Vec<Style> = vec![base];
    // Where each open link's text starts in `out`, and its URL.
    let mut links: Vec<(usize, String)> = Vec::new();
    let current = |stack: &[Style]| stack.last().copied().unwrap_or(base);
    for event in Parser::new_ext(line.trim_start(), Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Start(tag) => {
                let style = match tag {
                    Tag::Emphasis => Style::default().italic(),
                    Tag::Strong => Style::default().bold(),
                    Tag::Strikethrough => Style {
                        strike: true,
                        ..Style::default()
                    },
                    Tag::Link { dest_url, .. } => {
                        links.push((out.len(), dest_url.to_string()));
                        theme::LINK
                    }
                    Tag::Image { dest_url, .. } => {
                        push(&mut out, "[image: ", current(&stack).merge(theme::URL));
                        links.push((out.len(), dest_url.to_string()));
                        theme::URL
                    }
                    _ => continue,
                };
                stack.push(current(&stack).merge(style));
            }
            Event::End(end) => match end {
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                    stack.pop();
                }
                TagEnd::Link | TagEnd::Image => {
                    stack.pop();
                    if let Some((start, url)) = links.pop() {
                        close_link(&mut out, start, &url, current(&stack), end == TagEnd::Image);
                    }
                }
                _ => {}
            },
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                push(&mut out, &text, current(&stack));
            }
            Event::Code(code) => push(&mut out, &code, current(&stack).merge(theme::CODE)),
            Event::SoftBreak | Event::HardBreak => push(&mut out, " ", current(&stack)),
            Event::FootnoteReference(label) => {
                push(&mut out, &format!("[^{label}]"), current(&stack));
            }
            Event::TaskListMarker(done) => {
                push(
                    &mut out,
                    if done { "[x] " } else { "[ ] " },
                    current(&stack),
                );
            }
            _ => {}
        }
    }
    out
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
