//! Conversation types independent of any wire format.
//!
//! [`Message`] is what history stores and what [`super::wire`] serializes into a
//! chat-completions request. Invariants kept by the inner loop (§3.2): every assistant
//! [`ToolCall`] is answered by exactly one `tool` message with the same id, ids are never
//! empty, and stored `arguments` are always a valid JSON object text.

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    /// Text; `None` for a tool-only assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Thinking text of reasoning models (`reasoning_content`), kept apart from `content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Tool calls of an assistant message, in the order the model gave them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `tool` messages: the id of the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// A user-role message the harness wrote (a coach request, a compaction note), not the
    /// user. Kept in the session file; never sent to the endpoint (the wire format has no
    /// such field, see [`super::wire::message_json`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_harness: bool,
}

impl Message {
    pub fn system(text: impl Into<String>) -> Self {
        Self::text(Role::System, text)
    }

    pub fn user(text: impl Into<String>) -> Self {
        Self::text(Role::User, text)
    }

    pub fn assistant(text: impl Into<String>) -> Self {
        Self::text(Role::Assistant, text)
    }

    /// A user-role message written by the harness, not the user (see
    /// [`Message::from_harness`]).
    pub(crate) fn harness(text: impl Into<String>) -> Self {
        Self {
            from_harness: true,
            ..Self::text(Role::User, text)
        }
    }

    /// The answer to the tool call `id`.
    pub fn tool_result(id: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(id.into()),
            ..Self::text(Role::Tool, text)
        }
    }

    fn text(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(text.into()),
            reasoning_content: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            from_harness: false,
        }
    }

    /// The text content, or `""`.
    pub fn text_content(&self) -> &str {
        self.content.as_deref().unwrap_or("")
    }

    /// Whether this is a user-role message the harness wrote, not the user.
    pub(crate) fn is_from_harness(&self) -> bool {
        self.role == Role::User && self.from_harness
    }
}

/// A tool call as the model asked for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider id (synthesized as `call_<n>` when the provider sent none).
    pub id: String,
    /// Tool name; empty when the provider sent none or `null`.
    pub name: String,
    /// Arguments as JSON text. From the model this may be anything (broken JSON, `""`);
    /// in stored history it is always a JSON object text (see [`sanitize_arguments`]).
    pub arguments: String,
}

/// Token usage of one model call, as reported by the provider (`usage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens served from the provider's prompt cache, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Cost in USD, when the provider reports it (OpenRouter `usage.cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

/// The assistant's complete answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The assistant message (role `assistant`); tool calls written as text by small models
    /// are already converted to [`ToolCall`]s here.
    pub message: Message,
    /// `finish_reason` as sent; informative only, tool calls are decided on the array.
    pub(crate) finish_reason: Option<String>,
    /// `None` when the provider reported no usage.
    pub(crate) usage: Option<Usage>,
    /// The tool calls were read from the reply's text (the model wrote them as text instead
    /// of using the tool-calling interface): evidence for the coach (`agent::coach`).
    pub(crate) calls_from_text: bool,
    /// Text held back while streaming as a possible tool call written as text, not taken as
    /// calls and not yet shown: filled only by [`super::Client::complete_keeping_held`],
    /// whose caller shows it or says why not; empty otherwise.
    pub(crate) held_text: String,
}

/// Parses tool-call arguments leniently (SPEC §4.2 step 1): a JSON object text, `""`, `null`
/// or whitespace (→ `{}`), or a JSON string holding an object (double-encoded, unwrapped once).
///
/// # Errors
/// [`ArgumentsError::Json`] with the parser's message when the text is not JSON,
/// [`ArgumentsError::NotObject`] when it is JSON but not an object.
pub(crate) fn parse_arguments(
    text: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, ArgumentsError> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "null" {
        return Ok(serde_json::Map::new());
    }
    let value: serde_json::Value =
        serde_json::from_str(trimmed).map_err(|e| ArgumentsError::Json(e.to_string()))?;
    match value {
        serde_json::Value::Object(map) => Ok(map),
        serde_json::Value::Null => Ok(serde_json::Map::new()),
        serde_json::Value::String(inner) => match serde_json::from_str(&inner) {
            Ok(serde_json::Value::Object(map)) => Ok(map),
            _ => Err(ArgumentsError::NotObject("a string")),
        },
        other => Err(ArgumentsError::NotObject(json_kind(&other))),
    }
}

/// Why a tool call's arguments are not a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ArgumentsError {
    /// Not JSON at all: the parser's message.
    #[error("{0}")]
    Json(String),
    /// JSON, but this kind of value (`an array`, `a number`, ...).
    #[error("expected a JSON object, found {0}")]
    NotObject(&'static str),
}

/// The key argument of a call's `arguments` for one line of display and the audit log: the
/// `command`, else the `path`, `name` or `description` string, else the arguments as sent.
pub(crate) fn key_argument(arguments: &str) -> String {
    let parsed = parse_arguments(arguments).unwrap_or_default();
    for key in ["command", "path", "name", "description"] {
        if let Some(value) = parsed.get(key).and_then(|v| v.as_str()) {
            return value.to_string();
        }
    }
    arguments.to_string()
}

/// The form of `arguments` stored in history: the text as sent when it is a JSON object,
/// the unwrapped object for `""`/`null`/double-encoded input, and `{}` when it cannot be
/// parsed (the call's error result explains why). Strict providers reject anything else.
pub(crate) fn sanitize_arguments(text: &str) -> String {
    let trimmed = text.trim();
    // Fast path (every request re-sends every stored call): a valid object stays as sent.
    if trimmed.starts_with('{') && serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok() {
        return trimmed.to_string();
    }
    match parse_arguments(trimmed) {
        Ok(map) => serde_json::Value::Object(map).to_string(),
        Err(_) => "{}".to_string(),
    }
}

/// `object`, `array`, `string`, ... for error messages.
pub(crate) fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn lenient_arguments() {
        let ok = |t: &str| parse_arguments(t).map(|m| serde_json::Value::Object(m).to_string());
        assert_eq!(ok(""), Ok("{}".into()));
        assert_eq!(ok("  "), Ok("{}".into()));
        assert_eq!(ok("null"), Ok("{}".into()));
        assert_eq!(ok(r#"{"a":1}"#), Ok(r#"{"a":1}"#.into()));
        assert_eq!(ok(r#""{\"a\":1}""#), Ok(r#"{"a":1}"#.into()));
        assert!(ok("[1]").is_err());
        assert!(ok("{}{}").is_err());
        assert!(ok(r#"{"path": "C:\Users"}"#).is_err());
    }

    #[test]
    fn sanitized_arguments_are_objects() {
        assert_eq!(sanitize_arguments(r#"{"a": 1}"#), r#"{"a": 1}"#);
        assert_eq!(sanitize_arguments(""), "{}");
        assert_eq!(sanitize_arguments("{broken"), "{}");
        assert_eq!(sanitize_arguments(r#""{\"a\":1}""#), r#"{"a":1}"#);
        assert_eq!(sanitize_arguments("[1,2]"), "{}");
    }
}
