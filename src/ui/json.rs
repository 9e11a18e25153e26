//! `--json` (SPEC §10): one JSON object per line on stdout for every event, for scripts and CI.
//!
//! Every line has a `type`; the field names below are a stable interface (fields may be
//! added, never renamed or removed). Nothing else is written to stdout in this mode.
//!
//! | `type` | fields |
//! |---|---|
//! | `session.started` | `session_id` (string or null), `model`, `workspace`, `sandbox`, `version` |
//! | `turn.started` | `input` |
//! | `message.delta` | `text` (a piece of assistant text, in order) |
//! | `reasoning.delta` | `text` (a piece of reasoning text) |
//! | `message.completed` | `text` (the whole message), `has_tool_calls` |
//! | `tool.started` | `call_id`, `tool`, `summary` (the command or path) |
//! | `approval.requested` | `tool`, `subject`, `reason`, `rule` (string or null) |
//! | `approval.answered` | `tool`, `answer` (`yes`/`no`/`always`/`explain`/`unavailable`), `approved` |
//! | `tool.finished` | `call_id`, `tool`, `ok`, `output` (what the model receives), `duration_ms`, `diff` (unified diff of an edit, or null) |
//! | `retry` | `attempt`, `max_attempts`, `delay_ms`, `reason` |
//! | `notice`, `warning`, `error` | `message` |
//! | `checkpoint.saved` | `turn`, `snapshot` (commit in the shadow repository), `files`, `skipped` (notes on what was not captured), `first`, `duration_ms` |
//! | `checkpoint.restored` | `turns`, `snapshot` (restored to), `restored`, `kept` (changed by hand, left alone), `failed` (paths with why) |
//! | `hook` | `event` (`PreToolUse`, `Stop`, ...), `command`, `result` (`ok`/`blocked`/`allow`/`ask`/`deny`/`warning`), `exit_code` (null on a timeout or signal), `duration_ms`, `warning` (string or null) |
//! | `turn.completed` | `usage` (`prompt_tokens`, `completion_tokens`, `cached_tokens`, `cost_usd`; null when not reported), `model_calls`, `context_tokens`, `context_window` |
//!
//! Progress of a reply held back as a possible tool call ([`AgentEvent::TextHeld`]) is not
//! written: the lines record what the session did, and the held text follows as
//! `tool.started` or `message.delta` once it is decided.

use std::io::Write;
use std::sync::Mutex;

use serde::Serialize;

use super::diff;
use crate::events::{AgentEvent, EventSink};
use crate::model::Usage;
use crate::tools::ToolDisplay;

/// Writes each event as one JSON line.
pub struct JsonSink {
    out: Mutex<Box<dyn Write + Send>>,
}

impl JsonSink {
    pub(crate) fn stdout() -> Self {
        Self::new(Box::new(std::io::stdout()))
    }

    pub fn new(out: Box<dyn Write + Send>) -> Self {
        Self {
            out: Mutex::new(out),
        }
    }
}

impl EventSink for JsonSink {
    fn emit(&self, event: AgentEvent) {
        let Some(json) = JsonEvent::of(&event) else {
            return;
        };
        let Ok(mut line) = serde_json::to_string(&json) else {
            return;
        };
        line.push('\n');
        let mut out = match self.out.lock() {
            Ok(out) => out,
            Err(poisoned) => poisoned.into_inner(),
        };
        // A closed pipe is the reader's choice, not an error.
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
    }
}

/// The wire form of an event.
#[derive(Debug, Serialize)]
#[serde(tag = "type")]
pub(crate) enum JsonEvent<'a> {
    #[serde(rename = "session.started")]
    SessionStarted {
        session_id: Option<&'a str>,
        model: &'a str,
        workspace: String,
        sandbox: &'a str,
        coach: &'a str,
        version: &'static str,
    },
    #[serde(rename = "turn.started")]
    TurnStarted { input: &'a str },
    #[serde(rename = "message.delta")]
    MessageDelta { text: &'a str },
    #[serde(rename = "reasoning.delta")]
    ReasoningDelta { text: &'a str },
    #[serde(rename = "message.completed")]
    MessageCompleted { text: &'a str, has_tool_calls: bool },
    #[serde(rename = "tool.started")]
    ToolStarted {
        call_id: &'a str,
        tool: &'a str,
        summary: &'a str,
    },
    #[serde(rename = "approval.requested")]
    ApprovalRequested {
        tool: &'a str,
        subject: &'a str,
        reason: &'a str,
        rule: Option<&'a str>,
    },
    #[serde(rename = "approval.answered")]
    ApprovalAnswered {
        tool: &'a str,
        answer: &'a str,
        approved: bool,
    },
    #[serde(rename = "tool.finished")]
    ToolFinished {
        call_id: &'a str,
        tool: &'a str,
        ok: bool,
        output: &'a str,
        duration_ms: u64,
        diff: Option<String>,
    },
    #[serde(rename = "retry")]
    Retry {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        reason: &'a str,
    },
    #[serde(rename = "notice")]
    Notice { message: &'a str },
    #[serde(rename = "warning")]
    Warning { message: &'a str },
    #[serde(rename = "error")]
    Error { message: &'a str },
    #[serde(rename = "hook")]
    Hook {
        event: &'a str,
        command: &'a str,
        result: &'a str,
        exit_code: Option<i32>,
        duration_ms: u64,
        warning: Option<&'a str>,
    },
    #[serde(rename = "todos.changed")]
    TodosChanged {
        todos: &'a [crate::tools::todos::Todo],
    },
    /// An event of a subagent (`task`), wrapped.
    #[serde(rename = "subagent")]
    Subagent { event: Box<JsonEvent<'a>> },
    #[serde(rename = "checkpoint.saved")]
    CheckpointSaved {
        turn: u64,
        snapshot: &'a str,
        files: usize,
        skipped: &'a [String],
        first: bool,
        duration_ms: u64,
    },
    #[serde(rename = "checkpoint.restored")]
    CheckpointRestored {
        turns: &'a [u64],
        snapshot: &'a str,
        restored: &'a [String],
        kept: &'a [String],
        failed: &'a [String],
    },
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        usage: Option<JsonUsage>,
        model_calls: u32,
        context_tokens: Option<u64>,
        context_window: u64,
    },
}

/// Token counts of a turn, summed over its model calls.
#[derive(Debug, Serialize)]
pub(crate) struct JsonUsage {
    pub(crate) prompt_tokens: u64,
    pub(crate) completion_tokens: u64,
    pub(crate) cached_tokens: Option<u64>,
    pub(crate) cost_usd: Option<f64>,
}

impl From<&Usage> for JsonUsage {
    fn from(usage: &Usage) -> Self {
        Self {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            cached_tokens: usage.cached_tokens,
            cost_usd: usage.cost,
        }
    }
}

fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl<'a> JsonEvent<'a> {
    /// The wire form of `event`; `None` for progress that is not written (see the module doc).
    pub(crate) fn of(event: &'a AgentEvent) -> Option<Self> {
        Some(match event {
            AgentEvent::SessionStarted {
                session_id,
                model,
                workspace,
                sandbox,
                coach,
            } => JsonEvent::SessionStarted {
                session_id: Some(session_id.as_str()).filter(|s| !s.is_empty()),
                model,
                workspace: workspace.display().to_string(),
                sandbox,
                coach,
                version: env!("CARGO_PKG_VERSION"),
            },
            AgentEvent::TurnStarted { input } => JsonEvent::TurnStarted { input },
            AgentEvent::TextDelta { text } => JsonEvent::MessageDelta { text },
            AgentEvent::TextHeld { .. } => return None,
            AgentEvent::ReasoningDelta { text } => JsonEvent::ReasoningDelta { text },
            AgentEvent::MessageCompleted {
                text,
                has_tool_calls,
            } => JsonEvent::MessageCompleted {
                text,
                has_tool_calls: *has_tool_calls,
            },
            AgentEvent::ToolStarted {
                call_id,
                tool,
                summary,
            } => JsonEvent::ToolStarted {
                call_id,
                tool,
                summary,
            },
            AgentEvent::ApprovalRequested {
                tool,
                subject,
                reason,
                rule,
            } => JsonEvent::ApprovalRequested {
                tool,
                subject,
                reason,
                rule: rule.as_deref(),
            },
            AgentEvent::ApprovalAnswered {
                tool,
                answer,
                approved,
            } => JsonEvent::ApprovalAnswered {
                tool,
                answer,
                approved: *approved,
            },
            AgentEvent::ToolFinished {
                call_id,
                tool,
                ok,
                output,
                display,
                duration,
            } => JsonEvent::ToolFinished {
                call_id,
                tool,
                ok: *ok,
                output,
                duration_ms: millis(*duration),
                diff: display.as_ref().map(|display| match display {
                    ToolDisplay::Diff {
                        path,
                        before,
                        after,
                    } => diff::unified(path, before, after),
                }),
            },
            AgentEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason,
            } => JsonEvent::Retry {
                attempt: *attempt,
                max_attempts: *max_attempts,
                delay_ms: millis(*delay),
                reason,
            },
            AgentEvent::Notice { message } => JsonEvent::Notice { message },
            AgentEvent::Warning { message } => JsonEvent::Warning { message },
            AgentEvent::Error { message } => JsonEvent::Error { message },
            AgentEvent::TodosChanged { todos } => JsonEvent::TodosChanged { todos },
            AgentEvent::CheckpointSaved {
                turn,
                snapshot,
                files,
                skipped,
                first,
                duration,
            } => JsonEvent::CheckpointSaved {
                turn: *turn,
                snapshot,
                files: *files,
                skipped,
                first: *first,
                duration_ms: millis(*duration),
            },
            AgentEvent::CheckpointRestored {
                turns,
                snapshot,
                restored,
                kept,
                failed,
            } => JsonEvent::CheckpointRestored {
                turns,
                snapshot,
                restored,
                kept,
                failed,
            },
            AgentEvent::HookRan {
                event,
                command,
                result,
                exit_code,
                duration,
                warning,
            } => JsonEvent::Hook {
                event,
                command,
                result,
                exit_code: *exit_code,
                duration_ms: millis(*duration),
                warning: warning.as_deref(),
            },
            AgentEvent::Subagent { event } => JsonEvent::Subagent {
                event: Box::new(JsonEvent::of(event.as_ref())?),
            },
            AgentEvent::TurnCompleted {
                usage,
                model_calls,
                context_tokens,
                context_window,
            } => JsonEvent::TurnCompleted {
                usage: usage.as_ref().map(JsonUsage::from),
                model_calls: *model_calls,
                context_tokens: *context_tokens,
                context_window: *context_window,
            },
        })
    }
}
