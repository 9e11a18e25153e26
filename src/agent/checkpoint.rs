//! The session's side of checkpoints ([`crate::checkpoints`]): numbering turns, giving each
//! turn its recorder (which the dispatcher tells about every call), and undoing turns and
//! cutting the conversation back for `/undo` and `/rewind`.
//!
//! Snapshots and restores reach the screen and `--json` as [`AgentEvent`]s, the session
//! file as `checkpoint` / `restored` / `rewound` records, and the event log as policy
//! events.

use std::sync::Arc;

use super::Agent;
use crate::checkpoints::{
    CheckpointError, Checkpoints, Plan, Report, TurnEntry, TurnKey, TurnRecorder, WarmUp,
};
use crate::events::{AgentEvent, EventSink};
use crate::governance::Governor;
use crate::governance::events::PolicyEvent;
use crate::session::{Record, SessionHandle, Turns};

/// Checkpoint state of one session.
#[derive(Default)]
pub(crate) struct SessionCheckpoints {
    store: Option<Arc<Checkpoints>>,
    /// Building the shadow index in the background (a workspace never snapshot before);
    /// dropped with the session, which stops it.
    warm_up: Option<WarmUp>,
    /// The session's turn numbers.
    pub(super) turns: Turns,
}

impl SessionCheckpoints {
    /// A new conversation (`/clear`): numbering starts again.
    pub(super) fn reset(&mut self) {
        self.turns = Turns::default();
    }
}

/// Forwards events, and writes checkpoint events to the session file and the event log.
struct Recording {
    sink: Arc<dyn EventSink>,
    session: Arc<SessionHandle>,
    governor: Arc<Governor>,
}

impl EventSink for Recording {
    fn emit(&self, event: AgentEvent) {
        if let AgentEvent::CheckpointSaved {
            turn,
            snapshot,
            files,
            skipped,
            duration,
            ..
        } = &event
        {
            self.session.record(&Record::Checkpoint {
                turn: *turn,
                snapshot: snapshot.clone(),
                files: *files,
            });
            self.governor.record_event(PolicyEvent::CheckpointSaved {
                turn: *turn,
                snapshot: snapshot.clone(),
                files: *files,
                skipped: skipped.len(),
                duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            });
        }
        self.sink.emit(event);
    }
}

impl Agent {
    /// Records the workspace before each turn's first change from now on, and starts
    /// building the shadow index in the background when the workspace has none.
    pub(crate) fn set_checkpoints(&mut self, checkpoints: Arc<Checkpoints>) {
        let sink = Arc::clone(&self.sink);
        checkpoints.set_lock_notice(move |message| {
            sink.emit(AgentEvent::Notice {
                message: message.to_string(),
            });
        });
        self.checkpoints.warm_up = checkpoints.warm_up();
        self.checkpoints.store = Some(checkpoints);
    }

    /// The workspace's checkpoints, when they are on.
    pub(crate) fn checkpoints(&self) -> Option<&Arc<Checkpoints>> {
        self.checkpoints.store.as_ref()
    }

    /// Numbers a new turn (its user message was just added) and returns its recorder.
    pub(super) fn start_turn_checkpoint(&mut self, input: &str) -> Option<Arc<TurnRecorder>> {
        let turn = self.checkpoints.turns.start();
        let store = self.checkpoints.store.as_ref()?;
        let sink: Arc<dyn EventSink> = Arc::new(Recording {
            sink: Arc::clone(&self.sink),
            session: Arc::clone(&self.saved.session),
            governor: Arc::clone(&self.governor),
        });
        let key = TurnKey {
            session: self.saved.session.id(),
            turn,
        };
        Some(Arc::new(TurnRecorder::new(
            Arc::clone(store),
            key,
            input,
            sink,
        )))
    }

    /// After the turn: the after-snapshot, then retention (only when the turn changed
    /// files, so a turn that changed nothing costs nothing).
    pub(super) fn finish_turn_checkpoint(&self, recorder: Option<Arc<TurnRecorder>>) {
        if let (Some(recorder), Some(store)) = (recorder, self.checkpoints.store.as_ref())
            && recorder.finish().is_some()
        {
            store.housekeeping();
        }
    }

    fn store(&self) -> Result<&Arc<Checkpoints>, CheckpointError> {
        self.checkpoints
            .store
            .as_ref()
            .ok_or(CheckpointError::Disabled)
    }

    /// What `/undo` would do: undo this session's last turn that changed files.
    ///
    /// # Errors
    /// [`CheckpointError::NoTurns`] when there is none; others when a snapshot cannot be
    /// made or read.
    pub(crate) fn undo_plan(&self) -> Result<Plan, CheckpointError> {
        let store = self.store()?;
        let turn = store.last_turn(Some(&self.saved.session.id()))?;
        store.plan(&[turn])
    }

    /// This session's turns that changed files and can still be undone, oldest first.
    ///
    /// # Errors
    /// [`CheckpointError::Disabled`] when checkpoints are off.
    pub(crate) fn rewind_choices(&self) -> Result<Vec<TurnEntry>, CheckpointError> {
        Ok(self.store()?.turns_from(&self.saved.session.id(), 0))
    }

    /// What `/rewind` to before `turn` would do.
    ///
    /// # Errors
    /// As [`Agent::undo_plan`].
    pub(crate) fn rewind_plan(&self, turn: u64) -> Result<Plan, CheckpointError> {
        let store = self.store()?;
        let turns = store.turns_from(&self.saved.session.id(), turn);
        if turns.is_empty() {
            return Err(CheckpointError::NoTurns("session"));
        }
        store.plan(&turns)
    }

    /// Carries out `plan`, conflicts too when `overwrite_conflicts`, and records it.
    ///
    /// # Errors
    /// [`CheckpointError`] when the checkpoint repository cannot be used.
    pub(crate) fn restore(
        &self,
        plan: &Plan,
        overwrite_conflicts: bool,
    ) -> Result<Report, CheckpointError> {
        let report = self.store()?.restore(plan, overwrite_conflicts)?;
        let shown = |paths: &[crate::checkpoints::RelPath]| -> Vec<String> {
            paths.iter().map(|p| p.shown()).collect()
        };
        let turns: Vec<u64> = plan.turns.iter().map(|k| k.turn).collect();
        self.saved.session.record(&Record::Restored {
            turns: turns.clone(),
            snapshot: plan.target.clone(),
            files: shown(&report.restored),
        });
        self.governor.record_event(PolicyEvent::CheckpointRestored {
            turns: turns.clone(),
            snapshot: plan.target.clone(),
            restored: report.restored.len(),
            kept: report.kept.len(),
            failed: report.failed.len(),
        });
        self.sink.emit(AgentEvent::CheckpointRestored {
            turns,
            snapshot: plan.target.clone(),
            restored: shown(&report.restored),
            kept: shown(&report.kept),
            failed: report
                .failed
                .iter()
                .map(|(p, why)| format!("{}: {why}", p.shown()))
                .collect(),
        });
        Ok(report)
    }

    /// Whether the conversation can be cut back to before `turn` (its message is still in
    /// the history and the session file is being saved).
    pub(crate) fn can_cut_conversation(&self, turn: u64) -> bool {
        self.saved.session.is_saving()
            && self
                .checkpoints
                .turns
                .start_of(turn, &self.history)
                .is_some()
    }

    /// Cuts the conversation back to before `turn`: the model no longer sees that turn or
    /// any later one, in this process or after `--resume`. `false` when it cannot.
    pub(crate) fn cut_conversation(&mut self, turn: u64) -> bool {
        if !self.saved.session.is_saving() {
            return false;
        }
        let Some(keep) = self.checkpoints.turns.start_of(turn, &self.history) else {
            return false;
        };
        self.history.truncate(keep);
        self.checkpoints.turns.cut_from(turn);
        self.saved.session.record(&Record::Rewound { turn, keep });
        self.context.reset();
        true
    }
}
