//! Pure conversions between [`super::types`] and OpenAI chat-completions JSON.
//!
//! Parsing is lenient on purpose (§11): responses are read by navigating `serde_json::Value`,
//! so an unexpected type in one field never rejects the whole answer. Requests are strict:
//! every message we send is valid for the strictest servers.

use serde_json::{Map, Value, json};

use super::types::{Message, Role, ToolCall, Usage, sanitize_arguments};
use super::{ChatRequest, SendReasoning, ToolSpec};

/// Request options that vary by provider and by call.
#[derive(Debug, Clone, Default)]
pub(crate) struct WireOptions {
    pub(crate) model: String,
    pub(crate) stream: bool,
    /// Ask for a final usage chunk (`stream_options.include_usage`) when streaming.
    pub(crate) usage_in_stream: bool,
    /// How assistant messages are written.
    pub(crate) messages: MessageOptions,
    /// Fields merged into the request body (provider extras from config).
    pub(crate) extra_body: Map<String, Value>,
}

/// How assistant messages are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct MessageOptions {
    /// Send tool-only assistant messages with `content: ""` instead of `null`, for servers
    /// that reject null content.
    pub(crate) empty_content_for_tool_calls: bool,
    /// Which assistant messages carry their `reasoning_content` back.
    pub(crate) reasoning: SendReasoning,
}

/// The chat-completions request body. Tools keep the order given and nothing in a message
/// depends on its position, so the serialized prefix is byte-identical from one request to
/// the next (provider prompt caches depend on it).
pub(crate) fn request_body(request: &ChatRequest, options: &WireOptions) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), Value::String(options.model.clone()));
    let messages = request
        .messages
        .iter()
        .filter(|m| !is_empty_assistant(m))
        .map(|m| message_json(m, options.messages))
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(request.tools.iter().map(tool_json).collect()),
        );
    }
    body.insert("stream".into(), Value::Bool(options.stream));
    if options.stream && options.usage_in_stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    for (key, value) in &options.extra_body {
        body.insert(key.clone(), value.clone());
    }
    Value::Object(body)
}

/// An assistant message with neither text nor tool calls, which strict servers reject.
pub(crate) fn is_empty_assistant(message: &Message) -> bool {
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

/// One message in wire form: `content` always present (a string, or `null` for a tool-only
/// assistant message unless `options` says `""`); tool-call arguments always a JSON object
/// text ([`sanitize_arguments`]); `reasoning_content` only where `options` asks for it.
pub(crate) fn message_json(message: &Message, options: MessageOptions) -> Value {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut out = Map::new();
    out.insert("role".into(), Value::String(role.into()));
    let has_calls = !message.tool_calls.is_empty();
    let content = match &message.content {
        Some(text) if !(text.is_empty() && has_calls) => Value::String(text.clone()),
        _ if message.role == Role::Assistant && !options.empty_content_for_tool_calls => {
            Value::Null
        }
        _ => Value::String(String::new()),
    };
    out.insert("content".into(), content);
    let send_reasoning = match options.reasoning {
        SendReasoning::Off => false,
        SendReasoning::ToolCalls => has_calls,
        SendReasoning::All => true,
    };
    if let Some(reasoning) = message.reasoning_content.as_ref().filter(|r| !r.is_empty())
        && send_reasoning
        && message.role == Role::Assistant
    {
        out.insert("reasoning_content".into(), Value::String(reasoning.clone()));
    }
    if has_calls {
        let calls = message
            .tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": sanitize_arguments(&call.arguments)},
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
    pub(crate) finish_reason: Option<String>,
    pub usage: Option<Usage>,
}

/// Why a non-streaming response body could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ResponseError {
    /// The body is not JSON (an HTML error page, a proxy's text).
    #[error("not JSON ({0})")]
    NotJson(String),
    /// The body is an `error` object; its message.
    #[error("{0}")]
    Server(String),
}

/// Parses a non-streaming chat-completions response body. Missing ids stay empty (the
/// client synthesizes them); a leading `<think>` block in the content becomes reasoning.
///
/// # Errors
/// A [`ResponseError`] when the body is not JSON or holds an `error` object.
pub(crate) fn parse_response(body: &str) -> Result<RawCompletion, ResponseError> {
    let value: Value =
        serde_json::from_str(body).map_err(|e| ResponseError::NotJson(e.to_string()))?;
    if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        return Err(ResponseError::Server(error_message(error)));
    }
    let mut out = RawCompletion {
        usage: value.get("usage").and_then(parse_usage),
        ..RawCompletion::default()
    };
    if let (Some(usage), Some(n)) = (out.usage.as_mut(), llama_cache_n(&value)) {
        usage.cached_tokens.get_or_insert(n);
    }
    let Some(choice) = first_choice(&value) else {
        return Ok(out);
    };
    out.finish_reason = string_field(choice, "finish_reason");
    let message = choice.get("message").or_else(|| choice.get("delta"));
    let message = message.unwrap_or(&Value::Null);
    let mut content = content_text(message.get("content"));
    if content.is_empty() {
        content = string_field(message, "refusal").unwrap_or_default();
    }
    let split = super::think::split_whole(&content);
    out.content = split.content;
    out.reasoning = reasoning_text(message) + &split.reasoning;
    if let Some(Value::Array(calls)) = message.get("tool_calls") {
        for call in calls {
            let function = call.get("function").unwrap_or(call);
            out.tool_calls.push(ToolCall {
                id: string_field(call, "id").unwrap_or_default(),
                name: string_field(function, "name").unwrap_or_default(),
                arguments: arguments_text(function.get("arguments")),
            });
        }
    }
    Ok(out)
}

/// `choices[0]`, tolerating `choices: []`, `null` or absent.
pub(crate) fn first_choice(value: &Value) -> Option<&Value> {
    value.get("choices")?.as_array()?.first()
}

/// A string field, or `None` when absent, null or not a string.
pub(crate) fn string_field(value: &Value, key: &str) -> Option<String> {
    value.get(key)?.as_str().map(str::to_string)
}

/// Message content as text: a string, or the text parts of a content-part array.
pub(crate) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// Reasoning of a message or delta: `reasoning_content` (DeepSeek, Kimi, vLLM, llama.cpp),
/// else `reasoning` (OpenRouter, Groq, Ollama); `""` when neither is a string.
pub(crate) fn reasoning_text(message: &Value) -> String {
    string_field(message, "reasoning_content")
        .filter(|r| !r.is_empty())
        .or_else(|| string_field(message, "reasoning"))
        .unwrap_or_default()
}

/// Arguments as text: a string as-is, an object (or other JSON) serialized, null → `""`.
pub(crate) fn arguments_text(arguments: Option<&Value>) -> String {
    match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// `usage` → [`Usage`]; `None` when absent, not an object, or without token counts.
///
/// Spellings: `prompt_tokens`/`input_tokens`, `completion_tokens`/`output_tokens`; cached
/// prompt tokens from `prompt_tokens_details.cached_tokens` (OpenAI, vLLM, llama.cpp),
/// `input_tokens_details.cached_tokens`, `prompt_cache_hit_tokens` (DeepSeek),
/// `cache_read_input_tokens` (Anthropic-style proxies) or `cached_tokens` (Moonshot); `cost`
/// in USD (OpenRouter), as a number or numeric string.
pub(crate) fn parse_usage(usage: &Value) -> Option<Usage> {
    let object = usage.as_object()?;
    let count = |keys: &[&str]| keys.iter().find_map(|k| object.get(*k).and_then(as_count));
    let prompt = count(&["prompt_tokens", "input_tokens"]);
    let completion = count(&["completion_tokens", "output_tokens"]);
    if prompt.is_none() && completion.is_none() {
        return None;
    }
    let detail = |outer: &str| {
        usage
            .get(outer)
            .and_then(|d| d.get("cached_tokens"))
            .and_then(as_count)
    };
    let cached = detail("prompt_tokens_details")
        .or_else(|| detail("input_tokens_details"))
        .or_else(|| {
            count(&[
                "prompt_cache_hit_tokens",
                "cache_read_input_tokens",
                "cached_tokens",
            ])
        });
    let cost = object.get("cost").and_then(|c| match c {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    });
    Some(Usage {
        prompt_tokens: prompt.unwrap_or(0),
        completion_tokens: completion.unwrap_or(0),
        cached_tokens: cached,
        cost: cost.filter(|c: &f64| c.is_finite() && *c >= 0.0),
    })
}

/// A token count: a non-negative integer, or a float with an integral value.
fn as_count(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0 && f.fract() == 0.0)
            .map(|f| f as u64)
    })
}

/// llama.cpp's `timings.cache_n`: prompt tokens reused from its KV cache.
pub(crate) fn llama_cache_n(value: &Value) -> Option<u64> {
    value.get("timings")?.get("cache_n").and_then(as_count)
}

/// The human-readable message of an error body (`{"error": {"message": ...}}`,
/// `{"error": "..."}`, `{"message": ...}`), else the body itself, shortened.
pub(crate) fn error_message(error: &Value) -> String {
    if let Some(text) = error.as_str() {
        return text.to_string();
    }
    for candidate in [
        error.get("message"),
        error.get("error").and_then(|e| e.get("message")),
    ] {
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

    fn with_calls(content: &str, arguments: &str) -> Message {
        Message {
            tool_calls: vec![ToolCall {
                id: "c".into(),
                name: "bash".into(),
                arguments: arguments.into(),
            }],
            reasoning_content: Some("because".into()),
            ..Message::assistant(content)
        }
    }

    #[test]
    fn tool_only_assistant_content_is_null_or_empty() {
        let message = with_calls("", "{}");
        let null = MessageOptions::default();
        let empty = MessageOptions {
            empty_content_for_tool_calls: true,
            ..null
        };
        assert_eq!(message_json(&message, null)["content"], Value::Null);
        assert_eq!(message_json(&message, empty)["content"], json!(""));
        let text_only = Message::assistant("hi");
        assert_eq!(message_json(&text_only, null)["content"], json!("hi"));
        let tool = Message {
            content: None,
            ..Message::tool_result("c", "")
        };
        assert_eq!(message_json(&tool, null)["content"], json!(""));
    }

    #[test]
    fn arguments_sent_are_always_object_text() {
        let cases = [
            ("{broken", "{}"),
            ("", "{}"),
            ("null", "{}"),
            (r#""{\"a\":1}""#, r#"{"a":1}"#),
            (r#"{"a": 1}"#, r#"{"a": 1}"#),
        ];
        for (stored, sent) in cases {
            let json = message_json(&with_calls("", stored), MessageOptions::default());
            assert_eq!(
                json["tool_calls"][0]["function"]["arguments"],
                json!(sent),
                "{stored}"
            );
        }
    }

    #[test]
    fn reasoning_goes_back_where_asked() {
        let calls = with_calls("", "{}");
        let text = Message {
            reasoning_content: Some("why".into()),
            ..Message::assistant("answer")
        };
        let sent = |m: &Message, reasoning| {
            let options = MessageOptions {
                reasoning,
                ..MessageOptions::default()
            };
            message_json(m, options).get("reasoning_content").cloned()
        };
        assert_eq!(
            sent(&calls, SendReasoning::ToolCalls),
            Some(json!("because"))
        );
        assert_eq!(sent(&text, SendReasoning::ToolCalls), None);
        assert_eq!(sent(&text, SendReasoning::All), Some(json!("why")));
        assert_eq!(sent(&calls, SendReasoning::Off), None);
    }

    #[test]
    fn request_shape() {
        let request = ChatRequest {
            messages: vec![
                Message::user("hi"),
                Message::assistant(""),
                Message::user("again"),
            ],
            tools: vec![],
        };
        let mut options = WireOptions {
            model: "m".into(),
            stream: true,
            usage_in_stream: true,
            ..WireOptions::default()
        };
        options
            .extra_body
            .insert("usage".into(), json!({"include": true}));
        let body = request_body(&request, &options);
        assert_eq!(
            body["messages"].as_array().map(Vec::len),
            Some(2),
            "empty assistant dropped"
        );
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert_eq!(body["usage"], json!({"include": true}));
        assert_eq!(body.get("tools"), None);
        options.usage_in_stream = false;
        assert_eq!(request_body(&request, &options).get("stream_options"), None);
    }

    #[test]
    fn response_with_object_arguments_missing_id_and_think_block() {
        let body = r#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant",
            "content":"<think>plan</think>","tool_calls":[{"type":"function","function":{"name":"bash","arguments":{"command":"ls -la"}}}]}}],
            "usage":{"prompt_tokens":5,"completion_tokens":2},"timings":{"cache_n":4}}"#;
        let parsed = parse_response(body).unwrap_or_default();
        assert_eq!(
            parsed,
            RawCompletion {
                content: String::new(),
                reasoning: "plan".into(),
                tool_calls: vec![ToolCall {
                    id: String::new(),
                    name: "bash".into(),
                    arguments: r#"{"command":"ls -la"}"#.into()
                }],
                finish_reason: Some("tool_calls".into()),
                usage: Some(Usage {
                    prompt_tokens: 5,
                    completion_tokens: 2,
                    cached_tokens: Some(4),
                    cost: None
                }),
            }
        );
        assert!(parse_response("<html>").is_err());
        assert_eq!(
            parse_response(r#"{"error":{"message":"x"}}"#),
            Err(ResponseError::Server("x".to_string()))
        );
        assert_eq!(
            parse_response(r#"{"choices":null}"#).map(|r| r.content),
            Ok(String::new())
        );
    }

    #[test]
    fn usage_spellings() {
        let cases = [
            (
                json!({"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 8}}),
                Some((10, 2, Some(8), None)),
            ),
            (
                json!({"input_tokens": 10, "output_tokens": 2, "input_tokens_details": {"cached_tokens": 3}}),
                Some((10, 2, Some(3), None)),
            ),
            (
                json!({"prompt_tokens": 10, "completion_tokens": 2, "prompt_cache_hit_tokens": 6}),
                Some((10, 2, Some(6), None)),
            ),
            (
                json!({"prompt_tokens": 10, "completion_tokens": 2, "cache_read_input_tokens": 5}),
                Some((10, 2, Some(5), None)),
            ),
            (
                json!({"prompt_tokens": 10.0, "completion_tokens": 2, "cached_tokens": 1, "cost": 0.0012}),
                Some((10, 2, Some(1), Some(0.0012))),
            ),
            (
                json!({"prompt_tokens": 1, "cost": "0.5"}),
                Some((1, 0, None, Some(0.5))),
            ),
            (
                json!({"prompt_tokens": 1, "cost": -1}),
                Some((1, 0, None, None)),
            ),
            (json!({}), None),
            (json!(null), None),
            (json!("x"), None),
        ];
        for (usage, expected) in cases {
            let got = parse_usage(&usage).map(|u| {
                (
                    u.prompt_tokens,
                    u.completion_tokens,
                    u.cached_tokens,
                    u.cost,
                )
            });
            assert_eq!(got, expected, "{usage}");
        }
    }

    #[test]
    fn error_messages_in_common_shapes() {
        assert_eq!(error_message(&json!({"message": "bad"})), "bad");
        assert_eq!(
            error_message(&json!({"error": {"message": "nested"}})),
            "nested"
        );
        assert_eq!(error_message(&json!("plain")), "plain");
    }
}
