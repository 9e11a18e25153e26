//! Tool calls written as text by small local models (§11).
//!
//! When a reply has no native `tool_calls` and its whole content is tool-call blocks naming
//! offered tools, those blocks are the calls. Recognised, as seen from Qwen, Hermes and
//! Llama-family models served without a tool-call parser:
//!
//! - JSON call objects `{"name": ..., "arguments": {...}}` (or `parameters`), one or several
//!   separated by whitespace, also wrapped in one extra pair of braces (`{{...}}`, a template
//!   artefact);
//! - those objects inside one fenced block (```` ```json ```` or a bare fence);
//! - blocks `<tool_call>…</tool_call>`, `<tools>…</tools>` or `<function_calls>…</function_calls>`
//!   holding JSON call objects or XML calls;
//! - XML calls `<function=NAME><parameter=KEY>VALUE</parameter>…</function>` (Qwen3-Coder) and
//!   `<function name="NAME">` with `<parameter name="KEY">` children or an `<arguments>`
//!   element whose children are the keys;
//! - a bare XML call or JSON call object followed by a stray closing wrapper tag
//!   (`…</function>\n</tool_call>`): the opening `<tool_call>` is a special token that servers
//!   without the model's tool parser drop from the content while keeping the closing one
//!   (Qwen3-Coder under Ollama, LM Studio and mlx-lm; ollama/ollama#13093).
//!
//! Any other text stays text, so an answer that merely shows JSON to the user is never
//! executed: a single block with text before or after it, a call naming a tool that was not
//! offered, or an object without both `name` and `arguments`.

use serde_json::{Map, Value};

use super::types::ToolCall;
use super::wire;

/// Wrapper tags whose bodies hold calls, outermost first.
const WRAPPERS: &[(&str, &str)] = &[
    ("<tool_call>", "</tool_call>"),
    ("<tools>", "</tools>"),
    ("<function_calls>", "</function_calls>"),
];

/// The calls in `content`, or `None` when it is not purely tool-call blocks naming tools in
/// `offered`.
pub fn extract(content: &str, offered: &[&str]) -> Option<Vec<ToolCall>> {
    let trimmed = content.trim();
    if trimmed.is_empty() {
        return None;
    }
    let calls = if trimmed.starts_with('<') {
        tagged_calls(trimmed)?
    } else if let Some(body) = fenced_block(trimmed) {
        json_calls(body)?
    } else {
        json_calls(trimmed)?
    };
    let all_offered = calls
        .iter()
        .all(|(name, _)| offered.contains(&name.as_str()));
    if calls.is_empty() || !all_offered {
        return None;
    }
    Some(
        calls
            .into_iter()
            .map(|(name, arguments)| ToolCall {
                id: String::new(),
                name,
                arguments,
            })
            .collect(),
    )
}

type Call = (String, String);

/// A sequence of wrapper blocks and XML function calls separated by whitespace only.
fn tagged_calls(mut rest: &str) -> Option<Vec<Call>> {
    let mut calls = Vec::new();
    while !rest.is_empty() {
        if rest.starts_with("<function=") || rest.starts_with("<function ") {
            let open_end = rest.find('>')?;
            let (call, after) = if rest[..open_end].ends_with('/') {
                (self_closing_call(&rest[..open_end])?, &rest[open_end + 1..])
            } else {
                let (element, after) = take_element(rest, "</function>");
                (xml_call(element)?, after)
            };
            calls.push(call);
            rest = skip_stray_close(after);
            continue;
        }
        let (open, close) = WRAPPERS.iter().find(|(open, _)| rest.starts_with(open))?;
        let (element, after) = take_element(rest, close);
        let body = element[open.len()..].trim_end();
        let body = body.strip_suffix(close).unwrap_or(body).trim();
        if body.starts_with('<') {
            calls.extend(tagged_calls(body)?);
        } else {
            calls.extend(json_calls(fenced_block(body).unwrap_or(body))?);
        }
        rest = after.trim_start();
    }
    Some(calls)
}

/// `text` without leading whitespace and one closing wrapper tag whose opening tag is missing
/// (see the module doc).
fn skip_stray_close(text: &str) -> &str {
    let text = text.trim_start();
    WRAPPERS
        .iter()
        .find_map(|(_, close)| text.strip_prefix(close))
        .map_or(text, str::trim_start)
}

/// Splits `text` after the first `close` tag; a missing close tag (generation stopped at it)
/// takes the rest.
fn take_element<'a>(text: &'a str, close: &str) -> (&'a str, &'a str) {
    match text.find(close) {
        Some(at) => text.split_at(at + close.len()),
        None => (text, ""),
    }
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

/// One or more JSON call objects separated by whitespace, each possibly wrapped in one extra
/// pair of braces.
fn json_calls(text: &str) -> Option<Vec<Call>> {
    let mut calls = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let doubled = rest.starts_with("{{");
        let start = if doubled { &rest[1..] } else { rest };
        let mut values = serde_json::Deserializer::from_str(start).into_iter::<Value>();
        let value = values.next()?.ok()?;
        let mut after = start[values.byte_offset()..].trim_start();
        if doubled {
            after = after.strip_prefix('}')?.trim_start();
        }
        calls.push(json_call(&value)?);
        rest = skip_stray_close(after);
    }
    Some(calls)
}

fn json_call(value: &Value) -> Option<Call> {
    let object = value.as_object()?;
    let name = object.get("name")?.as_str()?;
    let arguments = object
        .get("arguments")
        .or_else(|| object.get("parameters"))?;
    Some((name.to_string(), wire::arguments_text(Some(arguments))))
}

/// `<function=NAME>…</function>` or `<function name="NAME">…</function>`.
fn xml_call(element: &str) -> Option<Call> {
    let open_end = element.find('>')?;
    let open = &element[..open_end];
    let name = attribute(open, "function")?;
    let body = element[open_end + 1..].trim();
    let body = body.strip_suffix("</function>").unwrap_or(body);
    let mut arguments = Map::new();
    let mut rest = body.trim();
    if let Some(inner) = rest.strip_prefix("<arguments>") {
        rest = inner
            .trim_end()
            .strip_suffix("</arguments>")
            .unwrap_or(inner);
        while let Some((key, value, after)) = child_element(rest.trim_start()) {
            arguments.insert(key.to_string(), xml_value(value));
            rest = after;
        }
    } else {
        while let Some(after_open) = rest.trim_start().strip_prefix("<parameter") {
            let open_end = after_open.find('>')?;
            let key = attribute(
                &format!("<parameter{}", &after_open[..open_end]),
                "parameter",
            )?;
            let value_and_rest = &after_open[open_end + 1..];
            let (value, after) = match value_and_rest.find("</parameter>") {
                Some(at) => (
                    &value_and_rest[..at],
                    &value_and_rest[at + "</parameter>".len()..],
                ),
                None => (value_and_rest, ""),
            };
            arguments.insert(key, xml_value(value));
            rest = after;
        }
    }
    if !rest.trim().is_empty() {
        return None;
    }
    Some((name, Value::Object(arguments).to_string()))
}

/// `<function name="NAME" arguments='{...}'/>` (the tag without its final `>`).
fn self_closing_call(open: &str) -> Option<Call> {
    let name = attribute(open, "function")?;
    let arguments = quoted_attribute(open, "arguments").unwrap_or_else(|| "{}".to_string());
    let value: Value = serde_json::from_str(&arguments).ok()?;
    value.is_object().then(|| (name, value.to_string()))
}

/// The value of ` KEY='...'` or ` KEY="..."` in an opening tag.
fn quoted_attribute(open: &str, key: &str) -> Option<String> {
    let start = open.find(&format!(" {key}="))? + key.len() + 2;
    let rest = &open[start..];
    let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let body = &rest[1..];
    Some(body[..body.find(quote)?].to_string())
}

/// The name in `<tag=NAME` or `<tag name="NAME"`.
fn attribute(open: &str, tag: &str) -> Option<String> {
    let rest = open.strip_prefix('<')?.strip_prefix(tag)?;
    let name = if let Some(value) = rest.strip_prefix('=') {
        value.trim().trim_matches('"').to_string()
    } else {
        quoted_attribute(open, "name").or_else(|| {
            let value = rest.trim().strip_prefix("name=")?;
            Some(
                value
                    .trim()
                    .trim_matches(|c| c == '"' || c == '\'')
                    .to_string(),
            )
        })?
    };
    (!name.is_empty()).then_some(name)
}

/// `<KEY>VALUE</KEY>` at the start of `text`: key, value and the text after it.
fn child_element(text: &str) -> Option<(&str, &str, &str)> {
    let rest = text.strip_prefix('<')?;
    let key_end = rest.find('>')?;
    let key = &rest[..key_end];
    if key.is_empty() || key.starts_with('/') || key.contains(char::is_whitespace) {
        return None;
    }
    let close = format!("</{key}>");
    let body = &rest[key_end + 1..];
    let at = body.find(&close)?;
    Some((key, &body[..at], &body[at + close.len()..]))
}

/// A parameter value: JSON arrays and objects are taken as such, anything else as text (the
/// dispatcher's schema check coerces `"60"` for integers).
fn xml_value(raw: &str) -> Value {
    let value = raw
        .strip_prefix("\r\n")
        .or_else(|| raw.strip_prefix('\n'))
        .unwrap_or(raw);
    let value = value
        .strip_suffix("\r\n")
        .or_else(|| value.strip_suffix('\n'))
        .unwrap_or(value);
    match serde_json::from_str::<Value>(value.trim()) {
        Ok(parsed @ (Value::Array(_) | Value::Object(_))) => parsed,
        _ => Value::String(value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const OFFERED: &[&str] = &["bash", "write_file"];

    fn names(content: &str) -> Option<Vec<(String, String)>> {
        extract(content, OFFERED)
            .map(|calls| calls.into_iter().map(|c| (c.name, c.arguments)).collect())
    }

    fn ls() -> Option<Vec<(String, String)>> {
        Some(vec![(
            "bash".to_string(),
            r#"{"command":"ls"}"#.to_string(),
        )])
    }

    #[test]
    fn recognised_forms() {
        assert_eq!(
            names(r#"{"name": "bash", "arguments": {"command":"ls"}}"#),
            ls()
        );
        assert_eq!(
            names("```json\n{\"name\": \"bash\", \"arguments\": {\"command\":\"ls\"}}\n```"),
            ls()
        );
        assert_eq!(
            names(
                "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\":\"ls\"}}\n</tool_call>"
            ),
            ls()
        );
        let two = "<tool_call>{\"name\":\"bash\",\"arguments\":{}}</tool_call>\n<tool_call>{\"name\":\"write_file\",\"arguments\":\"{}\"}</tool_call>";
        assert_eq!(names(two).map(|v| v.len()), Some(2));
    }

    /// Shapes Qwen2.5-Coder-1.5B produced under llama-server in our runs.
    #[test]
    fn small_model_variants() {
        assert_eq!(
            names(
                "<tools>\n    {\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tools>"
            ),
            ls()
        );
        assert_eq!(
            names(
                "{{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}}\n{{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}}"
            ),
            Some(vec![ls().unwrap_or_default()[0].clone(); 2])
        );
        assert_eq!(
            names("{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\", \"content\": \"b\"}}")
                .map(|v| v.len()),
            Some(2)
        );
        assert_eq!(
            names(
                "<tools>\n  <function name=\"bash\">\n    <arguments>\n      <command>ls</command>\n    </arguments>\n  </function>\n</tools>"
            ),
            ls()
        );
        assert_eq!(
            names(
                "<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>"
            ),
            ls()
        );
        assert_eq!(
            names("<function name=\"bash\"><parameter name=\"command\">ls</parameter></function>"),
            ls()
        );
        assert_eq!(
            names(
                "<tools>\n  <function name=\"bash\" arguments='{\"command\":\"ls\"}'/>\n</tools>"
            ),
            ls()
        );
    }

    /// Qwen3-Coder without its opening `<tool_call>` (case `b-qwen3coder-xml-unwrapped`).
    #[test]
    fn unwrapped_qwen3_calls() {
        let echo = |command: &str| ("bash".to_string(), format!(r#"{{"command":"{command}"}}"#));
        let report = "<function=bash>\n<parameter=command>\necho QWEN_RAN\n</parameter>\n</function>\n</tool_call>";
        assert_eq!(names(report), Some(vec![echo("echo QWEN_RAN")]));
        let cases = [
            (
                "<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>\n<function=bash>\n<parameter=command>\npwd\n</parameter>\n</function>\n</tool_call>",
                vec![echo("ls"), echo("pwd")],
            ),
            (
                "<function=bash><parameter=command>ls</parameter></function></tool_call>",
                vec![echo("ls")],
            ),
            (
                "\n\n<function=bash>\r\n<parameter=command>\r\nls\r\n</parameter>\r\n</function>\r\n</tool_call>\r\n",
                vec![echo("ls")],
            ),
            (
                "<function= bash >\n  <parameter= command >\nls\n</parameter>\n  </function>\n\n</tool_call>  ",
                vec![echo("ls")],
            ),
            (
                "<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=bash>\n<parameter=command>\npwd\n</parameter>\n</function>\n</tool_call>",
                vec![echo("ls"), echo("pwd")],
            ),
            (
                "<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>\n<function=bash>\n<parameter=command>\npwd\n</parameter>\n</function>",
                vec![echo("ls"), echo("pwd")],
            ),
            (
                "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>",
                vec![echo("ls")],
            ),
        ];
        for (content, expected) in cases {
            assert_eq!(names(content), Some(expected), "{content:?}");
        }
    }

    #[test]
    fn unwrapped_calls_inside_prose_stay_text() {
        let cases = [
            "Call it like this: <function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>",
            "<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>\nThat lists the files.",
            "<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>\n</tool_call>",
            "The form is `<function=NAME>` with `<parameter=KEY>` children.",
            "<function=python>\n<parameter=code>\nprint(1)\n</parameter>\n</function>\n</tool_call>",
            "</tool_call>",
            "{\"name\": \"bash\", \"arguments\": {}}\n</tool_call> and so on",
        ];
        for content in cases {
            assert_eq!(names(content), None, "{content:?}");
        }
    }

    #[test]
    fn other_text_stays_text() {
        assert_eq!(
            names("Run this:\n```json\n{\"name\":\"bash\",\"arguments\":{}}\n```"),
            None
        );
        assert_eq!(names(r#"{"name": "python", "arguments": {}}"#), None);
        assert_eq!(names(r#"{"name": "bash"}"#), None);
        assert_eq!(names("```python\nprint(1)\n```"), None);
        assert_eq!(names("hello"), None);
        assert_eq!(names("<b>bold</b>"), None);
        assert_eq!(
            names("<tool_call>{\"name\":\"bash\",\"arguments\":{}}</tool_call> done"),
            None
        );
        assert_eq!(
            names("{\"name\":\"bash\",\"arguments\":{}} and then some text"),
            None
        );
        assert_eq!(
            names("<tools>{\"type\": \"function\", \"function\": {\"name\": \"bash\"}}</tools>"),
            None
        );
        assert_eq!(names("<function name=\"bash\">rm -rf /</function>"), None);
    }
}
