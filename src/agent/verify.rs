//! The "run it yourself" check: a model that changed files and then ends its turn by telling
//! the user to run a command (instead of running it) is asked once to run it.
//!
//! Small local models often stop after writing a file with "you can run `python hello.py`";
//! larger ones occasionally do the same after an edit. The check is deliberately narrow, so
//! it costs nothing in the common case:
//! - in this turn a `write_file` or `str_replace` call succeeded,
//! - no `bash` call ran after the last such edit,
//! - and either the final answer shows a shell command (a fenced `bash`/`sh`/`shell`/
//!   `console` block, or a line starting with `$ `) or the user's request asked for something
//!   to be run (`run`, `execute`, `test`, `build`, `compile`, `verify` as words).
//!
//! - or, without any edit: the request asked for something to be run (and is not a question)
//!   and the answer shows a shell command while no command has succeeded in this turn (the
//!   model wrote instructions instead of doing the work).
//!
//! Then the answer is kept in the history and one harness message asks the model to run the
//! command itself, naming the command when the answer showed one. At most once per turn.
//!
//! Small models often answer that request with nothing but the command in a fenced shell
//! block: their way of calling the tool. Only in the reply right after the request, a message
//! that is exactly one `bash`/`sh`/`shell` block is taken as a `bash` call; it then goes
//! through the dispatcher and the permission rules like any call. Anywhere else a shell block
//! stays text.

use crate::model::{Message, Role, ToolCall};

/// The message sent after an answer that left running something to the user.
pub const RUN_IT_YOURSELF: &str = "<system-reminder>\nDo not leave commands for the user: \
    run what the task needs yourself now with the bash tool (the program, the tests or the \
    build), check the output, and fix any problem. Then give your final answer.\n\
    </system-reminder>";

/// The request naming the command the answer showed, or [`RUN_IT_YOURSELF`].
pub fn run_it_yourself(answer: &str) -> String {
    match first_shell_block(answer).filter(|c| !c.contains('\n') && c.len() <= 200) {
        Some(command) => format!(
            "<system-reminder>\nRun `{command}` yourself now: call the bash tool. Do not leave \
             it to the user. Then check the output, fix any problem, and give your final \
             answer.\n</system-reminder>"
        ),
        None => RUN_IT_YOURSELF.to_string(),
    }
}

/// Turns a reply that is exactly one fenced shell block into a `bash` call (see the module
/// doc); anything else is left alone. Only when `offered` has `bash`.
pub fn take_shell_block_as_call(message: &mut Message, offered: &[&str]) {
    if !message.tool_calls.is_empty() || !offered.contains(&"bash") {
        return;
    }
    let text = message.text_content().trim();
    let Some(command) = first_shell_block(text) else {
        return;
    };
    let is_whole_message =
        text.starts_with("```") && text.ends_with("```") && text.matches("```").count() == 2;
    if !is_whole_message {
        return;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    message.tool_calls = vec![ToolCall {
        id: format!("call_sh{nanos:08x}"),
        name: "bash".to_string(),
        arguments: serde_json::json!({ "command": command }).to_string(),
    }];
    message.content = None;
}

/// The body of the first fenced shell block (`bash`, `sh`, `shell`, `console`, `zsh`), with
/// `$ ` prompts removed.
fn first_shell_block(text: &str) -> Option<String> {
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        if !SHELL_INFOS.contains(&info.trim().to_ascii_lowercase().as_str()) {
            continue;
        }
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.trim_start().starts_with("```"))
            .map(|l| l.strip_prefix("$ ").unwrap_or(l))
            .collect();
        let body = body.join("\n").trim().to_string();
        return (!body.is_empty()).then_some(body);
    }
    None
}

const SHELL_INFOS: &[&str] = &["bash", "sh", "shell", "console", "zsh", "shell-session"];

/// Words in a request that ask for something to be run.
const RUN_WORDS: &[&str] = &[
    "run", "execute", "test", "tests", "build", "compile", "verify",
];

const EDIT_TOOLS: &[&str] = &["write_file", "str_replace"];

/// The messages of the current turn: from the user's last own message (not a harness
/// reminder) to the end. Computed from the history, so compaction in between cannot shift it.
pub fn this_turn(history: &[Message]) -> &[Message] {
    let start = history
        .iter()
        .rposition(|m| m.role == Role::User && !m.text_content().starts_with("<system-reminder>"))
        .unwrap_or(0);
    &history[start..]
}

/// Whether the turn's messages (`turn`, from the user's message on) and its final `answer`
/// call for [`RUN_IT_YOURSELF`].
pub fn needs_run_nudge(turn: &[Message], answer: &str) -> bool {
    let request = turn
        .first()
        .filter(|m| m.role == Role::User)
        .map_or("", Message::text_content);
    let suggests = suggests_command(answer);
    let asked = asks_to_run(request);
    let instructs_instead = suggests && asked && !request.trim_end().ends_with('?') && !ran(turn);
    (edited_without_running(turn) && (suggests || asked)) || instructs_instead
}

/// Whether any shell command ran in this turn.
fn ran(turn: &[Message]) -> bool {
    turn.iter().enumerate().any(|(index, message)| {
        message
            .tool_calls
            .iter()
            .any(|call| call.name == "bash" && result_of(&turn[index..], &call.id).is_some_and(is_success))
    })
}

/// The request names running, testing or building as a word.
fn asks_to_run(request: &str) -> bool {
    request
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| RUN_WORDS.iter().any(|w| word.eq_ignore_ascii_case(w)))
}

/// A successful edit with no shell command after it.
fn edited_without_running(turn: &[Message]) -> bool {
    let mut edited = false;
    for (index, message) in turn.iter().enumerate() {
        if message.role != Role::Assistant {
            continue;
        }
        for call in &message.tool_calls {
            let succeeded = result_of(&turn[index..], &call.id).is_some_and(is_success);
            if EDIT_TOOLS.contains(&call.name.as_str()) && succeeded {
                edited = true;
            } else if call.name == "bash" && result_of(&turn[index..], &call.id).is_some() {
                edited = false;
            }
        }
    }
    edited
}

fn result_of<'a>(messages: &'a [Message], id: &str) -> Option<&'a str> {
    messages
        .iter()
        .find(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(id))
        .map(Message::text_content)
}

fn is_success(result: &str) -> bool {
    !(result.starts_with("Error:")
        || result.starts_with("Blocked by policy")
        || result.starts_with("The user denied"))
}

/// A fenced shell block or a `$ command` line.
fn suggests_command(answer: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    fn call(id: &str, name: &str) -> Message {
        Message {
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: "{}".into(),
            }],
            ..Message::assistant("")
        }
    }

    const SUGGESTION: &str = "Done. Run it with:\n```bash\npython hello.py\n```";

    #[test]
    fn edit_then_suggestion_is_nudged() {
        let turn = vec![
            Message::user("create hello.py"),
            call("a", "write_file"),
            Message::tool_result("a", "Created `hello.py`"),
        ];
        assert!(needs_run_nudge(&turn, SUGGESTION));
        assert!(needs_run_nudge(&turn, "Now:\n$ python hello.py"));
        assert!(!needs_run_nudge(&turn, "Created hello.py."));
        assert!(!needs_run_nudge(&turn, "```python\nprint('hello')\n```"));
        let mut asked = turn.clone();
        asked[0] = Message::user("Create hello.py that prints hello, then run it");
        assert!(needs_run_nudge(&asked, "Created hello.py."));
        asked[0] = Message::user("rerun-proof wording: truncate the file");
        assert!(!needs_run_nudge(&asked, "Created hello.py."));
    }

    #[test]
    fn the_request_names_the_command() {
        assert!(run_it_yourself(SUGGESTION).contains("Run `python hello.py` yourself now"));
        assert_eq!(run_it_yourself("Created it."), RUN_IT_YOURSELF);
    }

    #[test]
    fn only_a_bare_shell_block_becomes_a_call() {
        let mut reply = Message::assistant("```bash\n$ python hello.py\n```");
        take_shell_block_as_call(&mut reply, &["bash"]);
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].arguments, r#"{"command":"python hello.py"}"#);
        assert_eq!(reply.content, None);
        for text in [SUGGESTION, "```python\nprint(1)\n```", "```bash\nls\n```\n```bash\npwd\n```"] {
            let mut reply = Message::assistant(text);
            take_shell_block_as_call(&mut reply, &["bash"]);
            assert!(reply.tool_calls.is_empty(), "{text}");
        }
        let mut no_bash = Message::assistant("```bash\nls\n```");
        take_shell_block_as_call(&mut no_bash, &["read_file"]);
        assert!(no_bash.tool_calls.is_empty());
    }

    #[test]
    fn no_nudge_after_running_or_without_edits() {
        let ran = vec![
            Message::user("x"),
            call("a", "write_file"),
            Message::tool_result("a", "Created `hello.py`"),
            call("b", "bash"),
            Message::tool_result("b", "hello"),
        ];
        assert!(!needs_run_nudge(&ran, SUGGESTION));
        let failed_edit = vec![
            Message::user("x"),
            call("a", "str_replace"),
            Message::tool_result("a", "Error: str_replace failed - no match: ..."),
        ];
        assert!(!needs_run_nudge(&failed_edit, SUGGESTION));
        assert!(!needs_run_nudge(&[Message::user("how do I test?")], SUGGESTION));
        assert!(needs_run_nudge(&[Message::user("run the tests")], SUGGESTION));
        assert!(!needs_run_nudge(&[Message::user("run the tests")], "All 12 pass."));
    }
}
