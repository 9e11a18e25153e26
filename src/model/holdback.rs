//! Holding back streamed text that may turn out to be a tool call written as text.
//!
//! A small model's text-written call (see [`super::text_calls`]) must never reach the user's
//! screen as if it were the answer. While an answer streams, [`Holdback`] shows text at once
//! unless the reply so far *starts* like such a call: `{`, `<tool_call>`, `<function`, or a
//! ```` ``` ```` fence whose info string is empty or `json`. That text is held while it can still
//! be a call and released as soon as it cannot (more text after the closing `}`, `</tool_call>`
//! or fence, or a fence in another language). A closing wrapper tag right after a call whose
//! opening tag was dropped (`…</function>\n</tool_call>`, Qwen3-Coder) keeps it held; what is still held when the stream ends is decided by the caller
//! (shown if the reply is not a call, dropped if it is). The decision depends only on the text,
//! never on how it was chunked; scanning is incremental, so holding a long call costs O(n).
//! While it holds, [`Holdback::progress`] says how much is held, at a modest rate, so the user
//! sees that the model is writing.

use std::time::{Duration, Instant};

/// Least time between two progress reports while text is held.
pub(crate) const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);

/// The shape a held reply started with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A bare JSON object.
    Json,
    /// ```` ```json ```` or a bare ```` ``` ```` fence.
    Fence,
    /// `<tool_call>` blocks.
    Tagged,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Only whitespace, or a prefix of a call opener, so far.
    Undecided,
    Holding(Shape),
    /// Ordinary text: shown as it arrives.
    Released,
}

/// Tag pairs that may wrap text-written calls (see [`super::text_calls`]); `<function`
/// comes last so the longer `<function_calls>` is tried first.
const TAGS: &[(&[u8], &[u8])] = &[
    (b"<tool_call>", b"</tool_call>"),
    (b"<tools>", b"</tools>"),
    (b"<function_calls>", b"</function_calls>"),
    (b"<function", b"</function>"),
];
const FENCE: &[u8] = b"```";
/// Closing wrapper tags that may follow a call whose opening tag the server dropped.
const STRAY_CLOSES: &[&[u8]] = &[b"</tool_call>", b"</tools>", b"</function_calls>"];

/// The gate between the streamed text and the screen.
#[derive(Debug, Clone)]
pub struct Holdback {
    mode: Mode,
    held: String,
    /// Bytes of `held` already scanned.
    scanned: usize,
    /// Where the call body starts in `held` (after the opener).
    body_start: usize,
    /// JSON scanner state.
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// The call's end (closing brace, fence or tag) has been seen.
    closed: bool,
    /// Fence: the info line has been checked.
    info_checked: bool,
    /// Tagged: inside a block (between an opening tag and `close`).
    in_block: bool,
    /// Tagged: the closing tag of the current block.
    close: &'static [u8],
    /// Characters (Unicode scalar values) in `held`.
    held_chars: usize,
    /// When progress was last reported for the held text.
    reported: Option<Instant>,
}

impl Holdback {
    /// A gate; `active` is false when text tool calls are off or no tools are offered, and
    /// then every piece passes straight through.
    pub fn new(active: bool) -> Self {
        Self {
            mode: if active {
                Mode::Undecided
            } else {
                Mode::Released
            },
            held: String::new(),
            scanned: 0,
            body_start: 0,
            depth: 0,
            in_string: false,
            escaped: false,
            closed: false,
            info_checked: false,
            in_block: false,
            close: b"",
            held_chars: 0,
            reported: None,
        }
    }

    /// Feeds a piece of text; returns what may be shown now.
    pub fn push(&mut self, text: &str) -> Option<String> {
        if self.mode == Mode::Released {
            return (!text.is_empty()).then(|| text.to_string());
        }
        self.held.push_str(text);
        self.held_chars += text.chars().count();
        if self.mode == Mode::Undecided {
            self.decide();
        }
        if let Mode::Holding(shape) = self.mode
            && !self.still_possible(shape)
        {
            self.mode = Mode::Released;
        }
        if self.mode == Mode::Released {
            self.held_chars = 0;
            let out = std::mem::take(&mut self.held);
            return (!out.is_empty()).then_some(out);
        }
        None
    }

    /// The number of characters held, when a progress report is due at `now`: the first time
    /// non-blank text is held, then once [`PROGRESS_INTERVAL`] has passed since the last report.
    /// `None` while nothing (or only whitespace) is held.
    pub(crate) fn progress(&mut self, now: Instant) -> Option<usize> {
        if self.held.trim().is_empty() {
            return None;
        }
        let due = self
            .reported
            .is_none_or(|last| now.saturating_duration_since(last) >= PROGRESS_INTERVAL);
        if !due {
            return None;
        }
        self.reported = Some(now);
        Some(self.held_chars)
    }

    /// Whether text is currently held back.
    pub fn is_holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// Ends the stream: the text still held (possibly empty).
    pub fn take_held(&mut self) -> String {
        self.held_chars = 0;
        std::mem::take(&mut self.held)
    }

    fn decide(&mut self) {
        let start = self.held.len() - self.held.trim_start().len();
        let rest = &self.held.as_bytes()[start..];
        if rest.is_empty() {
            return;
        }
        let tag = TAGS.iter().find(|(open, _)| rest.starts_with(open));
        let (shape, opener) = if rest[0] == b'{' {
            (Shape::Json, 0)
        } else if let Some((open, close)) = tag {
            self.close = close;
            (Shape::Tagged, open.len())
        } else if rest.starts_with(FENCE) {
            (Shape::Fence, FENCE.len())
        } else if TAGS.iter().any(|(open, _)| open.starts_with(rest)) || FENCE.starts_with(rest) {
            return;
        } else {
            self.mode = Mode::Released;
            return;
        };
        self.mode = Mode::Holding(shape);
        self.body_start = start + opener;
        self.scanned = self.body_start;
        self.in_block = shape == Shape::Tagged;
    }

    fn still_possible(&mut self, shape: Shape) -> bool {
        match shape {
            Shape::Json => self.scan_json(),
            Shape::Fence => self.scan_fence(),
            Shape::Tagged => self.scan_tagged(),
        }
    }

    /// Brace matching outside strings; after an object closes only whitespace or another
    /// object may follow.
    fn scan_json(&mut self) -> bool {
        let bytes = self.held.as_bytes();
        let mut at = self.scanned;
        loop {
            while !self.closed && at < bytes.len() {
                let byte = bytes[at];
                at += 1;
                if self.in_string {
                    match byte {
                        _ if self.escaped => self.escaped = false,
                        b'\\' => self.escaped = true,
                        b'"' => self.in_string = false,
                        _ => {}
                    }
                    continue;
                }
                match byte {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth = self.depth.saturating_sub(1);
                        self.closed = self.depth == 0;
                    }
                    _ => {}
                }
            }
            let next = bytes[at..].iter().position(|b| !b.is_ascii_whitespace());
            match next {
                Some(offset) if self.closed && bytes[at + offset] == b'{' => {
                    self.closed = false;
                    at += offset;
                }
                Some(offset) if self.closed => match stray_close(&bytes[at + offset..]) {
                    Some(len) => at += offset + len,
                    None => break,
                },
                _ => break,
            }
        }
        self.scanned = at;
        let tail = self.held[at..].trim().as_bytes();
        !self.closed || tail.is_empty() || STRAY_CLOSES.iter().any(|c| c.starts_with(tail))
    }

    /// After the call's end only whitespace (as `str::trim` sees it) may follow.
    fn tail_is_blank(&self) -> bool {
        !self.closed || self.held[self.scanned..].trim().is_empty()
    }

    /// Info string empty or `json`; the body ends at the next fence; then only whitespace.
    fn scan_fence(&mut self) -> bool {
        let bytes = self.held.as_bytes();
        if !self.info_checked {
            let Some(newline) = bytes[self.body_start..].iter().position(|&b| b == b'\n') else {
                let info = self.held[self.body_start..].trim();
                return info.is_empty() || "json".starts_with(&info.to_ascii_lowercase());
            };
            let info = self.held[self.body_start..self.body_start + newline].trim();
            if !(info.is_empty() || info.eq_ignore_ascii_case("json")) {
                return false;
            }
            self.info_checked = true;
            self.scanned = self.body_start + newline + 1;
        }
        if !self.closed {
            let from = self
                .scanned
                .saturating_sub(FENCE.len() - 1)
                .max(self.body_start);
            match find(&bytes[from..], FENCE) {
                Some(at) => {
                    self.closed = true;
                    self.scanned = from + at + FENCE.len();
                }
                None => {
                    self.scanned = bytes.len();
                    return true;
                }
            }
        }
        self.tail_is_blank()
    }

    /// Tagged blocks (`<tool_call>…</tool_call>` and the other [`TAGS`]) separated by
    /// whitespace only.
    fn scan_tagged(&mut self) -> bool {
        let bytes = self.held.as_bytes();
        loop {
            if self.in_block {
                let from = self
                    .scanned
                    .saturating_sub(self.close.len() - 1)
                    .max(self.body_start);
                let Some(at) = find(&bytes[from..], self.close) else {
                    self.scanned = bytes.len();
                    return true;
                };
                self.in_block = false;
                self.scanned = from + at + self.close.len();
            }
            let after = &self.held[self.scanned..];
            let skip = after.len() - after.trim_start().len();
            let rest = &bytes[self.scanned + skip..];
            if let Some(len) = stray_close(rest) {
                self.scanned += skip + len;
                continue;
            }
            if let Some((open, close)) = TAGS.iter().find(|(open, _)| rest.starts_with(open)) {
                self.scanned += skip + open.len();
                self.body_start = self.scanned;
                self.close = close;
                self.in_block = true;
                continue;
            }
            // Whitespace, or the start of another opening tag, keeps the reply possible;
            // the next push rescans from here.
            self.scanned += skip;
            return TAGS.iter().any(|(open, _)| open.starts_with(rest))
                || STRAY_CLOSES.iter().any(|close| close.starts_with(rest));
        }
    }
}

/// The length of the closing wrapper tag `rest` starts with.
fn stray_close(rest: &[u8]) -> Option<usize> {
    STRAY_CLOSES
        .iter()
        .find(|close| rest.starts_with(close))
        .map(|close| close.len())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Feeds `pieces`; returns (shown while streaming, held at the end).
    fn run(pieces: &[&str]) -> (String, String) {
        let mut gate = Holdback::new(true);
        let mut shown = String::new();
        for piece in pieces {
            if let Some(text) = gate.push(piece) {
                shown.push_str(&text);
            }
        }
        (shown, gate.take_held())
    }

    fn by_char(text: &str) -> Vec<String> {
        text.chars().map(String::from).collect()
    }

    #[test]
    fn calls_are_held_to_the_end() {
        let calls = [
            r#"{"name": "bash", "arguments": {"command": "echo }"}}"#,
            "```json\n{\"name\": \"bash\", \"arguments\": {}}\n```\n",
            "\n<tool_call>\n{\"name\": \"bash\"}\n</tool_call>\n<tool_call>{}</tool_call>",
            "<tool_call>{\"name\": \"bash\"",
            "```",
            "<tools>\n{\"name\": \"bash\", \"arguments\": {}}\n</tools>",
            "{\"name\": \"bash\", \"arguments\": {}}\n{\"name\": \"bash\", \"arguments\": {}}",
            "{{\"name\": \"bash\", \"arguments\": {}}}",
            "<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>",
            "<function name=\"bash\"><arguments><command>ls</command></arguments></function>",
            "<function=bash>\n<parameter=command>\necho QWEN_RAN\n</parameter>\n</function>\n</tool_call>",
            "<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>\n<function=bash>\n<parameter=command>\npwd\n</parameter>\n</function>\n</tool_call>\n",
            "<function=bash><parameter=command>ls</parameter></function></tool_call><tool_call><function=bash></function></tool_call>",
            "{\"name\": \"bash\", \"arguments\": {}}\n</tool_call>\n{\"name\": \"bash\", \"arguments\": {}}\n</tool_call>",
            "<function=bash></function>\n</tool",
        ];
        for call in calls {
            let pieces = by_char(call);
            let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
            assert_eq!(run(&refs), (String::new(), call.to_string()), "{call:?}");
        }
    }

    #[test]
    fn text_is_shown_as_soon_as_it_cannot_be_a_call() {
        let cases = [
            ("Hello there", "Hello there", ""),
            ("{\"a\": 1} is JSON", "{\"a\": 1} is JSON", ""),
            ("```python\nprint(1)\n```", "```python\nprint(1)\n```", ""),
            (
                "```json\n{}\n```\nThat was it.",
                "```json\n{}\n```\nThat was it.",
                "",
            ),
            (
                "<tool_call>{}</tool_call> done",
                "<tool_call>{}</tool_call> done",
                "",
            ),
            ("<tool", "", "<tool"),
            ("<b>bold</b>", "<b>bold</b>", ""),
            (
                "<function=bash></function>\n</tool_call> done",
                "<function=bash></function>\n</tool_call> done",
                "",
            ),
            ("{}\n</tool_call>\nok", "{}\n</tool_call>\nok", ""),
            ("</tool_call>", "</tool_call>", ""),
            ("`code`", "`code`", ""),
        ];
        for (text, shown, held) in cases {
            let pieces = by_char(text);
            let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
            assert_eq!(
                run(&refs),
                (shown.to_string(), held.to_string()),
                "{text:?}"
            );
            assert_eq!(
                run(&[text]),
                (shown.to_string(), held.to_string()),
                "{text:?} whole"
            );
        }
    }

    #[test]
    fn progress_is_reported_when_holding_starts_then_at_most_every_interval() {
        let start = Instant::now();
        let at = |millis: u64| start + Duration::from_millis(millis);
        let mut gate = Holdback::new(true);
        gate.push("\n");
        assert_eq!(gate.progress(at(0)), None, "whitespace only");
        gate.push("<function=bash>");
        assert_eq!(gate.progress(at(10)), Some(16));
        gate.push("\n<parameter=command>é");
        assert_eq!(gate.progress(at(100)), None, "too soon");
        assert_eq!(gate.progress(at(260)), Some(37));
        assert_eq!(gate.progress(at(300)), None);
        gate.push("ls</parameter></function> and then prose");
        assert!(!gate.is_holding());
        assert_eq!(
            gate.progress(at(900)),
            None,
            "released text is shown, not held"
        );
    }

    #[test]
    fn inactive_gate_passes_everything() {
        let mut gate = Holdback::new(false);
        assert_eq!(gate.push("{\"name\":"), Some("{\"name\":".to_string()));
        assert_eq!(gate.push(""), None);
        assert!(!gate.is_holding());
    }
}
