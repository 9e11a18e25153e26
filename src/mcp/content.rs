//! A `tools/call` result (MCP `CallToolResult`, read as JSON in its wire form) → the text the
//! model gets.
//!
//! - `text` content is the text, items joined by newlines;
//! - images and audio become one short note each (`[image: image/png, 1204 bytes]`), never
//!   their base64 data;
//! - a resource link becomes a note with its URI, type and size;
//! - an embedded resource becomes a note; for a text resource the note is followed by its
//!   text (servers such as GitHub's return file contents that way), a binary one is the note
//!   alone;
//! - with no content, `structuredContent` is given as compact JSON;
//! - `isError: true` makes the whole result a tool error.
//!
//! The result is capped later, like every tool result (SPEC §7.1).

use serde_json::Value;

/// What the model gets from one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    pub(crate) text: String,
    /// The server set `isError`: the text describes a failure.
    pub(crate) is_error: bool,
}

/// Renders a `CallToolResult` JSON object.
pub(crate) fn render(result: &Value) -> Rendered {
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let items: Vec<String> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|content| content.iter().map(item).collect())
        .unwrap_or_default();
    let text = if !items.is_empty() {
        items.join("\n")
    } else {
        match result.get("structuredContent") {
            Some(structured) => structured.to_string(),
            None => "(the tool returned no content)".to_string(),
        }
    };
    Rendered { text, is_error }
}

fn item(item: &Value) -> String {
    let field = |key: &str| item.get(key).and_then(Value::as_str);
    match field("type").unwrap_or("") {
        "text" => field("text").unwrap_or("").to_string(),
        kind @ ("image" | "audio") => format!(
            "[{kind}: {}, {} bytes]",
            field("mimeType").unwrap_or("unknown type"),
            base64_size(field("data").unwrap_or(""))
        ),
        "resource_link" => format!(
            "[resource link: {}]",
            details(&[
                field("uri").map(str::to_string),
                field("name").map(|n| format!("name {n}")),
                field("mimeType").map(str::to_string),
                item.get("size")
                    .and_then(Value::as_u64)
                    .map(|s| format!("{s} bytes")),
            ])
        ),
        "resource" => embedded(item.get("resource").unwrap_or(&Value::Null)),
        other => format!(
            "[{} content not shown]",
            if other.is_empty() { "unknown" } else { other }
        ),
    }
}

fn embedded(resource: &Value) -> String {
    let field = |key: &str| resource.get(key).and_then(Value::as_str);
    let (size, text) = match (field("text"), field("blob")) {
        (Some(text), _) => (text.len(), Some(text)),
        (None, Some(blob)) => (base64_size(blob), None),
        (None, None) => (0, None),
    };
    let note = format!(
        "[resource: {}]",
        details(&[
            field("uri").map(str::to_string),
            field("mimeType").map(str::to_string),
            Some(format!("{size} bytes")),
        ])
    );
    match text {
        Some(text) => format!("{note}\n{text}"),
        None => note,
    }
}

fn details(parts: &[Option<String>]) -> String {
    let present: Vec<&str> = parts.iter().flatten().map(String::as_str).collect();
    present.join(", ")
}

/// Bytes encoded by base64 `data` (padding and whitespace allowed).
fn base64_size(data: &str) -> usize {
    let digits = data
        .bytes()
        .filter(|b| {
            b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/' || *b == b'-' || *b == b'_'
        })
        .count();
    digits * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn text(result: Value) -> (String, bool) {
        let rendered = render(&result);
        (rendered.text, rendered.is_error)
    }

    #[test]
    fn text_items_are_joined() {
        assert_eq!(
            text(
                json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})
            ),
            ("a\nb".into(), false)
        );
    }

    #[test]
    fn binary_content_becomes_notes() {
        let result = json!({"content": [
            {"type": "image", "data": "aGVsbG8gd29ybGQh", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain", "size": 12},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": "AAAAAAAA"}},
            {"type": "resource", "resource": {"uri": "file:///c.txt", "text": "hello"}},
            {"type": "widget"}
        ]});
        assert_eq!(
            text(result).0,
            "[image: image/png, 12 bytes]\n[audio: audio/wav, 3 bytes]\n\
             [resource link: file:///a.txt, name a, text/plain, 12 bytes]\n\
             [resource: file:///b.bin, application/octet-stream, 6 bytes]\n\
             [resource: file:///c.txt, 5 bytes]\nhello\n[widget content not shown]"
        );
    }

    #[test]
    fn errors_and_empty_results() {
        assert_eq!(
            text(json!({"content": [{"type": "text", "text": "no such repo"}], "isError": true})),
            ("no such repo".into(), true)
        );
        assert_eq!(
            text(json!({"content": [], "structuredContent": {"n": 1}})),
            ("{\"n\":1}".into(), false)
        );
        assert_eq!(
            text(json!({})),
            ("(the tool returned no content)".into(), false)
        );
    }
}
