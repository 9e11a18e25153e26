//! What a hook's run means, by Claude Code's contract (issue 18):
//! - exit 0: go on; stdout may be a JSON object with `decision` (`block`, or the older
//!   `approve`), `permissionDecision` (`allow`, `deny`, `ask`), `reason`,
//!   `additionalContext`, also nested in `hookSpecificOutput` (with
//!   `permissionDecisionReason`) as Claude Code writes them; plain stdout is context for
//!   `UserPromptSubmit` and `SessionStart` and ignored otherwise;
//! - exit 2: block; stderr is the reason (stdout is ignored);
//! - any other exit, a signal, a timeout, a shell that cannot start, stdout that starts like
//!   JSON but is not, or stdout over the capture cap: a warning, and the session goes on as
//!   if the hook had not run.

use serde_json::Value;

use super::process::{Ending, MAX_CAPTURE, Ran};
use crate::config::hooks::HookEvent;
use crate::permissions::Decision;

/// Longest reason or context taken from one hook, in characters.
pub(crate) const MAX_TEXT_CHARS: usize = 10_000;

/// What one run of a hook decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// Exit 2 or `decision: block`: why (stderr or `reason`).
    pub(crate) block: Option<String>,
    /// `permissionDecision` (`PreToolUse`).
    pub(crate) permission: Option<Decision>,
    /// `reason` / `permissionDecisionReason` of a permission decision.
    pub(crate) reason: Option<String>,
    /// `additionalContext`, or plain stdout where the event takes it.
    pub(crate) context: Option<String>,
    /// The hook misbehaved: what the user is told.
    pub(crate) warning: Option<String>,
}

impl Verdict {
    /// `ok`, `blocked`, `deny`, `ask`, `allow` or `warning`, for the event log.
    pub(crate) fn result(&self) -> &'static str {
        if self.warning.is_some() {
            "warning"
        } else if self.block.is_some() {
            "blocked"
        } else {
            match self.permission {
                Some(Decision::Deny) => "deny",
                Some(Decision::Ask) => "ask",
                Some(Decision::Allow) => "allow",
                None => "ok",
            }
        }
    }
}

/// Reads `ran` for `event`; `command` names the hook in warnings.
pub(crate) fn read(event: HookEvent, command: &str, ran: &Ran) -> Verdict {
    let warn = |what: String| Verdict {
        warning: Some(format!(
            "{} hook `{}` {what}; ignored it",
            event.name(),
            shown(command)
        )),
        ..Verdict::default()
    };
    match &ran.ending {
        Ending::Exited(0) => {}
        Ending::Exited(2) => {
            let reason = ran.stderr.trim();
            let reason = if reason.is_empty() {
                format!("blocked by the {} hook `{}`", event.name(), shown(command))
            } else {
                capped(reason)
            };
            return Verdict {
                block: Some(reason),
                ..Verdict::default()
            };
        }
        Ending::Exited(127) => {
            return warn(format!("was not found (exit 127){}", stderr_line(ran)));
        }
        Ending::Exited(126) => {
            return warn(format!("is not executable (exit 126){}", stderr_line(ran)));
        }
        // A shell reports a child killed by signal N as 128 + N.
        Ending::Exited(code @ 129..=192) => {
            return warn(format!(
                "exited with code {code} (killed by signal {})",
                code - 128
            ));
        }
        Ending::Exited(code) => {
            return warn(format!("failed with exit code {code}{}", stderr_line(ran)));
        }
        Ending::Signal(signal) => return warn(format!("was killed by signal {signal}")),
        Ending::TimedOut => return warn("ran past its timeout and was stopped".to_string()),
        Ending::CannotStart(error) => return warn(format!("could not start: {error}")),
    }
    if ran.stdout_bytes > MAX_CAPTURE as u64 {
        return warn(format!(
            "printed {} bytes (more than {MAX_CAPTURE})",
            ran.stdout_bytes
        ));
    }
    let stdout = ran.stdout.trim();
    if stdout.starts_with('{') {
        return match serde_json::from_str::<Value>(stdout) {
            Ok(Value::Object(fields)) => from_json(&fields),
            _ => warn("printed invalid JSON".to_string()),
        };
    }
    let takes_text = matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart);
    Verdict {
        context: (takes_text && !stdout.is_empty()).then(|| capped(stdout)),
        ..Verdict::default()
    }
}

/// The fields of a JSON answer, flat or nested in `hookSpecificOutput`.
fn from_json(fields: &serde_json::Map<String, Value>) -> Verdict {
    let nested = fields.get("hookSpecificOutput").and_then(Value::as_object);
    let text = |key: &str| {
        nested
            .and_then(|n| n.get(key))
            .or_else(|| fields.get(key))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(capped)
    };
    let reason = text("permissionDecisionReason").or_else(|| text("reason"));
    let mut verdict = Verdict {
        context: text("additionalContext"),
        ..Verdict::default()
    };
    verdict.permission = match text("permissionDecision").as_deref() {
        Some("allow") => Some(Decision::Allow),
        Some("ask") => Some(Decision::Ask),
        Some("deny") => Some(Decision::Deny),
        _ => None,
    };
    match text("decision").as_deref() {
        Some("block") => {
            verdict.block = Some(reason.clone().unwrap_or_else(|| "blocked by a hook".into()));
        }
        Some("approve") if verdict.permission.is_none() => {
            verdict.permission = Some(Decision::Allow);
        }
        _ => {}
    }
    if verdict.permission.is_some() {
        verdict.reason = reason;
    }
    verdict
}

fn stderr_line(ran: &Ran) -> String {
    match ran.stderr.lines().map(str::trim).find(|l| !l.is_empty()) {
        Some(line) => format!(": {}", capped_chars(line, 200)),
        None => String::new(),
    }
}

fn capped(text: &str) -> String {
    capped_chars(text, MAX_TEXT_CHARS)
}

fn capped_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The command as shown in warnings (its first 80 characters).
pub(crate) fn shown(command: &str) -> String {
    capped_chars(command.trim(), 80)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn ran(ending: Ending, stdout: &str, stderr: &str) -> Ran {
        Ran {
            ending,
            stdout: stdout.into(),
            stderr: stderr.into(),
            stdout_bytes: stdout.len() as u64,
            took: Duration::ZERO,
        }
    }

    #[test]
    fn exit_codes_and_json_fields() {
        let pre = HookEvent::PreToolUse;
        let read = |r: &Ran| super::read(pre, "check.sh", r);
        assert_eq!(
            read(&ran(Ending::Exited(2), "{}", "no rm here\n"))
                .block
                .as_deref(),
            Some("no rm here")
        );
        let deny = read(&ran(
            Ending::Exited(0),
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"policy"}}"#,
            "",
        ));
        assert_eq!(
            (deny.permission, deny.reason.as_deref(), deny.result()),
            (Some(Decision::Deny), Some("policy"), "deny")
        );
        let flat = read(&ran(
            Ending::Exited(0),
            r#"{"permissionDecision":"ask","reason":"look first"}"#,
            "",
        ));
        assert_eq!(
            (flat.permission, flat.reason.as_deref()),
            (Some(Decision::Ask), Some("look first"))
        );
        let garbage = read(&ran(Ending::Exited(0), "{not json", ""));
        assert_eq!(
            garbage.warning.as_deref(),
            Some("PreToolUse hook `check.sh` printed invalid JSON; ignored it")
        );
        let failed = read(&ran(Ending::Exited(1), "", "\nbad thing\n"));
        assert_eq!(
            failed.warning.as_deref(),
            Some("PreToolUse hook `check.sh` failed with exit code 1: bad thing; ignored it")
        );
        assert_eq!(
            read(&ran(Ending::Exited(0), "plain text", "")),
            Verdict::default()
        );
        let prompt = super::read(
            HookEvent::UserPromptSubmit,
            "c",
            &ran(Ending::Exited(0), "today is Monday\n", ""),
        );
        assert_eq!(prompt.context.as_deref(), Some("today is Monday"));
        let stop = super::read(
            HookEvent::Stop,
            "c",
            &ran(
                Ending::Exited(0),
                r#"{"decision":"block","reason":"tests fail"}"#,
                "",
            ),
        );
        assert_eq!(stop.block.as_deref(), Some("tests fail"));
    }
}
