//! The `compress` shell policy (SPEC §9.1): make `bash` output cheaper to keep in context
//! without losing what a person would read.
//!
//! In order: ANSI escapes removed; carriage-return redraws reduced to their final state
//! (`50%\r100%` → `100%`); consecutive progress-bar lines (a percentage and a bar drawn with
//! `#`, `=`, `█`, `━` …) reduced to the last one; runs of three or more identical lines
//! reduced to the first and a count; runs of blank lines reduced to one. A note with the
//! savings is appended when anything was removed. Nothing else changes, so error messages,
//! paths and numbers survive verbatim.

/// Characters that draw progress bars.
const BAR_CHARS: &[char] = &[
    '#', '=', '>', '█', '▉', '▊', '▋', '▌', '▍', '▎', '▏', '━', '─', '■', '□', '▓', '░', '▒',
];

/// Bar characters a line needs (with a percentage) to count as a progress bar.
const MIN_BAR_CHARS: usize = 5;

/// Identical consecutive lines from which a run is collapsed.
const MIN_REPEAT_RUN: usize = 3;

/// The compressed text and the number of characters saved (0 when nothing changed; the text
/// is then returned as given).
pub(crate) fn compress(text: &str) -> (String, u64) {
    let before = text.chars().count();
    let stripped = anstream::adapter::strip_str(text).to_string();
    let ends_with_newline = stripped.ends_with('\n');
    let lines: Vec<String> = stripped.lines().map(final_redraw).collect();
    let lines = collapse_progress(lines);
    let lines = collapse_repeats(lines);
    let lines = collapse_blank_runs(lines);
    let mut body = lines.join("\n");
    if ends_with_newline && !body.is_empty() {
        body.push('\n');
    }
    let after = body.chars().count();
    if after >= before {
        return (text.to_string(), 0);
    }
    let saved = before - after;
    let note = format!(
        "[compressed shell output: {before} → {after} characters, {}% saved]",
        saved * 100 / before.max(1)
    );
    if !body.is_empty() && !body.ends_with('\n') {
        body.push('\n');
    }
    body.push_str(&note);
    (body, saved as u64)
}

/// The last non-empty state of a line redrawn with `\r`.
fn final_redraw(line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if !line.contains('\r') {
        return line.to_string();
    }
    line.rsplit('\r')
        .find(|part| !part.trim().is_empty())
        .unwrap_or("")
        .to_string()
}

/// A line showing a percentage and a drawn bar.
fn is_progress(line: &str) -> bool {
    let bar = line.chars().filter(|c| BAR_CHARS.contains(c)).count();
    bar >= MIN_BAR_CHARS && has_percentage(line)
}

fn has_percentage(line: &str) -> bool {
    let bytes = line.as_bytes();
    bytes
        .iter()
        .enumerate()
        .any(|(i, b)| *b == b'%' && i > 0 && bytes[i - 1].is_ascii_digit())
}

fn collapse_progress(lines: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut previous_was_progress = false;
    for line in lines {
        let progress = is_progress(&line);
        if progress && previous_was_progress {
            if let Some(last) = out.last_mut() {
                *last = line;
            }
        } else {
            out.push(line);
        }
        previous_was_progress = progress;
    }
    out
}

fn collapse_repeats(lines: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let run = lines[i..].iter().take_while(|l| **l == lines[i]).count();
        out.push(lines[i].clone());
        if run >= MIN_REPEAT_RUN && !lines[i].trim().is_empty() {
            out.push(format!("[previous line repeated {} more times]", run - 1));
        } else {
            out.extend(lines[i + 1..i + run].iter().cloned());
        }
        i += run;
    }
    out
}

fn collapse_blank_runs(lines: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for line in lines {
        let blank = line.trim().is_empty();
        if blank && out.last().is_some_and(|l| l.trim().is_empty()) {
            continue;
        }
        out.push(if blank { String::new() } else { line });
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn collapses_everything_listed() {
        let input = "\x1b[32mCompiling\x1b[0m foo\n\
                     Downloading  10% [##........]\r Downloading  50% [#####.....]\r Downloading 100% [##########]\n\
                     \n\n\n\
                     [=====>     ] 45%\n\
                     [==========>] 90%\n\
                     [===========] 100%\n\
                     warning: x\nwarning: x\nwarning: x\nwarning: x\n\
                     done\n";
        let (out, saved) = compress(input);
        let expected_body = "Compiling foo\n\
                             \x20Downloading 100% [##########]\n\
                             \n\
                             [===========] 100%\n\
                             warning: x\n\
                             [previous line repeated 3 more times]\n\
                             done\n";
        let before = input.chars().count();
        let after = expected_body.chars().count();
        assert_eq!(saved as usize, before - after);
        assert_eq!(
            out,
            format!(
                "{expected_body}[compressed shell output: {before} → {after} characters, {}% saved]",
                (before - after) * 100 / before
            )
        );
    }

    #[test]
    fn leaves_plain_output_alone() {
        let text = "src/main.rs:3: error: x\n  two\n\nthree";
        assert_eq!(compress(text), (text.to_string(), 0));
        let pair = "same\nsame\n";
        assert_eq!(compress(pair), (pair.to_string(), 0));
    }

    #[test]
    fn percentages_without_bars_are_kept() {
        let text = "coverage 81%\ncoverage 82%\n";
        assert_eq!(compress(text).0, text);
    }
}
