//! Policy events (SPEC §9.4) and the in-process bus that delivers them.
//!
//! Every event is stamped into an [`EventRecord`] `{ts, session, role, type, ...}` and handed
//! to each [`Subscriber`] in order: the JSONL log ([`super::log::EventLog`]) and the user
//! interface ([`UiBridge`], which turns the few events a person must see into
//! [`AgentEvent::Warning`]s). Subscribers are called on the publishing thread and must not
//! block for long; a failing subscriber never stops the others or the session.

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::budget::{Dimension, Signal};
use super::cost::CostSource;
use crate::events::{AgentEvent, EventSink};

/// One governance event. Serialized with its variant name as `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum PolicyEvent {
    /// A dimension crossed the warning threshold (once per crossing).
    BudgetWarning {
        dimension: Dimension,
        used: f64,
        limit: f64,
        percent: u64,
    },
    /// A dimension reached the exhausted threshold (once per crossing).
    BudgetExhausted {
        dimension: Dimension,
        used: f64,
        limit: f64,
        percent: u64,
    },
    /// A tool call was refused by the role, a permission rule, or the sandbox.
    PolicyViolation {
        tool: String,
        /// `role`, `hook`, `rule` or `sandbox`.
        by: String,
        /// The rule or policy that refused it, as the model was told.
        rule: String,
        /// The call's command or path.
        command: String,
    },
    RoleChanged {
        from: String,
        to: String,
    },
    /// The model asked for a tool call (before anything is checked).
    ToolCall {
        call_id: String,
        tool: String,
        /// The command, path or name the call is about (capped at 2,000 characters).
        command: String,
    },
    /// The answer the model got for a tool call.
    ToolResult {
        call_id: String,
        tool: String,
        /// `allow`, `approved`, `denied`, `declined`, `budget`, `error`, `interrupted`.
        verdict: String,
        ok: bool,
        duration_ms: u64,
        /// Characters of the result text.
        output_chars: u64,
        /// Estimated tokens of the result text.
        output_tokens: u64,
    },
    /// One model call and its cost (`cost_usd` is null when unknown).
    ModelUsage {
        model: String,
        prompt_tokens: u64,
        completion_tokens: u64,
        cached_tokens: Option<u64>,
        cost_usd: Option<f64>,
        cost_source: CostSource,
        /// The session's priced cost so far.
        session_cost_usd: f64,
        signal: Signal,
    },
    /// A model's price is unknown: cost is shown as unknown and not enforced.
    PriceUnknown {
        model: String,
    },
    /// The workspace was saved before a turn's first change (checkpoints).
    CheckpointSaved {
        turn: u64,
        /// The commit in the workspace's shadow repository.
        snapshot: String,
        files: usize,
        /// Paths not captured (too large, unreadable).
        skipped: usize,
        duration_ms: u64,
    },
    /// Files were restored from a checkpoint (`/undo`, `/rewind`, `agent undo`).
    CheckpointRestored {
        turns: Vec<u64>,
        /// The snapshot restored to.
        snapshot: String,
        restored: usize,
        /// Changed by hand since, left as they were.
        kept: usize,
        failed: usize,
    },
    /// One run of one hook (issue 18).
    HookRun {
        /// The hook event (`PreToolUse`, `Stop`, ...).
        event: String,
        command: String,
        /// The tool name, trigger or source the hook was matched against.
        subject: Option<String>,
        /// The exit code, when the hook's shell exited (not on a timeout or signal).
        exit_code: Option<i32>,
        /// `ok`, `blocked`, `allow`, `ask`, `deny` or `warning`.
        result: String,
        duration_ms: u64,
        /// What went wrong with a misbehaving hook (shown to the user).
        warning: Option<String>,
    },
}

/// An event with its envelope, as written to `events.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventRecord {
    /// UTC, RFC 3339 with milliseconds: `2026-11-30T12:34:56.789Z`.
    pub ts: String,
    pub session: String,
    /// The role active when it happened (the new one for `RoleChanged`).
    pub role: String,
    #[serde(flatten)]
    pub event: PolicyEvent,
}

/// Something that receives every event.
pub(crate) trait Subscriber: Send + Sync {
    fn notify(&self, record: &EventRecord);
}

/// Delivers records to subscribers in the order they subscribed.
#[derive(Default)]
pub(crate) struct EventBus {
    subscribers: Mutex<Vec<Arc<dyn Subscriber>>>,
}

impl EventBus {
    pub(crate) fn subscribe(&self, subscriber: Arc<dyn Subscriber>) {
        lock(&self.subscribers).push(subscriber);
    }

    pub(crate) fn publish(&self, record: &EventRecord) {
        let subscribers = lock(&self.subscribers).clone();
        for subscriber in subscribers {
            subscriber.notify(record);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Shows budget signals and unknown prices to the user as warnings, and hook runs as
/// [`AgentEvent::HookRan`]; the other events are already visible through the tool lines.
pub(crate) struct UiBridge {
    sink: Arc<dyn EventSink>,
}

impl UiBridge {
    pub(crate) fn new(sink: Arc<dyn EventSink>) -> Self {
        Self { sink }
    }
}

impl Subscriber for UiBridge {
    fn notify(&self, record: &EventRecord) {
        let message = match &record.event {
            PolicyEvent::BudgetWarning {
                dimension, percent, ..
            } => format!(
                "budget warning: {} at {percent}% of the limit of role {}",
                dimension_name(*dimension),
                record.role
            ),
            PolicyEvent::BudgetExhausted {
                dimension, percent, ..
            } => format!(
                "budget exhausted: {} at {percent}% of the limit of role {}",
                dimension_name(*dimension),
                record.role
            ),
            PolicyEvent::HookRun {
                event,
                command,
                result,
                exit_code,
                duration_ms,
                warning,
                ..
            } => {
                self.sink.emit(AgentEvent::HookRan {
                    event: event.clone(),
                    command: command.clone(),
                    result: result.clone(),
                    exit_code: *exit_code,
                    duration: std::time::Duration::from_millis(*duration_ms),
                    warning: warning.clone(),
                });
                return;
            }
            PolicyEvent::PriceUnknown { model } => format!(
                "cost: unknown price for {model}; the cost budget is not enforced (add \
                 [pricing.\"{model}\"] to config.toml to enforce it)"
            ),
            _ => return,
        };
        self.sink.emit(AgentEvent::Warning { message });
    }
}

fn dimension_name(dimension: Dimension) -> &'static str {
    match dimension {
        Dimension::Tokens => "tool-output tokens",
        Dimension::Shell => "shell calls",
        Dimension::Cost => "cost",
    }
}

/// Now as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC).
pub fn timestamp() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_timestamp(now.as_millis() as u64)
}

/// Milliseconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub(crate) fn format_timestamp(millis: u64) -> String {
    let secs = millis / 1000;
    let day = secs % 86_400;
    format!(
        "{}T{:02}:{:02}:{:02}.{:03}Z",
        crate::clock::civil_date(secs / 86_400),
        day / 3600,
        day % 3600 / 60,
        day % 60,
        millis % 1000
    )
}

/// A new session id: `YYYYMMDD-HHMMSS-<6 hex>` (UTC time, then bits of the clock and the
/// process id so two agents started in the same second differ).
pub(crate) fn new_session_id() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let stamp = format_timestamp(now.as_millis() as u64);
    let compact: String = stamp
        .chars()
        .take(19)
        .filter(char::is_ascii_digit)
        .collect();
    let (date, time) = compact.split_at(compact.len().min(8));
    let noise = (now.subsec_nanos() ^ std::process::id().rotate_left(16)) & 0xff_ffff;
    format!("{date}-{time}-{noise:06x}")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(format_timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_timestamp(1_796_000_000_123),
            "2026-11-30T00:53:20.123Z"
        );
    }

    #[test]
    fn session_ids_have_the_documented_shape() {
        let id = new_session_id();
        let parts: Vec<&str> = id.split('-').collect();
        assert_eq!(parts.len(), 3, "{id}");
        assert_eq!(
            (parts[0].len(), parts[1].len(), parts[2].len()),
            (8, 6, 6),
            "{id}"
        );
    }

    #[test]
    fn record_shape() {
        let record = EventRecord {
            ts: "t".into(),
            session: "s".into(),
            role: "coder".into(),
            event: PolicyEvent::RoleChanged {
                from: "coder".into(),
                to: "reviewer".into(),
            },
        };
        assert_eq!(
            serde_json::to_string(&record).unwrap_or_default(),
            r#"{"ts":"t","session":"s","role":"coder","type":"RoleChanged","from":"coder","to":"reviewer"}"#
        );
    }
}
