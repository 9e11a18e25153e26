//! The governance seam (SPEC §9): everything roles and budgets may decide about a turn, as
//! one trait. The dispatcher asks [`Policy::check`] before permissions (§4.2 step 4); the
//! inner loop reports usage and every tool call to it, asks it whether the session may go
//! on, and puts its lines in the reminder. The governance layer implements it
//! (`governance::Governor`); [`NoPolicy`] allows everything.
//!
//! It lives with the tools because the dispatcher, the lowest of its callers, needs it; it
//! knows nothing of the loop, so the loop and governance both depend on it and not on each
//! other.

use std::time::Duration;

use super::{Args, DispatchOutcome};
use crate::model::{ToolCall, Usage};
use crate::permissions::Decision;

/// What the user's `PreToolUse` hooks said about a call, before the permission rules (issue
/// 18). The dispatcher combines it with the rules' verdict: `deny` blocks the call, `ask`
/// makes an `allow` an `ask`, `allow` answers an `ask` without a prompt; a rule's `deny`
/// always stays a deny, and the sandbox applies whatever the hooks said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookGate {
    pub(crate) decision: Option<Decision>,
    /// Why (a blocking hook's stderr, or its `permissionDecisionReason`).
    pub(crate) reason: Option<String>,
}

/// Why a policy refused a tool call; the model reads `Blocked by policy: <reason>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct PolicyBlock {
    pub(crate) reason: String,
}

/// What governance sees of a turn and may decide about it. A call that is never dispatched
/// (interrupted, or after the budget ran out) still goes through [`Policy::before_tool`] and
/// [`Policy::after_tool`], with a blocked outcome. Every method defaults to allowing and
/// doing nothing.
pub trait Policy: Send + Sync {
    /// After each model call that reported usage (cost, §9.3).
    fn on_usage(&self, _usage: &Usage) {}

    /// Before a tool call is dispatched or skipped (the audit log).
    fn before_tool(&self, _call: &ToolCall) {}

    /// Dispatch step 4, before permissions: `Err` blocks the call (role tool policy, budget).
    ///
    /// # Errors
    /// A [`PolicyBlock`] saying why the call may not run.
    fn check(&self, _tool: &str, _args: &Args) -> Result<(), PolicyBlock> {
        Ok(())
    }

    /// Dispatch step 4, after [`Policy::check`], before permissions: the `PreToolUse` hooks.
    fn pre_tool(&self, _tool: &str, _args: &Args) -> HookGate {
        HookGate::default()
    }

    /// The session waits for the user (an approval): `message` says why (`Notification`
    /// hooks).
    fn waiting(&self, _message: &str) {}

    /// A subagent ended with `answer`; `Some(reason)` continues it with the reason
    /// (`SubagentStop` hooks). `continued`: how many times in a row it was continued so far.
    fn subagent_stop(&self, _answer: &str, _continued: u32) -> Option<String> {
        None
    }

    /// After a tool call, before its result is shown and stored; may rewrite the result the
    /// model gets (compressed shell output, a budget line, `PostToolUse` hook feedback).
    fn after_tool(&self, _call: &ToolCall, _outcome: &mut DispatchOutcome, _took: Duration) {}

    /// `Some(why and how to continue)` when the session may not go on (a budget is
    /// exhausted): asked before a turn starts and after every tool call.
    fn exhausted(&self) -> Option<String> {
        None
    }

    /// Lines for the per-request reminder (§7.2): the role and the budget.
    fn reminder_lines(&self) -> Vec<String> {
        Vec::new()
    }
}

/// No governance: everything is allowed, nothing is counted.
#[derive(Debug, Default)]
pub struct NoPolicy;

impl Policy for NoPolicy {}
