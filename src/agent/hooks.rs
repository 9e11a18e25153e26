//! Where the session's hooks run in the loop (issue 18): `UserPromptSubmit` before a turn,
//! `Stop` after it (continuing it at most [`MAX_STOP_CONTINUATIONS`] times in a row),
//! `SessionStart` / `SessionEnd` around a session, and `PreCompact` before a compaction. The
//! governor runs the hooks and records them; this file decides what their verdicts do to
//! the conversation. Tool hooks run in the dispatcher through the governor's
//! [`crate::tools::Policy`].

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value};

use super::Agent;
use crate::config::hooks::HookEvent;
use crate::context::manager::{BeforeCompact, Trigger};
use crate::events::{AgentEvent, EventSink};
use crate::governance::Governor;
use crate::governance::hooks::{MAX_STOP_CONTINUATIONS, Outcome};
use crate::model::Message;

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

fn field(key: &str, value: impl Into<Value>) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert(key.to_string(), value.into());
    fields
}

/// The message carrying hooks' context to the model (`None` when there is none).
pub(crate) fn context_note(context: &[String]) -> Option<Message> {
    if context.is_empty() {
        return None;
    }
    Some(Message::harness(format!(
        "Context added by the user's hooks:\n{}",
        context.join("\n\n")
    )))
}

/// The `Stop` hooks after a final answer: `Some(note)` continues the turn with the note,
/// unless it was already continued [`MAX_STOP_CONTINUATIONS`] times in a row (then a
/// warning, and the turn ends).
pub(crate) fn stop(
    governor: &Governor,
    sink: &Arc<dyn EventSink>,
    _answer: &str,
    continued: u32,
) -> Option<Message> {
    let outcome = governor.run_hooks(
        HookEvent::Stop,
        None,
        field("stop_hook_active", continued > 0),
    );
    let reason = outcome.block?;
    if continued >= MAX_STOP_CONTINUATIONS {
        sink.emit(AgentEvent::Warning {
            message: format!(
                "a Stop hook asked to continue the turn again after {MAX_STOP_CONTINUATIONS} \
                 times in a row; ending the turn ({reason})"
            ),
        });
        return None;
    }
    sink.emit(AgentEvent::Notice {
        message: format!("a Stop hook continues the turn: {reason}"),
    });
    Some(Message::harness(format!(
        "A Stop hook of the user did not let the turn end yet: {reason}\nContinue the work."
    )))
}

/// `PreCompact` hooks for the context manager, sent to the session's current governor.
pub(crate) fn pre_compact(governor: &Arc<Mutex<Arc<Governor>>>) -> BeforeCompact {
    let governor = Arc::clone(governor);
    Arc::new(move |trigger: Trigger| {
        let trigger = match trigger {
            Trigger::Manual => "manual",
            Trigger::Auto | Trigger::Recover => "auto",
        };
        let governor = Arc::clone(&lock(&governor));
        let mut fields = field("trigger", trigger);
        fields.insert("custom_instructions".into(), "".into());
        let _ = governor.run_hooks(HookEvent::PreCompact, Some(trigger), fields);
    })
}

impl Agent {
    /// `UserPromptSubmit`: a block refuses the prompt (the reason is for the user); context
    /// goes to the model with the prompt.
    pub(crate) fn prompt_hooks(&self, prompt: &str) -> Outcome {
        self.governor
            .run_hooks(HookEvent::UserPromptSubmit, None, field("prompt", prompt))
    }

    /// `SessionStart` with `source` (`startup`, `resume`, `clear`): context is kept for the
    /// next turn.
    pub(crate) fn start_hooks(&mut self, source: &str) {
        let outcome = self.governor.run_hooks(
            HookEvent::SessionStart,
            Some(source),
            field("source", source),
        );
        self.session_context.extend(outcome.context);
    }

    /// `SessionEnd` with `reason` (`exit`, `clear`, `other`).
    pub(crate) fn end_hooks(&self, reason: &str) {
        let _ = self
            .governor
            .run_hooks(HookEvent::SessionEnd, None, field("reason", reason));
    }
}
