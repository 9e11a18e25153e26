//! Typed facts about the current turn, kept by the loop beside the history: the user's
//! request, and for every tool call its name, arguments and how it ended.
//!
//! The coach ([`super::coach`]) and the repeated-call guard ([`super::guard`]) decide from
//! these, never from the text of a tool result (which is written for the model and changes
//! with caps, budget lines and wording).

use crate::model::ToolCall;
use crate::tools::{DispatchOutcome, ToolErrorKind};

/// How one tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallStatus {
    /// The tool ran and returned a result (for `bash`: the command ran, whatever its exit
    /// code; see [`CallFact::exit_code`]).
    Ran,
    /// The tool ran and failed (wrong arguments, missing file, timeout, ...).
    Failed,
    /// Stopped before running by a rule, the role or a budget.
    Blocked,
    /// The user declined the approval.
    Denied,
    /// Never run: the turn was interrupted or had to end first.
    NotRun,
}

/// One tool call of the turn and its outcome.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallFact {
    pub(crate) name: String,
    /// The arguments as the model sent them (sanitized to a JSON object text).
    pub(crate) arguments: String,
    pub(crate) status: CallStatus,
    /// The exit code of a command that ran to its end.
    pub(crate) exit_code: Option<i32>,
    /// The kind of the tool's own failure (`not read`, `not found`, `sandbox required`, ...).
    pub(crate) error: Option<ToolErrorKind>,
}

/// A fact for tests: `name` called with `arguments`, ending in `status` with `error` and
/// `exit_code`.
#[cfg(test)]
pub(crate) fn test_fact(
    name: &str,
    arguments: serde_json::Value,
    status: CallStatus,
    error: Option<ToolErrorKind>,
    exit_code: Option<i32>,
) -> CallFact {
    CallFact {
        name: name.into(),
        arguments: arguments.to_string(),
        status,
        exit_code,
        error,
    }
}

impl CallFact {
    /// The fact for `call`, answered by `outcome`.
    pub(crate) fn new(call: &ToolCall, outcome: &DispatchOutcome, dispatched: bool) -> Self {
        let status = if !dispatched {
            CallStatus::NotRun
        } else if outcome.denied {
            CallStatus::Denied
        } else if outcome.blocked {
            CallStatus::Blocked
        } else if outcome.ok {
            CallStatus::Ran
        } else {
            CallStatus::Failed
        };
        Self {
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            status,
            exit_code: outcome.exit_code,
            error: outcome.error,
        }
    }

    /// The string argument `key`, when the arguments hold one.
    pub(crate) fn string_argument(&self, key: &str) -> Option<String> {
        let args = serde_json::from_str::<serde_json::Value>(&self.arguments).ok()?;
        args[key].as_str().map(str::to_string)
    }
}

/// The facts of one turn, from the user's request on.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TurnFacts {
    /// The user's own words for this turn (never a harness message).
    pub(crate) request: String,
    /// Every tool call of the turn, in the order dispatched.
    pub(crate) calls: Vec<CallFact>,
}

impl TurnFacts {
    pub(crate) fn new(request: impl Into<String>) -> Self {
        Self {
            request: request.into(),
            calls: Vec::new(),
        }
    }
}
