//! Token accounting (SPEC §7.2): the provider's `usage` where it covers the request, an
//! estimate of about 4 bytes a token for the rest, and the context window of a model.
//!
//! The estimate counts bytes, not characters: for ASCII the two agree, and for scripts where
//! one character is one token (CJK) bytes/4 is closer than chars/4. It is deliberately
//! coarse; the server's `prompt_tokens` corrects it after every request.

use crate::model::{Message, ToolSpec};

/// Bytes per token in the estimate (DEPENDENCIES.md: "bytes/4 estimate corrected by usage").
pub(crate) const BYTES_PER_TOKEN: u64 = 4;
/// Tokens a chat template adds around each message (role markers), estimated.
pub(crate) const MESSAGE_OVERHEAD_TOKENS: u64 = 4;

/// Estimated tokens of `text` (≈ 4 bytes a token, rounded up).
pub(crate) fn estimate_text(text: &str) -> u64 {
    (text.len() as u64).div_ceil(BYTES_PER_TOKEN)
}

/// Estimated tokens of one message: its text, reasoning, tool-call names and arguments,
/// plus the template overhead.
pub(crate) fn estimate_message(message: &Message) -> u64 {
    let mut bytes = message.content.as_deref().map_or(0, str::len)
        + message.reasoning_content.as_deref().map_or(0, str::len);
    for call in &message.tool_calls {
        bytes += call.id.len() + call.name.len() + call.arguments.len();
    }
    (bytes as u64).div_ceil(BYTES_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS
}

/// Estimated tokens of a list of messages.
pub(crate) fn estimate_messages(messages: &[Message]) -> u64 {
    messages.iter().map(estimate_message).sum()
}

/// Estimated tokens of the tool schemas as sent (their JSON text).
pub(crate) fn estimate_tools(tools: &[ToolSpec]) -> u64 {
    let bytes: usize = tools
        .iter()
        .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len() + 40)
        .sum();
    (bytes as u64).div_ceil(BYTES_PER_TOKEN)
}

/// The limit a context-length error states, when it states one: OpenAI/vLLM "maximum
/// context length is 8192 tokens", llama.cpp `"n_ctx":4096`, Ollama/others "context size
/// (4096)" / "context window of 4096".
pub(crate) fn limit_from_error(message: &str) -> Option<u64> {
    let lower = message.to_lowercase();
    for marker in [
        "maximum context length is",
        "\"n_ctx\":",
        "n_ctx=",
        "n_ctx:",
        "context size (",
        "context window of",
        "context length of",
    ] {
        if let Some(at) = lower.find(marker) {
            let digits: String = lower[at + marker.len()..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            if let Ok(limit) = digits.parse::<u64>()
                && limit >= 256
            {
                return Some(limit);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn estimates_round_up() {
        assert_eq!(estimate_text(""), 0);
        assert_eq!(estimate_text("abcde"), 2);
        assert_eq!(
            estimate_message(&Message::user("abcd")),
            1 + MESSAGE_OVERHEAD_TOKENS
        );
    }

    #[test]
    fn limits_in_provider_wordings() {
        assert_eq!(
            limit_from_error(
                "This model's maximum context length is 8192 tokens. However, you requested 9000"
            ),
            Some(8192)
        );
        assert_eq!(
            limit_from_error(r#"{"error":{"n_prompt_tokens":5000,"n_ctx":4096}}"#),
            Some(4096)
        );
        assert_eq!(
            limit_from_error("Request is longer than this model allows."),
            None
        );
    }
}
