//! Server-sent-events framing for chat-completions streams (WHATWG SSE, with the deviations
//! real servers send; §11).
//!
//! [`SseParser`] turns arbitrary byte chunks into event payloads: lines end with LF, CRLF or
//! CR (a CRLF split across chunks is one line end); `:` lines are comments; one optional space
//! after `data:` is removed; several `data:` lines join with `\n`; `[DONE]` (with or without
//! the space) ends the stream; a leading UTF-8 BOM is skipped. Leniencies: a bare JSON line
//! without `data:` counts as data (some proxies), and a `data:` line arriving while a complete
//! JSON payload is buffered starts a new event (servers that omit the blank line). Bytes are
//! buffered until a line ends, so a multi-byte character split across chunks is intact; invalid
//! UTF-8 becomes U+FFFD. Memory is bounded by the longest event (the client caps the total).

/// One SSE event payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseEvent {
    /// The `data` of one event (several `data:` lines joined with `\n`).
    Data(String),
    /// `data: [DONE]`.
    Done,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Incremental SSE parser.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    data: Option<String>,
    last_was_cr: bool,
    /// Bytes seen so far, to skip a BOM at the very start.
    started: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &byte in bytes {
            match byte {
                b'\n' if self.last_was_cr => {}
                b'\n' | b'\r' => self.end_line(&mut events),
                other => self.line.push(other),
            }
            self.last_was_cr = byte == b'\r';
        }
        events
    }

    /// Ends the stream: a final line without a newline and a pending event are delivered.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut events = Vec::new();
        if !self.line.is_empty() {
            self.end_line(&mut events);
        }
        self.dispatch(&mut events);
        events
    }

    fn end_line(&mut self, events: &mut Vec<SseEvent>) {
        let mut raw = std::mem::take(&mut self.line);
        if !self.started {
            self.started = true;
            if raw.starts_with(BOM) {
                raw.drain(..BOM.len());
            }
        }
        let line = String::from_utf8_lossy(&raw);
        if line.is_empty() {
            self.dispatch(events);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let value = match line.split_once(':') {
            Some(("data", value)) => value.strip_prefix(' ').unwrap_or(value),
            _ if line.starts_with('{') => line.as_ref(),
            // `event:`, `id:`, `retry:` and unknown fields carry nothing we use.
            _ => return,
        };
        if self.data.as_deref().is_some_and(is_complete_json) {
            self.dispatch(events);
        }
        match &mut self.data {
            Some(data) => {
                data.push('\n');
                data.push_str(value);
            }
            None => self.data = Some(value.to_string()),
        }
    }

    fn dispatch(&mut self, events: &mut Vec<SseEvent>) {
        if let Some(data) = self.data.take() {
            let trimmed = data.trim();
            if trimmed == "[DONE]" {
                events.push(SseEvent::Done);
            } else if !trimmed.is_empty() {
                events.push(SseEvent::Data(data));
            }
        }
    }
}

fn is_complete_json(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn events(bytes: &[u8]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = parser.push(bytes);
        events.extend(parser.finish());
        events
    }

    fn data(text: &str) -> SseEvent {
        SseEvent::Data(text.to_string())
    }

    #[test]
    fn framing_variants() {
        let cases: Vec<(&[u8], Vec<SseEvent>)> = vec![
            (b"data: {\"a\":1}\n\n", vec![data("{\"a\":1}")]),
            (b"data:{\"a\":1}\r\n\r\n", vec![data("{\"a\":1}")]),
            (b"data:  {\"a\":1}\r\r", vec![data(" {\"a\":1}")]),
            (b": keep-alive\n\ndata: [DONE]\n\n", vec![SseEvent::Done]),
            (b"data:[DONE]", vec![SseEvent::Done]),
            (
                b"event: message\nid: 3\nretry: 10\ndata: x\n\n",
                vec![data("x")],
            ),
            (b"data: a\ndata: b\n\n", vec![data("a\nb")]),
            (
                b"data: {\"a\":1}\ndata: {\"b\":2}\n\n",
                vec![data("{\"a\":1}"), data("{\"b\":2}")],
            ),
            (b"\xEF\xBB\xBFdata: x\n\n", vec![data("x")]),
            (b"{\"bare\":true}\n\n", vec![data("{\"bare\":true}")]),
            (b"data:\n\ndata: \n\n", vec![]),
            (
                b"data: caf\xC3\xA9 \xFF\n\n",
                vec![data("caf\u{e9} \u{fffd}")],
            ),
            (b"nonsense line\n\n", vec![]),
        ];
        for (bytes, expected) in cases {
            assert_eq!(
                events(bytes),
                expected,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let bytes =
            "\u{feff}data: {\"a\":\"é\"}\r\n\r\n:c\ndata:{\"b\":2}\n\ndata: [DONE]\n\n".as_bytes();
        let expected = events(bytes);
        assert_eq!(expected.len(), 3);
        for split in 0..bytes.len() {
            let mut parser = SseParser::new();
            let mut got = parser.push(&bytes[..split]);
            got.extend(parser.push(&bytes[split..]));
            got.extend(parser.finish());
            assert_eq!(got, expected, "split at {split}");
        }
    }
}
