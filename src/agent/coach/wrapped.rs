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
//!
//! It also writes the call as a command line, with the tool as the program and its
//! arguments as `key=value` words: `write_file path=hello.sh content="echo hi"`, or
//! `read_file hello.sh`. When the command, as the permission rules' shell parser reads it
//! ([`crate::permissions::shell`]), is one such plain command naming an offered tool other
//! than `bash`, it is that call.

use serde_json::{Map, Value};

use super::lenient;
use crate::model::ToolCall;
use crate::permissions::shell::{self, Item};

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
    if let Some(mut calls) = lenient::extract(command, offered) {
        return (calls.len() == 1).then(|| calls.remove(0));
    }
    command_line_call(command, offered)
}

/// The call `command` writes as a command line: one simple command, without redirections
/// or words known only at run time, whose program is an offered tool other than `bash` and
/// whose other words are `key=value` (a key at most once), or, for `read_file`, one path.
fn command_line_call(command: &str, offered: &[&str]) -> Option<ToolCall> {
    let analysis = shell::analyze(command);
    let [Item::Command(simple)] = analysis.items.as_slice() else {
        return None;
    };
    let (program, operands) = simple.words.split_first()?;
    let tool = offered
        .iter()
        .find(|tool| **tool != "bash" && **tool == program.text)?;
    let plain = simple.redirects.is_empty() && simple.words.iter().all(|word| !word.dynamic);
    if !plain || operands.is_empty() {
        return None;
    }
    let mut arguments = Map::new();
    for word in operands {
        let (key, value) = match word.text.split_once('=') {
            Some((key, value)) if is_key(key) => (key, value),
            _ if *tool == "read_file" && operands.len() == 1 => ("path", word.text.as_str()),
            _ => return None,
        };
        if arguments
            .insert(key.to_string(), Value::String(line_breaks(value)))
            .is_some()
        {
            return None;
        }
    }
    Some(ToolCall {
        id: String::new(),
        name: (*tool).to_string(),
        arguments: Value::Object(arguments).to_string(),
    })
}

/// A value as the model meant it: one with no line break of its own but `\n` in it
/// (`content="print('hello')\n"`, where a shell keeps the backslash) gets line breaks there;
/// a value with real line breaks is kept as it is.
fn line_breaks(value: &str) -> String {
    if value.contains('\n') || !value.contains("\\n") {
        return value.to_string();
    }
    value.replace("\\n", "\n")
}

/// An argument name: ASCII letters, digits and `_`, starting with a letter.
fn is_key(key: &str) -> bool {
    key.starts_with(|c: char| c.is_ascii_alphabetic())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
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

    /// fix_script (eval pass 1) and hello.py (run 1) on Qwen2.5-Coder-1.5B: the shell block
    /// it showed, taken as the `bash` call, was `write_file path=X content="..."` and failed
    /// with exit 127.
    #[test]
    fn a_call_written_as_a_command_line_is_unwrapped() {
        assert_eq!(
            unwrapped("write_file path=hello.sh content=\"#!/bin/sh\necho 'hello world'\""),
            Some((
                "write_file".into(),
                json!({"path": "hello.sh", "content": "#!/bin/sh\necho 'hello world'"})
            ))
        );
        assert_eq!(
            unwrapped("str_replace path=a.py old_str='x = 1' new_str='x = 2'"),
            Some((
                "str_replace".into(),
                json!({"path": "a.py", "old_str": "x = 1", "new_str": "x = 2"})
            ))
        );
        // hello.py run 1 on the 1.5B model: `\n` meant a line break.
        assert_eq!(
            unwrapped(r#"write_file path=hello.py content="print('hello')\n""#),
            Some((
                "write_file".into(),
                json!({"path": "hello.py", "content": "print('hello')\n"})
            ))
        );
        assert_eq!(
            unwrapped("write_file path=a.py content=\"a = 1\nprint('x\\ny')\""),
            Some((
                "write_file".into(),
                json!({"path": "a.py", "content": "a = 1\nprint('x\\ny')"})
            )),
            "real line breaks: kept as written"
        );
        assert_eq!(
            unwrapped("read_file 'my notes.txt'"),
            Some(("read_file".into(), json!({"path": "my notes.txt"})))
        );
        for command in [
            "write_file hello.sh",
            "write_file path=a path=b",
            "write_file path=a content=\"$(cat b)\"",
            "write_file path=a > out",
            "write_file path=a && ls",
            "read_file a b",
            "read_file",
            "bash command=ls",
            "task prompt=x",
            "write_file 1x=y",
        ] {
            assert_eq!(unwrapped(command), None, "{command:?}");
        }
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
