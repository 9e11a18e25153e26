//! The short renderings around the conversation: the tool line (`● bash  cargo test`), the
//! dimmed preview of a tool's result, and the usage line after a turn. Pure functions of
//! their inputs, a [`Painter`] and the width, so they are snapshot-tested as strings.

use std::time::Duration;

use super::style::Painter;
use super::{text, theme};
use crate::model::Usage;
use crate::visible::escape_invisible;

/// Lines of a tool result shown under its tool line.
pub(crate) const PREVIEW_LINES: usize = 4;
/// Width used when the output is not a terminal (nothing to fit).
pub(crate) const UNBOUNDED: usize = 0;
/// Tool runs at least this long show their duration.
const SHOW_DURATION: Duration = Duration::from_secs(1);

/// `● bash  cargo test`: the call's key argument, first line only, fitted to `width`.
pub fn tool_line(tool: &str, summary: &str, painter: Painter, width: usize) -> String {
    let mut lines = summary.lines().filter(|l| !l.trim().is_empty());
    // What runs is shown exactly: invisible and control characters as `\u....` escapes.
    let mut subject = escape_invisible(lines.next().unwrap_or("").trim());
    if lines.next().is_some() {
        subject.push_str(" …");
    }
    let subject = fit(&subject, width, 2 + text::width(tool) + 2);
    format!(
        "{} {}  {subject}\n",
        painter.paint(theme::TOOL_BULLET, "●"),
        painter.paint(theme::TOOL_NAME, tool)
    )
}

/// The first [`PREVIEW_LINES`] non-blank lines of a result, dimmed (red when `ok` is false), fitted to
/// `width`, with a `… +N lines` note and the duration when the call took a second or more.
pub fn preview(
    output: &str,
    ok: bool,
    duration: Duration,
    painter: Painter,
    width: usize,
) -> String {
    let cleaned = text::clean(output, 4);
    // Blank lines carry no information in a four-line preview.
    let lines: Vec<&str> = cleaned.lines().filter(|l| !l.trim().is_empty()).collect();
    let style = if ok { theme::SECONDARY } else { theme::FAILED };
    let mut out = String::new();
    let shown = if lines.is_empty() {
        vec!["(no output)"]
    } else {
        lines.clone()
    };
    for (i, line) in shown.iter().take(PREVIEW_LINES).enumerate() {
        let lead = if i == 0 { "  └ " } else { "    " };
        out.push_str(lead);
        out.push_str(&painter.paint(style, &fit(line, width, 4)));
        out.push('\n');
    }
    let mut note = Vec::new();
    if lines.len() > PREVIEW_LINES {
        note.push(format!("… +{} lines", lines.len() - PREVIEW_LINES));
    }
    if duration >= SHOW_DURATION {
        note.push(format!("{:.1}s", duration.as_secs_f64()));
    }
    if !note.is_empty() {
        out.push_str("    ");
        out.push_str(&painter.paint(theme::SECONDARY, &note.join(" · ")));
        out.push('\n');
    }
    out
}

/// A workspace's first snapshot gets [`checkpoint_line`] when it took at least this long.
pub const CHECKPOINT_LINE_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// `checkpoint: saved 10,019 files in 2.1 s; /undo puts back what this turn changes`: after
/// a workspace's first snapshot that took [`CHECKPOINT_LINE_AFTER`] or more (quicker ones and
/// later ones are silent).
pub fn checkpoint_line(files: usize, took: std::time::Duration) -> String {
    format!(
        "checkpoint: saved {} files in {:.1} s; /undo puts back what this turn changes",
        thousands(files as u64),
        took.as_secs_f64()
    )
}

/// `10019` → `10,019`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `12.3k in · 456 out · $0.0123 · context 9% of 128k`, or `usage not reported` when the
/// server sent none. Cached tokens and the number of model calls appear when there are any.
pub fn usage_line(
    usage: Option<&Usage>,
    model_calls: u32,
    context_tokens: Option<u64>,
    context_window: u64,
) -> String {
    let mut parts = Vec::new();
    match usage {
        Some(usage) => {
            parts.push(format!(
                "{} in · {} out",
                text::compact_number(usage.prompt_tokens),
                text::compact_number(usage.completion_tokens)
            ));
            if let Some(cached) = usage.cached_tokens.filter(|c| *c > 0) {
                parts.push(format!("{} cached", text::compact_number(cached)));
            }
            if let Some(cost) = usage.cost {
                parts.push(format!("${cost:.4}"));
            }
        }
        None => parts.push("usage not reported".to_string()),
    }
    if let Some(tokens) = context_tokens.filter(|_| context_window > 0) {
        let percent = tokens.saturating_mul(100) / context_window;
        let percent = if percent == 0 && tokens > 0 {
            "<1".to_string()
        } else {
            percent.to_string()
        };
        parts.push(format!(
            "context {percent}% of {}",
            text::compact_number(context_window)
        ));
    }
    if model_calls > 1 {
        parts.push(format!("{model_calls} model calls"));
    }
    parts.join(" · ")
}

/// `text` cut to what is left of `width` columns after `used` (no cut when `width` is
/// [`UNBOUNDED`]).
fn fit(text: &str, width: usize, used: usize) -> String {
    if width == UNBOUNDED {
        text.to_string()
    } else {
        text::truncate(text, width.saturating_sub(used).max(1))
    }
}
