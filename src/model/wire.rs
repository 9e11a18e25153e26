//! Pure conversions between [`super::types`] and OpenAI chat-completions JSON.
//!
//! Parsing is lenient on purpose (§11): responses are read by navigating `serde_json::Value`,
//! so an unexpected type in one field never rejects the whole answer. Requests are strict:
//! every message we send is valid for the strictest servers.

use serde_json::{Map, Value, json};

use super::types::{Message, Role, ToolCall, Usage};
use super::{ChatRequest, ToolSpec};

/// Request options that vary by provider and by call.
#[derive(Debug, Clone, Default)]
pub struct WireOptions {
    pub model: String,
    pub stream: bool,
    /// Send tool-only assistant messages with `content: ""` instead of `null`, for servers
    /// that reject null content.
    pub empty_content_for_tool_calls: bool,
    /// Fields merged into the request body (provider extras from config).
    pub extra_body: Map<String, Value>,
}

/// The chat-completions request body. Tools keep the order given, so the serialized prefix
/// is byte-identical from one request to the next (provider prompt caches depend on it).
pub fn request_body(request: &ChatRequest, options: &WireOptions) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), Value::String(options.model.clone()));
    let messages = request
        .messages
        .iter()
        .filter(|m| !is_empty_assistant(m))
        .map(|m| message_json(m, options.empty_content_for_tool_calls))
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(request.tools.iter().map(tool_json).collect()),
        );
    }
    body.insert("stream".into(), Value::Bool(options.stream));
    if options.stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    for (key, value) in &options.extra_body {
        body.insert(key.clone(), value.clone());
    }
    Value::Object(body)
}

/// An assistant message with neither text nor tool calls, which strict servers reject.
pub fn is_empty_assistant(message: &Message) -> bool {
    message.role == Role::Assistant
        && message.tool_calls.is_empty()
        && message.content.as_deref().is_none_or(str::is_empty)
}

fn tool_json(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }
    })
}

/// One message in wire form.
pub fn message_json(message: &Message, empty_content_for_tool_calls: bool) -> Value {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut out = Map::new();
    out.insert("role".into(), Value::String(role.into()));
    let content = match &message.content {
        Some(text) if !(text.is_empty() && !message.tool_calls.is_empty()) => {
            Value::String(text.clone())
        }
        _ if message.role == Role::Assistant && !empty_content_for_tool_calls => Value::Null,
        _ => Value::String(String::new()),
    };
    out.insert("content".into(), content);
    if let Some(reasoning) = &message.reasoning_content {
        out.insert("reasoning_content".into(), Value::String(reasoning.clone()));
    }
    if !message.tool_calls.is_empty() {
        let calls = message
            .tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                })
            })
            .collect();
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(id) = &message.tool_call_id {
        out.insert("tool_call_id".into(), Value::String(id.clone()));
    }
    Value::Object(out)
}

/// A non-streamed answer, before text tool calls are considered.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawCompletion {
    pub content: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
}

/// Parses a non-streaming chat-completions response body.
///
/// # Errors
/// A description when the body is not JSON or holds an `error` object.
pub fn parse_response(body: &str) -> Result<RawCompletion, String> {
    let value: Value = serde_json::from_str(body).map_err(|e| format!("not JSON ({e})"))?;
    if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        return Err(error_message(error));
    }
    let mut out = RawCompletion {
        usage: value.get("usage").and_then(parse_usage),
        ..RawCompletion::default()
    };
    let Some(choice) = first_choice(&value) else {
        return Ok(out);
    };
    out.finish_reason = string_field(choice, "finish_reason");
    let message = choice.get("message").unwrap_or(&Value::Null);
    out.content = content_text(message.get("content"));
    out.reasoning = string_field(message, "reasoning_content")
        .or_else(|| string_field(message, "reasoning"))
        .unwrap_or_default();
    if let Some(Value::Array(calls)) = message.get("tool_calls") {
        for (index, call) in calls.iter().enumerate() {
            let function = call.get("function").unwrap_or(&Value::Null);
            out.tool_calls.push(ToolCall {
                id: string_field(call, "id")
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| synthesized_id(index)),
                name: string_field(function, "name").unwrap_or_default(),
                arguments: arguments_text(function.get("arguments")),
            });
        }
    }
    Ok(out)
}

/// `choices[0]`, tolerating `choices: []`, `null` or absent.
pub fn first_choice(value: &Value) -> Option<&Value> {
    value.get("choices")?.as_array()?.first()
}

/// A string field, or `None` when absent, null or not a string.
pub fn string_field(value: &Value, key: &str) -> Option<String> {
    value.get(key)?.as_str().map(str::to_string)
}

/// Message content as text: a string, or the text parts of a content-part array.
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// Arguments as text: a string as-is, an object (or other JSON) serialized, null → `""`.
pub fn arguments_text(arguments: Option<&Value>) -> String {
    match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// The id given to a call the provider sent without one.
pub fn synthesized_id(index: usize) -> String {
    format!("call_{index}")
}

/// `usage` → [`Usage`]; `None` when absent or not an object.
pub fn parse_usage(usage: &Value) -> Option<Usage> {
    let usage = usage.as_object()?;
    let number = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let cached = usage
        .get("prompt_tokens_details")
        .and_then(|d| d.get("cached_tokens"))
        .and_then(Value::as_u64)
        .or_else(|| usage.get("cached_tokens").and_then(Value::as_u64));
    Some(Usage {
        prompt_tokens: number("prompt_tokens"),
        completion_tokens: number("completion_tokens"),
        cached_tokens: cached,
        cost: usage.get("cost").and_then(Value::as_f64),
    })
}

/// The human-readable message of an error body (`{"error": {"message": ...}}`,
/// `{"error": "..."}`, `{"message": ...}`), else the body itself, shortened.
pub fn error_message(error: &Value) -> String {
    if let Some(text) = error.as_str() {
        return text.to_string();
    }
    for candidate in [error.get("message"), error.get("error").and_then(|e| e.get("message"))] {
        if let Some(text) = candidate.and_then(Value::as_str) {
            return text.to_string();
        }
    }
    if let Some(inner) = error.get("error") {
        return error_message(inner);
    }
    let text = error.to_string();
    text.chars().take(500).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn tool_only_assistant_content_is_null_or_empty() {
        let message = Message {
            tool_calls: vec![ToolCall {
                id: "c".into(),
                name: "bash".into(),
                arguments: "{}".into(),
            }],
            ..Message::assistant("")
        };
        assert_eq!(message_json(&message, false)["content"], Value::Null);
        assert_eq!(message_json(&message, true)["content"], json!(""));
    }

    #[test]
    fn empty_assistant_messages_are_not_sent() {
        let request = ChatRequest {
            messages: vec![Message::user("hi"), Message::assistant(""), Message::user("again")],
            tools: vec![],
        };
        let body = request_body(&request, &WireOptions::default());
        assert_eq!(body["messages"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn response_with_object_arguments_and_missing_id() {
        let body = r#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
            "tool_calls":[{"type":"function","function":{"name":"bash","arguments":{"command":"ls -la"}}}]}}]}"#;
        let parsed = parse_response(body).unwrap_or_default();
        assert_eq!(
            parsed.tool_calls,
            vec![ToolCall {
                id: "call_0".into(),
                name: "bash".into(),
                arguments: r#"{"command":"ls -la"}"#.into()
            }]
        );
    }

    #[test]
    fn error_messages_in_common_shapes() {
        assert_eq!(error_message(&json!({"message": "bad"})), "bad");
        assert_eq!(error_message(&json!({"error": {"message": "nested"}})), "nested");
        assert_eq!(error_message(&json!("plain")), "plain");
    }
}
