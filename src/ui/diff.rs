//! File edits as diffs: a coloured, numbered, width-fitted view for the terminal, and a plain
//! unified diff for `--json`.
//!
//! The terminal view shows 3 lines of context around each change, line numbers (new numbers
//! for added and context lines, old numbers for removed ones), `⋮` between hunks, and the
//! changed words of a changed line in reverse video. It is capped at a number of lines with
//! a `… N more lines` note, so writing a large file does not flood the screen. Diffing is
//! bounded in time (similar's deadline), so a huge file cannot stall the session.

use std::fmt::Write;
use std::time::{Duration, Instant};

use similar::{ChangeTag, TextDiff};

use super::style::{Painter, Style};
use super::{text, theme};

/// How long the line diff may take before similar falls back to a coarser result.
const DIFF_TIMEOUT: Duration = Duration::from_millis(100);
const INDENT: &str = "    ";

/// The terminal view of the change from `before` to `after`: a summary line, then at most
/// `max_lines` diff lines, each fitted to `width` columns (0 = no limit).
pub fn render(
    before: &str,
    after: &str,
    painter: Painter,
    width: usize,
    max_lines: usize,
) -> String {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before, after);
    let (mut added, mut removed) = (0usize, 0usize);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let mut out = String::from("  └ ");
    if added + removed == 0 {
        out.push_str(&painter.paint(theme::SECONDARY, "no changes"));
        out.push('\n');
        return out;
    }
    out.push_str(&painter.paint(theme::DIFF_ADD, &format!("+{added}")));
    out.push(' ');
    out.push_str(&painter.paint(theme::DIFF_DEL, &format!("-{removed}")));
    out.push('\n');
    let number_width = (before.lines().count().max(after.lines().count()).max(1))
        .to_string()
        .len();
    let text_width = width.saturating_sub(INDENT.len() + number_width + 3);
    let deadline = Some(Instant::now() + DIFF_TIMEOUT);
    let mut shown = 0usize;
    let mut hidden = 0usize;
    for (g, group) in diff.grouped_ops(3).iter().enumerate() {
        if g > 0 && shown < max_lines {
            let _ = writeln!(out, "{INDENT}{}", painter.paint(theme::DIFF_GUTTER, "⋮"));
        }
        for op in group {
            for change in diff.iter_inline_changes_deadline(op, deadline) {
                if shown >= max_lines {
                    hidden += 1;
                    continue;
                }
                shown += 1;
                let (sign, number, base, emphasis) = match change.tag() {
                    ChangeTag::Insert => (
                        '+',
                        change.new_index(),
                        theme::DIFF_ADD,
                        theme::DIFF_ADD_WORD,
                    ),
                    ChangeTag::Delete => (
                        '-',
                        change.old_index(),
                        theme::DIFF_DEL,
                        theme::DIFF_DEL_WORD,
                    ),
                    ChangeTag::Equal => (
                        ' ',
                        change.new_index(),
                        theme::DIFF_CONTEXT,
                        theme::DIFF_CONTEXT,
                    ),
                };
                let number = number.map_or(String::new(), |n| (n + 1).to_string());
                out.push_str(INDENT);
                out.push_str(
                    &painter.paint(theme::DIFF_GUTTER, &format!("{number:>number_width$} ")),
                );
                out.push_str(&painter.paint(base, &format!("{sign} ")));
                let segments: Vec<(bool, String)> = change
                    .iter_strings_lossy()
                    .map(|(emph, s)| (emph, s.into_owned()))
                    .collect();
                push_segments(&mut out, &segments, (base, emphasis), painter, text_width);
                out.push('\n');
            }
        }
    }
    if hidden > 0 {
        let note = format!("… {hidden} more diff lines");
        let _ = writeln!(out, "{INDENT}{}", painter.paint(theme::SECONDARY, &note));
    }
    out
}

/// Appends the segments of one line (cleaned, newline dropped), cut to `width` columns.
fn push_segments(
    out: &mut String,
    segments: &[(bool, String)],
    (base, emphasis): (Style, Style),
    painter: Painter,
    width: usize,
) {
    let whole: String = segments.iter().map(|(_, s)| s.as_str()).collect();
    let whole = text::clean(whole.trim_end_matches(['\n', '\r']), 4);
    let cut = width > 0 && text::width(&whole) > width;
    let mut room = if cut {
        width.saturating_sub(1)
    } else {
        usize::MAX
    };
    let only_changes = segments.iter().all(|(emph, _)| *emph);
    for (emph, segment) in segments {
        let cleaned = text::clean(segment.trim_end_matches(['\n', '\r']), 4);
        let mut piece = String::new();
        for c in cleaned.chars() {
            let w = text::char_width(c);
            if w > room {
                room = 0;
                break;
            }
            room -= w;
            piece.push(c);
        }
        let style = if *emph && !only_changes {
            emphasis
        } else {
            base
        };
        painter.paint_into(out, style, &piece);
        if room == 0 {
            break;
        }
    }
    if cut {
        out.push_str(&painter.paint(base, "…"));
    }
}

/// A plain unified diff (`--- a/path`, `+++ b/path`, `@@` hunks, 3 lines of context).
pub(crate) fn unified(path: &str, before: &str, after: &str) -> String {
    TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_signs() {
        let got = render("a\nb\nc\n", "a\nB\nc\nd\n", Painter::PLAIN, 80, 50);
        assert_eq!(
            got,
            "  └ +2 -1\n    1   a\n    2 - b\n    2 + B\n    3   c\n    4 + d\n"
        );
    }

    #[test]
    fn caps_lines_and_width() {
        let after: String = (0..30)
            .map(|i| format!("line {i} {}\n", "x".repeat(50)))
            .collect();
        let got = render("", &after, Painter::PLAIN, 30, 5);
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines.len(), 7, "{got}");
        assert_eq!(lines[1], "     1 + line 0 xxxxxxxxxxxxx…");
        assert_eq!(lines[6], "    … 25 more diff lines");
    }

    #[test]
    fn unified_has_headers() {
        let got = unified("f.txt", "a\n", "b\n");
        assert_eq!(got, "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n");
    }
}
