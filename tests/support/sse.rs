//! Builders for chat-completions responses, streamed and not.

use serde_json::{Value, json};

/// A non-streaming answer with text only.
pub(crate) fn text_completion(text: &str) -> Value {
    json!({
        "id": "cmpl", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

/// A non-streaming answer with these `(id, name, arguments-json-text)` tool calls.
pub(crate) fn tool_completion(calls: &[(&str, &str, &str)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
        })
        .collect();
    json!({
        "id": "cmpl", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

/// SSE events for a text answer, split into pieces, with a final usage chunk.
pub(crate) fn text_events(pieces: &[&str]) -> Vec<Value> {
    let mut events: Vec<Value> = pieces
        .iter()
        .map(|p| json!({"choices": [{"index": 0, "delta": {"content": p}}]}))
        .collect();
    events.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    events.push(usage_event(10, 5));
    events
}

/// SSE events for one tool call, arguments split in two fragments.
pub(crate) fn tool_events(id: &str, name: &str, arguments: &str) -> Vec<Value> {
    let split = arguments.len() / 2;
    let split = (0..=split)
        .rev()
        .find(|i| arguments.is_char_boundary(*i))
        .unwrap_or(0);
    vec![
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
            {"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": &arguments[..split]}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": &arguments[split..]}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        usage_event(10, 5),
    ]
}

/// A usage-only chunk (`choices: []`).
pub(crate) fn usage_event(prompt: u64, completion: u64) -> Value {
    json!({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
        "total_tokens": prompt + completion}})
}

/// Checks the invariants every request must keep (§3.2, §11): each assistant tool call is
/// answered by exactly one tool message before the next assistant message, ids are never
/// empty, arguments are JSON object text, no assistant message is empty, and every tool
/// message answers a call. Returns the first violation.
pub(crate) fn check_request_invariants(body: &Value) -> Result<(), String> {
    let messages = body["messages"].as_array().ok_or("no messages array")?;
    let mut open: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"]
            .as_str()
            .ok_or(format!("message {i} has no role"))?;
        match role {
            "assistant" => {
                if !open.is_empty() {
                    return Err(format!("message {i}: calls {open:?} were not answered"));
                }
                let calls = message["tool_calls"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let content = message["content"].as_str().unwrap_or("");
                if calls.is_empty() && content.is_empty() {
                    return Err(format!("message {i}: empty assistant message"));
                }
                for call in calls {
                    let id = call["id"].as_str().unwrap_or("");
                    if id.is_empty() {
                        return Err(format!("message {i}: tool call without id"));
                    }
                    let args = call["function"]["arguments"]
                        .as_str()
                        .ok_or(format!("message {i}: arguments not a string"))?;
                    let parsed: Value = serde_json::from_str(args)
                        .map_err(|e| format!("message {i}: arguments not JSON: {e}"))?;
                    if !parsed.is_object() {
                        return Err(format!("message {i}: arguments not an object"));
                    }
                    open.push(id.to_string());
                }
            }
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap_or("");
                let Some(at) = open.iter().position(|o| o == id) else {
                    return Err(format!("message {i}: tool message for unknown call `{id}`"));
                };
                open.remove(at);
            }
            _ => {
                if !open.is_empty() {
                    return Err(format!("message {i}: calls {open:?} were not answered"));
                }
            }
        }
    }
    Ok(())
}
