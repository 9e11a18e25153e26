//! Retention: snapshots of the newest `keep` turns (100 by default) that are younger than
//! `keep_days` (14) are kept; a turn past either limit is dropped from the ledger with its
//! refs, and `git gc` then removes what nothing refers to any more. The gc runs in the
//! background after a turn (never before a tool call), at most once an hour, and keeps
//! objects younger than an hour so a snapshot being written meanwhile is never pruned.

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use super::CheckpointError;
use super::ledger::{Ledger, Line, TurnKey, fold};
use super::shadow::{Lock, Store};

/// Least time between two gc runs.
const GC_EVERY: Duration = Duration::from_secs(3600);

/// What pruning removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Pruned {
    pub(crate) turns: usize,
    pub(crate) refs: usize,
}

/// Drops turns past the limits from the ledger and deletes the refs nothing needs.
/// Call with the store's lock held.
///
/// # Errors
/// [`CheckpointError`] when the ledger cannot be rewritten or git fails.
pub(crate) fn prune(
    store: &Store,
    ledger: &Ledger,
    keep: usize,
    keep_days: u64,
    now: u64,
    _lock: &Lock,
) -> Result<Pruned, CheckpointError> {
    let lines = ledger.lines();
    let turns = fold(&lines);
    let cutoff = now.saturating_sub(keep_days.saturating_mul(86_400));
    let kept: HashSet<&TurnKey> = turns
        .iter()
        .rev()
        .take(keep)
        .filter(|t| t.time >= cutoff)
        .map(|t| &t.key)
        .collect();
    let survives = |line: &Line| match line {
        Line::Turn { key, .. } | Line::TurnEnd { key, .. } => kept.contains(key),
        Line::Restore { turns, time, .. } => {
            *time >= cutoff && turns.iter().any(|k| kept.contains(k))
        }
    };
    let (keep_lines, dropped): (Vec<Line>, Vec<Line>) =
        lines.iter().cloned().partition(|l| survives(l));
    if dropped.is_empty() {
        return Ok(Pruned::default());
    }
    ledger
        .rewrite(&keep_lines)
        .map_err(|e| CheckpointError::Io {
            path: ledger.path().to_path_buf(),
            message: e.to_string(),
        })?;
    let mut roots: HashSet<String> = keep_lines
        .iter()
        .flat_map(|l| l.commits())
        .map(str::to_string)
        .collect();
    if let Some(commit) = super::shadow::last_commit(store.dir()) {
        roots.insert(commit);
    }
    let refs = store.git().text(
        &["for-each-ref", "--format=%(refname)", "refs/checkpoints/"],
        None,
    )?;
    let doomed: Vec<&str> = refs
        .lines()
        .filter(|r| {
            r.rsplit('/')
                .next()
                .is_some_and(|commit| !roots.contains(commit))
        })
        .collect();
    if !doomed.is_empty() {
        let input: String = doomed.iter().map(|r| format!("delete {r}\n")).collect();
        store
            .git()
            .run(&["update-ref", "--stdin"], Some(input.as_bytes()))?;
    }
    Ok(Pruned {
        turns: fold(&dropped).len(),
        refs: doomed.len(),
    })
}

/// Whether a gc is due: the repository has snapshots and the last gc ran, or the first
/// housekeeping found it, at least an hour ago ([`GC_EVERY`]). The first call on a store
/// only starts that clock (writes the stamp): a short session, or a one-shot run, leaves
/// no `git gc` running after it.
pub(crate) fn gc_due(store: &Store) -> bool {
    if !store.is_warm() {
        return false;
    }
    let stamp = store.dir().join("gc-stamp");
    match std::fs::metadata(&stamp).and_then(|m| m.modified()) {
        Ok(at) => SystemTime::now()
            .duration_since(at)
            .is_ok_and(|age| age >= GC_EVERY),
        Err(_) => {
            let _ = std::fs::write(&stamp, b"");
            false
        }
    }
}

/// Starts `git gc` (packs loose objects, removes unreferenced ones older than an hour) in
/// the background, handing it the store's `lock`: git removes empty object directories
/// while it prunes, so a snapshot writing objects at the same time could fail ("unable to
/// create temporary file"). The lock is held until gc ends, even when this process exits
/// first (a one-shot run); a thread here waits for gc and then lets the lock go.
///
/// # Errors
/// [`CheckpointError::Io`] when git cannot be started.
pub(crate) fn start_gc(store: &Store, lock: Lock) -> Result<(), CheckpointError> {
    let stamp = store.dir().join("gc-stamp");
    let _ = std::fs::write(&stamp, b"");
    let mut command = store
        .git()
        .background(&["gc", "--quiet", "--prune=1.hour.ago"]);
    lock.hand_to(&mut command);
    let mut child = command.spawn().map_err(|e| CheckpointError::Io {
        path: store.git().git_dir().to_path_buf(),
        message: format!("cannot start `git gc`: {e}"),
    })?;
    lock.describe(&format!(
        "`git gc` (pid {}), tidying the checkpoints after a turn of agent process {}",
        child.id(),
        std::process::id()
    ));
    // Without the thread the child is reaped when this process exits; the lock is then
    // still held by the child alone.
    let _ = std::thread::Builder::new()
        .name("checkpoint gc".into())
        .spawn(move || {
            let _ = child.wait();
            drop(lock);
        });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store (in a temp home) for a temp workspace holding one file `a`; `None`, with the
    /// reason on stderr, when git is not on PATH.
    fn store_of_one_file() -> Option<(tempfile::TempDir, tempfile::TempDir, Store)> {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a"), "one").unwrap();
        let Some(git) = super::super::git::find(std::env::var("PATH").ok().as_deref()) else {
            eprintln!("skipped: no git on PATH");
            return None;
        };
        let store = Store::new(
            git,
            home.path().join("cp"),
            ws.path().to_path_buf(),
            1 << 20,
        );
        Some((home, ws, store))
    }

    #[test]
    fn git_gc_holds_the_lock_until_it_ends() {
        let Some((_home, ws, store)) = store_of_one_file() else {
            return;
        };
        let lock = store.lock().unwrap();
        store.snapshot(&lock, &|| false).unwrap();
        start_gc(&store, lock).unwrap();
        let holder = std::fs::read_to_string(store.dir().join("lock")).unwrap();
        assert!(holder.starts_with("`git gc` (pid "), "{holder}");
        assert!(matches!(
            store.lock_until(&|| true),
            Err(CheckpointError::Interrupted)
        ));
        // Once gc is done the lock is free, and snapshots work on the packed repository.
        std::fs::write(ws.path().join("a"), "two").unwrap();
        let lock = store.lock().unwrap();
        assert!(store.snapshot(&lock, &|| false).unwrap().created);
        assert!(store.git().git_dir().join("packed-refs").exists());
    }

    /// The eval's one-shot runs left `git gc` running after the agent exited, on every
    /// fresh store: the first housekeeping now only starts the clock.
    #[test]
    fn the_first_gc_is_an_hour_after_the_first_housekeeping() {
        let Some((_home, _ws, store)) = store_of_one_file() else {
            return;
        };
        assert!(!gc_due(&store), "no snapshot yet");
        let lock = store.lock().unwrap();
        store.snapshot(&lock, &|| false).unwrap();
        drop(lock);
        assert!(!gc_due(&store), "the first look starts the clock");
        assert!(!gc_due(&store), "and the clock runs");
        let stamp = std::fs::File::options()
            .write(true)
            .open(store.dir().join("gc-stamp"))
            .unwrap();
        stamp
            .set_modified(SystemTime::now() - GC_EVERY - Duration::from_secs(1))
            .unwrap();
        assert!(gc_due(&store), "an hour later");
    }
}
