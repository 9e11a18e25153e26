//! Bounded capture of a command's output (§7.1): the first and the last bytes are kept, the
//! middle is only counted, so memory stays at a few hundred kilobytes however much a command
//! prints. At the end the kept bytes become text: ANSI escapes stripped, carriage-return
//! overwrites resolved as a terminal would show them, other control characters dropped, and
//! invalid UTF-8 replaced by U+FFFD without splitting a character at the cut points.
//!
//! Sizes: `budget` is in characters (what the model sees); the buffers hold up to 4 bytes per
//! character on each side, since a character is at most 4 bytes in UTF-8.

/// Head and tail of a byte stream, with totals.
#[derive(Debug)]
pub(crate) struct Capture {
    budget: usize,
    head: Vec<u8>,
    head_cap: usize,
    /// Holds between `tail_cap` and `2 * tail_cap` bytes; trimmed to the last `tail_cap`.
    tail: Vec<u8>,
    tail_cap: usize,
    bytes: u64,
    newlines: u64,
    last: Option<u8>,
}

/// The captured output as text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Captured {
    /// At most about `budget` characters, with an omission note when cut.
    pub text: String,
    /// Bytes the command wrote in total.
    pub bytes: u64,
    /// Lines the command wrote in total (a last line without `\n` counts).
    pub lines: u64,
    /// Whether part of the output was left out.
    pub truncated: bool,
}

impl Capture {
    /// A capture that will produce at most about `budget` characters of text.
    pub(crate) fn new(budget: usize) -> Self {
        let budget = budget.max(2);
        let side = budget / 2 * 4;
        Self {
            budget,
            head: Vec::new(),
            head_cap: side,
            tail: Vec::new(),
            tail_cap: side,
            bytes: 0,
            newlines: 0,
            last: None,
        }
    }

    /// Adds bytes as they arrive.
    pub(crate) fn push(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        self.bytes += data.len() as u64;
        self.newlines += data.iter().filter(|&&b| b == b'\n').count() as u64;
        self.last = data.last().copied();
        let room = self
            .head_cap
            .saturating_sub(self.head.len())
            .min(data.len());
        let (to_head, rest) = data.split_at(room);
        self.head.extend_from_slice(to_head);
        if rest.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend_from_slice(&rest[rest.len() - self.tail_cap..]);
            return;
        }
        self.tail.extend_from_slice(rest);
        if self.tail.len() > 2 * self.tail_cap {
            let drop = self.tail.len() - self.tail_cap;
            self.tail.drain(..drop);
        }
    }

    /// Bytes received so far.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The text and totals.
    pub(crate) fn finish(self) -> Captured {
        let lines = self.newlines + u64::from(self.last.is_some_and(|b| b != b'\n'));
        let kept = (self.head.len() + self.tail.len()) as u64;
        let complete = kept == self.bytes;
        let keep = self.budget / 2;
        let (head, tail, truncated) = if complete {
            let mut all = self.head;
            all.extend_from_slice(&self.tail);
            let text = clean(&all);
            if text.chars().count() <= self.budget {
                let captured = Captured {
                    text,
                    bytes: self.bytes,
                    lines,
                    truncated: false,
                };
                return captured;
            }
            (first_chars(&text, keep), last_chars(&text, keep), true)
        } else {
            let tail_start = self.tail.len().saturating_sub(self.tail_cap);
            let head = clean(whole_chars_prefix(&self.head));
            let tail = clean(whole_chars_suffix(&self.tail[tail_start..]));
            (first_chars(&head, keep), last_chars(&tail, keep), true)
        };
        let note = format!(
            "[... output truncated: {} bytes, {} lines in total; showing the first {} and the last {} characters. Narrow the command (grep, head, tail, sed -n '100,200p') or redirect the output to a file and read parts of it ...]",
            self.bytes,
            lines,
            head.chars().count(),
            tail.chars().count()
        );
        let mut text = head;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&note);
        text.push('\n');
        text.push_str(&tail);
        Captured {
            text,
            bytes: self.bytes,
            lines,
            truncated,
        }
    }
}

fn first_chars(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((at, _)) => text[..at].to_string(),
        None => text.to_string(),
    }
}

fn last_chars(text: &str, n: usize) -> String {
    let count = text.chars().count();
    match text.char_indices().nth(count.saturating_sub(n)) {
        Some((at, _)) => text[at..].to_string(),
        None => String::new(),
    }
}

/// `bytes` without a trailing incomplete UTF-8 sequence (cut off by the head limit).
fn whole_chars_prefix(bytes: &[u8]) -> &[u8] {
    for back in 1..=3.min(bytes.len()) {
        let at = bytes.len() - back;
        let byte = bytes[at];
        if byte & 0xC0 == 0x80 {
            continue;
        }
        let width = utf8_width(byte);
        return if width > back { &bytes[..at] } else { bytes };
    }
    bytes
}

/// `bytes` without leading UTF-8 continuation bytes (the tail started mid-character).
fn whole_chars_suffix(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|&&b| b & 0xC0 == 0x80)
        .count();
    &bytes[skip..]
}

fn utf8_width(lead: u8) -> usize {
    match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// Terminal output → plain text: ANSI escapes removed, invalid UTF-8 replaced, `\r`
/// overwrites resolved, control characters other than tab and newline dropped.
pub(crate) fn clean(bytes: &[u8]) -> String {
    let stripped = strip_ansi(bytes);
    let text = String::from_utf8_lossy(&stripped);
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        let visible = line.rsplit('\r').next().unwrap_or(line);
        out.extend(visible.chars().filter(|c| *c == '\t' || !c.is_control()));
    }
    out
}

/// Removes ANSI/VT escape sequences: CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL|ST`),
/// DCS/SOS/PM/APC strings, and two- or three-byte escapes (`ESC ( B`, `ESC M`).
pub(crate) fn strip_ansi(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != 0x1B {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        i = skip_escape(bytes, i + 1);
    }
    out
}

/// Index just past the escape sequence whose ESC was at `start - 1`.
fn skip_escape(bytes: &[u8], start: usize) -> usize {
    let Some(&kind) = bytes.get(start) else {
        return start;
    };
    let mut i = start + 1;
    match kind {
        b'[' => {
            while let Some(&b) = bytes.get(i) {
                i += 1;
                if (0x40..=0x7E).contains(&b) {
                    break;
                }
                if !(0x20..=0x3F).contains(&b) {
                    return i - 1;
                }
            }
            i
        }
        b']' | b'P' | b'X' | b'^' | b'_' => {
            while let Some(&b) = bytes.get(i) {
                if b == 0x07 {
                    return i + 1;
                }
                if b == 0x1B && bytes.get(i + 1) == Some(&b'\\') {
                    return i + 2;
                }
                i += 1;
            }
            i
        }
        0x20..=0x2F => {
            while bytes.get(i).is_some_and(|b| (0x20..=0x2F).contains(b)) {
                i += 1;
            }
            if bytes.get(i).is_some_and(|b| (0x30..=0x7E).contains(b)) {
                i += 1;
            }
            i
        }
        0x30..=0x7E => i,
        _ => start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn capture(budget: usize, chunks: &[&[u8]]) -> Captured {
        let mut capture = Capture::new(budget);
        for chunk in chunks {
            capture.push(chunk);
        }
        capture.finish()
    }

    #[test]
    fn small_output_is_kept_whole() {
        let captured = capture(100, &[b"a\n", b"b"]);
        assert_eq!(
            captured,
            Captured {
                text: "a\nb".into(),
                bytes: 3,
                lines: 2,
                truncated: false
            }
        );
    }

    #[test]
    fn ansi_and_controls_are_stripped() {
        let cases: &[(&[u8], &str)] = &[
            (b"\x1b[1;31mred\x1b[0m plain", "red plain"),
            (b"\x1b]0;title\x07after", "after"),
            (b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
            (b"\x1b(Bcharset \x1bMreverse", "charset reverse"),
            (b"10%\r50%\r100%\ndone\r\n", "100%\ndone\n"),
            (b"bell\x07 back\x08space\ttab", "bell backspace\ttab"),
            (b"\x1b[", ""),
            (b"trailing esc\x1b", "trailing esc"),
        ];
        for (input, expected) in cases {
            assert_eq!(clean(input), *expected, "{input:?}");
        }
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(clean(b"ok \xff\xfe end"), "ok \u{fffd}\u{fffd} end");
        assert_eq!(clean("é".as_bytes()), "é");
    }

    #[test]
    fn large_output_keeps_head_and_tail_with_totals() {
        let mut capture = Capture::new(20);
        for i in 0..100_000 {
            capture.push(format!("{i}\n").as_bytes());
        }
        let captured = capture.finish();
        assert!(captured.truncated);
        assert_eq!(captured.lines, 100_000);
        assert_eq!(captured.bytes, 588_890);
        assert!(
            captured.text.starts_with("0\n1\n2\n3\n4\n"),
            "{}",
            captured.text
        );
        assert!(captured.text.ends_with("\n99999\n"), "{}", captured.text);
        assert!(
            captured
                .text
                .contains("588890 bytes, 100000 lines in total")
        );
    }

    #[test]
    fn multibyte_characters_are_not_split_at_the_cuts() {
        // 'é' is 2 bytes, '€' 3, '😀' 4: any byte limit cuts inside some character.
        let unit = "é€😀".repeat(1000);
        for budget in [10, 11, 12, 13] {
            let captured = capture(budget, &[unit.as_bytes(), unit.as_bytes()]);
            assert!(captured.truncated);
            assert!(
                !captured.text.contains('\u{fffd}'),
                "{budget}: {}",
                captured.text
            );
        }
    }

    #[test]
    fn output_over_budget_after_cleaning_is_cut_by_characters() {
        let text = "x".repeat(50);
        let captured = capture(20, &[text.as_bytes()]);
        assert!(captured.truncated);
        assert!(
            captured
                .text
                .starts_with("xxxxxxxxxx\n[... output truncated: 50 bytes, 1 lines")
        );
        assert!(captured.text.ends_with("]\nxxxxxxxxxx"));
    }

    #[test]
    fn memory_stays_bounded() {
        let mut capture = Capture::new(1000);
        let chunk = vec![b'a'; 65536];
        for _ in 0..200 {
            capture.push(&chunk);
            assert!(capture.head.capacity() + capture.tail.capacity() < 5 * 2000 * 4);
        }
        assert_eq!(capture.bytes(), 200 * 65536);
    }
}
