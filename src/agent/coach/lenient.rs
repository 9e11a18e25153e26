//! Lenient reading of tool calls written as text, for models the coach is on for.
//!
//! The strict reader ([`crate::model::text_calls`], used for every model) takes only valid
//! JSON. A small model writes calls that are *almost* JSON; each of these is repaired here:
//! - raw control characters inside strings (a `content` with real newlines, not `\n`);
//! - escapes JSON does not have (`find . -exec rm {} \;` written as `\;`): the backslash is
//!   kept as a backslash;
//! - trailing commas before `}` or `]`;
//! - closing braces or brackets missing at the end of the reply (outside any string);
//! - a fenced block whose closing fence is missing (the reply stopped there);
//! - the model's own call forms: `<tool_call>` JSON (Qwen, Hermes), a `<function=NAME>`
//!   element holding a JSON arguments object (Llama 3.1), and call objects shaped
//!   `{"function": {"name", "arguments"}}`, `{"name", "parameters" | "args" | "input"}`, or
//!   with `arguments` as a string of JSON.
//!
//! The rule that keeps prose from running is the strict reader's: the *whole* reply must be
//! call blocks (whitespace between them), each naming an offered tool and holding an
//! arguments object. Text before or after, an unknown tool, or an object that is not a call
//! leaves the reply as text. The calls then go through the dispatcher like any call.

use serde_json::Value;

use crate::model::ToolCall;
use crate::model::text_calls;

/// The calls in `content` (see the module doc), or `None` when it is not purely call blocks
/// naming tools in `offered`. Calls come back without ids.
pub(crate) fn extract(content: &str, offered: &[&str]) -> Option<Vec<ToolCall>> {
    if let Some(calls) = text_calls::extract(content, offered) {
        return Some(calls);
    }
    let trimmed = content.trim();
    let body = open_fence(trimmed).unwrap_or(trimmed);
    let calls = sequence(body)?;
    let all_offered = calls
        .iter()
        .all(|call| offered.contains(&call.name.as_str()));
    (!calls.is_empty() && all_offered).then_some(calls)
}

/// The calls in `content` read the same way but whatever tools they name: for telling the
/// model that a tool it called as text does not exist. Never dispatched.
pub(crate) fn extract_any(content: &str) -> Option<Vec<ToolCall>> {
    let trimmed = content.trim();
    let body = open_fence(trimmed).unwrap_or(trimmed);
    sequence(body).filter(|calls| !calls.is_empty())
}

/// The body of a reply that is one fenced block (```` ```json ```` or a bare fence), with or
/// without its closing fence.
fn open_fence(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("```")?;
    let (info, body) = inner.split_once('\n')?;
    let info = info.trim();
    if !(info.is_empty() || info.eq_ignore_ascii_case("json")) {
        return None;
    }
    let body = body.trim_end();
    let body = body.strip_suffix("```").unwrap_or(body);
    (!body.contains("```")).then_some(body.trim())
}

/// Wrapper tags whose bodies hold calls.
const WRAPPERS: &[(&str, &str)] = &[
    ("<tool_call>", "</tool_call>"),
    ("<tools>", "</tools>"),
    ("<function_calls>", "</function_calls>"),
];

/// Call blocks separated by whitespace only, to the end of `text`.
fn sequence(text: &str) -> Option<Vec<ToolCall>> {
    let mut calls = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        if let Some((open, close)) = WRAPPERS.iter().find(|(open, _)| rest.starts_with(open)) {
            let inner = &rest[open.len()..];
            let (body, after) = match inner.find(close) {
                Some(at) => (&inner[..at], &inner[at + close.len()..]),
                None => (inner, ""),
            };
            let body = body.trim();
            calls.extend(sequence(open_fence(body).unwrap_or(body))?);
            rest = after.trim_start();
        } else if let Some(after) = rest.strip_prefix("<function=") {
            // `<function=NAME>{...}</function>`
            let (name, after) = after.split_once('>')?;
            let (value, after) = object(after.trim_start())?;
            calls.push(ToolCall {
                id: String::new(),
                name: name.trim().trim_matches('"').to_string(),
                arguments: arguments_object(&value)?,
            });
            let after = after.trim_start();
            rest = after
                .strip_prefix("</function>")
                .unwrap_or(after)
                .trim_start();
        } else if rest.starts_with('{') {
            // A brace missing before a stray closing wrapper: read up to the wrapper.
            let stray = WRAPPERS.iter().filter_map(|(_, c)| rest.find(c)).min();
            let (value, after) = object(rest).or_else(|| {
                let (head, tail) = rest.split_at(stray?);
                let (value, between) = object(head.trim_end())?;
                between.trim().is_empty().then_some((value, tail))
            })?;
            calls.push(call(&value)?);
            rest = after.trim_start();
        } else {
            // A stray closing wrapper (its opening tag was a special token the server dropped).
            let close = WRAPPERS.iter().find_map(|(_, c)| rest.strip_prefix(c))?;
            if calls.is_empty() {
                return None;
            }
            rest = close.trim_start();
        }
    }
    Some(calls)
}

/// A call object in any of the shapes of the module doc.
fn call(value: &Value) -> Option<ToolCall> {
    let object = value.as_object()?;
    if let Some(function) = object.get("function").filter(|f| f.is_object()) {
        return call(function);
    }
    let name = ["name", "tool", "tool_name"]
        .iter()
        .find_map(|key| object.get(*key)?.as_str())?;
    let arguments = ["arguments", "parameters", "args", "input"]
        .iter()
        .find_map(|key| object.get(*key))?;
    Some(ToolCall {
        id: String::new(),
        name: name.to_string(),
        arguments: arguments_object(arguments)?,
    })
}

/// The arguments as JSON object text: an object, or a string holding one (repaired too).
fn arguments_object(arguments: &Value) -> Option<String> {
    match arguments {
        Value::Object(_) => Some(arguments.to_string()),
        Value::String(text) => {
            let (value, rest) = object(text.trim())?;
            (rest.trim().is_empty() && value.is_object()).then(|| value.to_string())
        }
        _ => None,
    }
}

/// The JSON object at the start of `text`, repaired (see the module doc), and the text after
/// it. `None` when `text` does not start with `{`, or ends inside a string.
fn object(text: &str) -> Option<(Value, &str)> {
    if !text.starts_with('{') {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut open: Vec<char> = Vec::new();
    let mut in_string = false;
    let mut chars = text.char_indices().peekable();
    let mut end = text.len();
    while let Some((at, c)) = chars.next() {
        if in_string {
            match c {
                '"' => {
                    in_string = false;
                    out.push(c);
                }
                '\\' => match chars.peek().map(|(_, n)| *n) {
                    Some(n @ ('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't')) => {
                        chars.next();
                        out.push('\\');
                        out.push(n);
                    }
                    Some('u') if is_unicode_escape(&text[at + 1..]) => out.push('\\'),
                    _ => out.push_str("\\\\"),
                },
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => open.push('}'),
            '[' => open.push(']'),
            '}' | ']' => {
                drop_trailing_comma(&mut out);
                if open.pop() != Some(c) {
                    return None;
                }
            }
            _ => {}
        }
        out.push(c);
        if open.is_empty() {
            end = at + c.len_utf8();
            break;
        }
    }
    if in_string {
        return None;
    }
    drop_trailing_comma(&mut out);
    while let Some(close) = open.pop() {
        out.push(close);
    }
    let value: Value = serde_json::from_str(&out).ok()?;
    Some((value, &text[end..]))
}

/// `\u` followed by four hex digits at the start of `text` (which starts at the `u`).
fn is_unicode_escape(text: &str) -> bool {
    text.get(1..5)
        .is_some_and(|hex| hex.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Removes a `,` (and the whitespace after it) at the end of `out`.
fn drop_trailing_comma(out: &mut String) {
    let kept = out.trim_end().len();
    if out[..kept].ends_with(',') {
        out.truncate(kept - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const OFFERED: &[&str] = &["bash", "read_file", "write_file", "str_replace"];

    fn read(content: &str) -> Option<Vec<(String, Value)>> {
        extract(content, OFFERED).map(|calls| {
            calls
                .into_iter()
                .map(|c| {
                    let args = serde_json::from_str(&c.arguments).unwrap_or(Value::Null);
                    (c.name, args)
                })
                .collect()
        })
    }

    fn one(name: &str, args: Value) -> Option<Vec<(String, Value)>> {
        Some(vec![(name.to_string(), args)])
    }

    #[test]
    fn raw_newlines_in_strings_are_repaired() {
        let reply = "```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"hello.py\", \"content\": \"import sys\n\tprint(\"hi\")\n\"}}\n```";
        // The inner quotes are escaped; the newlines and the tab are raw.
        let reply = reply.replace("print(\"hi\")", "print(\\\"hi\\\")");
        assert_eq!(
            read(&reply),
            one(
                "write_file",
                serde_json::json!({"path": "hello.py", "content": "import sys\n\tprint(\"hi\")\n"})
            )
        );
    }

    /// The reply printed as the final answer in the baseline evaluation (safe_delete).
    #[test]
    fn invalid_escapes_keep_their_backslash() {
        let reply = "```json\n{\n  \"name\": \"bash\",\n  \"arguments\": {\n    \"command\": \"find build -name '*.tmp' -exec rm -f {} \\;\",\n    \"timeout\": 60\n  }\n}\n```";
        assert_eq!(
            read(reply),
            one(
                "bash",
                serde_json::json!({"command": "find build -name '*.tmp' -exec rm -f {} \\;", "timeout": 60})
            )
        );
        let unicode = r#"{"name": "bash", "arguments": {"command": "echo \u0041 \x"}}"#;
        assert_eq!(
            read(unicode),
            one("bash", serde_json::json!({"command": "echo A \\x"}))
        );
    }

    #[test]
    fn trailing_commas_and_missing_closers() {
        let ls = one("bash", serde_json::json!({"command": "ls"}));
        assert_eq!(
            read(r#"{"name": "bash", "arguments": {"command": "ls",},}"#),
            ls
        );
        assert_eq!(
            read(r#"{"name": "bash", "arguments": {"command": "ls""#),
            ls
        );
        assert_eq!(
            read("```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}\n```"),
            ls
        );
        assert_eq!(
            read("```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}"),
            ls,
            "the closing fence is missing"
        );
        let list = r#"{"name": "bash", "arguments": {"command": "ls", "env": [1, 2,],}}"#;
        assert_eq!(
            read(list),
            one("bash", serde_json::json!({"command": "ls", "env": [1, 2]}))
        );
        // Cut inside a string: nothing to repair safely.
        assert_eq!(
            read(r#"{"name": "write_file", "arguments": {"path": "a", "content": "x"#),
            None
        );
    }

    #[test]
    fn native_forms_of_small_models() {
        let ls = one("bash", serde_json::json!({"command": "ls"}));
        // Qwen / Hermes: `<tool_call>` JSON, here with a raw newline in a string.
        assert_eq!(
            read(
                "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"},}\n</tool_call>"
            ),
            ls
        );
        assert_eq!(
            read(
                "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}\n</tool_call>"
            ),
            ls,
            "missing brace inside the wrapper"
        );
        assert_eq!(
            read("<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}"),
            ls,
            "the closing tag is missing"
        );
        // Llama 3.1 style.
        assert_eq!(read("<function=bash>{\"command\": \"ls\"}</function>"), ls);
        // OpenAI-shaped objects and string arguments.
        assert_eq!(
            read(
                r#"{"type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}"#
            ),
            ls
        );
        assert_eq!(
            read(r#"{"name": "bash", "parameters": {"command": "ls"}}"#),
            ls
        );
        assert_eq!(read(r#"{"tool": "bash", "args": {"command": "ls"}}"#), ls);
        // Several calls, one per line, one broken.
        let two = "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\",}}";
        assert_eq!(read(two).map(|c| c.len()), Some(2));
        assert_eq!(
            read("{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}\n</tool_call>"),
            ls
        );
    }

    #[test]
    fn prose_with_braces_never_becomes_a_call() {
        for text in [
            "Use a dict like {\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}} in your code.",
            "Here is the call:\n```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\",}}\n```",
            "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\nThat lists the files.",
            "```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n```\nThen run it.",
            "{\"name\": \"add_function\", \"arguments\": {\"n\": 1}}",
            "{\"name\": \"bash\"}",
            "function f() { return {a: 1}; }",
            "{ this is not json }",
            "```python\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n```",
            "</tool_call>",
            "}}}",
            "{{{{",
            "",
            "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call> done",
        ] {
            assert_eq!(read(text), None, "{text:?}");
        }
    }

    #[test]
    fn odd_input_never_panics() {
        for text in [
            "{\"a\": \"\\u12\"}",
            "{\"name\": \"bash\", \"arguments\": {\"command\": \"é\\",
            "{\\",
            "<function=",
            "<function=bash>",
            "<tool_call>",
            "```",
            "```json\n",
            "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"]}",
        ] {
            let _ = extract(text, OFFERED);
        }
        assert_eq!(
            read("{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"]}"),
            None
        );
    }
}
