//! The first snapshot of a workspace hashes every file (seconds in a large tree); later
//! ones only stat files. So when a session starts in a workspace whose shadow index does not
//! exist yet, a background thread builds it ([`super::shadow::Store::warm`]) while the user
//! types and the model streams. It records no snapshot: the turn's first changing call still
//! takes its own, which waits for the store's lock (Ctrl-C ends the wait, and the turn goes
//! on without a checkpoint, as for any snapshot interrupted) and then finds the index warm.
//!
//! Invariants: the thread holds the store's lock while it works, so it never races a
//! snapshot or a restore; dropping the [`WarmUp`] (the session ends) asks it to stop and
//! waits for the batch of files git is hashing (at most 1,000), so no `git` outlives the
//! agent. A warm-up that fails or is stopped leaves a correct, partial index or none.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use super::Checkpoints;

/// The background warm-up of one workspace's shadow index.
pub(crate) struct WarmUp {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpoints {
    /// Starts building the shadow index in the background; `None` when it already exists
    /// (or the thread could not start, which only makes the first snapshot slower).
    pub(crate) fn warm_up(self: &Arc<Self>) -> Option<WarmUp> {
        if self.is_warm() {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let checkpoints = Arc::clone(self);
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("checkpoint warm-up".into())
            .spawn(move || {
                let stop = || stopped.load(Ordering::SeqCst);
                let wait = super::shadow::Wait {
                    stop: &stop,
                    notice: &|_| {},
                };
                if let Ok(lock) = checkpoints.store.lock_with(&wait) {
                    let _ = checkpoints.store.warm(&lock, &stop);
                }
            })
            .ok()?;
        Some(WarmUp {
            stop,
            thread: Some(thread),
        })
    }
}

impl WarmUp {
    /// Waits for the warm-up to finish (tests and benchmarks).
    #[cfg(test)]
    pub(crate) fn wait(mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for WarmUp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::Checkpoints;
    use crate::config::CheckpointSettings;

    fn checkpoints(home: &std::path::Path, ws: &std::path::Path) -> Option<Arc<Checkpoints>> {
        let Some(git) = super::super::git::find(std::env::var("PATH").ok().as_deref()) else {
            eprintln!("SKIPPED: no git on PATH");
            return None;
        };
        Some(Arc::new(Checkpoints::new(
            git,
            CheckpointSettings::default(),
            home,
            ws,
        )))
    }

    fn workspace(files: usize) -> tempfile::TempDir {
        let ws = tempfile::tempdir().unwrap();
        for i in 0..files {
            let dir = ws.path().join(format!("d{}", i % 7));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(format!("f{i}")), format!("file {i}\n")).unwrap();
        }
        ws
    }

    #[test]
    fn a_warm_up_makes_the_first_snapshot_only_stat_files() {
        let (home, ws) = (tempfile::tempdir().unwrap(), workspace(2_500));
        let Some(checkpoints) = checkpoints(home.path(), ws.path()) else {
            return;
        };
        let warm_up = checkpoints.warm_up().unwrap();
        warm_up.wait();
        assert!(checkpoints.is_warm());
        assert!(checkpoints.warm_up().is_none(), "warmed twice");
        let snapshot = checkpoints.snapshot().unwrap();
        assert!(!snapshot.first);
        assert_eq!(snapshot.files, 2_500);
        // The warm-up recorded nothing: no turn, and the snapshot is the first commit.
        assert!(checkpoints.turns().is_empty());
        assert!(snapshot.created);
    }

    #[test]
    fn a_stopped_warm_up_leaves_a_correct_index() {
        let (home, ws) = (tempfile::tempdir().unwrap(), workspace(3_000));
        let Some(checkpoints) = checkpoints(home.path(), ws.path()) else {
            return;
        };
        // Dropped at once: stopped before or between batches, whichever comes first.
        drop(checkpoints.warm_up());
        let snapshot = checkpoints.snapshot().unwrap();
        assert_eq!(snapshot.files, 3_000);
        let entries = checkpoints.store.entries(&snapshot.commit).unwrap();
        assert_eq!(entries.len(), 3_000);
    }
}
