//! The model endpoint: OpenAI chat-completions over HTTP (SPEC §11).
//!
//! - [`types`]: conversation types independent of the wire format.
//! - [`wire`]: pure conversions between those types and request/response JSON.
//! - [`sse`]: server-sent-events framing and the streamed tool-call accumulator.
//! - [`text_calls`]: tool calls that small local models write as text.
//! - [`client`]: HTTP, streaming, retries, error classification.

pub mod client;
pub mod sse;
pub mod text_calls;
pub mod types;
pub mod wire;

use std::collections::BTreeMap;
use std::time::Duration;

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

/// Whether tool calls written as text are read (§11, `text_tool_calls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TextToolCalls {
    #[default]
    Auto,
    Off,
}

/// Endpoint behaviour taken from `[provider]` in config.toml.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    pub headers: BTreeMap<String, String>,
    pub connect_timeout: Duration,
    /// Longest silence (no byte received) before a request fails.
    pub idle_timeout: Duration,
    /// Attempts per request, including the first.
    pub max_attempts: u32,
    /// Cap on one wait between attempts (also caps `Retry-After`).
    pub max_retry_wait: Duration,
    pub text_tool_calls: TextToolCalls,
    pub stream: bool,
    /// JSON fields merged into every request body.
    pub extra_body: serde_json::Map<String, serde_json::Value>,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        Self {
            headers: BTreeMap::new(),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            max_attempts: 5,
            max_retry_wait: Duration::from_secs(60),
            text_tool_calls: TextToolCalls::Auto,
            stream: true,
            extra_body: serde_json::Map::new(),
        }
    }
}

/// Why a request failed after the client's own retries. The inner loop ends the turn with
/// the message (the session stays usable), except [`ModelError::ContextLengthExceeded`],
/// which triggers compaction and one retry.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
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
    /// The server stopped sending (idle timeout) or the connection broke mid-answer.
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
