//! What the audit log records about a tool call (SPEC §9.4): its verdict, the policy that
//! refused it, the command it was about, and budget threshold crossings.

use super::budget::{Dimension, Signal, Status};
use super::events::PolicyEvent;
use crate::cancel::INTERRUPTED;
use crate::model::ToolCall;
use crate::model::types::key_argument;
use crate::permissions::Decision;
use crate::tools::DispatchOutcome;

/// Longest `command` kept in an event, in characters.
pub(crate) const MAX_LOGGED_COMMAND: usize = 2000;

/// Marks a result the sandbox refused (the sandbox's own result note, §6).
pub(crate) const SANDBOX_MARK: &str = "blocked by sandbox";

/// Why the call policy blocked the call in flight.
pub(crate) struct Block {
    pub(crate) tool: String,
    /// By the role's tool policy; otherwise by the budget.
    pub(crate) by_role: bool,
    pub(crate) reason: String,
}

/// Budget events for dimensions whose signal rose since last time; records the new levels.
pub(crate) fn crossings(levels: &mut [Signal; 3], status: &Status) -> Vec<PolicyEvent> {
    let mut events = Vec::new();
    for d in Dimension::ALL {
        let now = status.dimension(d);
        let before = std::mem::replace(&mut levels[d.index()], now.signal);
        if now.signal <= before {
            continue;
        }
        let (dimension, used, limit, percent) = (d, now.used, now.limit, now.percent);
        events.push(match now.signal {
            Signal::Warning => PolicyEvent::BudgetWarning {
                dimension,
                used,
                limit,
                percent,
            },
            _ => PolicyEvent::BudgetExhausted {
                dimension,
                used,
                limit,
                percent,
            },
        });
    }
    events
}

/// The verdict recorded for a call: `allow`, `approved`, `denied`, `declined`, `budget`,
/// `interrupted` or `error`.
pub(crate) fn verdict(outcome: &DispatchOutcome, block: Option<&Block>, ran: bool) -> &'static str {
    if let Some(block) = block {
        return if block.by_role { "denied" } else { "budget" };
    }
    match (ran, outcome.decision) {
        (true, Some(Decision::Ask)) => "approved",
        (true, _) => "allow",
        (false, Some(Decision::Deny)) => "denied",
        (false, Some(Decision::Ask)) => "declined",
        _ if outcome.content == INTERRUPTED => "interrupted",
        _ if outcome
            .content
            .starts_with("Blocked by policy: budget exhausted") =>
        {
            "budget"
        }
        _ => "error",
    }
}

/// `PolicyViolation` for a call refused by the role, a hook, a permission rule or the
/// sandbox.
pub(crate) fn violation(
    call: &ToolCall,
    outcome: &DispatchOutcome,
    block: Option<&Block>,
    ran: bool,
) -> Option<PolicyEvent> {
    let (by, rule) = if let Some(block) = block.filter(|b| b.by_role) {
        ("role", block.reason.clone())
    } else if outcome.by_hook {
        let reason = outcome.content.strip_prefix("Blocked by hook: ");
        ("hook", reason.unwrap_or(&outcome.content).to_string())
    } else if !ran && outcome.decision == Some(Decision::Deny) {
        let rule = outcome.content.strip_prefix("Blocked by policy: ");
        ("rule", rule.unwrap_or(&outcome.content).to_string())
    } else if ran && call.name == "bash" && outcome.content.contains(SANDBOX_MARK) {
        let line = outcome.content.lines().find(|l| l.contains(SANDBOX_MARK));
        ("sandbox", line.unwrap_or(SANDBOX_MARK).trim().to_string())
    } else {
        return None;
    };
    Some(PolicyEvent::PolicyViolation {
        tool: call.name.clone(),
        by: by.to_string(),
        rule,
        command: logged_command(call),
    })
}

pub(crate) fn logged_command(call: &ToolCall) -> String {
    key_argument(&call.arguments)
        .chars()
        .take(MAX_LOGGED_COMMAND)
        .collect()
}
