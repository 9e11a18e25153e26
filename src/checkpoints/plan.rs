//! What a restore will do, worked out before anything is touched (the diff summary the user
//! confirms).
//!
//! To undo turns `T..=L` (oldest first) the workspace goes back to `before(T)`, but only for
//! the files those turns changed (`before(i)` → `after(i)`): a file the agent did not touch
//! stays as it is, even if it changed between turns. A file the agent changed that also
//! changed by hand afterwards (between `after(i)` and the next turn's `before`, or since
//! `after(L)`) is a conflict: left alone unless the user confirms. A file one of the
//! snapshots did not capture (too large, unreadable) is never touched and is listed.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::CheckpointError;
use super::ledger::{TurnEntry, TurnKey};
use super::paths::RelPath;
use super::shadow::{Entry, Meta, Store};

/// Files larger than this many bytes get no line counts in the summary.
const MAX_COUNTED_BYTES: usize = 1_000_000;

/// What happens to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Its content (or link target) goes back.
    Restore,
    /// A file the turns created: removed.
    Remove,
    /// A file the turns deleted: written again.
    Recreate,
    /// Same content, its permission bits go back.
    Mode,
}

/// A file or link, and its permission bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) entry: Entry,
    pub(crate) perms: u32,
}

/// One path to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) path: RelPath,
    pub(crate) action: Action,
    /// What is there now (`None`: nothing).
    pub(crate) current: Option<State>,
    /// What will be there (`None`: nothing).
    pub(crate) target: Option<State>,
    /// Lines added and removed going from now to the target, for text files.
    pub(crate) lines: Option<(usize, usize)>,
}

/// A path left alone because a snapshot does not hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Uncaptured {
    pub(crate) path: RelPath,
    /// Why, e.g. ``big.bin` (2.1 GB) is over the 10 MB cap`.
    pub(crate) note: String,
}

/// A restore, before it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The turns undone, oldest first.
    pub(crate) turns: Vec<TurnKey>,
    /// The snapshot restored to (before the first of them).
    pub(crate) target: String,
    /// The workspace as it is now (kept, so the restore loses nothing).
    pub(crate) safety: String,
    pub(crate) changes: Vec<Change>,
    /// Changed by hand since the turn: restored only when the user confirms.
    pub(crate) conflicts: Vec<Change>,
    pub(crate) uncaptured: Vec<Uncaptured>,
    /// A turn ended without its after-snapshot: changes made by hand during it cannot be
    /// told apart from the agent's.
    pub(crate) unknown_after: bool,
    /// Directories the target holds (a directory emptied by the restore is removed unless
    /// it is one of these).
    pub(crate) target_dirs: BTreeSet<RelPath>,
}

impl Plan {
    /// Nothing to restore and nothing to ask about.
    pub(crate) fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.conflicts.is_empty()
    }
}

/// Metas of snapshots, read once each.
struct Metas<'a> {
    store: &'a Store,
    cache: HashMap<String, Meta>,
}

impl Metas<'_> {
    fn get(&mut self, commit: &str) -> Result<&Meta, CheckpointError> {
        if !self.cache.contains_key(commit) {
            let meta = self.store.meta(commit)?;
            self.cache.insert(commit.to_string(), meta);
        }
        self.cache
            .get(commit)
            .ok_or_else(|| CheckpointError::Corrupt(format!("snapshot `{commit}` vanished")))
    }
}

/// Plans undoing `turns` (oldest first, at least one) with the workspace now at snapshot
/// `now`.
///
/// # Errors
/// [`CheckpointError`] when a snapshot cannot be read (pruned, or the repository damaged).
pub(crate) fn plan(store: &Store, turns: &[TurnEntry], now: &str) -> Result<Plan, CheckpointError> {
    let Some(first) = turns.first() else {
        return Err(CheckpointError::NothingToUndo);
    };
    let mut metas = Metas {
        store,
        cache: HashMap::new(),
    };
    let mut agent = BTreeSet::new();
    let mut hand = BTreeSet::new();
    let mut unknown_after = false;
    let mut involved = vec![first.before.clone(), now.to_string()];
    for (i, turn) in turns.iter().enumerate() {
        let next = turns.get(i + 1).map_or(now, |t| t.before.as_str());
        match &turn.after {
            Some(after) => {
                agent.extend(changed(store, &mut metas, &turn.before, after)?);
                hand.extend(changed(store, &mut metas, after, next)?);
                involved.push(after.clone());
            }
            None => {
                unknown_after = true;
                agent.extend(changed(store, &mut metas, &turn.before, next)?);
            }
        }
        involved.push(turn.before.clone());
    }
    let mut uncaptured: BTreeMap<RelPath, String> = BTreeMap::new();
    for commit in &involved {
        for skipped in &metas.get(commit)?.skipped {
            uncaptured
                .entry(skipped.path.clone())
                .or_insert_with(|| skipped.note());
        }
    }
    let target_entries = store.entries(&first.before)?;
    let now_entries = store.entries(now)?;
    let target_meta = metas.get(&first.before)?.clone();
    let now_meta = metas.get(now)?.clone();
    let state = |entries: &BTreeMap<RelPath, Entry>, meta: &Meta, path: &RelPath| {
        entries.get(path).map(|entry| State {
            perms: if entry.is_link() {
                0
            } else {
                meta.perms_of(path, entry.mode)
            },
            entry: entry.clone(),
        })
    };
    let mut changes = Vec::new();
    let mut conflicts = Vec::new();
    for path in agent {
        if uncaptured.contains_key(&path) {
            continue;
        }
        let target = state(&target_entries, &target_meta, &path);
        let current = state(&now_entries, &now_meta, &path);
        let Some(action) = action(current.as_ref(), target.as_ref()) else {
            continue;
        };
        let change = Change {
            path: path.clone(),
            action,
            current,
            target,
            lines: None,
        };
        if hand.contains(&path) {
            conflicts.push(change);
        } else {
            changes.push(change);
        }
    }
    count_lines(store, &mut changes)?;
    count_lines(store, &mut conflicts)?;
    let target_dirs = target_entries
        .keys()
        .flat_map(|path| std::iter::successors(path.parent(), RelPath::parent))
        .collect();
    Ok(Plan {
        turns: turns.iter().map(|t| t.key.clone()).collect(),
        target: first.before.clone(),
        safety: now.to_string(),
        changes,
        conflicts,
        uncaptured: uncaptured
            .into_iter()
            .map(|(path, note)| Uncaptured { path, note })
            .collect(),
        unknown_after,
        target_dirs,
    })
}

/// What turns `current` into `target`; `None` when they are the same. Same bytes in two
/// files (not links) is a [`Action::Mode`] change, also when git's mode differs
/// (`chmod +x` turns 100644 into 100755).
fn action(current: Option<&State>, target: Option<&State>) -> Option<Action> {
    match (current, target) {
        (None, None) => None,
        (Some(_), None) => Some(Action::Remove),
        (None, Some(_)) => Some(Action::Recreate),
        (Some(c), Some(t)) if c == t => None,
        (Some(c), Some(t))
            if c.entry.oid == t.entry.oid && !c.entry.is_link() && !t.entry.is_link() =>
        {
            Some(Action::Mode)
        }
        (Some(_), Some(_)) => Some(Action::Restore),
    }
}

/// Paths whose file, link or permission bits differ between snapshots `a` and `b`.
fn changed(
    store: &Store,
    metas: &mut Metas<'_>,
    a: &str,
    b: &str,
) -> Result<BTreeSet<RelPath>, CheckpointError> {
    let mut paths = store.changed(a, b)?;
    if a != b {
        let perms_a = metas.get(a)?.perms.clone();
        let perms_b = &metas.get(b)?.perms;
        for (path, bits) in &perms_a {
            if perms_b.get(path) != Some(bits) {
                paths.insert(path.clone());
            }
        }
        for (path, bits) in perms_b {
            if perms_a.get(path) != Some(bits) {
                paths.insert(path.clone());
            }
        }
    }
    Ok(paths)
}

/// Fills in line counts for restored text files.
fn count_lines(store: &Store, changes: &mut [Change]) -> Result<(), CheckpointError> {
    let text_oid = |state: &Option<State>| {
        state
            .as_ref()
            .filter(|s| !s.entry.is_link())
            .map(|s| s.entry.oid.clone())
    };
    let mut oids: Vec<String> = Vec::new();
    for change in changes.iter() {
        oids.extend(text_oid(&change.current));
        oids.extend(text_oid(&change.target));
    }
    let refs: Vec<&str> = oids.iter().map(String::as_str).collect();
    let blobs = store.blobs(&refs)?;
    let empty = Vec::new();
    for change in changes.iter_mut() {
        if change.action == Action::Mode {
            continue;
        }
        let old = text_oid(&change.current).map_or(Some(&empty), |oid| blobs.get(&oid));
        let new = text_oid(&change.target).map_or(Some(&empty), |oid| blobs.get(&oid));
        if let (Some(old), Some(new)) = (old, new) {
            change.lines = line_counts(old, new);
        }
    }
    Ok(())
}

/// Lines added and removed from `old` to `new`; `None` for binary or very large files.
pub(crate) fn line_counts(old: &[u8], new: &[u8]) -> Option<(usize, usize)> {
    let text = |b: &[u8]| b.len() <= MAX_COUNTED_BYTES && !b.contains(&0);
    if !text(old) || !text(new) {
        return None;
    }
    let old = String::from_utf8_lossy(old);
    let new = String::from_utf8_lossy(new);
    let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    Some((added, removed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(oid: &str, perms: u32) -> State {
        State {
            entry: Entry {
                mode: 0o100_644,
                oid: oid.into(),
            },
            perms,
        }
    }

    #[test]
    fn actions_by_what_is_there_and_what_was() {
        let a = state("a", 0o644);
        assert_eq!(action(None, None), None);
        assert_eq!(action(Some(&a), Some(&a)), None);
        assert_eq!(action(Some(&a), None), Some(Action::Remove));
        assert_eq!(action(None, Some(&a)), Some(Action::Recreate));
        assert_eq!(
            action(Some(&a), Some(&state("b", 0o644))),
            Some(Action::Restore)
        );
        assert_eq!(
            action(Some(&a), Some(&state("a", 0o600))),
            Some(Action::Mode)
        );
        // `chmod +x` changes git's mode too: still only a mode change.
        let executable = State {
            entry: Entry {
                mode: 0o100_755,
                oid: "a".into(),
            },
            perms: 0o755,
        };
        assert_eq!(action(Some(&executable), Some(&a)), Some(Action::Mode));
        // A link and a file with the same bytes (the link's target) are not.
        let link = State {
            entry: Entry {
                mode: 0o120_000,
                oid: "a".into(),
            },
            perms: 0,
        };
        assert_eq!(action(Some(&link), Some(&a)), Some(Action::Restore));
    }

    #[test]
    fn line_counts_for_text_only() {
        assert_eq!(line_counts(b"a\nb\n", b"a\nc\nd\n"), Some((2, 1)));
        assert_eq!(line_counts(b"", b"x\n"), Some((1, 0)));
        assert_eq!(line_counts(b"\0bin", b"x"), None);
    }
}
