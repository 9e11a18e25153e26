//! The defensive dispatcher (SPEC §4.2): every tool call is untrusted input.
//!
//! Steps, each failure becoming the tool result and the session going on:
//! 1. arguments parsed leniently ([`crate::model::types::parse_arguments`]);
//! 2. the tool looked up by name;
//! 3. arguments checked against the tool's schema ([`super::schema`]);
//! 4. the [`Policy`] (role, budget, then the `PreToolUse` hooks), then permissions (deny /
//!    ask → approval / allow; a hook may tighten the verdict or answer an `ask`, never undo a
//!    `deny`);
//! 5. the tool run, panics caught;
//! 6. the result capped (§7.1).
//!
//! A call whose name is missing or unknown is answered with the name error even when its
//! arguments are also broken: without a tool there is no schema to check them against.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use super::policy::{HookGate, Policy};
use super::{Access, Args, Registry, ToolContext, ToolDisplay, ToolErrorKind, Wrote};
use crate::model::ToolCall;
use crate::model::types::parse_arguments;
use crate::permissions::{
    ApprovalAnswer, ApprovalRequest, Approver, Decision, Evaluation, PartVerdict, PermissionEngine,
};

/// The result text the model receives when the user declines.
pub(crate) const DECLINED: &str = "The user denied this tool call.";

/// What a dispatched call produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchOutcome {
    /// The tool message text.
    pub content: String,
    /// False for every error, block and denial.
    pub ok: bool,
    /// The permission verdict, when the call got that far.
    pub(crate) decision: Option<Decision>,
    /// Set when the call was stopped by policy or permissions (not by the tool failing).
    pub(crate) blocked: bool,
    /// Set (with `blocked`) when the stop was the user declining the approval.
    pub(crate) denied: bool,
    /// Set (with `blocked`) when a `PreToolUse` hook refused the call.
    pub(crate) by_hook: bool,
    /// The exit code of a command that ran to its end (`bash`); `None` for other tools and
    /// for a command that timed out or was interrupted.
    pub(crate) exit_code: Option<i32>,
    /// The kind of a tool's own failure ([`ToolError`]), when it failed that way.
    pub(crate) error: Option<ToolErrorKind>,
    pub(crate) display: Option<ToolDisplay>,
    /// The file the call wrote (`write_file`, `str_replace`), from the tool.
    pub(crate) wrote: Option<Box<Wrote>>,
    /// Set by the policy when `PostToolUse` hooks ran after the call
    /// ([`super::Policy::after_tool`]).
    pub(crate) post_hooks_ran: bool,
}

impl DispatchOutcome {
    fn error(content: String) -> Self {
        Self {
            content,
            ok: false,
            decision: None,
            blocked: false,
            denied: false,
            by_hook: false,
            exit_code: None,
            error: None,
            display: None,
            wrote: None,
            post_hooks_ran: false,
        }
    }

    /// A call stopped before it ran (`Blocked by policy`, interrupted, over budget).
    pub(crate) fn blocked(content: String, decision: Option<Decision>) -> Self {
        Self {
            blocked: true,
            decision,
            ..Self::error(content)
        }
    }

    /// A call the user declined at the approval prompt.
    fn denied(content: String) -> Self {
        Self {
            denied: true,
            ..Self::blocked(content, Some(Decision::Ask))
        }
    }
}

/// Dispatches tool calls for one session.
pub struct Dispatcher<'a> {
    pub registry: &'a Registry,
    pub permissions: &'a Mutex<PermissionEngine>,
    pub approver: &'a dyn Approver,
    pub policy: &'a dyn Policy,
}

/// The owned parts of a [`Dispatcher`], shared by a session and its subagents: the tools,
/// the permission engine with the session's approvals, who is asked, and the policy.
#[derive(Clone)]
pub struct Toolbox {
    pub(crate) registry: Registry,
    pub(crate) permissions: Arc<Mutex<PermissionEngine>>,
    pub(crate) approver: Arc<dyn Approver>,
    pub(crate) policy: Arc<dyn Policy>,
}

impl Toolbox {
    /// A dispatcher over these parts.
    pub(crate) fn dispatcher(&self) -> Dispatcher<'_> {
        Dispatcher {
            registry: &self.registry,
            permissions: &self.permissions,
            approver: self.approver.as_ref(),
            policy: self.policy.as_ref(),
        }
    }
}

impl Dispatcher<'_> {
    /// Runs one call through steps 1–6. Never panics, whatever the call holds.
    pub fn dispatch(&self, call: &ToolCall, ctx: &ToolContext<'_>) -> DispatchOutcome {
        let parsed = parse_arguments(&call.arguments);
        let Some(tool) = self.registry.get(&call.name) else {
            return DispatchOutcome::error(self.unknown_tool(&call.name));
        };
        let args = match parsed {
            Ok(args) => args,
            Err(error) => return DispatchOutcome::error(invalid_json(&error.to_string())),
        };
        let args = match tool.validate(args) {
            Ok(args) => args,
            Err(message) => {
                return DispatchOutcome::error(format!(
                    "Error: wrong arguments for {} ({message}).",
                    call.name
                ));
            }
        };
        if let Err(block) = self.policy.check(&call.name, &args) {
            return DispatchOutcome::blocked(format!("Blocked by policy: {block}"), None);
        }
        let hook = self.policy.pre_tool(&call.name, &args);
        if hook.decision == Some(Decision::Deny) {
            let reason = hook
                .reason
                .as_deref()
                .unwrap_or("a PreToolUse hook denied it");
            return DispatchOutcome {
                by_hook: true,
                ..DispatchOutcome::blocked(
                    format!("Blocked by hook: {reason}"),
                    Some(Decision::Deny),
                )
            };
        }
        let (decision, access, evaluation) = match self.authorize(&call.name, &args, ctx, &hook) {
            Ok(authorized) => authorized,
            Err(outcome) => return outcome,
        };
        if let Some(hook) = ctx.before_run {
            hook.before_run(&call.name, &access, evaluation.as_ref(), ctx.cancel);
        }
        match catch_unwind(AssertUnwindSafe(|| tool.run(&args, ctx))) {
            Ok(Ok(output)) => DispatchOutcome {
                content: cap(&output.text, ctx.max_output_chars),
                ok: true,
                decision: Some(decision),
                blocked: false,
                denied: false,
                by_hook: false,
                exit_code: output.exit_code,
                error: None,
                display: output.display,
                wrote: output.wrote.map(Box::new),
                post_hooks_ran: false,
            },
            Ok(Err(error)) => DispatchOutcome {
                decision: Some(decision),
                error: Some(error.kind),
                ..DispatchOutcome::error(format!("Error: {} failed - {error}", call.name))
            },
            Err(panic) => DispatchOutcome {
                decision: Some(decision),
                ..DispatchOutcome::error(format!(
                    "Error: {} failed - panic: {}",
                    call.name,
                    panic_message(panic.as_ref())
                ))
            },
        }
    }

    fn unknown_tool(&self, name: &str) -> String {
        let available = self.registry.names().join(", ");
        if name.trim().is_empty() {
            format!("Error: no tool named '' (the tool call has no name). Available: {available}.")
        } else {
            format!("Error: no tool named '{name}'. Available: {available}.")
        }
    }

    /// Step 4 (permissions, with what the hooks said): `Ok((verdict, access, evaluation))`
    /// when the call may run.
    fn authorize(
        &self,
        tool_name: &str,
        args: &Args,
        ctx: &ToolContext<'_>,
        hook: &HookGate,
    ) -> Result<(Decision, Access, Option<Evaluation>), DispatchOutcome> {
        let Some(tool) = self.registry.get(tool_name) else {
            return Err(DispatchOutcome::error(self.unknown_tool(tool_name)));
        };
        let access = tool.access(args, ctx).map_err(|error| DispatchOutcome {
            error: Some(error.kind),
            ..DispatchOutcome::blocked(format!("Error: {tool_name} failed - {error}"), None)
        })?;
        let (subject, mut evaluation) = {
            let engine = match self.permissions.lock() {
                Ok(engine) => engine,
                Err(poisoned) => poisoned.into_inner(),
            };
            match &access {
                Access::None => return Ok((Decision::Allow, access, None)),
                Access::Command(command) => (command.clone(), engine.check_bash(command)),
                Access::Read(path) => (
                    path.display().to_string(),
                    engine.check_file(tool_name, path, false),
                ),
                Access::Write(path) => (
                    path.display().to_string(),
                    engine.check_file(tool_name, path, true),
                ),
                Access::Opaque(text) => (shown(text), engine.check_tool(tool_name, text)),
            }
        };
        match (evaluation.decision, hook.decision) {
            // A hook's `allow` answers an `ask` (as in Claude Code); never a `deny`.
            (Decision::Ask, Some(Decision::Allow)) => {
                return Ok((Decision::Allow, access, Some(evaluation)));
            }
            // A hook's `ask` puts an allowed call to the user.
            (Decision::Allow, Some(Decision::Ask)) => {
                evaluation.parts.push(PartVerdict {
                    command: subject.clone(),
                    decision: Decision::Ask,
                    rule: None,
                    reason: format!(
                        "a PreToolUse hook asks: {}",
                        hook.reason.as_deref().unwrap_or("no reason given")
                    ),
                });
                evaluation.decision = Decision::Ask;
            }
            _ => {}
        }
        match evaluation.decision {
            Decision::Allow => Ok((Decision::Allow, access, Some(evaluation))),
            Decision::Deny => Err(DispatchOutcome::blocked(
                format!("Blocked by policy: {}", evaluation.summary()),
                Some(Decision::Deny),
            )),
            Decision::Ask => {
                let request = ApprovalRequest {
                    tool: tool_name.to_string(),
                    subject,
                    evaluation: evaluation.clone(),
                };
                let by_name = matches!(access, Access::Opaque(_));
                if self.approver.asks_a_person() {
                    self.policy.waiting(&format!(
                        "agent needs your approval to run {tool_name}: {}",
                        request.subject
                    ));
                }
                let decision = self.ask(request, ctx.cancel, by_name)?;
                Ok((decision, access, Some(evaluation)))
            }
        }
    }

    /// Puts `request` to the approver; `by_name` (an [`Access::Opaque`] call) makes `a`
    /// allow the tool for the session rather than one command or path.
    fn ask(
        &self,
        request: ApprovalRequest,
        cancel: &crate::cancel::CancelToken,
        by_name: bool,
    ) -> Result<Decision, DispatchOutcome> {
        let declined = |text: String| Err(DispatchOutcome::denied(text));
        match self.approver.ask(&request) {
            ApprovalAnswer::Yes => Ok(Decision::Ask),
            ApprovalAnswer::Always => {
                let mut engine = match self.permissions.lock() {
                    Ok(engine) => engine,
                    Err(poisoned) => poisoned.into_inner(),
                };
                for part in request
                    .evaluation
                    .parts
                    .iter()
                    .filter(|p| p.decision == Decision::Ask)
                {
                    if request.tool == "bash" {
                        engine.allow_for_session(&part.command);
                    } else if by_name {
                        engine.allow_tool_for_session(&request.tool);
                    } else {
                        engine.allow_file_for_session(&request.tool, &part.command);
                    }
                }
                Ok(Decision::Ask)
            }
            ApprovalAnswer::No => declined(DECLINED.to_string()),
            ApprovalAnswer::Interrupted => {
                cancel.cancel();
                declined(crate::cancel::INTERRUPTED.to_string())
            }
            ApprovalAnswer::Explain(note) if note.trim().is_empty() => {
                declined(DECLINED.to_string())
            }
            ApprovalAnswer::Explain(note) => declined(format!(
                "The user denied this tool call and said: {}",
                note.trim()
            )),
            ApprovalAnswer::Unavailable => declined(format!(
                "The user denied this tool call: approval was needed ({}) but no terminal was \
                 available to ask. Do not retry it; use an allowed alternative or tell the user \
                 to rerun with --yes or add a permission rule.",
                request.evaluation.summary()
            )),
        }
    }
}

/// Longest subject shown at the approval prompt for an [`Access::Opaque`] call, in
/// characters (the rules match the whole text).
const MAX_SHOWN_SUBJECT: usize = 2_000;

fn shown(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN_SUBJECT) {
        Some((at, _)) => format!(
            "{}… ({} characters in all)",
            &text[..at],
            text.chars().count()
        ),
        None => text.to_string(),
    }
}

fn invalid_json(message: &str) -> String {
    let hint = if message.contains("escape") {
        " In JSON strings write a backslash as \\\\ (or use / in paths)."
    } else {
        ""
    };
    format!("Error: arguments were not valid JSON ({message}).{hint}")
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// Caps `text` at `max_chars` characters, keeping head and tail around an omission note
/// (§7.1).
pub(crate) fn cap(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    let keep = max_chars / 2;
    let head: String = text.chars().take(keep).collect();
    let tail: String = text.chars().skip(total - keep).collect();
    format!(
        "{head}\n[... {} characters omitted ...]\n{tail}",
        total - 2 * keep
    )
}
