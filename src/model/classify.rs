//! Reading error answers: what the server's message says and what the client does about it.
//!
//! Error bodies come in many shapes (`{"error": {"message"}}`, `{"error": "..."}`,
//! `{"message"}`, Anthropic's `{"type": "error", "error": {...}}`, OpenRouter's
//! `metadata.raw`, plain text or HTML from a proxy); [`error_text`] finds the human-readable
//! part. The predicates recognise, by the wordings real servers use, the rejections the client
//! repairs by itself: a prompt over the context window (compaction, by the caller), `null`
//! content in tool-only assistant messages, an unknown `reasoning_content` field, and
//! streaming or `stream_options` being unsupported.

use serde_json::Value;

use super::wire;

/// Longest message kept from an error body, in characters.
const MAX_MESSAGE_CHARS: usize = 500;

/// The human-readable message of an error body, shortened; `fallback` when there is none.
pub(crate) fn error_text(body: &str, fallback: &str) -> String {
    let message = match serde_json::from_str::<Value>(body) {
        Ok(value) => {
            let mut message = wire::error_message(&value);
            if let Some(raw) = provider_detail(&value).filter(|raw| !message.contains(raw)) {
                message = format!("{message}: {raw}");
            }
            message
        }
        Err(_) => body.trim().to_string(),
    };
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if message.is_empty() {
        return fallback.to_string();
    }
    let mut short: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
    if short.len() < message.len() {
        short.push('…');
    }
    short
}

/// OpenRouter passes the upstream provider's own error text in `error.metadata.raw`.
fn provider_detail(value: &Value) -> Option<String> {
    let raw = value.get("error")?.get("metadata")?.get("raw")?;
    let text = match raw {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    Some(text.chars().take(300).collect())
}

/// What to check for a status that will not be retried.
pub(crate) fn hint(status: u16, body: &str) -> Option<&'static str> {
    let lower = body.to_lowercase();
    if lower.contains("does not support tools")
        || lower.contains("tools are not supported")
        || lower.contains("tool use is not supported")
        || (lower.contains("tool") && lower.contains("not supported"))
    {
        return Some("this model cannot call tools; choose a model with tool support");
    }
    match status {
        401 | 403 => Some("check API_KEY"),
        402 | 429 => Some("check the account's plan, credit and billing with the provider"),
        404 => Some("check MODEL and BASE_URL"),
        _ => None,
    }
}

/// Whether an error says the prompt exceeds the model's context window, in the wordings of
/// OpenAI/Azure, Anthropic-compatible proxies, OpenRouter, vLLM, llama.cpp, Ollama, LM Studio,
/// Mistral, Gemini, Groq, DeepSeek and TGI. A `413 Payload Too Large` counts as well: the cure
/// (a smaller history) is the same.
pub(crate) fn is_context_length_error(status: u16, body: &str) -> bool {
    if status == 413 {
        return true;
    }
    if !matches!(status, 400 | 422 | 500 | 200) {
        return false;
    }
    let lower = body.to_lowercase();
    [
        "context_length_exceeded",
        "context length",
        "context window",
        "context_window",
        "maximum context",
        "too many tokens",
        "prompt is too long",
        "prompt too long",
        "longer than this model allows",
        "exceeds the available context size",
        "exceed_context_size",
        "input is too long",
        "exceeds the maximum number of tokens",
        "reduce the length of the messages",
        "context overflow",
        "tokens + `max_new_tokens` must be",
        "maximum input length",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// Whether a 400/422 rejects `"content": null` (sent for tool-only assistant messages); the
/// client then sends `""` for the rest of the session. Wordings: pydantic ("Input should be a
/// valid string", "none is not an allowed value"), OpenAI/Azure ("expected a string, got
/// null"), Mistral/Together ("content ... required"), Rust/Go servers ("invalid type: null").
pub(crate) fn rejects_null_content(status: u16, body: &str) -> bool {
    if !matches!(status, 400 | 422) {
        return false;
    }
    let lower = body.to_lowercase();
    lower.contains("content")
        && [
            "null",
            "none",
            "valid string",
            "expected a string",
            "expected string",
            "must be a string",
            "must be string",
            "field required",
            "is required",
            "missing",
            "cannot be empty",
        ]
        .iter()
        .any(|needle| lower.contains(needle))
}

/// Whether a 400/422 rejects the `reasoning_content` field we sent back (e.g. Groq: "property
/// 'reasoning_content' is unsupported"); the client then stops sending it for the session.
pub(crate) fn rejects_reasoning_field(status: u16, body: &str) -> bool {
    matches!(status, 400 | 422) && body.to_lowercase().contains("reasoning_content")
}

/// Whether a 400/422 rejects `stream_options` (older Azure API versions, some proxies).
pub(crate) fn rejects_stream_options(status: u16, body: &str) -> bool {
    matches!(status, 400 | 422) && body.to_lowercase().contains("stream_options")
}

/// Whether a 400/422/501 says the server cannot stream: the word `stream` (not `upstream`,
/// not `stream_options`) next to a refusal.
pub(crate) fn rejects_streaming(status: u16, body: &str) -> bool {
    if !matches!(status, 400 | 422 | 501) {
        return false;
    }
    let lower = body.to_lowercase();
    let refusal = [
        "not support",
        "unsupported",
        "not allowed",
        "not available",
        "not implemented",
        "invalid",
        "unknown",
        "unrecognized",
        "extra",
        "disabled",
        "cannot",
    ];
    (has_word(&lower, "stream") || has_word(&lower, "streaming"))
        && (status == 501 || refusal.iter().any(|r| lower.contains(r)))
}

/// Whether `word` occurs in `text` with no letter, digit or `_` on either side.
fn has_word(text: &str, word: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// Whether a 429 means the account is out of quota or credit (OpenAI `insufficient_quota`):
/// waiting does not help, so it is not retried.
pub(crate) fn is_quota_exhausted(status: u16, body: &str) -> bool {
    let lower = body.to_lowercase();
    status == 429
        && ["insufficient_quota", "exceeded your current quota"]
            .iter()
            .any(|needle| lower.contains(needle))
}

/// An error object the server sent with status 200 (inside a stream or as the whole body):
/// its numeric status when it gives one (`code: 429`, `status: 503`), for retry decisions.
pub(crate) fn embedded_status(error: &Value) -> Option<u16> {
    let code = [error.get("code"), error.get("status")]
        .into_iter()
        .flatten()
        .find_map(|v| match v {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        })?;
    u16::try_from(code).ok().filter(|c| (100..600).contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn messages_from_common_shapes() {
        let cases = [
            (r#"{"error":{"message":"bad key"}}"#, "bad key"),
            (r#"{"error":"plain"}"#, "plain"),
            (r#"{"message":"top"}"#, "top"),
            (
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                "Overloaded",
            ),
            (
                r#"{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"upstream busy"}}}"#,
                "Provider returned error: upstream busy",
            ),
            (
                "<html>\n<b>502</b> Bad   Gateway</html>",
                "<html> <b>502</b> Bad Gateway</html>",
            ),
            ("", "Service Unavailable"),
        ];
        for (body, expected) in cases {
            assert_eq!(error_text(body, "Service Unavailable"), expected, "{body}");
        }
        assert_eq!(
            error_text(&"x".repeat(900), "").chars().count(),
            MAX_MESSAGE_CHARS + 1
        );
    }

    #[test]
    fn context_length_wordings() {
        let yes = [
            (400, r#"{"error":{"code":"context_length_exceeded"}}"#),
            (400, "Request is longer than this model allows."),
            (
                400,
                "This model's maximum context length is 4096 tokens. However, you requested 5000",
            ),
            (
                400,
                "the request exceeds the available context size, try increasing it",
            ),
            (400, "prompt is too long: 210000 tokens > 200000 maximum"),
            (
                400,
                "The input token count (1200000) exceeds the maximum number of tokens allowed",
            ),
            (
                400,
                "Please reduce the length of the messages or completion.",
            ),
            (
                422,
                "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192",
            ),
            (413, "Payload Too Large"),
        ];
        for (status, body) in yes {
            assert!(is_context_length_error(status, body), "{status} {body}");
        }
        assert!(!is_context_length_error(429, "context length"));
        assert!(!is_context_length_error(400, "bad request"));
        assert!(!is_context_length_error(
            400,
            "max_tokens is too large: 100000"
        ));
    }

    #[test]
    fn null_content_wordings() {
        let yes = [
            "messages.2.content: Input should be a valid string",
            "Invalid value for 'content': expected a string, got null.",
            "messages[2].content: none is not an allowed value",
            "invalid type: null, expected a string at line 1 column 300 (content)",
            "Assistant message content is required",
        ];
        for body in yes {
            assert!(rejects_null_content(400, body), "{body}");
        }
        assert!(!rejects_null_content(400, "Incorrect API key"));
        assert!(!rejects_null_content(401, "content is required"));
    }

    #[test]
    fn other_rejections() {
        let groq =
            "'messages.2' : property 'reasoning_content' is unsupported, did you mean 'reasoning'?";
        assert!(rejects_reasoning_field(400, groq));
        assert!(rejects_stream_options(
            400,
            "Unrecognized request argument supplied: stream_options"
        ));
        assert!(rejects_streaming(400, "stream is not supported"));
        assert!(rejects_streaming(
            422,
            "body.stream: extra fields not permitted"
        ));
        assert!(rejects_streaming(501, "stream"));
        assert!(rejects_streaming(
            400,
            "Streaming is not supported for this model"
        ));
        assert!(!rejects_streaming(400, "streaming is great"), "no refusal");
        assert!(
            !rejects_streaming(400, "upstream provider: invalid request"),
            "upstream"
        );
        assert!(!rejects_streaming(401, "stream is not supported"));
        assert!(is_quota_exhausted(
            429,
            r#"{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}"#
        ));
        assert!(!is_quota_exhausted(429, "rate limit exceeded"));
        assert_eq!(
            hint(
                400,
                "registry.ollama.ai/library/gemma:2b does not support tools"
            ),
            Some("this model cannot call tools; choose a model with tool support")
        );
        assert_eq!(hint(401, ""), Some("check API_KEY"));
        assert_eq!(hint(404, ""), Some("check MODEL and BASE_URL"));
        assert_eq!(hint(400, "bad"), None);
    }

    #[test]
    fn embedded_status_codes() {
        let status = |v: Value| embedded_status(&v);
        assert_eq!(
            status(serde_json::json!({"code": 502, "message": "x"})),
            Some(502)
        );
        assert_eq!(status(serde_json::json!({"code": "429"})), Some(429));
        assert_eq!(status(serde_json::json!({"code": "server_error"})), None);
        assert_eq!(status(serde_json::json!({"status": 70000})), None);
    }
}
