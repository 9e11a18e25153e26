//! The coach for small models: the [`Coach`] the loop gets when the coach is on.
//!
//! - the request is cut down for a small model ([`super::profile`]): four tools, a short
//!   system prompt with one worked call, a bound on the reply's length;
//! - a reply that is almost a tool call is repaired and read as one ([`super::lenient`]);
//! - a `bash` call whose command is itself one tool call is that call ([`super::wrapped`]);
//! - a whole-file listing for a file the user asked to create or change becomes a
//!   `write_file` call ([`super::listing`]);
//! - a refused or failed call's result gets one line saying what to call instead
//!   ([`super::recovery`]); a write refused because the file was not read yet gets the
//!   file instead, read through the dispatcher so it counts as read;
//! - while a reply streams, it is stopped when it degenerates into a loop
//!   ([`super::repetition`]);
//! - an empty reply is asked for once more, with a note;
//! - a final answer that leaves the work to the user gets one request to do it
//!   ([`super::nudges`]), as does one that holds code when the turn made no call at all,
//!   and in the reply right after that request a command or call the model only shows is
//!   taken as the call ([`super::shown`]) when the user's request allows it.

use std::path::{Path, PathBuf};

use super::intent::Intent;
use super::nudges::{Answered, Nudges};
use super::repetition::RepetitionGuard;
use super::{
    Coach, RunCall, Step, TurnView, give_ids, lenient, listing, profile, recovery, shown, wrapped,
};
use crate::agent::facts::CallFact;
use crate::model::{ChatRequest, Message, ToolCall};

/// Appended (to that request only) after an empty reply.
const EMPTY_REPLY_NOTE: &str =
    "\n(Your last reply was empty. Continue the task: call a tool, or give your final answer.)";

/// The small-model coach for one turn.
#[derive(Debug)]
pub(crate) struct SmallModelCoach {
    /// The user's own words for this turn.
    request: String,
    workspace: PathBuf,
    intent: Intent,
    nudges: Nudges,
    stream: RepetitionGuard,
    empty_replies: u32,
    /// The model was told this turn that a tool it called as text does not exist.
    told_unknown_tool: bool,
    /// The command the last results' recovery line told the model to run
    /// ([`recovery::suggested_command`]).
    suggested: Option<String>,
}

impl SmallModelCoach {
    /// The coach for a turn whose request is `request`, in `workspace`.
    pub(crate) fn new(request: &str, workspace: &Path) -> Self {
        Self {
            request: request.to_string(),
            workspace: workspace.to_path_buf(),
            intent: Intent::read(request),
            nudges: Nudges::default(),
            stream: RepetitionGuard::default(),
            empty_replies: 0,
            told_unknown_tool: false,
            suggested: None,
        }
    }
}

impl SmallModelCoach {
    /// A reply that is only a call, written as text, naming a tool that does not exist
    /// (`add_function`, `mathutil.is_even`): once per turn, the model is told its tools.
    fn unknown_tool(&mut self, turn: &TurnView<'_>, reply: &Message) -> Option<Step> {
        if self.told_unknown_tool || !turn.text_calls || self.intent.answer_only {
            return None;
        }
        let calls = lenient::extract_any(reply.text_content())?;
        let unknown = calls
            .iter()
            .find(|call| !turn.offered.contains(&call.name.as_str()))?;
        self.told_unknown_tool = true;
        Some(Step::Ask {
            request: format!(
                "<system-reminder>\nThere is no tool `{}`; nothing was run. Your tools are {}. \
                 Make the call again with one of them, for example: {{\"name\": \"bash\", \
                 \"arguments\": {{\"command\": \"ls\"}}}}\n</system-reminder>",
                unknown.name,
                turn.offered.join(", ")
            ),
            notice: format!(
                "the model called `{}`, which is not a tool; asking it to use its tools",
                unknown.name
            ),
        })
    }
}

impl Coach for SmallModelCoach {
    fn on_text(&mut self, delta: &str) -> Option<String> {
        self.stream
            .push(delta)
            .then(|| self.stream.kept().to_string())
    }

    fn on_new_attempt(&mut self) {
        self.stream = RepetitionGuard::default();
    }

    fn shape_request(&self, request: &mut ChatRequest) {
        profile::shape(request, &self.workspace);
    }

    fn rewrite_calls(&mut self, turn: &TurnView<'_>, calls: &mut [ToolCall]) {
        if !turn.text_calls {
            return;
        }
        let offered = profile::small_tools(turn.offered);
        for call in calls {
            wrapped::unwrap(call, &offered);
        }
    }

    fn on_result(&mut self, fact: &CallFact, content: &mut String, run: &mut RunCall<'_>) {
        if let Some(command) = recovery::suggested_command(fact) {
            self.suggested = Some(command);
        }
        if let Some(read) = recovery::read_for_refusal(fact) {
            let outcome = run(&read);
            if outcome.ok
                && let Some(path) = fact.string_argument("path")
            {
                content.push('\n');
                content.push_str(&recovery::content_follows(&path));
                content.push('\n');
                content.push_str(&outcome.content);
                return;
            }
        }
        if let Some(line) = recovery::recovery_line(fact) {
            content.push('\n');
            content.push_str(&line);
        }
    }

    fn after_reply(&mut self, turn: &TurnView<'_>, reply: &mut Message) -> Step {
        self.stream = RepetitionGuard::default();
        let offered = profile::small_tools(turn.offered);
        let turn = &TurnView {
            facts: turn.facts,
            offered: &offered,
            text_calls: turn.text_calls,
        };
        let answering = self.nudges.take_answering();
        if reply.tool_calls.is_empty()
            && turn.text_calls
            && let Some(mut calls) = lenient::extract(reply.text_content(), turn.offered)
        {
            give_ids(&mut calls);
            reply.tool_calls = calls;
            reply.content = None;
            return Step::Proceed;
        }
        if answering && turn.text_calls {
            shown::take_shown_call(reply, turn.offered, &self.intent);
        }
        // The recovery line named a command and the reply shows exactly that command: the
        // line was a request to run it, so the shown command is the call (when the user's
        // words allow running).
        let suggested = self.suggested.take();
        if reply.tool_calls.is_empty()
            && turn.text_calls
            && turn.offered.contains(&"bash")
            && self.intent.allows_shown_call("bash")
            && let Some(command) = suggested
            && shown::first_shell_block(reply.text_content()).as_deref() == Some(command.as_str())
        {
            let mut calls = vec![shown::bash_call(&command)];
            give_ids(&mut calls);
            reply.tool_calls = calls;
        }
        if reply.tool_calls.is_empty() && turn.offered.contains(&"write_file") {
            let mut calls = listing::listing_calls(
                reply.text_content(),
                &self.request,
                &self.intent,
                &self.workspace,
            );
            give_ids(&mut calls);
            reply.tool_calls = calls;
        }
        if !reply.tool_calls.is_empty() {
            return Step::Proceed;
        }
        if let Some(step) = self.unknown_tool(turn, reply) {
            return step;
        }
        let answer = reply.text_content();
        if answer.trim().is_empty() {
            self.empty_replies += 1;
            return if self.empty_replies == 1 {
                Step::Retry {
                    note: EMPTY_REPLY_NOTE.to_string(),
                    warning: "the model returned an empty reply; asking once more".into(),
                }
            } else {
                Step::Proceed
            };
        }
        let answered = Answered {
            facts: turn.facts,
            intent: &self.intent,
            answer,
            offered: turn.offered,
            text_calls: turn.text_calls,
        };
        match self.nudges.next(&answered) {
            Some(request) => Step::Ask {
                request,
                notice: "asking the model to do it instead of leaving it to you".into(),
            },
            None => Step::Proceed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::facts::{CallStatus, TurnFacts, test_fact};

    fn view(facts: &TurnFacts) -> TurnView<'_> {
        TurnView {
            facts,
            offered: &["bash", "write_file"],
            text_calls: true,
        }
    }

    /// git_commit on Qwen2.5-Coder-1.5B: `write_file` of a file not read yet was refused and
    /// the model looped on prose. The refusal now carries the file, read through the
    /// dispatcher (which records it as read).
    #[test]
    fn a_write_refused_as_not_read_carries_the_file_read_for_the_model() {
        let refused = test_fact(
            "write_file",
            serde_json::json!({"path": "README.md", "content": "x"}),
            CallStatus::Failed,
            Some(crate::tools::ToolErrorKind::NotRead),
            None,
        );
        let mut coach = SmallModelCoach::new("update README.md", Path::new("/w"));
        let mut ran = Vec::new();
        let mut content = "Error: write_file failed - not read".to_string();
        let read = |ok: bool| {
            let mut outcome = crate::tools::DispatchOutcome::blocked("     1\t# shop".into(), None);
            outcome.blocked = false;
            outcome.ok = ok;
            outcome
        };
        coach.on_result(&refused, &mut content, &mut |call: &ToolCall| {
            ran.push((call.name.clone(), call.arguments.clone()));
            read(true)
        });
        assert_eq!(
            ran,
            [(
                "read_file".to_string(),
                r#"{"path":"README.md"}"#.to_string()
            )]
        );
        assert!(
            content.starts_with("Error: write_file failed - not read\n"),
            "{content}"
        );
        assert!(
            content.contains("`README.md` now counts as read"),
            "{content}"
        );
        assert!(content.ends_with("     1\t# shop"), "{content}");
        assert!(!content.contains("Next: read the file first"), "{content}");

        // The read refused (a deny rule): the refusal says what to call, as before.
        let mut content = String::new();
        coach.on_result(&refused, &mut content, &mut |_: &ToolCall| read(false));
        assert!(content.contains("Next: read the file first"), "{content}");
        assert!(!content.contains("# shop"), "{content}");

        // Any other result: nothing is run.
        let ran_ok = CallFact {
            status: CallStatus::Ran,
            error: None,
            ..refused
        };
        let mut content = String::new();
        coach.on_result(&ran_ok, &mut content, &mut |_: &ToolCall| {
            panic!("nothing to run")
        });
        assert!(content.is_empty());
    }

    /// hello.py on Qwen2.5-Coder-1.5B: `bash hello.py` failed, the recovery line said to run
    /// `python3 hello.py`, and the model showed exactly that in a shell block and stopped.
    #[test]
    fn the_command_a_recovery_line_named_is_taken_when_the_reply_shows_it() {
        let failed = test_fact(
            "bash",
            serde_json::json!({"command": "bash hello.py"}),
            CallStatus::Ran,
            None,
            Some(2),
        );
        let shows = |command: &str| Message::assistant(format!("Run:\n```bash\n{command}\n```"));
        let no_run = &mut |_: &ToolCall| panic!("nothing to run");

        let request = "Create hello.py that prints hello, then run it";
        let facts = TurnFacts::new(request);
        let mut coach = SmallModelCoach::new(request, Path::new("/w"));
        let mut content = String::new();
        coach.on_result(&failed, &mut content, no_run);
        assert!(content.contains("python3"), "{content}");
        let mut reply = shows("python3 hello.py");
        assert_eq!(coach.after_reply(&view(&facts), &mut reply), Step::Proceed);
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(
            reply.tool_calls[0].arguments,
            r#"{"command":"python3 hello.py"}"#
        );

        // Another command is not taken.
        coach.on_result(&failed, &mut String::new(), no_run);
        let mut other = shows("rm -rf build");
        coach.after_reply(&view(&facts), &mut other);
        assert!(other.tool_calls.is_empty());

        // The user said not to run: never taken.
        let request = "Write hello.py; do not run it, I will run it myself";
        let facts = TurnFacts::new(request);
        let mut coach = SmallModelCoach::new(request, Path::new("/w"));
        coach.on_result(&failed, &mut String::new(), no_run);
        let mut reply = shows("python3 hello.py");
        coach.after_reply(&view(&facts), &mut reply);
        assert!(reply.tool_calls.is_empty());
    }

    #[test]
    fn an_empty_reply_is_retried_once() {
        let facts = TurnFacts::new("go on");
        let mut coach = SmallModelCoach::new("go on", Path::new("/w"));
        let mut empty = Message::assistant("");
        assert!(matches!(
            coach.after_reply(&view(&facts), &mut empty),
            Step::Retry { .. }
        ));
        assert_eq!(coach.after_reply(&view(&facts), &mut empty), Step::Proceed);
    }

    #[test]
    fn a_shown_command_is_taken_only_after_a_request_and_only_when_allowed() {
        let request = "Create hello.py that prints hello, then run it";
        let facts = TurnFacts::new(request);
        let mut coach = SmallModelCoach::new(request, Path::new("/w"));
        let shows = "Run it:\n```bash\npython3 hello.py\n```";
        let mut answer = Message::assistant(shows);
        assert!(matches!(
            coach.after_reply(&view(&facts), &mut answer),
            Step::Ask { .. }
        ));
        assert!(
            answer.tool_calls.is_empty(),
            "the answer itself is never run"
        );
        let mut reply = Message::assistant(shows);
        assert_eq!(coach.after_reply(&view(&facts), &mut reply), Step::Proceed);
        assert_eq!(reply.tool_calls.len(), 1);

        let request = "Show me how to run hello.py";
        let facts = TurnFacts::new(request);
        let mut coach = SmallModelCoach::new(request, Path::new("/w"));
        let mut answer = Message::assistant(shows);
        assert_eq!(coach.after_reply(&view(&facts), &mut answer), Step::Proceed);
        assert!(answer.tool_calls.is_empty());
    }

    /// hello.py run 3 on Qwen2.5-Coder-1.5B: the shown command was a whole call in a
    /// ```` ```bash ```` block; taken as a `bash` call, it ran as a shell command.
    #[test]
    fn a_shown_call_in_a_shell_block_runs_as_the_call_it_wraps() {
        let request = "Create hello.py that prints hello, then run it";
        let facts = TurnFacts::new(request);
        let mut coach = SmallModelCoach::new(request, Path::new("/w"));
        let shows = "To run the script, you can use the `bash` function:\n```bash\n{\"name\": \"bash\", \"arguments\": {\"command\": \"python3 hello.py\", \"timeout\": 60}}\n```";
        let mut answer = Message::assistant(shows);
        assert!(matches!(
            coach.after_reply(&view(&facts), &mut answer),
            Step::Ask { .. }
        ));
        let mut reply = Message::assistant(shows);
        assert_eq!(coach.after_reply(&view(&facts), &mut reply), Step::Proceed);
        coach.rewrite_calls(&view(&facts), &mut reply.tool_calls);
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].name, "bash");
        assert_eq!(
            reply.tool_calls[0].arguments,
            r#"{"command":"python3 hello.py","timeout":60}"#
        );
        // Without text calls (`[provider] text_tool_calls = "off"`) nothing is rewritten.
        let mut calls = reply.tool_calls.clone();
        let wrapped = r#"{"name": "bash", "arguments": {"command": "ls"}}"#;
        calls[0].arguments = serde_json::json!({ "command": wrapped }).to_string();
        let before = calls.clone();
        let off = TurnView {
            text_calls: false,
            ..view(&facts)
        };
        coach.rewrite_calls(&off, &mut calls);
        assert_eq!(calls, before);
    }

    #[test]
    fn a_call_to_a_tool_that_does_not_exist_is_answered_once() {
        let request = "Add a function is_even(n) to mathutil.py";
        let facts = TurnFacts::new(request);
        let mut coach = SmallModelCoach::new(request, Path::new("/w"));
        let call = "```json\n{\"name\": \"add_function\", \"arguments\": {\"n\": 1}}\n```";
        let mut reply = Message::assistant(call);
        match coach.after_reply(&view(&facts), &mut reply) {
            Step::Ask { request, .. } => {
                assert!(request.contains("no tool `add_function`"), "{request}");
                assert!(
                    request.contains("Your tools are bash, write_file."),
                    "{request}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(reply.tool_calls.is_empty());
        let mut again = Message::assistant(call);
        assert!(!matches!(
            coach.after_reply(&view(&facts), &mut again),
            Step::Ask { ref request, .. } if request.contains("no tool")
        ));
        let question = "What would an add_function call look like?";
        let mut coach = SmallModelCoach::new(question, Path::new("/w"));
        let mut reply = Message::assistant(call);
        assert_eq!(
            coach.after_reply(&view(&TurnFacts::new(question)), &mut reply),
            Step::Proceed
        );
    }

    #[test]
    fn a_looping_stream_is_cut() {
        let mut coach = SmallModelCoach::new("x", Path::new("/w"));
        let unit = "The same paragraph, again and again, with nothing new in it at all.\n";
        let cut = (0..200).find_map(|_| coach.on_text(unit));
        let kept = cut.unwrap_or_default();
        assert_eq!(kept.matches("The same paragraph").count(), 1, "{kept}");
        coach.on_new_attempt();
        assert_eq!(coach.on_text(unit), None);
    }
}
