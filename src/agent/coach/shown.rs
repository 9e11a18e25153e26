//! What an answer only *shows*: shell commands in fenced blocks or after `$ `, and tool calls
//! written inside prose. The plain loop never runs any of it. The coach uses these to notice
//! an answer that leaves work to the user, and, in the reply right after its own request,
//! takes what the model shows as the call ([`take_shown_call`]) when the user's request
//! allows it.

use super::intent::Intent;
use crate::model::{Message, ToolCall};

/// Info strings of fenced blocks that hold shell commands.
const SHELL_INFOS: &[&str] = &["bash", "sh", "shell", "console", "zsh", "shell-session"];

/// In the reply right after a coach request: when it has no tool call but shows one, that
/// is the call. First a tool-call block inside the text (a fenced JSON call or a
/// `<tool_call>` block naming an offered tool), else the first fenced shell block as a
/// `bash` call. Nothing is taken when `intent` does not allow a shown call of that tool.
/// The text stays as the message's content.
pub(crate) fn take_shown_call(message: &mut Message, offered: &[&str], intent: &Intent) {
    if !message.tool_calls.is_empty() {
        return;
    }
    let text = message.text_content().to_string();
    let calls = embedded_calls(&text, offered).or_else(|| {
        let command = first_shell_block(&text).filter(|_| offered.contains(&"bash"))?;
        Some(vec![bash_call(&command)])
    });
    let Some(mut calls) = calls else {
        return;
    };
    if !calls
        .iter()
        .all(|call| intent.allows_shown_call(&call.name))
    {
        return;
    }
    super::give_ids(&mut calls);
    message.tool_calls = calls;
}

/// The calls of the first tool-call block inside `text` that names only offered tools, read
/// leniently ([`super::lenient`]).
pub(crate) fn embedded_calls(text: &str, offered: &[&str]) -> Option<Vec<ToolCall>> {
    embedded_call_blocks(text).find_map(|block| super::lenient::extract(block, offered))
}

/// Fenced blocks (with any info string) and `<tool_call>`/`<tools>` sections of `text`, each
/// with its delimiters, in order.
fn embedded_call_blocks(text: &str) -> impl Iterator<Item = &str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some((at, open)) = ["```", "<tool_call>", "<tools>"]
        .iter()
        .filter_map(|open| rest.find(open).map(|at| (at, *open)))
        .min()
    {
        let close = match open {
            "```" => "```",
            "<tool_call>" => "</tool_call>",
            _ => "</tools>",
        };
        let after_open = &rest[at + open.len()..];
        let Some(end) = after_open.find(close) else {
            break;
        };
        let block_end = at + open.len() + end + close.len();
        blocks.push(&rest[at..block_end]);
        rest = &rest[block_end..];
    }
    blocks.into_iter()
}

/// A `bash` call running `command`, without an id (the caller gives ids).
pub(crate) fn bash_call(command: &str) -> ToolCall {
    ToolCall {
        id: String::new(),
        name: "bash".to_string(),
        arguments: serde_json::json!({ "command": command }).to_string(),
    }
}

/// The body of the first fenced shell block (`bash`, `sh`, `shell`, `console`, `zsh`), with
/// `$ ` prompts removed. A block with `$ ` prompts is a transcript: only its prompted lines
/// are commands, the others are output (never run as commands).
pub(crate) fn first_shell_block(text: &str) -> Option<String> {
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        if !SHELL_INFOS.contains(&info.trim().to_ascii_lowercase().as_str()) {
            continue;
        }
        let block: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.trim_start().starts_with("```"))
            .collect();
        let prompted = block.iter().any(|l| l.trim_start().starts_with("$ "));
        let body: Vec<&str> = block
            .iter()
            .filter_map(|l| match l.trim_start().strip_prefix("$ ") {
                Some(command) => Some(command),
                None => (!prompted).then_some(*l),
            })
            .collect();
        let body = body.join("\n").trim().to_string();
        return (!body.is_empty()).then_some(body);
    }
    None
}

/// The first shell block when it is one short line, fit to name in a request.
pub(crate) fn one_line_command(text: &str) -> Option<String> {
    first_shell_block(text)
        .filter(|c| !c.contains('\n') && c.len() <= 200 && !c.starts_with(['{', '<']))
}

/// Whether `answer` shows a shell command: a fenced shell block with a body, or a line
/// starting with `$ `.
pub(crate) fn suggests_command(answer: &str) -> bool {
    let mut lines = answer.lines().map(str::trim_start);
    while let Some(line) = lines.next() {
        if line.starts_with("$ ") {
            return true;
        }
        if let Some(info) = line.strip_prefix("```") {
            let info = info.trim().to_ascii_lowercase();
            if SHELL_INFOS.contains(&info.as_str()) {
                return lines
                    .next()
                    .is_some_and(|body| !body.trim().is_empty() && !body.starts_with("```"));
            }
        }
    }
    false
}

/// Whether `answer` holds a fenced block tagged with a language (```` ```python ````) and a
/// non-empty body: code or a command for the user. Untagged blocks usually quote output.
pub(crate) fn has_code_block(answer: &str) -> bool {
    let mut lines = answer.lines().map(str::trim_start);
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let body = lines.by_ref().next();
        if !info.trim().is_empty()
            && body.is_some_and(|b| !b.trim().is_empty() && !b.trim_start().starts_with("```"))
        {
            return true;
        }
        // Skip the rest of this block so its closing fence is not read as an opening.
        if body.is_some_and(|b| !b.trim_start().starts_with("```")) {
            lines.by_ref().find(|l| l.starts_with("```"));
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const SUGGESTION: &str = "Done. Run it with:\n```bash\npython hello.py\n```";

    fn shown(text: &str, offered: &[&str], request: &str) -> Vec<(String, String)> {
        let mut reply = Message::assistant(text);
        take_shown_call(&mut reply, offered, &Intent::read(request));
        reply
            .tool_calls
            .into_iter()
            .map(|c| (c.name, c.arguments))
            .collect()
    }

    fn bash(command: &str) -> Vec<(String, String)> {
        vec![(
            "bash".to_string(),
            serde_json::json!({ "command": command }).to_string(),
        )]
    }

    const WORK: &str = "Create hello.py that prints hello, then run it";

    #[test]
    fn the_shown_command_becomes_the_call() {
        assert_eq!(
            shown("```bash\n$ python hello.py\n```", &["bash"], WORK),
            bash("python hello.py")
        );
        assert_eq!(shown(SUGGESTION, &["bash"], WORK), bash("python hello.py"));
        // A transcript: the output lines are not commands.
        assert_eq!(
            shown(
                "```console\n$ python hello.py\nTraceback: rm -rf /\n```",
                &["bash"],
                WORK
            ),
            bash("python hello.py")
        );
        let embedded = "You can use bash:\n```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n```\nThen...";
        assert_eq!(shown(embedded, &["bash"], WORK), bash("ls"));
        assert!(shown("```python\nprint(1)\n```", &["bash"], WORK).is_empty());
        assert!(shown("All done.", &["bash"], WORK).is_empty());
        assert!(shown("```bash\nls\n```", &["read_file"], WORK).is_empty());
    }

    #[test]
    fn nothing_is_taken_when_the_user_said_not_to() {
        for request in [
            "Show me how to run hello.py",
            "Write hello.py. Do not run it, I will run it myself.",
            "What is the message format for a tool call? Just explain, do not run anything.",
        ] {
            assert!(
                shown(SUGGESTION, &["bash"], request).is_empty(),
                "{request}"
            );
        }
        let write = "```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\", \"content\": \"b\"}}\n```";
        assert_eq!(
            shown(write, &["write_file"], "Write a. Do not run it.").len(),
            1,
            "writing was asked for"
        );
        assert!(shown(write, &["write_file"], "explain a; don't change anything").is_empty());
    }

    #[test]
    fn commands_and_code_blocks() {
        assert!(suggests_command(SUGGESTION));
        assert!(suggests_command("Now:\n$ python hello.py"));
        assert!(!suggests_command("```python\nprint('hello')\n```"));
        assert!(has_code_block("Here:\n```python\nprint(1)\n```"));
        assert!(!has_code_block("It fails:\n```\nNameError\n```"));
        assert_eq!(
            one_line_command(SUGGESTION).as_deref(),
            Some("python hello.py")
        );
        let json = "```sh\n{\"name\": \"str_replace\", \"arguments\": {}}\n```";
        assert_eq!(one_line_command(json), None);
    }
}
