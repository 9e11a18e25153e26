//! Folding streamed chat-completions chunks into one answer (OpenAI streaming format, with
//! the quirks real servers send; §11).
//!
//! - Text: `delta.content` (string or content parts; `refusal` when there is no content),
//!   with a leading `<think>` block moved to reasoning ([`super::think`]).
//! - Reasoning: `delta.reasoning_content` (DeepSeek, Kimi, vLLM, llama.cpp) or
//!   `delta.reasoning` (OpenRouter, Groq, Ollama), never mixed into the text.
//! - Tool calls: fragments keyed by `index`; without `index`, a fragment continues the last
//!   call. A fragment starts a new call where its index is new, or where it brings a different
//!   id *and* a name while the current call's arguments are already complete JSON (servers
//!   that reuse index 0 for parallel calls). Id and name are taken from whichever fragment has
//!   them. A fragment repeating the whole arguments (cumulative streaming) replaces them.
//!   Calls with neither a name nor arguments are dropped; missing ids stay empty here and are
//!   synthesized by the client.
//! - Usage: the last `usage` seen (a usage-only chunk with `choices: []` or `null` is fine);
//!   llama.cpp's `timings.cache_n` fills in cached tokens when `usage` lacks them.
//! - Completion: the stream is complete only after a `finish_reason` (other than `error`) or
//!   `[DONE]`; anything else is an interrupted stream whose calls must never run, and
//!   [`Accumulator::finish`] returns `None` for it. Unknown fields are ignored everywhere.

use serde_json::Value;

use super::StreamEvent;
use super::sse::SseEvent;
use super::think::ThinkSplitter;
use super::types::{ToolCall, Usage, parse_arguments};
use super::wire::{self, RawCompletion};

#[derive(Debug, Default, Clone)]
struct PartialCall {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// An `error` object the server sent with status 200 (inside the stream).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StreamError {
    /// The readable message.
    pub(crate) message: String,
    /// The chunk as received, for classification.
    pub(crate) body: String,
    /// A status the error names (`code: 429`), when it names one.
    pub(crate) status: Option<u16>,
}

/// Folds streamed chunks into one answer.
#[derive(Debug, Default)]
pub struct Accumulator {
    content: String,
    reasoning: String,
    think: ThinkSplitter,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    cache_n: Option<u64>,
    done: bool,
    error: Option<StreamError>,
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
                self.flush_think()
            }
            SseEvent::Data(data) => match serde_json::from_str::<Value>(data) {
                Ok(chunk) => self.apply_chunk(&chunk, data),
                Err(_) => Vec::new(),
            },
        }
    }

    fn apply_chunk(&mut self, chunk: &Value, raw: &str) -> Vec<StreamEvent> {
        let mut shown = Vec::new();
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            self.error = Some(StreamError {
                message: wire::error_message(error),
                body: raw.chars().take(4096).collect(),
                status: super::classify::embedded_status(error),
            });
            return shown;
        }
        if let Some(usage) = chunk.get("usage").and_then(wire::parse_usage) {
            self.usage = Some(usage);
        }
        if let Some(n) = wire::llama_cache_n(chunk) {
            self.cache_n = Some(n);
        }
        let Some(choice) = wire::first_choice(chunk) else {
            return shown;
        };
        if let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) {
            self.apply_delta(delta, &mut shown);
        }
        if let Some(reason) = wire::string_field(choice, "finish_reason") {
            self.finish_reason = Some(reason);
            shown.extend(self.flush_think());
        }
        shown
    }

    fn apply_delta(&mut self, delta: &Value, shown: &mut Vec<StreamEvent>) {
        let reasoning = wire::reasoning_text(delta);
        if !reasoning.is_empty() {
            self.push_reasoning(reasoning, shown);
        }
        let mut text = wire::content_text(delta.get("content"));
        if text.is_empty() {
            text = wire::string_field(delta, "refusal").unwrap_or_default();
        }
        if !text.is_empty() {
            let split = self.think.push(&text);
            self.push_reasoning(split.reasoning, shown);
            self.push_text(split.content, shown);
        }
        if let Some(Value::Array(calls)) = delta.get("tool_calls") {
            for fragment in calls {
                self.apply_call_fragment(fragment);
            }
        }
    }

    fn push_text(&mut self, text: String, shown: &mut Vec<StreamEvent>) {
        if !text.is_empty() {
            self.content.push_str(&text);
            shown.push(StreamEvent::Text(text));
        }
    }

    fn push_reasoning(&mut self, text: String, shown: &mut Vec<StreamEvent>) {
        if !text.is_empty() {
            self.reasoning.push_str(&text);
            shown.push(StreamEvent::Reasoning(text));
        }
    }

    /// Releases text the think splitter held back as a possible tag (end of the answer).
    fn flush_think(&mut self) -> Vec<StreamEvent> {
        let mut shown = Vec::new();
        let rest = self.think.finish();
        self.push_reasoning(rest.reasoning, &mut shown);
        self.push_text(rest.content, &mut shown);
        shown
    }

    fn apply_call_fragment(&mut self, fragment: &Value) {
        let index = match fragment.get("index") {
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => s.trim().parse().ok(),
            _ => None,
        };
        let id = wire::string_field(fragment, "id").filter(|id| !id.is_empty());
        let function = fragment.get("function").unwrap_or(fragment);
        let name = wire::string_field(function, "name").filter(|n| !n.is_empty());
        let arguments = wire::arguments_text(function.get("arguments"));
        let slot = self.slot_for(index, id.as_deref(), name.is_some());
        let call = &mut self.calls[slot];
        if let Some(id) = id {
            call.id = id;
        }
        if let Some(name) = name {
            call.name = name;
        }
        append_arguments(&mut call.arguments, &arguments);
    }

    /// The call a fragment belongs to, creating it when the fragment starts a new one.
    fn slot_for(&mut self, index: Option<u64>, id: Option<&str>, has_name: bool) -> usize {
        let existing = match index {
            Some(index) => self
                .calls
                .iter()
                .rposition(|c| c.index == Some(index))
                .filter(|&at| {
                    let call = &self.calls[at];
                    !(has_name && other_id(call, id) && arguments_complete(call))
                }),
            None => self.calls.len().checked_sub(1).filter(|&at| {
                let call = &self.calls[at];
                let other_name = has_name && !call.name.is_empty();
                !((other_id(call, id) || other_name) && arguments_complete(call))
            }),
        };
        existing.unwrap_or_else(|| {
            self.calls.push(PartialCall {
                index,
                ..PartialCall::default()
            });
            self.calls.len() - 1
        })
    }

    /// Whether the stream reached its end (`finish_reason` or `[DONE]`) without an error.
    pub(crate) fn is_complete(&self) -> bool {
        self.error.is_none()
            && self.finish_reason.as_deref() != Some("error")
            && (self.done || self.finish_reason.is_some())
    }

    /// Whether `[DONE]` arrived.
    pub(crate) fn saw_done(&self) -> bool {
        self.done
    }

    /// An error object the server sent inside the stream.
    pub(crate) fn stream_error(&self) -> Option<&StreamError> {
        self.error.as_ref()
    }

    /// The assembled answer; `None` for an interrupted stream.
    pub fn finish(mut self) -> Option<RawCompletion> {
        if !self.is_complete() {
            return None;
        }
        self.flush_think();
        let mut calls = self.calls;
        calls.retain(|c| !(c.name.is_empty() && c.arguments.trim().is_empty()));
        calls.sort_by_key(|c| c.index.unwrap_or(u64::MAX));
        let tool_calls = calls
            .into_iter()
            .map(|c| ToolCall {
                id: c.id,
                name: c.name,
                arguments: c.arguments,
            })
            .collect();
        let mut usage = self.usage;
        if let (Some(usage), Some(n)) = (usage.as_mut(), self.cache_n) {
            usage.cached_tokens.get_or_insert(n);
        }
        Some(RawCompletion {
            content: self.content,
            reasoning: self.reasoning,
            tool_calls,
            finish_reason: self.finish_reason,
            usage,
        })
    }
}

/// The fragment names an id and the call already has a different one.
fn other_id(call: &PartialCall, id: Option<&str>) -> bool {
    id.is_some_and(|id| !call.id.is_empty() && call.id != id)
}

/// The call's arguments so far are usable as they are (`""`, or a complete JSON object).
fn arguments_complete(call: &PartialCall) -> bool {
    parse_arguments(&call.arguments).is_ok()
}

/// Appends an arguments fragment, or replaces the arguments when the fragment repeats them
/// whole (a complete object followed by a fragment that is itself a complete object or
/// extends the text so far).
fn append_arguments(arguments: &mut String, fragment: &str) {
    if !arguments.is_empty()
        && fragment.trim_start().starts_with('{')
        && serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_ok()
        && (fragment.starts_with(arguments.as_str())
            || serde_json::from_str::<serde::de::IgnoredAny>(fragment).is_ok())
    {
        arguments.clear();
    }
    arguments.push_str(fragment);
}

/// Parses a whole SSE body at once: the events to show and the answer (`None` when the
/// stream is incomplete). For tests and tools; the client feeds chunks as they arrive.
pub(crate) fn parse_stream(bytes: &[u8]) -> (Vec<StreamEvent>, Option<RawCompletion>) {
    let mut parser = super::sse::SseParser::new();
    let mut accumulator = Accumulator::new();
    let mut shown = Vec::new();
    for event in parser.push(bytes).into_iter().chain(parser.finish()) {
        shown.extend(accumulator.apply(&event));
    }
    (shown, accumulator.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn stream(chunks: &[Value]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for chunk in chunks {
            bytes.extend_from_slice(format!("data: {chunk}\n\n").as_bytes());
        }
        bytes.extend_from_slice(b"data: [DONE]\n\n");
        bytes
    }

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    fn delta_calls(calls: Value) -> Value {
        json!({"choices": [{"index": 0, "delta": {"tool_calls": calls}}]})
    }

    fn calls_of(chunks: &[Value]) -> Vec<ToolCall> {
        parse_stream(&stream(chunks))
            .1
            .map(|c| c.tool_calls)
            .unwrap_or_default()
    }

    #[test]
    fn interleaved_parallel_calls_by_index() {
        let chunks = [
            delta_calls(
                json!([{"index": 0, "id": "A", "function": {"name": "bash", "arguments": ""}}]),
            ),
            delta_calls(
                json!([{"index": 1, "id": "B", "function": {"name": "read_file", "arguments": ""}}]),
            ),
            delta_calls(json!([{"index": 0, "function": {"arguments": "{\"command\":"}}])),
            delta_calls(json!([{"index": 1, "function": {"arguments": "{\"path\":\"R\"}"}}])),
            delta_calls(json!([{"index": 0, "function": {"arguments": "\"ls\"}"}}])),
        ];
        assert_eq!(
            calls_of(&chunks),
            vec![
                call("A", "bash", r#"{"command":"ls"}"#),
                call("B", "read_file", r#"{"path":"R"}"#)
            ]
        );
    }

    #[test]
    fn id_and_name_from_any_fragment() {
        let chunks = [
            delta_calls(json!([{"index": 0, "function": {"arguments": "{\"a\""}}])),
            delta_calls(json!([{"index": 0, "id": "late", "function": {"arguments": ":1}"}}])),
            delta_calls(json!([{"index": 0, "function": {"name": "bash"}}])),
        ];
        assert_eq!(calls_of(&chunks), vec![call("late", "bash", r#"{"a":1}"#)]);
    }

    #[test]
    fn calls_without_index_follow_order() {
        let chunks = [
            delta_calls(
                json!([{"id": "1", "function": {"name": "bash", "arguments": "{\"command\""}}]),
            ),
            delta_calls(json!([{"function": {"arguments": ":\"ls\"}"}}])),
            delta_calls(json!([{"id": "2", "function": {"name": "bash", "arguments": "{}"}}])),
            delta_calls(json!([{"function": {"name": "read_file", "arguments": {"path": "x"}}}])),
        ];
        assert_eq!(
            calls_of(&chunks),
            vec![
                call("1", "bash", r#"{"command":"ls"}"#),
                call("2", "bash", "{}"),
                call("", "read_file", r#"{"path":"x"}"#),
            ]
        );
    }

    #[test]
    fn parallel_calls_reusing_index_zero() {
        let chunks = [
            delta_calls(
                json!([{"index": 0, "id": "a", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]),
            ),
            delta_calls(
                json!([{"index": 0, "id": "b", "function": {"name": "bash", "arguments": "{\"command\":\"pwd\"}"}}]),
            ),
        ];
        assert_eq!(
            calls_of(&chunks),
            vec![
                call("a", "bash", r#"{"command":"ls"}"#),
                call("b", "bash", r#"{"command":"pwd"}"#)
            ]
        );
    }

    #[test]
    fn cumulative_arguments_replace() {
        let chunks = [
            delta_calls(
                json!([{"index": 0, "id": "a", "function": {"name": "bash", "arguments": "{\"command\":"}}]),
            ),
            delta_calls(json!([{"index": 0, "function": {"arguments": "\"ls\"}"}}])),
            delta_calls(json!([{"index": 0, "function": {"arguments": "{\"command\":\"ls\"}"}}])),
        ];
        assert_eq!(
            calls_of(&chunks),
            vec![call("a", "bash", r#"{"command":"ls"}"#)]
        );
    }

    #[test]
    fn empty_fragments_and_unknown_fields_are_ignored() {
        let chunks = [
            json!({"id": "x", "object": "chat.completion.chunk", "system_fingerprint": null,
                   "choices": [{"index": 0, "delta": {"role": "assistant", "content": null,
                   "tool_calls": [{"index": 0, "type": "function"}]}, "logprobs": null}]}),
            json!({"choices": null}),
            json!({"choices": []}),
            json!({"choices": [{"delta": {"content": "hi", "audio": {}}}], "x_extra": 1}),
        ];
        let (_, done) = parse_stream(&stream(&chunks));
        let done = done.unwrap_or_default();
        assert_eq!((done.content.as_str(), done.tool_calls.len()), ("hi", 0));
    }

    #[test]
    fn reasoning_is_kept_apart() {
        let chunks = [
            json!({"choices": [{"delta": {"reasoning_content": "think "}}]}),
            json!({"choices": [{"delta": {"reasoning": "more"}}]}),
            json!({"choices": [{"delta": {"content": "<think>inline</think>\n\nanswer"}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
        ];
        let (shown, done) = parse_stream(&stream(&chunks));
        let done = done.unwrap_or_default();
        assert_eq!(done.reasoning, "think moreinline");
        assert_eq!(done.content, "answer");
        assert_eq!(
            shown,
            vec![
                StreamEvent::Reasoning("think ".into()),
                StreamEvent::Reasoning("more".into()),
                StreamEvent::Reasoning("inline".into()),
                StreamEvent::Text("answer".into()),
            ]
        );
    }

    #[test]
    fn completeness() {
        let text = json!({"choices": [{"delta": {"content": "x"}}]});
        let stop = json!({"choices": [{"delta": {}, "finish_reason": "stop"}]});
        let error = json!({"choices": [{"delta": {}, "finish_reason": "error"}]});
        let only = |chunks: &[Value], done: bool| {
            let mut bytes: Vec<u8> = chunks
                .iter()
                .flat_map(|c| format!("data: {c}\n\n").into_bytes())
                .collect();
            if done {
                bytes.extend_from_slice(b"data: [DONE]\n\n");
            }
            parse_stream(&bytes).1.is_some()
        };
        assert!(
            !only(std::slice::from_ref(&text), false),
            "no finish_reason, no [DONE]"
        );
        assert!(only(std::slice::from_ref(&text), true), "[DONE]");
        assert!(only(&[text.clone(), stop], false), "finish_reason");
        assert!(
            !only(&[text.clone(), error.clone()], false),
            "finish_reason error"
        );
        assert!(
            !only(&[text, error], true),
            "finish_reason error then [DONE]"
        );
    }

    #[test]
    fn stream_error_object() {
        let bytes = b"data: {\"error\":{\"code\":502,\"message\":\"Provider disconnected\"}}\n\ndata: [DONE]\n\n";
        let mut parser = super::super::sse::SseParser::new();
        let mut accumulator = Accumulator::new();
        for event in parser.push(bytes) {
            accumulator.apply(&event);
        }
        let error = accumulator.stream_error().cloned();
        assert_eq!(
            error.as_ref().map(|e| (e.message.as_str(), e.status)),
            Some(("Provider disconnected", Some(502)))
        );
        assert!(accumulator.finish().is_none());
    }

    #[test]
    fn usage_spellings_and_llama_cache() {
        let chunks = [
            json!({"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 1}, "timings": {"cache_n": 8}}),
        ];
        let usage = parse_stream(&stream(&chunks)).1.and_then(|c| c.usage);
        assert_eq!(
            usage,
            Some(Usage {
                prompt_tokens: 10,
                completion_tokens: 1,
                cached_tokens: Some(8),
                cost: None
            })
        );
    }
}
