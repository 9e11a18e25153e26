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

    /// After a tool call, before its result is shown and stored; may rewrite the result the
    /// model gets (compressed shell output, a budget line).
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
