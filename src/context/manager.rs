//! The context manager: before each model request it estimates the prompt and prunes or
//! compacts the history when a threshold is passed; after a context-length error it compacts
//! and lets the loop retry once (SPEC §7.2, §7.3).
//!
//! Accounting: after each answer the server's `prompt_tokens` + `completion_tokens` anchor
//! the count; messages added since are estimated (≈ 4 bytes a token, scaled by how far the
//! last estimate was off). When the history is rewritten (prune, compaction, resume) the
//! anchor is dropped and the whole request is estimated until the next answer.
//!
//! Invariants: the history is only changed by [`super::prune::apply`] and
//! [`Compaction::apply`], both of which keep every call/result pair; every change is passed
//! to the recorder (the session file) so resume rebuilds the same history; after a failed
//! retry the oldest turns are dropped, so no request is ever replayed unchanged into the
//! same error. The user's message of the running turn ([`ContextManager::turn_started`]) is
//! never dropped: when the system prompt or that message is what does not fit, the turn ends
//! with an error naming it ([`super::overflow`]) and the history is left as it is.

use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use super::ContextSettings;
use super::compact::{self, CompactError, Compaction, ModelAccess};
use super::overflow::{InstructionSize, Sizes};
use super::prune::{self, Stub};
use super::tokens::{estimate_messages, estimate_text, estimate_tools, limit_from_error};
use crate::cancel::INTERRUPTED;
use crate::events::{AgentEvent, EventSink};
use crate::model::{Message, Role, Usage};

/// Tokens assumed for the per-request reminder.
const REMINDER_TOKENS: u64 = 100;
/// A prune step must save at least this share of the window; smaller savings wait until
/// more results have piled up (keeps the prefix stable between steps).
const MIN_PRUNE_STEP: f64 = 0.1;
/// Automatic compaction is skipped when the part it would summarize is smaller than this
/// share of the window (it would not help; a context-length error still recovers).
const MIN_COMPACT_STEP: f64 = 0.1;
/// Share of the window the verbatim tail may use after compaction.
const TAIL_SHARE: f64 = 0.2;
/// Share of the window the summary request may use in the prefix form.
const PREFIX_SHARE: f64 = 0.9;
/// Share of the window the transcript form may use.
const TRANSCRIPT_SHARE: f64 = 0.5;
/// Share of the window a handoff note may take, and the bounds on it (tokens).
const NOTE_SHARE: f64 = 0.1;
const NOTE_TOKENS: (f64, f64) = (256.0, 2000.0);

/// Characters a handoff note may have in a window of `window` tokens (~4 per token).
fn note_chars(window: f64) -> usize {
    ((NOTE_SHARE * window).clamp(NOTE_TOKENS.0, NOTE_TOKENS.1) * 4.0) as usize
}
/// After a context-length error without a stated limit, the window is taken to be this
/// share of the rejected request's estimate.
const LEARN_SHARE: f64 = 0.9;

/// A change to the history, recorded in the session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "edit", rename_all = "snake_case")]
pub enum HistoryEdit {
    Pruned { stubs: Vec<Stub> },
    Compacted(Compaction),
}

impl HistoryEdit {
    /// Replays this edit on `history`.
    #[cfg(test)]
    pub(crate) fn apply(&self, history: &mut Vec<Message>) {
        match self {
            Self::Pruned { stubs } => {
                prune::apply(history, stubs);
            }
            Self::Compacted(compaction) => compaction.apply(history),
        }
    }
}

/// Receives every history edit (the session log).
pub(crate) type EditRecorder = Arc<dyn Fn(&HistoryEdit) + Send + Sync>;

/// Why compaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The prompt passed `compact_at`.
    Auto,
    /// `/compact`.
    Manual,
    /// The server said the context length was exceeded.
    Recover,
}

/// What the loop does after a context-length error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Recovery {
    /// The history was made smaller; send the request again.
    Retry,
    /// End the turn with this message (the history is already small again).
    GiveUp(String),
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompactReport {
    /// Messages replaced by the note.
    pub(crate) replaced: usize,
    /// Messages kept verbatim.
    pub(crate) kept: usize,
    pub(crate) tokens_before: u64,
    pub(crate) tokens_after: u64,
    /// False when the oldest turns were dropped without a summary.
    pub(crate) summarized: bool,
}

#[derive(Debug, Clone, Copy)]
struct Anchor {
    /// History length when the request was sent (the answer is the next message).
    history_len: usize,
    prompt_tokens: u64,
    completion_tokens: u64,
}

#[derive(Debug, Default)]
struct State {
    anchor: Option<Anchor>,
    /// Uncalibrated estimate of the request in flight, to calibrate against its usage.
    pending_estimate: Option<u64>,
    /// Real tokens per estimated token, from the last answer with usage.
    ratio: Option<f64>,
    /// A smaller window learned from a context-length error.
    learned_window: Option<u64>,
    /// Index in the history of the user's message of the running turn.
    task: Option<usize>,
}

/// Per-session context bookkeeping; shared by reference with the inner loop.
pub struct ContextManager {
    settings: ContextSettings,
    state: Mutex<State>,
    recorder: Option<EditRecorder>,
    /// The AGENTS.md files in the system prompt, for naming them after an overflow.
    instructions: Vec<InstructionSize>,
    /// Told before every compaction (the `PreCompact` hooks).
    before_compact: Option<BeforeCompact>,
}

/// Called with the trigger before the history is compacted.
pub(crate) type BeforeCompact = Arc<dyn Fn(Trigger) + Send + Sync>;

impl ContextManager {
    pub fn new(settings: ContextSettings) -> Self {
        Self {
            settings,
            state: Mutex::new(State::default()),
            recorder: None,
            instructions: Vec::new(),
            before_compact: None,
        }
    }

    /// The AGENTS.md files in the system prompt (shown path and bytes each).
    pub(crate) fn set_instructions(&mut self, files: Vec<InstructionSize>) {
        self.instructions = files;
    }

    /// A turn starts: `history[index]` is the user's message, which recovery never drops.
    pub fn turn_started(&self, index: usize) {
        self.state().task = Some(index);
    }

    /// Every history edit is passed to `recorder`.
    #[must_use]
    pub(crate) fn with_recorder(mut self, recorder: EditRecorder) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// Calls `before` before every compaction.
    pub(crate) fn with_before_compact(mut self, before: BeforeCompact) -> Self {
        self.before_compact = Some(before);
        self
    }

    pub(crate) fn settings(&self) -> &ContextSettings {
        &self.settings
    }

    /// The window in use: the configured one, or a smaller one learned from an error.
    pub(crate) fn window(&self) -> u64 {
        let learned = self.state().learned_window;
        learned.map_or(self.settings.window, |w| w.min(self.settings.window))
    }

    /// Forgets the usage anchor (the history was replaced: `/clear`, resume).
    pub(crate) fn reset(&self) {
        let mut state = self.state();
        state.anchor = None;
        state.pending_estimate = None;
    }

    fn state(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Estimated prompt tokens of a request with `history` and `overhead` tokens of system
    /// prompt, tools and reminder. A usage-anchored figure more than a factor of 2 away from
    /// the plain estimate is not trusted (some servers report placeholder usage); the plain
    /// estimate is used then.
    pub(crate) fn estimate(&self, history: &[Message], overhead: u64) -> u64 {
        let state = self.state();
        let ratio = state.ratio.unwrap_or(1.0);
        let scale = |tokens: u64| (tokens as f64 * ratio).ceil() as u64;
        let plain = scale(overhead + estimate_messages(history));
        match state.anchor {
            Some(anchor) if history.len() >= anchor.history_len => {
                let new = history.get(anchor.history_len + 1..).unwrap_or(&[]);
                let anchored =
                    anchor.prompt_tokens + anchor.completion_tokens + scale(estimate_messages(new));
                if anchored >= plain / 2 && anchored <= plain.saturating_mul(2) {
                    anchored
                } else {
                    plain
                }
            }
            _ => plain,
        }
    }

    /// Records the usage of the answer to the request sent with `history_len` messages.
    pub(crate) fn after_response(&self, history_len: usize, usage: Option<&Usage>) {
        let mut state = self.state();
        let pending = state.pending_estimate.take();
        state.anchor = usage.filter(|u| u.prompt_tokens > 0).map(|u| Anchor {
            history_len,
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
        });
        if let (Some(usage), Some(estimate)) = (usage, pending.filter(|e| *e > 0)) {
            let ratio = usage.prompt_tokens as f64 / estimate as f64;
            if (0.5..=2.0).contains(&ratio) {
                state.ratio = Some(ratio);
            }
        }
    }

    fn overhead(access: &ModelAccess<'_>) -> u64 {
        estimate_text(access.system_prompt) + estimate_tools(&access.tools) + REMINDER_TOKENS
    }

    /// Prunes or compacts `history` when the next request (framed by `access`: system
    /// prompt and tools) would pass a threshold.
    pub(crate) async fn before_request(
        &self,
        access: &ModelAccess<'_>,
        history: &mut Vec<Message>,
    ) {
        let overhead = Self::overhead(access);
        let window = self.window() as f64;
        let mut tokens = self.estimate(history, overhead);
        if tokens as f64 >= self.settings.prune_at * window {
            let plan = prune::plan(history, self.settings.keep_recent_tool_results);
            if plan.saved_tokens as f64 >= MIN_PRUNE_STEP * window {
                prune::apply(history, &plan.stubs);
                access.sink.emit(AgentEvent::Notice {
                    message: format!(
                        "context: pruned {} old tool results (about {} tokens)",
                        plan.stubs.len(),
                        plan.saved_tokens
                    ),
                });
                self.record(&HistoryEdit::Pruned { stubs: plan.stubs });
                self.reset();
                tokens = self.estimate(history, overhead);
            }
        }
        if tokens as f64 >= self.settings.compact_at * window {
            let result = self.compact(access, history, Trigger::Auto, false).await;
            if let Err(error) = result
                && !matches!(error, CompactError::Interrupted | CompactError::Nothing)
            {
                access.sink.emit(AgentEvent::Warning {
                    message: format!("context: could not compact the conversation: {error}"),
                });
            }
        }
        self.state().pending_estimate = Some(overhead + estimate_messages(history));
    }

    /// Handles a context-length error for the request just sent with `history`: learns a
    /// smaller window, then compacts (first error) or drops the oldest turns (`retried`).
    pub(crate) async fn recover(
        &self,
        access: &ModelAccess<'_>,
        history: &mut Vec<Message>,
        message: &str,
        retried: bool,
    ) -> Recovery {
        let rejected = self.estimate(history, Self::overhead(access));
        let learned = limit_from_error(message)
            .unwrap_or(((rejected as f64) * LEARN_SHARE) as u64)
            .max(1024);
        {
            let mut state = self.state();
            let current = state.learned_window.unwrap_or(self.settings.window);
            state.learned_window = Some(learned.min(current));
        }
        let sizes = self.measure(access, history, limit_from_error(message).is_some());
        let too_long = format!(
            "the request is too long for the model's context window (the server said `{}`)",
            message.trim()
        );
        if !sizes.history_can_help() {
            return Recovery::GiveUp(format!("{too_long}: {}", sizes.explain()));
        }
        if retried {
            let dropped = self.drop_oldest(access.sink, history, false);
            return Recovery::GiveUp(format!(
                "{too_long} even after compaction: {}; {}",
                sizes.explain(),
                self.dropped_clause(&dropped)
            ));
        }
        match self.compact(access, history, Trigger::Recover, false).await {
            Err(CompactError::Interrupted) => Recovery::GiveUp(INTERRUPTED.into()),
            Err(CompactError::Nothing) => {
                let dropped = self.drop_oldest(access.sink, history, false);
                Recovery::GiveUp(format!(
                    "{too_long}: {}; nothing older could be summarized, {}",
                    sizes.explain(),
                    self.dropped_clause(&dropped)
                ))
            }
            _ => Recovery::Retry,
        }
    }

    /// What [`ContextManager::drop_oldest`] did, for the error.
    fn dropped_clause(&self, report: &CompactReport) -> String {
        if report.replaced == 0 {
            return "nothing older could be dropped".to_string();
        }
        let kept = if self.state().task.is_some() {
            " (your message was kept)"
        } else {
            ""
        };
        format!(
            "the oldest {} messages were dropped without a summary{kept}",
            report.replaced
        )
    }

    /// The parts of the request about to be sent with `history`, against the window in use.
    fn measure(&self, access: &ModelAccess<'_>, history: &[Message], from_server: bool) -> Sizes {
        let tools = estimate_tools(&access.tools) + REMINDER_TOKENS;
        let task = self.state().task;
        let mut sizes = Sizes::measure(
            history,
            task,
            estimate_text(access.system_prompt),
            tools,
            self.instructions.clone(),
        );
        sizes.window = self.window();
        sizes.window_from_server = from_server;
        sizes
    }

    /// Summarizes the older history into a handoff note and keeps the recent turns. `idle`
    /// means no turn is running (the next message will be the user's).
    ///
    /// # Errors
    /// [`CompactError`] when nothing changed: nothing to compact, interrupted, or (for
    /// [`Trigger::Auto`] and [`Trigger::Manual`]) the model gave no summary. For
    /// [`Trigger::Recover`] and on overflow, the oldest turns are dropped instead and the
    /// call succeeds with `summarized: false`.
    pub(crate) async fn compact(
        &self,
        access: &ModelAccess<'_>,
        history: &mut Vec<Message>,
        trigger: Trigger,
        idle: bool,
    ) -> Result<CompactReport, CompactError> {
        let window = self.window() as f64;
        let kept_from = compact::choose_tail(history, (TAIL_SHARE * window) as u64, !idle);
        let too_little = trigger == Trigger::Auto
            && (estimate_messages(&history[..kept_from]) as f64) < MIN_COMPACT_STEP * window;
        if kept_from == 0 || history.is_empty() || too_little {
            return Err(CompactError::Nothing);
        }
        if let Some(before) = &self.before_compact {
            before(trigger);
        }
        let prefix_budget = if trigger == Trigger::Recover {
            0
        } else {
            (PREFIX_SHARE * window) as u64
        };
        access.sink.emit(AgentEvent::Notice {
            message: "context: compacting the conversation into a handoff note".into(),
        });
        let older = &history[..kept_from];
        let summary = compact::summarize(
            access,
            older,
            prefix_budget,
            (TRANSCRIPT_SHARE * window) as u64,
            note_chars(window),
        )
        .await;
        let summary = match summary {
            Ok(summary) => summary,
            Err(CompactError::Overflow(_)) => {
                return Ok(self.drop_oldest(access.sink, history, idle));
            }
            Err(error @ (CompactError::Model(_) | CompactError::Empty))
                if trigger == Trigger::Recover =>
            {
                access.sink.emit(AgentEvent::Warning {
                    message: format!("context: {error}"),
                });
                return Ok(self.drop_oldest(access.sink, history, idle));
            }
            Err(error) => return Err(error),
        };
        let next_is_user = history
            .get(kept_from)
            .map_or(idle, |m| m.role == Role::User);
        let compaction = Compaction {
            head: compact::head(&summary, next_is_user),
            kept_from,
        };
        let report = self.apply_compaction(history, compaction, true);
        access.sink.emit(AgentEvent::Notice {
            message: format!(
                "context: compacted {} older messages into a handoff note, kept {} verbatim \
                 (about {} → {} tokens)",
                report.replaced, report.kept, report.tokens_before, report.tokens_after
            ),
        });
        Ok(report)
    }

    /// Drops the oldest turns without a summary (last resort), keeping a tail that fits a
    /// fifth of the window and the user's message of the running turn, and says so.
    fn drop_oldest(
        &self,
        sink: &Arc<dyn EventSink>,
        history: &mut Vec<Message>,
        idle: bool,
    ) -> CompactReport {
        let budget = (TAIL_SHARE * self.window() as f64) as u64;
        let kept_from = compact::choose_tail(history, budget, !idle);
        let task = self.state().task.filter(|&task| task < kept_from);
        if kept_from == 0 || (kept_from == 1 && task.is_some()) {
            let tokens = estimate_messages(history);
            return CompactReport {
                replaced: 0,
                kept: history.len(),
                tokens_before: tokens,
                tokens_after: tokens,
                summarized: false,
            };
        }
        let compaction = compact::dropped(history, kept_from, idle, task);
        let mut report = self.apply_compaction(history, compaction, false);
        let kept = match (task.is_some(), report.kept) {
            (false, last) => format!("the last {last}"),
            (true, 0) => "your message".to_string(),
            (true, last) => format!("your message and the last {last}"),
        };
        if task.is_some() {
            report.replaced -= 1;
            report.kept += 1;
        }
        sink.emit(AgentEvent::Warning {
            message: format!(
                "context: dropped the oldest {} messages without a summary to fit the context \
                 window; kept {kept}",
                report.replaced
            ),
        });
        report
    }

    fn apply_compaction(
        &self,
        history: &mut Vec<Message>,
        compaction: Compaction,
        summarized: bool,
    ) -> CompactReport {
        let tokens_before = estimate_messages(history);
        let replaced = compaction.kept_from.min(history.len());
        {
            // The user's message of the turn moves with the kept tail, or to the front of the
            // head when a drop keeps it there ([`compact::dropped`]).
            let mut state = self.state();
            state.task = state
                .task
                .and_then(|task| match task.checked_sub(replaced) {
                    Some(in_tail) => Some(in_tail + compaction.head.len()),
                    None => (compaction.head.first() == history.get(task)).then_some(0),
                });
        }
        compaction.apply(history);
        let report = CompactReport {
            replaced,
            kept: history.len() - compaction.head.len(),
            tokens_before,
            tokens_after: estimate_messages(history),
            summarized,
        };
        self.record(&HistoryEdit::Compacted(compaction));
        self.reset();
        report
    }

    fn record(&self, edit: &HistoryEdit) {
        if let Some(recorder) = &self.recorder {
            recorder(edit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn estimate_uses_the_usage_anchor_then_estimates_the_rest() {
        let manager = ContextManager::new(ContextSettings::default());
        let mut history = vec![Message::user("x".repeat(400))];
        assert_eq!(manager.estimate(&history, 50), 50 + 100 + 4);
        manager.after_response(
            1,
            Some(&Usage {
                prompt_tokens: 1000,
                completion_tokens: 20,
                ..Usage::default()
            }),
        );
        history.push(Message::assistant("answer"));
        history.push(Message::user("y".repeat(40)));
        assert_eq!(manager.estimate(&history, 600), 1000 + 20 + 10 + 4);
        // Placeholder usage far below the plain estimate is not trusted.
        assert_eq!(manager.estimate(&history, 4000), 4000 + 104 + 6 + 14);
        manager.reset();
        assert_eq!(manager.estimate(&history, 0), 104 + 6 + 14);
    }

    #[test]
    fn usage_calibrates_later_estimates() {
        let manager = ContextManager::new(ContextSettings::default());
        manager.state().pending_estimate = Some(1000);
        manager.after_response(
            0,
            Some(&Usage {
                prompt_tokens: 1500,
                ..Usage::default()
            }),
        );
        manager.reset();
        assert_eq!(manager.estimate(&[], 100), 150);
    }

    #[test]
    fn the_users_message_is_followed_through_compactions_and_kept_by_a_drop() {
        let manager = ContextManager::new(ContextSettings::default());
        let mut history = vec![
            Message::user("old"),
            Message::assistant("old answer"),
            Message::user("the task"),
            Message::assistant("working"),
        ];
        manager.turn_started(2);
        let note = Compaction {
            head: vec![Message::user("note"), Message::assistant("ok")],
            kept_from: 2,
        };
        manager.apply_compaction(&mut history, note, true);
        assert_eq!(manager.state().task, Some(2));
        assert_eq!(history[2], Message::user("the task"));
        let drop = compact::dropped(&history, 4, false, Some(2));
        manager.apply_compaction(&mut history, drop, false);
        assert_eq!(manager.state().task, Some(0));
        assert_eq!(history[0], Message::user("the task"));
        assert!(
            history[1]
                .text_content()
                .contains("(3 messages) was dropped")
        );
    }

    #[test]
    fn edits_replay() {
        let mut history = vec![
            Message::user("a"),
            Message::assistant("b"),
            Message::user("c"),
        ];
        let edit = HistoryEdit::Compacted(Compaction {
            head: vec![Message::user("note")],
            kept_from: 2,
        });
        let json = serde_json::to_string(&edit).unwrap_or_default();
        let back: HistoryEdit =
            serde_json::from_str(&json).unwrap_or(HistoryEdit::Pruned { stubs: vec![] });
        back.apply(&mut history);
        assert_eq!(history, vec![Message::user("note"), Message::user("c")]);
    }
}
