//! One turn's checkpoints: the snapshot before its first change, taken lazily from the
//! dispatcher right before the first call that may change the workspace ([`super::rule`]),
//! and the snapshot after it, taken when the turn ends. A turn with no such call takes no
//! snapshot at all. The dispatcher runs calls one at a time (subagents' calls included,
//! through the same tool context), so the first one is well defined.
//!
//! A snapshot that fails is a warning saying what was not captured; the call runs anyway
//! (the turn is then not undoable), because stopping the agent for its undo history would
//! cost the user more than it protects.

use std::sync::{Arc, Mutex};

use super::ledger::TurnKey;
use super::{Checkpoints, RelPath, Snapshot, rule};
use crate::cancel::CancelToken;
use crate::events::{AgentEvent, EventSink};
use crate::permissions::Evaluation;
use crate::tools::{Access, BeforeRun};

/// Where the turn stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// No changing call yet.
    Clean,
    /// Saved before the first change.
    Saved(String),
    /// The snapshot failed; the turn is not undoable.
    Failed,
}

/// The checkpoints of one turn.
pub(crate) struct TurnRecorder {
    checkpoints: Arc<Checkpoints>,
    key: TurnKey,
    request: String,
    sink: Arc<dyn EventSink>,
    state: Mutex<State>,
}

/// What the turn changed, once it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finished {
    pub(crate) before: String,
    pub(crate) after: Snapshot,
    pub(crate) files: Vec<RelPath>,
}

impl TurnRecorder {
    pub(crate) fn new(
        checkpoints: Arc<Checkpoints>,
        key: TurnKey,
        request: &str,
        sink: Arc<dyn EventSink>,
    ) -> Self {
        Self {
            checkpoints,
            key,
            request: request.to_string(),
            sink,
            state: Mutex::new(State::Clean),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Saves the workspace unless this turn already did (or tried).
    fn save_before(&self, cancel: &CancelToken) {
        let mut state = self.state();
        if *state != State::Clean {
            return;
        }
        match self
            .checkpoints
            .begin_turn(&self.key, &self.request, &|| cancel.is_cancelled())
        {
            Ok(snapshot) => {
                self.sink.emit(AgentEvent::CheckpointSaved {
                    turn: self.key.turn,
                    snapshot: snapshot.commit.clone(),
                    files: snapshot.files,
                    skipped: self.checkpoints.new_notes(&snapshot.skipped),
                    first: snapshot.first,
                    duration: snapshot.took,
                });
                *state = State::Saved(snapshot.commit);
            }
            Err(error) => {
                self.sink.emit(AgentEvent::Warning {
                    message: format!(
                        "checkpoint failed, so this turn's changes cannot be undone: {error}"
                    ),
                });
                *state = State::Failed;
            }
        }
    }

    /// After the turn: saves the workspace again and records what the turn changed. `None`
    /// when the turn changed nothing (or its first snapshot failed).
    pub(crate) fn finish(&self) -> Option<Finished> {
        let State::Saved(before) = self.state().clone() else {
            return None;
        };
        match self.checkpoints.end_turn(&self.key, &before, &|| false) {
            Ok((after, files)) => Some(Finished {
                before,
                after,
                files,
            }),
            Err(error) => {
                self.sink.emit(AgentEvent::Warning {
                    message: format!(
                        "cannot save the checkpoint after this turn ({error}); /undo will \
                         not tell your own later edits from the agent's"
                    ),
                });
                None
            }
        }
    }
}

impl BeforeRun for TurnRecorder {
    fn before_run(
        &self,
        _tool: &str,
        access: &Access,
        evaluation: Option<&Evaluation>,
        cancel: &CancelToken,
    ) {
        if rule::may_change(access, evaluation) {
            self.save_before(cancel);
        }
    }
}
