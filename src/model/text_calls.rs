//! Tool calls written as text by small local models (§11).
//!
//! When a reply has no native `tool_calls` and its whole content is tool-call blocks naming
//! offered tools, those blocks are the calls: `<tool_call>{...}</tool_call>` blocks (Qwen /
//! Hermes format, several allowed), one JSON object, or one fenced ```json block, each with
//! `name` and `arguments` (or `parameters`). Any other text stays text, so an answer that
//! merely shows JSON to the user is never executed.

use serde_json::Value;

use super::types::ToolCall;
use super::wire;

/// The calls in `content`, or `None` when it is not purely tool-call blocks naming tools in
/// `offered`.
pub fn extract(content: &str, offered: &[&str]) -> Option<Vec<ToolCall>> {
    let trimmed = content.trim();
    if trimmed.is_empty() {
        return None;
    }
    let objects = if trimmed.starts_with("<tool_call>") {
        tagged_blocks(trimmed)?
    } else if let Some(body) = fenced_block(trimmed) {
        vec![body]
    } else {
        vec![trimmed]
    };
    let calls = objects
        .into_iter()
        .enumerate()
        .map(|(index, text)| call_from_json(text, index, offered))
        .collect::<Option<Vec<_>>>()?;
    (!calls.is_empty()).then_some(calls)
}

/// The bodies of `<tool_call>...</tool_call>` blocks; `None` if anything else is present.
fn tagged_blocks(mut rest: &str) -> Option<Vec<&str>> {
    let mut bodies = Vec::new();
    while !rest.is_empty() {
        let after_open = rest.strip_prefix("<tool_call>")?;
        let (body, after) = match after_open.find("</tool_call>") {
            Some(end) => (&after_open[..end], &after_open[end + "</tool_call>".len()..]),
            // A missing final close tag (generation stopped at it) is accepted.
            None => (after_open, ""),
        };
        bodies.push(body.trim());
        rest = after.trim_start();
    }
    Some(bodies)
}

/// The body of a message that is exactly one fenced code block (```json or ```).
fn fenced_block(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("```")?.strip_suffix("```")?;
    let (info, body) = inner.split_once('\n')?;
    let info = info.trim();
    if !(info.is_empty() || info.eq_ignore_ascii_case("json")) || body.contains("```") {
        return None;
    }
    Some(body.trim())
}

fn call_from_json(text: &str, index: usize, offered: &[&str]) -> Option<ToolCall> {
    let value: Value = serde_json::from_str(text).ok()?;
    let object = value.as_object()?;
    let name = object.get("name")?.as_str()?;
    if !offered.contains(&name) {
        return None;
    }
    let arguments = object.get("arguments").or_else(|| object.get("parameters"))?;
    Some(ToolCall {
        id: format!("text_call_{index}"),
        name: name.to_string(),
        arguments: wire::arguments_text(Some(arguments)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const OFFERED: &[&str] = &["bash", "write_file"];

    fn names(content: &str) -> Option<Vec<(String, String)>> {
        extract(content, OFFERED).map(|calls| {
            calls
                .into_iter()
                .map(|c| (c.name, c.arguments))
                .collect()
        })
    }

    #[test]
    fn recognised_forms() {
        let expected = Some(vec![("bash".to_string(), r#"{"command":"ls"}"#.to_string())]);
        assert_eq!(names(r#"{"name": "bash", "arguments": {"command":"ls"}}"#), expected);
        assert_eq!(
            names("```json\n{\"name\": \"bash\", \"arguments\": {\"command\":\"ls\"}}\n```"),
            expected
        );
        assert_eq!(
            names("<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\":\"ls\"}}\n</tool_call>"),
            expected
        );
        let two = "<tool_call>{\"name\":\"bash\",\"arguments\":{}}</tool_call>\n<tool_call>{\"name\":\"write_file\",\"arguments\":\"{}\"}</tool_call>";
        assert_eq!(names(two).map(|v| v.len()), Some(2));
    }

    #[test]
    fn other_text_stays_text() {
        assert_eq!(names("Run this:\n```json\n{\"name\":\"bash\",\"arguments\":{}}\n```"), None);
        assert_eq!(names(r#"{"name": "python", "arguments": {}}"#), None);
        assert_eq!(names(r#"{"name": "bash"}"#), None);
        assert_eq!(names("```python\nprint(1)\n```"), None);
        assert_eq!(names("hello"), None);
        assert_eq!(names("<tool_call>{\"name\":\"bash\",\"arguments\":{}}</tool_call> done"), None);
    }
}
