//! A tool call wrapped inside a `bash` call (coach on).
//!
//! A small model asked to run something sometimes calls `bash` with a `command` that is
//! itself a whole tool call: `{"name": "bash", "arguments": {"command": "python3 hello.py"}}`,
//! or `{"name": "write_file", "arguments": {...}}`. Run as a shell command, that fails with
//! "command not found". When the command, read leniently ([`super::lenient`]), is exactly one
//! call object naming an offered tool, the `bash` call becomes that call (keeping its id), and
//! goes through the dispatcher and the permission rules like any call. A command that is
//! anything else (a real shell command, a call with text around it, two calls, an unknown
//! tool) is left alone.

use serde_json::Value;

use super::lenient;
use crate::model::ToolCall;

/// Wrapped calls inside wrapped calls followed before the call is left as it is.
const MAX_DEPTH: usize = 3;

/// Replaces `call` by the call its `bash` command wraps, when it wraps exactly one call of a
/// tool in `offered` (and so on, up to [`MAX_DEPTH`] levels). Returns whether it did.
pub(crate) fn unwrap(call: &mut ToolCall, offered: &[&str]) -> bool {
    let mut unwrapped = false;
    for _ in 0..MAX_DEPTH {
        let Some(inner) = wrapped_call(call, offered) else {
            break;
        };
        call.name = inner.name;
        call.arguments = inner.arguments;
        unwrapped = true;
    }
    unwrapped
}

/// The one call `call`'s `bash` command consists of.
fn wrapped_call(call: &ToolCall, offered: &[&str]) -> Option<ToolCall> {
    if call.name != "bash" {
        return None;
    }
    let arguments: Value = serde_json::from_str(&call.arguments).ok()?;
    let command = arguments.get("command")?.as_str()?;
    let mut calls = lenient::extract(command, offered)?;
    (calls.len() == 1).then(|| calls.remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    const OFFERED: &[&str] = &["bash", "read_file", "write_file", "str_replace"];

    fn bash(command: &str) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: "bash".into(),
            arguments: json!({ "command": command, "timeout": 60 }).to_string(),
        }
    }

    fn unwrapped(command: &str) -> Option<(String, Value)> {
        let mut call = bash(command);
        unwrap(&mut call, OFFERED).then(|| {
            assert_eq!(call.id, "c1", "the id is kept");
            let args = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
            (call.name, args)
        })
    }

    #[test]
    fn a_call_inside_a_command_is_unwrapped() {
        assert_eq!(
            unwrapped(r#"{"name": "bash", "arguments": {"command": "python hello.py"}}"#),
            Some(("bash".into(), json!({"command": "python hello.py"})))
        );
        // Almost JSON: a raw newline in a string and a trailing comma.
        assert_eq!(
            unwrapped(
                "{\"name\":\"write_file\",\"arguments\":{\"path\":\"hello.py\",\"content\":\"print('hello')\n\",}}"
            ),
            Some((
                "write_file".into(),
                json!({"path": "hello.py", "content": "print('hello')\n"})
            ))
        );
        // Wrapped twice.
        let inner = json!({"name": "bash", "arguments": {"command": "ls"}}).to_string();
        let outer = json!({"name": "bash", "arguments": {"command": inner}}).to_string();
        assert_eq!(
            unwrapped(&outer),
            Some(("bash".into(), json!({"command": "ls"})))
        );
    }

    #[test]
    fn anything_else_is_left_alone() {
        for command in [
            "python3 hello.py",
            "{ echo a; echo b; }",
            "echo '{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}'",
            r#"{"name": "task", "arguments": {"prompt": "do it"}}"#,
            r#"{"name": "bash", "arguments": {"command": "ls"}} && echo done"#,
            "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n{\"name\": \"bash\", \"arguments\": {\"command\": \"pwd\"}}",
            r#"{"command": "ls"}"#,
            "",
        ] {
            let mut call = bash(command);
            let before = call.clone();
            assert!(!unwrap(&mut call, OFFERED), "{command:?}");
            assert_eq!(call, before);
        }
        let mut other = ToolCall {
            id: "c2".into(),
            name: "read_file".into(),
            arguments: r#"{"path": "{\"name\": \"bash\", \"arguments\": {}}"}"#.into(),
        };
        assert!(!unwrap(&mut other, OFFERED));
        let mut broken = ToolCall {
            id: "c3".into(),
            name: "bash".into(),
            arguments: "{\"command\": ".into(),
        };
        assert!(!unwrap(&mut broken, OFFERED));
    }
}
