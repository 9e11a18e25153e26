//! Measuring and cleaning text for the screen: display width in terminal columns (wide CJK
//! and emoji count two), cutting to a width, and removing escape sequences and control
//! characters from text we did not write (model text, tool output), so nothing that comes
//! from the model or a command can move the cursor, retitle the window or write the clipboard.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Columns `text` takes on a terminal (no escape codes expected).
pub(crate) fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// Columns one character takes (0 for control and combining characters).
pub(crate) fn char_width(c: char) -> usize {
    UnicodeWidthChar::width(c).unwrap_or(0)
}

/// `text` cut to at most `max` columns, ending with `…` when something was cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    let budget = max.saturating_sub(1);
    for c in text.chars() {
        let w = char_width(c);
        if used + w > budget {
            break;
        }
        used += w;
        out.push(c);
    }
    if max > 0 {
        out.push('…');
    }
    out
}

/// `text` without ANSI escape sequences (CSI, OSC, and two-byte escapes) and without other
/// control characters; newlines are kept, tabs become `tab` spaces, and a carriage return
/// inside a line (progress bars) keeps only what was written after it.
pub fn clean(text: &str, tab: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut line_start = 0;
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => skip_escape(&mut chars),
            '\n' => {
                out.push('\n');
                line_start = out.len();
            }
            '\r' => {
                if chars.peek().is_some_and(|n| *n != '\n') {
                    out.truncate(line_start);
                }
            }
            '\t' => out.extend(std::iter::repeat_n(' ', tab)),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Skips the rest of an escape sequence whose `ESC` was just read.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        // CSI: parameters and intermediates, then one final byte in @..~.
        Some('[') => {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        // OSC, DCS, SOS, PM, APC: up to BEL or ST (ESC \).
        Some(']' | 'P' | 'X' | '^' | '_') => {
            while let Some(c) = chars.next() {
                if c == '\x07' {
                    break;
                }
                if c == '\x1b' {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    break;
                }
            }
        }
        _ => {}
    }
}

/// Human-sized counts: `950`, `12.3k`, `1.2M`.
pub(crate) fn compact_number(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 1_000_000 {
        trim_decimal(format!("{:.1}", n as f64 / 1000.0)) + "k"
    } else {
        trim_decimal(format!("{:.1}", n as f64 / 1_000_000.0)) + "M"
    }
}

fn trim_decimal(text: String) -> String {
    text.strip_suffix(".0").map(str::to_string).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本"), 4);
        assert_eq!(truncate("hello world", 8), "hello w…");
        assert_eq!(truncate("hello", 5), "hello");
        assert_eq!(truncate("日本語です", 5), "日本…");
        assert_eq!(truncate("abc", 0), "");
    }

    #[test]
    fn cleans_escapes_and_controls() {
        assert_eq!(clean("\x1b[31mred\x1b[0m ok", 4), "red ok");
        assert_eq!(clean("a\x1b]0;title\x07b", 4), "ab");
        assert_eq!(clean("a\x1b]52;c;Zm9v\x1b\\b", 4), "ab");
        assert_eq!(clean("10%\r50%\r100%\ndone", 4), "100%\ndone");
        assert_eq!(clean("crlf\r\nnext", 4), "crlf\nnext");
        assert_eq!(clean("a\tb\x07\x08c", 2), "a  bc");
    }

    #[test]
    fn compact_numbers() {
        assert_eq!(compact_number(950), "950");
        assert_eq!(compact_number(12_345), "12.3k");
        assert_eq!(compact_number(128_000), "128k");
        assert_eq!(compact_number(1_250_000), "1.2M");
    }
}
