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
//! - or, without any edit: the request is not a question (no `?` at the end, no question word
//!   such as `how` or `explain` first) and the answer shows a shell command while no command
//!   has run in this turn: the model wrote instructions instead of doing the work; or the
//!   request asked for something to be run and the answer hands over a one-line command
//!   that was never run in this turn.
//!
//! - or: the turn's last tool call was a `bash` command that failed (non-zero exit code),
//!   and the answer, instead of fixing it, hands the user code or a command (a fenced block
//!   tagged with a language) and the request is not a question. Models of every size do
//!   this ("here is the corrected code, run it again"); the request asks them to make the
//!   fix and re-run it themselves.
//!
//! - or: the answer shows tool calls as text (a fenced JSON call or a `<tool_call>` block
//!   naming offered tools, inside prose, so they were not taken as calls): small models do
//!   this after any tool result; the request asks them to make the calls.
//!
//! Then the answer is kept in the history and one harness message asks the model to run the
//! command itself, naming the command when the answer showed one. At most once per turn,
//! with one exception: when the reply to that request repeats the answer word for word, or
//! makes up a tool result (a small model stuck on its own text), one last, more concrete
//! request names the files written this turn and asks for a single `bash` call ([`Nudges`]).
//!
//! Small models often answer that request by showing the command again, in a fenced shell
//! block or as a tool-call block inside prose: their way of calling the tool. Only in the
//! reply right after the request, such a block is taken as the call (a tool-call block
//! naming an offered tool first, else the first shell block as `bash`); it then goes through
//! the dispatcher and the permission rules like any call. Anywhere else it stays text.

use crate::model::{Message, Role, ToolCall};

/// The message sent after an answer that left running something to the user.
pub const RUN_IT_YOURSELF: &str = "<system-reminder>\nDo not leave commands for the user: \
    run what the task needs yourself now with the bash tool (the program, the tests or the \
    build), check the output, and fix any problem. Then give your final answer.\n\
    </system-reminder>";

/// The request naming the command the answer showed, or [`RUN_IT_YOURSELF`].
pub fn run_it_yourself(answer: &str) -> String {
    let command = first_shell_block(answer)
        .filter(|c| !c.contains('\n') && c.len() <= 200 && !c.starts_with(['{', '<']));
    match command {
        Some(command) => format!(
            "<system-reminder>\nRun `{command}` yourself now: call the bash tool. Do not leave \
             it to the user. Then check the output, fix any problem, and give your final \
             answer.\n</system-reminder>"
        ),
        None => RUN_IT_YOURSELF.to_string(),
    }
}

/// In the reply right after the run request (see the module doc): when it has no tool call
/// but shows one, that is the call. First a tool-call block inside the text (a fenced JSON
/// call or a `<tool_call>` block naming an offered tool), else the first fenced shell block
/// as a `bash` call. The text stays as the message's content.
pub fn take_suggested_call(message: &mut Message, offered: &[&str]) {
    if !message.tool_calls.is_empty() {
        return;
    }
    let text = message.text_content().to_string();
    let calls = embedded_call_blocks(&text)
        .find_map(|block| crate::model::text_calls::extract(block, offered))
        .or_else(|| {
            let command = first_shell_block(&text).filter(|_| offered.contains(&"bash"))?;
            Some(vec![ToolCall {
                id: String::new(),
                name: "bash".to_string(),
                arguments: serde_json::json!({ "command": command }).to_string(),
            }])
        });
    let Some(mut calls) = calls else {
        return;
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for (index, call) in calls.iter_mut().enumerate() {
        call.id = format!("call_v{nanos:08x}{index}");
    }
    message.tool_calls = calls;
}

/// Fenced blocks (with any info string) and `<tool_call>`/`<tools>` sections of `text`, each
/// with its delimiters, in order.
fn embedded_call_blocks(text: &str) -> impl Iterator<Item = &str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = ["```", "<tool_call>", "<tools>"]
        .iter()
        .filter_map(|open| rest.find(open).map(|at| (at, *open)))
        .min()
    {
        let (at, open) = start;
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

/// The body of the first fenced shell block (`bash`, `sh`, `shell`, `console`, `zsh`), with
/// `$ ` prompts removed. A block with `$ ` prompts is a transcript: only its prompted lines
/// are commands, the others are output (never run as commands).
fn first_shell_block(text: &str) -> Option<String> {
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
        .rposition(|m| m.role == Role::User && !m.is_from_harness())
        .unwrap_or(0);
    &history[start..]
}

/// The message sent after an answer that shows tool calls as text instead of making them.
pub const CALL_THE_TOOLS: &str = "<system-reminder>\nYour answer shows tool calls as text; \
    they were not run. Make those calls now with the tools, check the results, fix any \
    problem, then give your final answer.\n</system-reminder>";

/// The harness message for the turn's messages (`turn`, from the user's message on) and its
/// final `answer` when they call for one (see the module doc), else `None`. The run nudges
/// never fire when `bash` is not among the `offered` tools (a reviewer cannot run anything);
/// calls shown as text count only when `text_calls` (the provider's `text_tool_calls`) is on.
pub fn run_nudge(
    turn: &[Message],
    answer: &str,
    offered: &[&str],
    text_calls: bool,
) -> Option<String> {
    let shows_calls = text_calls
        && embedded_call_blocks(answer)
            .any(|block| crate::model::text_calls::extract(block, offered).is_some());
    if shows_calls {
        return Some(CALL_THE_TOOLS.to_string());
    }
    if !offered.contains(&"bash") {
        return None;
    }
    let request = turn.first().map_or("", Message::text_content);
    let failed =
        last_failed_exit_code(turn).filter(|_| has_code_block(answer) && !is_question(request));
    if let Some(code) = failed {
        return Some(format!(
            "<system-reminder>\nThe last command failed (exit code {code}). Do not hand the fix \
             to the user: if the task needs the change you describe, make it yourself now with \
             the tools (write_file or str_replace), run the command again with the bash tool \
             and check the output. Then give your final answer.\n</system-reminder>"
        ));
    }
    needs_run_nudge(turn, answer).then(|| run_it_yourself(answer))
}

/// The harness requests of one turn: at most one run request ([`run_nudge`]), and one more
/// when the reply to it repeats the nudged answer ([`stuck_nudge`]).
#[derive(Debug, Default)]
pub struct Nudges {
    /// The answer the first request was sent after.
    nudged: Option<String>,
    stuck_sent: bool,
    /// A request was sent and its reply not read yet.
    answering: bool,
    /// The reply being read is the one right after a request.
    reading_answer: bool,
}

impl Nudges {
    /// Called once per reply, as it is read: whether it is the one right after a request.
    pub fn take_answering(&mut self) -> bool {
        self.reading_answer = std::mem::take(&mut self.answering);
        self.reading_answer
    }

    /// The request to send after the final `answer` of `turn` (see [`run_nudge`] for the
    /// arguments), if one is due.
    pub fn next(
        &mut self,
        turn: &[Message],
        answer: &str,
        offered: &[&str],
        text_calls: bool,
    ) -> Option<String> {
        let request = match self.nudged.as_deref() {
            None => run_nudge(turn, answer, offered, text_calls)?,
            // Only the reply right after the request: once a call ran, the same answer is
            // the model's final word, not a sign it is stuck.
            Some(nudged) if !self.stuck_sent && self.reading_answer => {
                stuck_nudge(turn, nudged, answer, offered)?
            }
            Some(_) => return None,
        };
        if self.nudged.is_none() {
            self.nudged = Some(answer.to_string());
        } else {
            self.stuck_sent = true;
        }
        self.answering = true;
        Some(request)
    }
}

/// Tags only the harness writes: an answer holding one makes up a tool result (the 1.5B
/// model answered with a `<tool_response>` holding invented output and a copy of the
/// reminder, slightly different each time).
const HARNESS_TAGS: &[&str] = &["<tool_response>", "<system-reminder>"];

/// The last request when `answer` repeats `nudged` (whitespace aside) or makes up a tool
/// result ([`HARNESS_TAGS`]), and `bash` is offered: it says nothing ran and asks for one
/// `bash` call, naming the files written this turn.
pub fn stuck_nudge(
    turn: &[Message],
    nudged: &str,
    answer: &str,
    offered: &[&str],
) -> Option<String> {
    let squash = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let made_up = HARNESS_TAGS.iter().any(|tag| answer.contains(tag));
    if !offered.contains(&"bash") || (squash(nudged) != squash(answer) && !made_up) {
        return None;
    }
    let files = edited_paths(turn);
    let target = if files.is_empty() {
        "what the task asks for".to_string()
    } else {
        files
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(format!(
        "<system-reminder>\nYou repeated your last answer, and nothing ran: a tool runs only \
         when you call it, and text that looks like a command or a tool result is neither. \
         Reply now with a single bash tool call that runs or tests {target}.\n</system-reminder>"
    ))
}

/// The `path` arguments of the edits that succeeded in this turn, first three, in order.
fn edited_paths(turn: &[Message]) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    let edits = succeeded_calls(turn).filter(|call| EDIT_TOOLS.contains(&call.name.as_str()));
    for path in edits.filter_map(|call| string_argument(call, "path")) {
        if !paths.contains(&path) && path.len() <= 200 {
            paths.push(path);
        }
    }
    paths.truncate(3);
    paths
}

/// The exit code when the turn's last tool call is a `bash` command that exited non-zero.
fn last_failed_exit_code(turn: &[Message]) -> Option<i64> {
    let (index, call) = turn
        .iter()
        .enumerate()
        .rev()
        .find_map(|(index, m)| m.tool_calls.last().map(|call| (index, call)))?;
    if call.name != "bash" {
        return None;
    }
    let result = result_of(&turn[index..], &call.id)?;
    let code = result
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("[exit code ")?.strip_suffix(']'))?;
    code.parse().ok().filter(|code| *code != 0)
}

/// Whether `answer` holds a fenced block tagged with a language (```` ```python ````) and a
/// non-empty body: code or a command for the user. Untagged blocks usually quote output.
fn has_code_block(answer: &str) -> bool {
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

/// Whether the turn's messages (`turn`, from the user's message on) and its final `answer`
/// call for [`RUN_IT_YOURSELF`].
fn needs_run_nudge(turn: &[Message], answer: &str) -> bool {
    let request = turn
        .first()
        .filter(|m| m.role == Role::User)
        .map_or("", Message::text_content);
    let suggests = suggests_command(answer);
    let asked = asks_to_run(request);
    let instructs_instead = suggests && !is_question(request) && !ran(turn);
    // Asked to run something, changed nothing, and hands over a command it never ran (a
    // small model ran `echo hello` and then said "run `python hello.py`").
    let skipped_the_work = suggests
        && asked
        && !is_question(request)
        && !edited(turn)
        && first_shell_block(answer)
            .filter(|command| !command.contains('\n'))
            .is_some_and(|command| !ran_command(turn, &command));
    (edited_without_running(turn) && (suggests || asked)) || instructs_instead || skipped_the_work
}

/// Whether an edit tool succeeded in this turn.
fn edited(turn: &[Message]) -> bool {
    any_succeeded(turn, |name| EDIT_TOOLS.contains(&name))
}

/// Whether a call to a tool whose name passes `tool` succeeded in this turn.
fn any_succeeded(turn: &[Message], tool: impl Fn(&str) -> bool) -> bool {
    succeeded_calls(turn).any(|call| tool(&call.name))
}

/// The calls of this turn whose result is not an error, in order.
fn succeeded_calls(turn: &[Message]) -> impl Iterator<Item = &ToolCall> {
    turn.iter().enumerate().flat_map(move |(index, message)| {
        message
            .tool_calls
            .iter()
            .filter(move |call| result_of(&turn[index..], &call.id).is_some_and(is_success))
    })
}

/// The string argument `key` of `call`, when its arguments parse and hold one.
fn string_argument(call: &ToolCall, key: &str) -> Option<String> {
    let args = serde_json::from_str::<serde_json::Value>(&call.arguments).ok()?;
    args[key].as_str().map(str::to_string)
}

/// Whether `command` (as written) was run with `bash` in this turn.
fn ran_command(turn: &[Message], command: &str) -> bool {
    turn.iter().flat_map(|m| &m.tool_calls).any(|call| {
        call.name == "bash"
            && string_argument(call, "command").is_some_and(|c| c.trim() == command.trim())
    })
}

/// Words that open a question rather than a request for work.
const QUESTION_WORDS: &[&str] = &[
    "how", "what", "why", "which", "where", "when", "who", "whose", "explain", "describe", "is",
    "are", "does", "do", "can", "could", "should", "would", "will",
];

/// Whether `request` asks a question (ends with `?` or opens with a question word) rather
/// than asking for work to be done.
fn is_question(request: &str) -> bool {
    let request = request.trim();
    let first = request
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("");
    request.ends_with('?') || QUESTION_WORDS.iter().any(|w| first.eq_ignore_ascii_case(w))
}

/// Whether any shell command ran in this turn.
fn ran(turn: &[Message]) -> bool {
    any_succeeded(turn, |name| name == "bash")
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

    #[test]
    fn tool_calls_shown_as_text_are_nudged_even_after_a_command_ran() {
        let turn = vec![
            Message::user("Create hello.py that prints hello, then run it"),
            call("a", "bash"),
            Message::tool_result("a", "hello"),
        ];
        let answer = "Steps:\n```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"hello.py\", \"content\": \"print(1)\"}}\n```\nDone.";
        assert_eq!(
            run_nudge(&turn, answer, &["bash", "write_file"], true).as_deref(),
            Some(CALL_THE_TOOLS)
        );
        assert_eq!(
            run_nudge(&turn, answer, &["bash"], true),
            None,
            "not an offered tool"
        );
        assert_eq!(run_nudge(&turn, "It printed hello.", &["bash"], true), None);
        assert_eq!(
            run_nudge(&turn, answer, &["bash", "write_file"], false),
            None,
            "text_tool_calls = off keeps text as text"
        );
    }

    #[test]
    fn handing_over_a_command_never_run_after_changing_nothing_is_nudged() {
        let bash_call = |id: &str, command: &str| Message {
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: "bash".into(),
                arguments: serde_json::json!({ "command": command }).to_string(),
            }],
            ..Message::assistant("")
        };
        let turn = vec![
            Message::user("Create hello.py that prints hello, then run it"),
            bash_call("a", "echo 'hello'"),
            Message::tool_result("a", "hello"),
        ];
        assert!(needs_run_nudge(&turn, SUGGESTION));
        let mut ran_it = turn.clone();
        ran_it.push(bash_call("b", "python hello.py"));
        ran_it.push(Message::tool_result("b", "hello"));
        assert!(!needs_run_nudge(&ran_it, SUGGESTION));
        let mut not_asked = turn.clone();
        not_asked[0] = Message::user("Create hello.py that prints hello");
        assert!(!needs_run_nudge(&not_asked, SUGGESTION));
    }

    #[test]
    fn a_request_opening_with_a_bracket_starts_the_turn() {
        let history = vec![
            Message::user("create hello.py"),
            call("a", "bash"),
            Message::tool_result("a", "boom\n[exit code 1]"),
            Message::assistant("It failed."),
            Message::user("[WIP] add a README"),
            Message::user(crate::context::compact::NOTE_HEADER),
        ];
        assert_eq!(this_turn(&history).len(), 2);
        let fix = "Here:\n```python\nprint(1)\n```";
        assert_eq!(run_nudge(this_turn(&history), fix, &["bash"], true), None);
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
        let json = "```sh\n{\"name\": \"str_replace\", \"arguments\": {}}\n```";
        assert_eq!(run_it_yourself(json), RUN_IT_YOURSELF);
    }

    fn suggested(text: &str, offered: &[&str]) -> Vec<(String, String)> {
        let mut reply = Message::assistant(text);
        take_suggested_call(&mut reply, offered);
        reply
            .tool_calls
            .into_iter()
            .map(|c| (c.name, c.arguments))
            .collect()
    }

    #[test]
    fn the_suggested_command_becomes_the_call() {
        let bash = |command: &str| {
            vec![(
                "bash".to_string(),
                serde_json::json!({ "command": command }).to_string(),
            )]
        };
        assert_eq!(
            suggested("```bash\n$ python hello.py\n```", &["bash"]),
            bash("python hello.py")
        );
        assert_eq!(suggested(SUGGESTION, &["bash"]), bash("python hello.py"));
        // A transcript: the output lines are not commands.
        assert_eq!(
            suggested(
                "```console\n$ python hello.py\nTraceback: rm -rf /\n```",
                &["bash"]
            ),
            bash("python hello.py")
        );
        let embedded = "You can use bash:\n```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n```\nThen...";
        assert_eq!(suggested(embedded, &["bash"]), bash("ls"));
        assert!(suggested("```python\nprint(1)\n```", &["bash"]).is_empty());
        assert!(suggested("All done.", &["bash"]).is_empty());
        assert!(suggested("```bash\nls\n```", &["read_file"]).is_empty());
    }

    #[test]
    fn a_failed_last_command_and_code_for_the_user_is_nudged() {
        let failed = |result: &str| {
            vec![
                Message::user("create hello.py and run it"),
                call("b", "bash"),
                Message::tool_result("b", result),
            ]
        };
        let fix = "Here is the corrected code:\n```python\nprint('hello')\n```";
        let bash = &["bash", "read_file"][..];
        let nudge = run_nudge(&failed("NameError\n[exit code 1]"), fix, bash, true).unwrap();
        assert!(
            nudge.contains("The last command failed (exit code 1)"),
            "{nudge}"
        );
        assert!(
            run_nudge(
                &failed("NameError\n[exit code 1]"),
                fix,
                &["read_file"],
                true
            )
            .is_none()
        );
        let output = "It fails:\n```\nNameError: hello\n```";
        assert!(run_nudge(&failed("NameError\n[exit code 1]"), output, bash, true).is_none());
        assert!(run_nudge(&failed("hello"), fix, bash, true).is_none());
        assert!(
            run_nudge(
                &failed("NameError\n[exit code 1]"),
                "It fails: hello is undefined.",
                bash,
                true
            )
            .is_none()
        );
        let mut question = failed("[exit code 2]");
        question[0] = Message::user("why does it fail?");
        assert!(run_nudge(&question, fix, bash, true).is_none());
        question[0] = Message::user("explain the failure");
        assert!(run_nudge(&question, fix, bash, true).is_none());
        let mut later_edit = failed("[exit code 1]");
        later_edit[0] = Message::user("fix hello.py");
        later_edit.push(call("w", "write_file"));
        later_edit.push(Message::tool_result("w", "Created `hello.py`"));
        assert!(run_nudge(&later_edit, "Fixed.", bash, true).is_none());
    }

    #[test]
    fn a_repeated_answer_gets_one_concrete_request_then_nothing() {
        let answer = "Run it:\n```python\nprint('hi')\n```";
        let mut turn = vec![Message::user("create hi.py and run it")];
        let mut write = call("w1", "write_file");
        write.tool_calls[0].arguments = r#"{"path":"hi.py","content":"print('hi')"}"#.into();
        turn.push(write);
        turn.push(Message::tool_result("w1", "wrote hi.py"));
        turn.push(Message::assistant(answer));
        let offered = ["bash", "write_file"];
        let mut nudges = Nudges::default();
        assert!(!nudges.take_answering());
        let first = nudges.next(&turn, answer, &offered, true);
        assert_eq!(first.as_deref(), Some(RUN_IT_YOURSELF));
        assert!(nudges.take_answering());
        let repeated = format!("  {}\n", answer.replace('\n', "\n\n"));
        let stuck = nudges
            .next(&turn, &repeated, &offered, true)
            .unwrap_or_default();
        assert!(stuck.contains("runs or tests `hi.py`"), "{stuck}");
        assert!(nudges.take_answering());
        assert_eq!(nudges.next(&turn, answer, &offered, true), None);
        assert_eq!(stuck_nudge(&turn, answer, answer, &["read_file"]), None);
        let made_up = "<tool_response>\nhi\n<system-reminder>\nshell 1/100\n</system-reminder>";
        assert!(stuck_nudge(&turn, "<tool_response>\nhi", made_up, &offered).is_some());

        // The reply to the request made a call (shown as text, taken as the call); the same
        // answer after it is the final word, and a different one is not stuck either.
        let mut nudges = Nudges::default();
        nudges.take_answering();
        assert!(nudges.next(&turn, answer, &offered, true).is_some());
        assert!(nudges.take_answering());
        assert!(!nudges.take_answering());
        assert_eq!(nudges.next(&turn, answer, &offered, true), None);
        let mut nudges = Nudges::default();
        nudges.take_answering();
        assert!(nudges.next(&turn, answer, &offered, true).is_some());
        assert!(nudges.take_answering());
        assert_eq!(nudges.next(&turn, "Something else.", &offered, true), None);
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
        assert!(!edited_without_running(&failed_edit));
        assert!(!needs_run_nudge(
            &[Message::user("how do I test?")],
            SUGGESTION
        ));
        assert!(needs_run_nudge(
            &[Message::user("run the tests")],
            SUGGESTION
        ));
        assert!(!needs_run_nudge(
            &[Message::user("run the tests")],
            "All 12 pass."
        ));
        assert!(needs_run_nudge(
            &[Message::user("Append banana to notes.txt")],
            "Use this:\n```sh\necho banana >> notes.txt\n```"
        ));
        assert!(!needs_run_nudge(
            &[Message::user("explain how to append a line")],
            "Use this:\n```sh\necho banana >> notes.txt\n```"
        ));
    }
}
