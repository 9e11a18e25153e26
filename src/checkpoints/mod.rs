//! Checkpoints (issue 16): the workspace is recorded in a shadow git repository before each
//! turn's first change, so `/undo`, `/rewind` and `agent undo` can put back whatever the
//! turn changed, through `write_file`, `str_replace`, `bash` or an MCP tool alike (the
//! sandbox keeps a command's writes inside the workspace and `/tmp`).
//!
//! - [`git`]: the system `git`, run hermetically on the shadow repository only; the user's
//!   repository is never opened.
//! - [`walk`]: what a snapshot captures (`.gitignore` honoured, every `.git` left out, links
//!   kept as links, files over the size cap and unreadable files noted).
//! - [`shadow`]: the repository under `$AGENT_HOME/checkpoints/<workspace id>/`, snapshots
//!   through its index's stat cache.
//! - [`ledger`]: which snapshots belong to which turn, and what was restored.
//! - [`rule`]: which tool calls may change the workspace.
//! - [`recorder`]: one turn's snapshots: taken lazily before the first changing call (a
//!   turn that changes nothing costs nothing), and after the turn.
//! - [`plan`] and [`restore`]: what a restore will do (shown and confirmed first), then
//!   doing it one file at a time, atomically.
//! - [`prune`]: retention and `git gc`, off the path of a turn.
//! - [`warm`]: a workspace never snapshot before gets its shadow index built in the
//!   background when the session starts, off the path of the model's stream.
//!
//! Invariants: nothing here writes outside `$AGENT_HOME/checkpoints/` except a restore, and
//! a restore writes only paths the undone turns changed, each atomically, after checking
//! the file is still what the summary showed; the workspace as it was before the restore
//! is kept as a snapshot. Failures are errors for the user; they never end a session.

pub(crate) mod git;
pub(crate) mod index;
pub(crate) mod ledger;
pub(crate) mod paths;
pub(crate) mod plan;
pub(crate) mod prune;
pub(crate) mod recorder;
pub(crate) mod restore;
pub(crate) mod rule;
pub(crate) mod shadow;
pub mod walk;
pub(crate) mod warm;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use crate::config::CheckpointSettings;

pub use git::GitError;
pub(crate) use ledger::{Line, TurnEntry, TurnKey};
pub(crate) use paths::RelPath;
pub(crate) use plan::Plan;
pub(crate) use recorder::TurnRecorder;
pub(crate) use restore::Report;
pub use shadow::Snapshot;
pub(crate) use warm::WarmUp;

/// What can go wrong with checkpoints. None of these ends a session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    #[error(transparent)]
    Git(#[from] git::GitError),
    #[error("cannot use `{}`: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error(
        "nothing to undo: no turn of this {0} changed files since checkpoints began (or all were undone)"
    )]
    NoTurns(&'static str),
    #[error("nothing to undo")]
    NothingToUndo,
    #[error(
        "checkpoints are off (`[checkpoints] enabled = false`, or no `git`), so there is nothing to undo"
    )]
    Disabled,
    #[error("interrupted by user before the snapshot was complete")]
    Interrupted,
    #[error(
        "the checkpoints are busy: {holder} has held their lock for {secs} s; try again when it has finished"
    )]
    Busy { holder: String, secs: u64 },
    #[error("the checkpoint repository is damaged: {0}")]
    Corrupt(String),
}

/// The checkpoints of one workspace.
pub struct Checkpoints {
    store: shadow::Store,
    ledger: ledger::Ledger,
    settings: CheckpointSettings,
    /// Paths whose "not captured" note was already shown in this process.
    reported: Mutex<HashSet<RelPath>>,
    /// Told when a wait for the store's lock is long ([`Checkpoints::set_lock_notice`]).
    lock_notice: RwLock<Option<LockNotice>>,
}

type LockNotice = Box<dyn Fn(&str) + Send + Sync>;

/// Whether checkpoints could be set up.
pub enum Setup {
    On(Box<Checkpoints>),
    /// Off by `[checkpoints] enabled = false`.
    Disabled,
    /// Off because there is no `git`: the one warning line to show.
    NoGit(String),
}

impl Checkpoints {
    /// Checkpoints for `workspace`, kept under `agent_home`, using the `git` found on the
    /// settings' `PATH` ([`CheckpointSettings::search_path`]).
    pub fn setup(settings: CheckpointSettings, agent_home: &Path, workspace: &Path) -> Setup {
        if !settings.enabled {
            return Setup::Disabled;
        }
        let Some(git) = git::find(settings.search_path.as_deref()) else {
            return Setup::NoGit(
                "checkpoints are off: `git` was not found on PATH, so /undo cannot restore \
                 files; install git to turn them on"
                    .into(),
            );
        };
        Setup::On(Box::new(Self::new(git, settings, agent_home, workspace)))
    }

    /// Checkpoints using the `git` program at `git`.
    pub(crate) fn new(
        git: PathBuf,
        settings: CheckpointSettings,
        agent_home: &Path,
        workspace: &Path,
    ) -> Self {
        let dir = agent_home
            .join("checkpoints")
            .join(paths::workspace_id(workspace));
        Self {
            store: shadow::Store::new(
                git,
                dir.clone(),
                workspace.to_path_buf(),
                settings.max_file_bytes,
            ),
            ledger: ledger::Ledger::new(&dir),
            settings,
            reported: Mutex::new(HashSet::new()),
            lock_notice: RwLock::new(None),
        }
    }

    pub(crate) fn settings(&self) -> &CheckpointSettings {
        &self.settings
    }

    /// The shadow repository's directory.
    pub(crate) fn dir(&self) -> &Path {
        self.store.dir()
    }

    pub(crate) fn workspace(&self) -> &Path {
        self.store.workspace()
    }

    /// Whether the workspace has been snapshot before (a snapshot now is fast).
    pub(crate) fn is_warm(&self) -> bool {
        self.store.is_warm()
    }

    /// Bytes the shadow repository uses on disk.
    pub(crate) fn disk_use(&self) -> u64 {
        self.store.disk_use()
    }

    /// Records the workspace now.
    ///
    /// # Errors
    /// [`CheckpointError`] when nothing could be recorded.
    pub fn snapshot(&self) -> Result<Snapshot, CheckpointError> {
        let lock = self.lock(&|| false)?;
        self.store.snapshot(&lock, &|| false)
    }

    /// Records the workspace before the first change of turn `key`, and the turn in the
    /// ledger.
    ///
    /// # Errors
    /// [`CheckpointError`] when nothing could be recorded.
    pub(crate) fn begin_turn(
        &self,
        key: &TurnKey,
        request: &str,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<Snapshot, CheckpointError> {
        let lock = self.lock(stop)?;
        let snapshot = self.store.snapshot(&lock, stop)?;
        self.append(&Line::turn(key.clone(), now(), request, &snapshot.commit))?;
        Ok(snapshot)
    }

    /// Records the workspace after turn `key` (whose before-snapshot is `before`) and what
    /// it changed.
    ///
    /// # Errors
    /// [`CheckpointError`] when nothing could be recorded.
    pub(crate) fn end_turn(
        &self,
        key: &TurnKey,
        before: &str,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<(Snapshot, Vec<RelPath>), CheckpointError> {
        let lock = self.lock(&|| false)?;
        let snapshot = self.store.snapshot(&lock, stop)?;
        let mut files: Vec<RelPath> = Vec::new();
        if snapshot.commit != before {
            files.extend(self.store.changed(before, &snapshot.commit)?);
            let (old, new) = (self.store.meta(before)?, self.store.meta(&snapshot.commit)?);
            for path in old.perms.keys().chain(new.perms.keys()) {
                if old.perms.get(path) != new.perms.get(path) && !files.contains(path) {
                    files.push(path.clone());
                }
            }
            files.sort();
        }
        self.append(&Line::TurnEnd {
            key: key.clone(),
            time: now(),
            after: snapshot.commit.clone(),
            files: files.clone(),
        })?;
        Ok((snapshot, files))
    }

    fn append(&self, line: &Line) -> Result<(), CheckpointError> {
        self.ledger.append(line).map_err(|e| CheckpointError::Io {
            path: self.ledger.path().to_path_buf(),
            message: e.to_string(),
        })
    }

    /// The notes of `skipped` not shown before in this process.
    pub(crate) fn new_notes(&self, skipped: &[walk::Skipped]) -> Vec<String> {
        let mut reported = match self.reported.lock() {
            Ok(reported) => reported,
            Err(poisoned) => poisoned.into_inner(),
        };
        skipped
            .iter()
            .filter(|s| reported.insert(s.path.clone()))
            .map(walk::Skipped::note)
            .collect()
    }

    /// Every turn of the workspace that changed files, oldest first.
    pub(crate) fn turns(&self) -> Vec<TurnEntry> {
        self.ledger.turns()
    }

    /// The newest turn not undone yet that changed files (or did not finish, so may have),
    /// of `session` (or of any session).
    ///
    /// # Errors
    /// [`CheckpointError::NoTurns`] when there is none.
    pub(crate) fn last_turn(&self, session: Option<&str>) -> Result<TurnEntry, CheckpointError> {
        self.turns()
            .into_iter()
            .rev()
            .filter(|t| t.after.is_none() || !t.files.is_empty())
            .find(|t| !t.undone && session.is_none_or(|s| t.key.session == s))
            .ok_or(CheckpointError::NoTurns(if session.is_some() {
                "session"
            } else {
                "workspace"
            }))
    }

    /// Turns of `session` from `turn` on that are not undone, oldest first.
    pub(crate) fn turns_from(&self, session: &str, turn: u64) -> Vec<TurnEntry> {
        self.turns()
            .into_iter()
            .filter(|t| !t.undone && t.key.session == session && t.key.turn >= turn)
            .collect()
    }

    /// What undoing `turns` (oldest first) would do, with the workspace as it is now (which
    /// is saved as a snapshot first).
    ///
    /// # Errors
    /// [`CheckpointError`] when the workspace cannot be recorded or a snapshot read.
    pub(crate) fn plan(&self, turns: &[TurnEntry]) -> Result<Plan, CheckpointError> {
        let lock = self.lock(&|| false)?;
        let now = self.store.snapshot(&lock, &|| false)?;
        plan::plan(&self.store, turns, &now.commit)
    }

    /// Restores `plan` (conflicts too when `overwrite_conflicts`) and records it; the turns
    /// count as undone when no file failed.
    ///
    /// # Errors
    /// [`CheckpointError`] when the lock cannot be taken; failures of single files are in
    /// the [`Report`].
    pub(crate) fn restore(
        &self,
        plan: &Plan,
        overwrite_conflicts: bool,
    ) -> Result<Report, CheckpointError> {
        let _lock = self.lock(&|| false)?;
        let report = restore::apply(&self.store, plan, overwrite_conflicts);
        self.append(&Line::Restore {
            time: now(),
            turns: plan.turns.clone(),
            target: plan.target.clone(),
            safety: plan.safety.clone(),
            restored: report.restored.clone(),
            kept: report.kept.clone(),
            failed: report.failed.iter().map(|(p, _)| p.clone()).collect(),
        })?;
        Ok(report)
    }

    /// Applies retention and, when due, starts `git gc` in the background; gc holds the
    /// store's lock until it ends, so snapshots and restores wait for it.
    pub(crate) fn housekeeping(&self) {
        let Ok(lock) = self.lock(&|| false) else {
            return;
        };
        let pruned = prune::prune(
            &self.store,
            &self.ledger,
            self.settings.keep,
            self.settings.keep_days,
            now(),
            &lock,
        );
        if pruned.is_ok() && prune::gc_due(&self.store) {
            let _ = prune::start_gc(&self.store, lock);
        }
    }

    /// Says what a wait for the store's lock is for (once, after a second of waiting): a
    /// notice line on the screen, or stderr for `agent undo`.
    pub(crate) fn set_lock_notice(&self, notice: impl Fn(&str) + Send + Sync + 'static) {
        let mut slot = match self.lock_notice.write() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        };
        *slot = Some(Box::new(notice));
    }

    /// Takes the store's lock, telling the lock notice when the wait is long.
    fn lock(&self, stop: &(dyn Fn() -> bool + Sync)) -> Result<shadow::Lock, CheckpointError> {
        let slot = match self.lock_notice.read() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        };
        let notice = |message: &str| {
            if let Some(notice) = slot.as_ref() {
                notice(message);
            }
        };
        self.store.lock_with(&shadow::Wait {
            stop,
            notice: &notice,
        })
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
