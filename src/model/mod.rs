//! The model endpoint: OpenAI chat-completions over HTTP (SPEC §11), robust to the quirks
//! of OpenAI, OpenRouter, vLLM, llama.cpp, Ollama, LM Studio and LiteLLM.
//!
//! Pure parts (no I/O, unit- and property-tested):
//! - [`types`]: conversation types independent of the wire format.
//! - [`wire`]: conversions between those types and request/response JSON.
//! - [`sse`]: server-sent-events framing; [`accumulate`]: streamed chunks → one answer.
//! - [`think`]: a leading `<think>` block in content → reasoning.
//! - [`text_calls`]: tool calls that small local models write as text; [`holdback`] keeps
//!   such text off the screen while it streams.
//! - [`classify`]: what an error answer says; [`retry`]: what is retried and how long to wait.
//! - [`settings`]: `[provider]` from config.toml as [`ProviderSettings`].
//!
//! I/O: [`client`] (one request: attempts, retries, session-wide adjustments) built on
//! [`exchange`] (one HTTP attempt) and [`models`] (`GET /models` for `agent doctor`).
//!
//! The guarantees the rest of the agent relies on: a [`Completion`] comes only from a
//! complete answer (a stream cut before its `finish_reason`/`[DONE]` is retried, never
//! returned); every tool call in it has a non-empty id unique within the session; text shown
//! while streaming never includes a tool call written as text.

pub mod accumulate;
pub(crate) mod classify;
pub(crate) mod client;
pub(crate) mod exchange;
pub mod holdback;
pub(crate) mod models;
pub mod retry;
pub mod sse;
pub mod text_calls;
pub mod think;
pub mod types;
pub mod wire;

use std::time::Duration;

pub use crate::config::provider::{
    ProviderSettings, SendReasoning, TextToolCalls, ToolCallContent,
};
pub use client::Client;
pub use types::{Completion, Message, Role, ToolCall, Usage};

/// A tool offered to the model: the `function` object of a chat-completions `tools` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// One request: the full message list (system prompt first, reminder last) and the tools.
#[derive(Debug, Clone, Default)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
}

/// Progress reported while a request is under way.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A piece of assistant text, as it arrives.
    Text(String),
    /// A piece of reasoning (`reasoning_content`), shown dimmed, never mixed into the text.
    Reasoning(String),
    /// The reply so far is held back because it may be a tool call written as text
    /// ([`holdback`]); `chars` characters (Unicode scalar values) are held. Sent when holding
    /// starts, then at most every [`holdback::PROGRESS_INTERVAL`], so a long held reply still
    /// shows that the model is writing.
    Held { chars: usize },
    /// The request failed and is retried after `delay`.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        reason: String,
    },
    /// The server rejected streaming; the request is repeated without it.
    StreamingDisabled,
}

/// Why a request failed after the client's own retries. The inner loop ends the turn with
/// the message (the session stays usable), except [`ModelError::ContextLengthExceeded`],
/// which triggers compaction and one retry.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// Every attempt failed; `last` is the last failure. Retryable failures only.
    #[error("{last} (gave up after {attempts} attempts)")]
    RetriesExhausted {
        attempts: u32,
        last: Box<ModelError>,
    },
    /// The server answered with an error status; `hint` says what to check.
    #[error("the model server answered {status}: {message}{}", hint_suffix(.hint))]
    Status {
        status: u16,
        message: String,
        hint: Option<&'static str>,
    },
    /// The prompt is larger than the model's context window.
    #[error("the request is too long for the model's context window: {message}")]
    ContextLengthExceeded { message: String },
    /// No connection could be made.
    #[error("cannot connect to {url}: {message}; is the server running?")]
    Connect { url: String, message: String },
    /// The server stopped sending (idle timeout), the connection broke mid-answer, or the
    /// stream ended before its end marker. Retried; nothing from the attempt is used.
    #[error("{0}")]
    Interrupted(String),
    /// The response could not be understood.
    #[error("the model server sent an invalid response: {0}")]
    InvalidResponse(String),
    /// The HTTP client could not be built (bad header in config, TLS setup).
    #[error("cannot set up the HTTP client: {0}")]
    Setup(String),
}

fn hint_suffix(hint: &Option<&'static str>) -> String {
    hint.map(|h| format!(" ({h})")).unwrap_or_default()
}

impl ModelError {}
