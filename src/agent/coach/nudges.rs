//! The coach's requests after a final answer that left the work to the user.
//!
//! A small model often stops after writing a file with "you can run `python hello.py`",
//! shows a command instead of running it, writes tool calls inside prose, or hands "the
//! corrected code" to the user after a command failed. After such an answer the coach keeps
//! it and sends one request to do the work. Each kind needs the user's request to allow it
//! ([`Intent`]); none fires for a request to show, tell or explain, or one that says not to
//! run or change anything:
//! - **calls shown as text**: the answer holds a tool-call block naming offered tools inside
//!   prose (so it was not read as calls) → make those calls ([`CALL_THE_TOOLS`]);
//! - **a failed command handed over**: the turn's last call was a `bash` command that exited
//!   non-zero and the answer holds a fenced block tagged with a language → make the fix and
//!   run it again;
//! - **run it yourself**: `bash` is offered and either an edit succeeded with no command
//!   after it and the answer shows a command or the request asked to run something; or,
//!   with nothing run this turn, the answer shows a command; or the request asked to run
//!   something, nothing was changed, and the answer hands over a one-line command never run
//!   this turn;
//! - **code instead of the work**: the turn made no tool call, the request asks for a change
//!   or an outcome, and the answer holds code (a fenced block tagged with a language) → say
//!   nothing was done and show one call to make.
//!
//! At most one such request per turn, with one exception: when the reply to it repeats the
//! answer word for word, or makes up a tool result, one last, more concrete request names
//! the files written this turn and asks for a single `bash` call ([`Nudges`]).
//!
//! Every decision reads typed facts ([`TurnFacts`]: tool names, statuses, exit codes), never
//! the text of a tool result.

use super::intent::Intent;
use super::shown;
use crate::agent::facts::{CallFact, CallStatus, TurnFacts};

/// The request sent after an answer that left running something to the user.
pub(crate) const RUN_IT_YOURSELF: &str = "<system-reminder>\nDo not leave commands for the user: \
    run what the task needs yourself now with the bash tool (the program, the tests or the \
    build), check the output, and fix any problem. Then give your final answer.\n\
    </system-reminder>";

/// The request sent after an answer that shows tool calls as text instead of making them.
pub(crate) const CALL_THE_TOOLS: &str = "<system-reminder>\nYour answer shows tool calls as text; \
    they were not run. Make those calls now with the tools, check the results, fix any \
    problem, then give your final answer.\n</system-reminder>";

const EDIT_TOOLS: &[&str] = &["write_file", "str_replace"];

/// The request naming the command the answer showed, or [`RUN_IT_YOURSELF`].
pub(crate) fn run_it_yourself(answer: &str) -> String {
    match shown::one_line_command(answer) {
        Some(command) => format!(
            "<system-reminder>\nRun `{command}` yourself now: call the bash tool. Do not leave \
             it to the user. Then check the output, fix any problem, and give your final \
             answer.\n</system-reminder>"
        ),
        None => RUN_IT_YOURSELF.to_string(),
    }
}

/// What the coach knows when it reads a final answer.
pub(crate) struct Answered<'a> {
    pub(crate) facts: &'a TurnFacts,
    pub(crate) intent: &'a Intent,
    pub(crate) answer: &'a str,
    pub(crate) offered: &'a [&'a str],
    /// Tool calls written as text are read (`text_tool_calls`).
    pub(crate) text_calls: bool,
}

/// The request for `answered`, when one is due (see the module doc).
pub(crate) fn run_nudge(answered: &Answered<'_>) -> Option<String> {
    let Answered {
        facts,
        intent,
        answer,
        offered,
        text_calls,
    } = *answered;
    if intent.answer_only {
        return None;
    }
    let shown_calls = text_calls
        .then(|| shown::embedded_calls(answer, offered))
        .flatten();
    if let Some(calls) = shown_calls {
        return calls
            .iter()
            .all(|call| intent.allows_shown_call(&call.name))
            .then(|| CALL_THE_TOOLS.to_string());
    }
    if offered.contains(&"bash") && intent.allows_run_request() {
        let failed = last_failed_exit_code(facts)
            .filter(|_| shown::has_code_block(answer) && intent.allows_edit_request());
        if let Some(code) = failed {
            return Some(format!(
                "<system-reminder>\nThe last command failed (exit code {code}). Do not hand the \
                 fix to the user: if the task needs the change you describe, make it yourself \
                 now with the tools (write_file or str_replace), run the command again with the \
                 bash tool and check the output. Then give your final answer.\n</system-reminder>"
            ));
        }
        if needs_run_nudge(facts, intent, answer) {
            return Some(run_it_yourself(answer));
        }
    }
    nothing_done(facts, intent, answer, offered)
}

/// The request after an answer that holds code instead of doing the task (the fourth kind
/// in the module doc): the turn made no tool call, the request asks for a change or an
/// outcome and says neither not to run nor not to change anything, and the answer holds a
/// fenced block tagged with a language. It says nothing was done and shows one call in the
/// `<tool_call>` form of the small model's system prompt ([`super::profile`]).
fn nothing_done(
    facts: &TurnFacts,
    intent: &Intent,
    answer: &str,
    offered: &[&str],
) -> Option<String> {
    let wants_work = (intent.asks_to_edit || intent.asks_to_run)
        && !intent.answer_only
        && !intent.no_run
        && !intent.no_change;
    if !wants_work || !facts.calls.is_empty() || !shown::has_code_block(answer) {
        return None;
    }
    let example = if offered.contains(&"bash") {
        r#"{"name": "bash", "arguments": {"command": "ls"}}"#
    } else if offered.contains(&"write_file") {
        r#"{"name": "write_file", "arguments": {"path": "answer.txt", "content": "42\n"}}"#
    } else {
        return None;
    };
    Some(format!(
        "<system-reminder>\nNothing has been done yet: code in your answer does not run and \
         writes no file. Do the task now with your tools ({tools}), one call at a time, for \
         example:\n<tool_call>\n{example}\n</tool_call>\n</system-reminder>",
        tools = offered.join(", ")
    ))
}

/// Whether the answer leaves running something to the user (the third kind in the module
/// doc). The caller has checked that the request allows a run request.
fn needs_run_nudge(facts: &TurnFacts, intent: &Intent, answer: &str) -> bool {
    let suggests = shown::suggests_command(answer);
    let instructs_instead = suggests && !ran(facts);
    // Asked to run something, changed nothing, and hands over a command it never ran (a
    // small model ran `echo hello` and then said "run `python hello.py`").
    let skipped_the_work = suggests
        && intent.asks_to_run
        && !edited(facts)
        && shown::first_shell_block(answer)
            .filter(|command| !command.contains('\n'))
            .is_some_and(|command| !ran_command(facts, &command));
    (edited_without_running(facts) && (suggests || intent.asks_to_run))
        || instructs_instead
        || skipped_the_work
}

/// The requests of one turn: at most one run request ([`run_nudge`]), and one more when
/// the reply to it repeats the nudged answer ([`stuck_nudge`]).
#[derive(Debug, Default)]
pub(crate) struct Nudges {
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
    pub(crate) fn take_answering(&mut self) -> bool {
        self.reading_answer = std::mem::take(&mut self.answering);
        self.reading_answer
    }

    /// The request to send after the final answer, if one is due.
    pub(crate) fn next(&mut self, answered: &Answered<'_>) -> Option<String> {
        let request = match self.nudged.as_deref() {
            None => run_nudge(answered)?,
            // Only the reply right after the request: once a call ran, the same answer is
            // the model's final word, not a sign it is stuck.
            Some(nudged) if !self.stuck_sent && self.reading_answer => {
                stuck_nudge(answered, nudged)?
            }
            Some(_) => return None,
        };
        if self.nudged.is_none() {
            self.nudged = Some(answered.answer.to_string());
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

/// The last request when the answer repeats `nudged` (whitespace aside) or makes up a tool
/// result ([`HARNESS_TAGS`]), and `bash` is offered: it says nothing ran and asks for one
/// `bash` call, naming the files written this turn.
pub(crate) fn stuck_nudge(answered: &Answered<'_>, nudged: &str) -> Option<String> {
    let squash = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let answer = answered.answer;
    let made_up = HARNESS_TAGS.iter().any(|tag| answer.contains(tag));
    let allowed = answered.offered.contains(&"bash") && answered.intent.allows_run_request();
    if !allowed || (squash(nudged) != squash(answer) && !made_up) {
        return None;
    }
    let files = edited_paths(answered.facts);
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

fn is_edit(call: &CallFact) -> bool {
    EDIT_TOOLS.contains(&call.name.as_str())
}

/// The `path` arguments of the edits applied in this turn, first three, in order.
fn edited_paths(facts: &TurnFacts) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    let edits = facts
        .calls
        .iter()
        .filter(|call| is_edit(call) && call.status == CallStatus::Ran);
    for path in edits.filter_map(|call| call.string_argument("path")) {
        if !paths.contains(&path) && path.len() <= 200 {
            paths.push(path);
        }
    }
    paths.truncate(3);
    paths
}

/// The exit code when the turn's last tool call is a `bash` command that exited non-zero.
fn last_failed_exit_code(facts: &TurnFacts) -> Option<i32> {
    let last = facts.calls.last()?;
    (last.name == "bash" && last.status == CallStatus::Ran)
        .then_some(last.exit_code)
        .flatten()
        .filter(|code| *code != 0)
}

/// Whether an edit was applied in this turn.
fn edited(facts: &TurnFacts) -> bool {
    facts
        .calls
        .iter()
        .any(|call| is_edit(call) && call.status == CallStatus::Ran)
}

/// Whether a shell command ran in this turn (whatever its exit code).
fn ran(facts: &TurnFacts) -> bool {
    facts
        .calls
        .iter()
        .any(|call| call.name == "bash" && call.status == CallStatus::Ran)
}

/// Whether `command` (as written) was run with `bash` in this turn.
fn ran_command(facts: &TurnFacts, command: &str) -> bool {
    facts.calls.iter().any(|call| {
        call.name == "bash"
            && call
                .string_argument("command")
                .is_some_and(|c| c.trim() == command.trim())
    })
}

/// An edit was applied and no `bash` call came after it.
fn edited_without_running(facts: &TurnFacts) -> bool {
    let mut edited = false;
    for call in &facts.calls {
        if is_edit(call) && call.status == CallStatus::Ran {
            edited = true;
        } else if call.name == "bash" && call.status != CallStatus::NotRun {
            edited = false;
        }
    }
    edited
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(
        name: &str,
        arguments: serde_json::Value,
        status: CallStatus,
        exit: Option<i32>,
    ) -> CallFact {
        crate::agent::facts::test_fact(name, arguments, status, None, exit)
    }

    fn ok(name: &str) -> CallFact {
        fact(name, serde_json::json!({}), CallStatus::Ran, None)
    }

    fn facts(request: &str, calls: Vec<CallFact>) -> TurnFacts {
        TurnFacts {
            request: request.into(),
            calls,
        }
    }

    fn nudge(facts: &TurnFacts, answer: &str, offered: &[&str]) -> Option<String> {
        nudge_with(facts, answer, offered, true)
    }

    fn nudge_with(facts: &TurnFacts, answer: &str, offered: &[&str], text: bool) -> Option<String> {
        let intent = Intent::read(&facts.request);
        run_nudge(&Answered {
            facts,
            intent: &intent,
            answer,
            offered,
            text_calls: text,
        })
    }

    const SUGGESTION: &str = "Done. Run it with:\n```bash\npython hello.py\n```";
    const BASH: &[&str] = &["bash", "write_file", "read_file"];

    #[test]
    fn tool_calls_shown_as_text_are_nudged_even_after_a_command_ran() {
        let turn = facts(
            "Create hello.py that prints hello, then run it",
            vec![ok("bash")],
        );
        let answer = "Steps:\n```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"hello.py\", \"content\": \"print(1)\"}}\n```\nDone.";
        assert_eq!(nudge(&turn, answer, BASH).as_deref(), Some(CALL_THE_TOOLS));
        assert_eq!(nudge(&turn, answer, &["bash"]), None, "not an offered tool");
        assert_eq!(nudge(&turn, "It printed hello.", &["bash"]), None);
        assert_eq!(
            nudge_with(&turn, answer, BASH, false),
            None,
            "text_tool_calls = off keeps text as text"
        );
        let explain = facts(
            "What is the message format for a tool call? Just explain, do not run anything.",
            Vec::new(),
        );
        let example = "For example:\n\n```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"touch EXAMPLE_RAN\"}}\n```\n";
        assert_eq!(nudge(&explain, example, BASH), None);
    }

    #[test]
    fn edit_then_suggestion_is_nudged() {
        let write = fact(
            "write_file",
            serde_json::json!({"path": "hello.py"}),
            CallStatus::Ran,
            None,
        );
        let turn = facts("create hello.py", vec![write.clone()]);
        assert!(nudge(&turn, SUGGESTION, BASH).is_some());
        assert!(nudge(&turn, "Now:\n$ python hello.py", BASH).is_some());
        assert!(nudge(&turn, "Created hello.py.", BASH).is_none());
        assert!(nudge(&turn, "```python\nprint('hello')\n```", BASH).is_none());
        let asked = facts(
            "Create hello.py that prints hello, then run it",
            vec![write.clone()],
        );
        assert!(nudge(&asked, "Created hello.py.", BASH).is_some());
        let truncate = facts("rerun-proof wording: truncate the file", vec![write]);
        assert!(nudge(&truncate, "Created hello.py.", BASH).is_none());
    }

    #[test]
    fn the_request_names_the_command() {
        assert!(run_it_yourself(SUGGESTION).contains("Run `python hello.py` yourself now"));
        assert_eq!(run_it_yourself("Created it."), RUN_IT_YOURSELF);
    }

    #[test]
    fn the_users_words_stop_every_request() {
        let write = fact(
            "write_file",
            serde_json::json!({"path": "deploy.sh"}),
            CallStatus::Ran,
            None,
        );
        let failed = fact(
            "bash",
            serde_json::json!({"command": "pytest"}),
            CallStatus::Ran,
            Some(1),
        );
        let fix = "Here is the corrected code:\n```python\nprint('hello')\n```";
        for (request, calls, answer) in [
            (
                "Show me how to rebase my branch onto main",
                vec![],
                "```bash\ngit rebase origin/main\n```",
            ),
            (
                "Write deploy.sh that rsyncs dist/ to prod. Do not run it, I will run it myself after review.",
                vec![write.clone()],
                "Run it yourself: `sh deploy.sh`\n```sh\nsh deploy.sh\n```",
            ),
            (
                "Tell me the command to run the tests",
                vec![],
                "```bash\npython3 -m pytest -q\n```",
            ),
            ("why does it fail?", vec![failed.clone()], fix),
            ("explain the failure", vec![failed.clone()], fix),
            (
                "Run the tests but don't change anything",
                vec![failed.clone()],
                fix,
            ),
        ] {
            let turn = facts(request, calls);
            assert_eq!(nudge(&turn, answer, BASH), None, "{request}");
        }
    }

    #[test]
    fn a_failed_last_command_and_code_for_the_user_is_nudged() {
        let failed = |exit: Option<i32>| {
            facts(
                "create hello.py and run it",
                vec![fact("bash", serde_json::json!({}), CallStatus::Ran, exit)],
            )
        };
        let fix = "Here is the corrected code:\n```python\nprint('hello')\n```";
        let nudged = nudge(&failed(Some(1)), fix, BASH).unwrap_or_default();
        assert!(
            nudged.contains("The last command failed (exit code 1)"),
            "{nudged}"
        );
        assert!(nudge(&failed(Some(1)), fix, &["read_file"]).is_none());
        let output = "It fails:\n```\nNameError: hello\n```";
        assert!(nudge(&failed(Some(1)), output, BASH).is_none());
        assert!(nudge(&failed(Some(0)), fix, BASH).is_none());
        assert!(
            nudge(&failed(None), fix, BASH).is_none(),
            "timed out: not an exit code"
        );
        assert!(nudge(&failed(Some(1)), "It fails: hello is undefined.", BASH).is_none());
        let mut later_edit = failed(Some(1));
        later_edit.request = "fix hello.py".into();
        later_edit.calls.push(ok("write_file"));
        assert!(nudge(&later_edit, "Fixed.", BASH).is_none());
    }

    #[test]
    fn handing_over_a_command_never_run_after_changing_nothing_is_nudged() {
        let bash = |command: &str| {
            fact(
                "bash",
                serde_json::json!({ "command": command }),
                CallStatus::Ran,
                Some(0),
            )
        };
        let request = "Create hello.py that prints hello, then run it";
        let turn = facts(request, vec![bash("echo 'hello'")]);
        assert!(nudge(&turn, SUGGESTION, BASH).is_some());
        let ran_it = facts(request, vec![bash("echo 'hello'"), bash("python hello.py")]);
        assert!(nudge(&ran_it, SUGGESTION, BASH).is_none());
        let not_asked = facts(
            "Create hello.py that prints hello",
            vec![bash("echo 'hello'")],
        );
        assert!(nudge(&not_asked, SUGGESTION, BASH).is_none());
    }

    #[test]
    fn no_nudge_after_running_or_without_edits() {
        let ran = facts("x", vec![ok("write_file"), ok("bash")]);
        assert!(nudge(&ran, SUGGESTION, BASH).is_none());
        let failed_edit = facts(
            "x",
            vec![fact(
                "str_replace",
                serde_json::json!({}),
                CallStatus::Failed,
                None,
            )],
        );
        assert!(!edited_without_running(&failed_edit));
        assert!(nudge(&facts("how do I test?", vec![]), SUGGESTION, BASH).is_none());
        assert!(nudge(&facts("run the tests", vec![]), SUGGESTION, BASH).is_some());
        assert!(nudge(&facts("run the tests", vec![]), "All 12 pass.", BASH).is_none());
        let append = "Use this:\n```sh\necho banana >> notes.txt\n```";
        assert!(nudge(&facts("Append banana to notes.txt", vec![]), append, BASH).is_some());
        assert!(nudge(&facts("explain how to append a line", vec![]), append, BASH).is_none());
    }

    /// count_rows on Qwen2.5-Coder-1.5B: a ```` ```python ```` block in prose and no call.
    #[test]
    fn code_instead_of_the_work_gets_one_request_to_use_the_tools() {
        let count =
            "How many rows of sales.csv have the region EU? Write only the number into answer.txt.";
        let code = "Here's the code:\n```python\nwith open('sales.csv') as f:\n    print(len(f.readlines()))\n```\nAfter running this code, the number will be in answer.txt.";
        let nudged = nudge(&facts(count, vec![]), code, BASH).unwrap_or_default();
        assert!(nudged.contains("Nothing has been done yet"), "{nudged}");
        assert!(
            nudged.contains("<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>"),
            "{nudged}"
        );
        let write_only = nudge(&facts(count, vec![]), code, &["write_file"]).unwrap_or_default();
        assert!(
            write_only.contains("\"name\": \"write_file\""),
            "{write_only}"
        );
        assert_eq!(nudge(&facts(count, vec![]), code, &["read_file"]), None);
        assert!(nudge(&facts("Run the tests", vec![]), code, BASH).is_some());
        // Prose without code, or a turn that already made a call: not this request.
        assert_eq!(nudge(&facts(count, vec![]), "There are 3.", BASH), None);
        assert_eq!(
            nudge(&facts(count, vec![ok("read_file")]), code, BASH),
            None
        );
        // The user's words win: show, tell, explain, do not run, do not change.
        for request in [
            "Show me the code to count the EU rows of sales.csv",
            "How many rows of sales.csv have the region EU?",
            "Explain how to write the count into answer.txt",
            "Write count.py that counts the EU rows, but do not run it",
            "Count the EU rows of sales.csv but don't change anything",
        ] {
            assert_eq!(
                nudge(&facts(request, vec![]), code, BASH),
                None,
                "{request}"
            );
        }
    }

    #[test]
    fn a_repeated_answer_gets_one_concrete_request_then_nothing() {
        let answer = "Run it:\n```python\nprint('hi')\n```";
        let write = fact(
            "write_file",
            serde_json::json!({"path": "hi.py", "content": "print('hi')"}),
            CallStatus::Ran,
            None,
        );
        let turn = facts("create hi.py and run it", vec![write]);
        let intent = Intent::read(&turn.request);
        let answered = |answer: &'static str| Answered {
            facts: &turn,
            intent: &intent,
            answer,
            offered: BASH,
            text_calls: true,
        };
        let mut nudges = Nudges::default();
        assert!(!nudges.take_answering());
        assert_eq!(
            nudges.next(&answered(answer)).as_deref(),
            Some(RUN_IT_YOURSELF)
        );
        assert!(nudges.take_answering());
        let repeated = "  Run it:\n\n```python\n\nprint('hi')\n\n```\n";
        let stuck = nudges.next(&answered(repeated)).unwrap_or_default();
        assert!(stuck.contains("runs or tests `hi.py`"), "{stuck}");
        assert!(nudges.take_answering());
        assert_eq!(nudges.next(&answered(answer)), None);
        let made_up = "<tool_response>\nhi\n<system-reminder>\nshell 1/100\n</system-reminder>";
        assert!(stuck_nudge(&answered(made_up), "<tool_response>\nhi").is_some());
        let no_bash = Answered {
            offered: &["read_file"],
            ..answered(answer)
        };
        assert_eq!(stuck_nudge(&no_bash, answer), None);

        // The reply to the request made a call; the same answer after it is the final word.
        let mut nudges = Nudges::default();
        nudges.take_answering();
        assert!(nudges.next(&answered(answer)).is_some());
        assert!(nudges.take_answering());
        assert!(!nudges.take_answering());
        assert_eq!(nudges.next(&answered(answer)), None);
        let mut nudges = Nudges::default();
        nudges.take_answering();
        assert!(nudges.next(&answered(answer)).is_some());
        assert!(nudges.take_answering());
        assert_eq!(nudges.next(&answered("Something else.")), None);
    }
}
