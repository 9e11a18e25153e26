//! `GET {BASE_URL}/models`: which models the server offers (used by `agent doctor`).
//!
//! Accepted shapes: OpenAI's `{"data": [{"id": ...}]}` (also OpenRouter, vLLM, llama.cpp,
//! Ollama, LM Studio, LiteLLM), `{"models": [{"name"|"model"|"id": ...}]}`, or a bare array of
//! such objects or of strings. A 404/405 means the server does not offer the list, which is
//! fine: many proxies do not.

use serde_json::Value;

/// What `GET /models` answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ModelList {
    /// The model ids, in the server's order.
    Listed(Vec<String>),
    /// The server does not offer the list (this status).
    NotOffered(u16),
}

/// The model ids in a `/models` body; `None` when the body has no recognisable list.
pub(crate) fn parse_model_ids(body: &str) -> Option<Vec<String>> {
    let value: Value = serde_json::from_str(body).ok()?;
    let list = match &value {
        Value::Array(items) => items,
        other => other
            .get("data")
            .or_else(|| other.get("models"))
            .and_then(Value::as_array)?,
    };
    let ids = list
        .iter()
        .filter_map(|item| match item {
            Value::String(id) => Some(id.clone()),
            object => ["id", "name", "model"]
                .iter()
                .find_map(|key| object.get(*key).and_then(Value::as_str))
                .map(str::to_string),
        })
        .collect();
    Some(ids)
}

/// Whether `model` is in `ids`: exactly, or ignoring a `provider/` prefix or a `:latest` tag
/// (Ollama lists `qwen2.5-coder:latest` for `qwen2.5-coder`).
pub(crate) fn is_listed(ids: &[String], model: &str) -> bool {
    let bare = |id: &str| id.strip_suffix(":latest").unwrap_or(id).to_string();
    let wanted = bare(model);
    ids.iter().any(|id| {
        let id = bare(id);
        id == wanted || id.rsplit('/').next() == Some(wanted.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn list_shapes() {
        let ids = |body: &str| parse_model_ids(body);
        let two = Some(vec!["a".to_string(), "b".to_string()]);
        assert_eq!(
            ids(r#"{"object":"list","data":[{"id":"a"},{"id":"b"}]}"#),
            two
        );
        assert_eq!(ids(r#"{"models":[{"name":"a"},{"model":"b"}]}"#), two);
        assert_eq!(ids(r#"["a","b"]"#), two);
        assert_eq!(ids(r#"{"data":null}"#), None);
        assert_eq!(ids("<html>"), None);
    }

    #[test]
    fn listed_models() {
        let ids = vec![
            "qwen2.5-coder:latest".to_string(),
            "openai/gpt-4o".to_string(),
        ];
        assert!(is_listed(&ids, "qwen2.5-coder"));
        assert!(is_listed(&ids, "gpt-4o"));
        assert!(is_listed(&ids, "openai/gpt-4o"));
        assert!(!is_listed(&ids, "gpt-4"));
    }
}
