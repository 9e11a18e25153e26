//! Server-sent events framing and the streamed-answer accumulator (OpenAI chat-completions
//! streaming format, with the quirks real servers send; §11).
//!
//! [`SseParser`] turns arbitrary byte chunks into `data` payloads: lines end with LF, CRLF
//! or CR; `:` lines are comments; one optional space after `data:` is removed; `[DONE]`
//! (with or without the space) ends the stream. [`Accumulator`] folds the JSON chunks into
//! one answer: tool-call fragments keyed by `index` (by order when `index` is missing), id
//! and name accepted from any fragment. A stream is complete only when a `finish_reason` or
//! `[DONE]` arrived; anything else is an interrupted stream that must not be executed.

use serde_json::Value;

use super::StreamEvent;
use super::types::{ToolCall, Usage};
use super::wire::{self, RawCompletion};

/// One SSE event payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseEvent {
    /// The `data` of one event (several `data:` lines joined with `\n`).
    Data(String),
    /// `data: [DONE]`.
    Done,
}

/// Incremental SSE parser; memory is bounded by the longest single event.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    data: Option<String>,
    last_was_cr: bool,
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
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if line.is_empty() {
            self.dispatch(events);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        if field != "data" {
            return;
        }
        // Some servers omit the blank line between events: a buffered payload that is
        // already complete JSON is its own event.
        if self
            .data
            .as_deref()
            .is_some_and(|d| serde_json::from_str::<serde::de::IgnoredAny>(d).is_ok())
        {
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
            if data.trim() == "[DONE]" {
                events.push(SseEvent::Done);
            } else if !data.trim().is_empty() {
                events.push(SseEvent::Data(data));
            }
        }
    }
}

#[derive(Debug, Default, Clone)]
struct PartialCall {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// Folds streamed chunks into one answer.
#[derive(Debug, Default)]
pub struct Accumulator {
    content: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    done: bool,
    error: Option<String>,
}

impl Accumulator {
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one SSE event; returns the text and reasoning pieces to show.
    pub fn apply(&mut self, event: &SseEvent) -> Vec<StreamEvent> {
        match event {
            SseEvent::Done => {
                self.done = true;
                Vec::new()
            }
            SseEvent::Data(data) => match serde_json::from_str::<Value>(data) {
                Ok(chunk) => self.apply_chunk(&chunk),
                Err(_) => Vec::new(),
            },
        }
    }

    fn apply_chunk(&mut self, chunk: &Value) -> Vec<StreamEvent> {
        let mut shown = Vec::new();
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            self.error = Some(wire::error_message(error));
            return shown;
        }
        if let Some(usage) = chunk.get("usage").and_then(wire::parse_usage) {
            self.usage = Some(usage);
        }
        let Some(choice) = wire::first_choice(chunk) else {
            return shown;
        };
        if let Some(reason) = wire::string_field(choice, "finish_reason") {
            self.finish_reason = Some(reason);
        }
        let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) else {
            return shown;
        };
        let text = wire::content_text(delta.get("content"));
        if !text.is_empty() {
            self.content.push_str(&text);
            shown.push(StreamEvent::Text(text));
        }
        let reasoning = wire::string_field(delta, "reasoning_content")
            .or_else(|| wire::string_field(delta, "reasoning"))
            .unwrap_or_default();
        if !reasoning.is_empty() {
            self.reasoning.push_str(&reasoning);
            shown.push(StreamEvent::Reasoning(reasoning));
        }
        if let Some(Value::Array(calls)) = delta.get("tool_calls") {
            for fragment in calls {
                self.apply_call_fragment(fragment);
            }
        }
        shown
    }

    fn apply_call_fragment(&mut self, fragment: &Value) {
        let index = fragment.get("index").and_then(Value::as_u64);
        let id = wire::string_field(fragment, "id").filter(|id| !id.is_empty());
        let function = fragment.get("function").unwrap_or(&Value::Null);
        let name = wire::string_field(function, "name").filter(|n| !n.is_empty());
        let slot = match index {
            Some(index) => self.calls.iter().position(|c| c.index == Some(index)),
            None => self.position_without_index(id.as_deref(), name.is_some()),
        };
        let slot = slot.unwrap_or_else(|| {
            self.calls.push(PartialCall {
                index,
                ..PartialCall::default()
            });
            self.calls.len() - 1
        });
        let call = &mut self.calls[slot];
        if let Some(id) = id {
            call.id = id;
        }
        if let Some(name) = name {
            call.name = name;
        }
        call.arguments
            .push_str(&wire::arguments_text(function.get("arguments")));
    }

    /// Without `index`: a fragment continues the last call unless it names a different id,
    /// or brings a name while the last call already has one.
    fn position_without_index(&self, id: Option<&str>, has_name: bool) -> Option<usize> {
        let last = self.calls.len().checked_sub(1)?;
        let call = &self.calls[last];
        let other_id = id.is_some_and(|id| !call.id.is_empty() && call.id != id);
        let new_name = has_name && !call.name.is_empty() && id.is_none_or(|id| call.id != id);
        (!other_id && !new_name).then_some(last)
    }

    /// Whether the stream reached its end (`finish_reason` or `[DONE]`).
    pub fn is_complete(&self) -> bool {
        self.done || self.finish_reason.is_some()
    }

    /// Whether `[DONE]` arrived.
    pub fn saw_done(&self) -> bool {
        self.done
    }

    /// An error object the server sent inside the stream.
    pub fn stream_error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The assembled answer; `None` for an interrupted stream.
    pub fn finish(self) -> Option<RawCompletion> {
        if !self.is_complete() {
            return None;
        }
        let mut calls = self.calls;
        calls.sort_by_key(|c| c.index.unwrap_or(u64::MAX));
        let tool_calls = calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: if c.id.is_empty() {
                    wire::synthesized_id(i)
                } else {
                    c.id
                },
                name: c.name,
                arguments: c.arguments,
            })
            .collect();
        Some(RawCompletion {
            content: self.content,
            reasoning: self.reasoning,
            tool_calls,
            finish_reason: self.finish_reason,
            usage: self.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn run(bytes: &[u8]) -> Option<RawCompletion> {
        let mut parser = SseParser::new();
        let mut acc = Accumulator::new();
        for event in parser.push(bytes).into_iter().chain(parser.finish()) {
            acc.apply(&event);
        }
        acc.finish()
    }

    #[test]
    fn framing_variants() {
        let bytes = b"data:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\r\n\r\n: keep-alive\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata:[DONE]\n\n";
        let done = run(bytes).map(|c| c.content);
        assert_eq!(done.as_deref(), Some("hi"));
    }

    #[test]
    fn cut_stream_is_incomplete() {
        let bytes = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"w\",\"function\":{\"name\":\"write_file\",\"arguments\":\"{\\\"pa\"}}]}}]}\n\n";
        assert_eq!(run(bytes), None);
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let bytes = b"data: {\"a\":1}\r\n\r\n:c\ndata:{\"b\":2}\n\ndata: [DONE]\n\n";
        let mut whole = SseParser::new();
        let expected: Vec<_> = whole.push(bytes).into_iter().chain(whole.finish()).collect();
        for split in 0..bytes.len() {
            let mut parser = SseParser::new();
            let mut events = parser.push(&bytes[..split]);
            events.extend(parser.push(&bytes[split..]));
            events.extend(parser.finish());
            assert_eq!(events, expected, "split at {split}");
        }
    }
}
