//! Hooks (issue 18): the user's commands run on session events with Claude Code's contract,
//! so existing hook scripts work. Which hooks exist is resolved in [`crate::config::hooks`];
//! [`process`] runs one, [`output`] reads what it meant, and [`Hooks::run`] runs every hook
//! of an event that matches, in order, and combines their verdicts: any block blocks (the
//! reasons joined), the strictest `permissionDecision` wins (deny > ask > allow), contexts
//! are kept in order.
//!
//! Each hook gets on stdin one JSON object: `session_id`, `transcript_path`, `cwd`,
//! `hook_event_name`, and the event's fields (`tool_name`, `tool_input`, `tool_response`,
//! `prompt`, `stop_hook_active`, `source`, `reason`, `trigger`, `message`). It runs with the
//! agent's environment less the secrets, plus `AGENT_PROJECT_DIR` and `CLAUDE_PROJECT_DIR`
//! (the workspace). The governor records every run as a `HookRun` event.

pub(crate) mod output;
pub(crate) mod process;

use serde_json::{Map, Value};

use crate::config::HookSettings;
use crate::config::hooks::{Hook, HookEvent};
use crate::permissions::Decision;
pub(crate) use output::Verdict;

/// `Stop` (and `SubagentStop`) hooks may continue a turn at most this many times in a row;
/// then the turn ends with a warning (issue 18: "at most a few times").
pub(crate) const MAX_STOP_CONTINUATIONS: u32 = 3;

/// The session's hooks.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hooks {
    settings: HookSettings,
}

/// One run of one hook, for the event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) event: HookEvent,
    pub(crate) command: String,
    /// The tool name, trigger or source the hook was matched against.
    pub(crate) subject: Option<String>,
    /// The exit code, when the shell exited.
    pub(crate) exit_code: Option<i32>,
    pub(crate) verdict: Verdict,
    pub(crate) duration_ms: u64,
}

/// The combined verdict of an event's hooks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// Why, when a hook blocked (reasons of several hooks joined by newlines).
    pub(crate) block: Option<String>,
    /// The strictest `permissionDecision`.
    pub(crate) permission: Option<Decision>,
    /// The reason of that decision.
    pub(crate) reason: Option<String>,
    /// Context to add, in hook order.
    pub(crate) context: Vec<String>,
    /// How many hooks ran.
    pub(crate) ran: usize,
}

impl Hooks {
    pub(crate) fn new(settings: HookSettings) -> Self {
        Self { settings }
    }

    /// The workspace, where hooks run (`cwd` of their input).
    pub(crate) fn workspace(&self) -> &std::path::Path {
        &self.settings.workspace
    }

    /// Whether any hook is configured for `event`.
    pub(crate) fn has(&self, event: HookEvent) -> bool {
        self.settings.hooks.iter().any(|h| h.event == event)
    }

    /// Runs the hooks of `event` matching `subject`, in order; `input` is the JSON object
    /// they get (the common fields and the event's). Blocking: up to the sum of their
    /// timeouts.
    pub(crate) fn run(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        input: &Map<String, Value>,
    ) -> (Outcome, Vec<Run>) {
        let mut outcome = Outcome::default();
        let mut runs = Vec::new();
        let matching = self
            .settings
            .hooks
            .iter()
            .filter(|h| h.event == event && h.matches(subject));
        let stdin = Value::Object(input.clone()).to_string();
        for hook in matching {
            let run = self.run_one(hook, subject, stdin.as_bytes());
            combine(&mut outcome, &run.verdict);
            outcome.ran += 1;
            runs.push(run);
        }
        (outcome, runs)
    }

    fn run_one(&self, hook: &Hook, subject: Option<&str>, stdin: &[u8]) -> Run {
        let workspace = self.settings.workspace.display().to_string();
        let set = [
            ("AGENT_PROJECT_DIR".to_string(), workspace.clone()),
            ("CLAUDE_PROJECT_DIR".to_string(), workspace),
        ];
        let ran = process::run(
            &hook.command,
            stdin,
            &self.settings.workspace,
            &set,
            &self.settings.remove_env,
            hook.timeout,
        );
        let verdict = output::read(hook.event, &hook.command, &ran);
        Run {
            event: hook.event,
            command: hook.command.clone(),
            subject: subject.map(str::to_string),
            exit_code: match ran.ending {
                process::Ending::Exited(code) => Some(code),
                _ => None,
            },
            verdict,
            duration_ms: u64::try_from(ran.took.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

fn combine(outcome: &mut Outcome, verdict: &Verdict) {
    if let Some(block) = &verdict.block {
        match &mut outcome.block {
            Some(text) => {
                text.push('\n');
                text.push_str(block);
            }
            None => outcome.block = Some(block.clone()),
        }
    }
    if let Some(permission) = verdict.permission
        && outcome.permission.is_none_or(|p| permission > p)
    {
        outcome.permission = Some(permission);
        outcome.reason.clone_from(&verdict.reason);
    }
    outcome.context.extend(verdict.context.iter().cloned());
}

/// The fields every hook gets.
pub(crate) fn common_input(
    event: HookEvent,
    session_id: &str,
    transcript: Option<&std::path::Path>,
    cwd: &std::path::Path,
) -> Map<String, Value> {
    let mut input = Map::new();
    input.insert("session_id".into(), session_id.into());
    input.insert(
        "transcript_path".into(),
        transcript.map_or(Value::Null, |p| p.display().to_string().into()),
    );
    input.insert("cwd".into(), cwd.display().to_string().into());
    input.insert("hook_event_name".into(), event.name().into());
    input
}
