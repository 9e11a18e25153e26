//! [`AgentEvent`]: everything the user interface is told, and [`EventSink`], the one way it
//! is told. The UI (terminal text, `--json` lines) is a subscriber; the loop, the context
//! manager, governance and the session store emit events and never print.
//!
//! The vocabulary sits below every layer that emits (agent, context, governance, session)
//! and above the tools and the model, whose types (a tool's display hint, a todo, token
//! usage) it carries.

use std::path::PathBuf;
use std::time::Duration;

use crate::model::Usage;
use crate::tools::ToolDisplay;

/// One thing that happened in a session, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    SessionStarted {
        session_id: String,
        model: String,
        workspace: PathBuf,
        /// One line describing shell confinement (mode and network).
        sandbox: String,
        /// Whether the coach for weak models is on, and why (`coach off (auto: ...)`).
        coach: String,
    },
    TurnStarted {
        input: String,
    },
    /// A piece of assistant text as it streams.
    TextDelta {
        text: String,
    },
    /// A piece of reasoning text as it streams (shown dimmed).
    ReasoningDelta {
        text: String,
    },
    /// The reply so far is held back because it may be a tool call written as text;
    /// `chars` characters have arrived. Progress only: the text itself follows as
    /// [`AgentEvent::TextDelta`] if it is not a call. At most a few a second.
    TextHeld {
        chars: usize,
    },
    /// The streamed assistant message ended (text, if any, is complete).
    MessageCompleted {
        text: String,
        /// The message goes on with tool calls (its text was intermediate).
        has_tool_calls: bool,
    },
    ToolStarted {
        call_id: String,
        tool: String,
        /// The call's key argument (command, path) for a one-line display.
        summary: String,
    },
    ToolFinished {
        call_id: String,
        tool: String,
        ok: bool,
        /// The result text as the model receives it.
        output: String,
        display: Option<ToolDisplay>,
        duration: Duration,
    },
    /// An `ask` verdict is about to be put to the user (emitted before the prompt shows).
    ApprovalRequested {
        tool: String,
        /// The command or path, exactly as it will be used.
        subject: String,
        /// Why the rules ask (the reasons of the parts that decided it, `; `-joined).
        reason: String,
        /// The rule that matched, when one did.
        rule: Option<String>,
    },
    /// The user (or `--yes`, or the lack of a terminal) answered an approval request.
    ApprovalAnswered {
        tool: String,
        /// `yes`, `no`, `always`, `explain` or `unavailable`.
        answer: String,
        /// The call will run.
        approved: bool,
    },
    /// The model request is being retried.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        reason: String,
    },
    /// Something the user should know that is not an error.
    Notice {
        message: String,
    },
    Warning {
        message: String,
    },
    TurnCompleted {
        /// Usage summed over the turn's model calls; `None` when the server reported none.
        usage: Option<Usage>,
        model_calls: u32,
        /// Prompt tokens of the last request (context in use), when known.
        context_tokens: Option<u64>,
        context_window: u64,
    },
    Error {
        message: String,
    },
    /// The todo list changed (`write_todos`); shown after each change.
    TodosChanged {
        todos: Vec<crate::tools::todos::Todo>,
    },
    /// The workspace was saved before the turn's first change (checkpoints, issue 16).
    CheckpointSaved {
        /// The turn's number in its session.
        turn: u64,
        /// The snapshot: a commit in the shadow repository.
        snapshot: String,
        /// Files and links captured.
        files: usize,
        /// What was not captured, one note each (each path once a session).
        skipped: Vec<String>,
        /// The workspace's first snapshot (every file was read).
        first: bool,
        duration: Duration,
    },
    /// Files were restored from a snapshot (`/undo`, `/rewind`).
    CheckpointRestored {
        /// The turns undone.
        turns: Vec<u64>,
        /// The snapshot restored to.
        snapshot: String,
        /// Paths restored.
        restored: Vec<String>,
        /// Paths changed by hand since, left as they were.
        kept: Vec<String>,
        /// Paths that could not be restored, with why.
        failed: Vec<String>,
    },
    /// A hook ran (issue 18). The terminal shows only a misbehaving hook's warning; `--json`
    /// writes every run.
    HookRan {
        /// The hook event (`PreToolUse`, `Stop`, ...).
        event: String,
        command: String,
        /// `ok`, `blocked`, `allow`, `ask`, `deny` or `warning`.
        result: String,
        exit_code: Option<i32>,
        duration: Duration,
        warning: Option<String>,
    },
    /// An event of a subagent (`task`), shown indented under the parent's tool call.
    Subagent {
        event: Box<AgentEvent>,
    },
}

/// A subscriber to agent events. Called on the loop's thread; must not block for long.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: AgentEvent);
}

/// Discards every event.
#[derive(Debug, Default)]
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _: AgentEvent) {}
}
