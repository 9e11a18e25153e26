//! [`FileTracker`]: what the agent last saw of each file, for stale-file refusal (SPEC §4.1:
//! "edits refuse a file changed on disk since the agent last read or wrote it").
//!
//! A [`Snapshot`] holds the size, the modification time and, for files up to
//! [`HASH_LIMIT`] bytes, a 64-bit FNV-1a hash of the content. A file is unchanged when the
//! size matches and the hash matches (content decides: a `touch` or a formatter that rewrote
//! identical bytes is not a change, a same-size same-second rewrite is); files too large to
//! hash fall back to the modification time. Keys are resolved paths
//! ([`super::paths::Resolved::real`]). The tracker is shared by the tools of one session,
//! guarded by a mutex, and holds at most [`MAX_TRACKED`] files: the least recently recorded
//! is forgotten first, and a forgotten file is treated as never read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// Files remembered at once.
pub(crate) const MAX_TRACKED: usize = 4096;
/// Largest file, in bytes, whose content is hashed (and that `str_replace` edits).
pub(crate) const HASH_LIMIT: u64 = 16 * 1024 * 1024;

/// What the agent saw of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Snapshot {
    /// Size in bytes.
    pub(crate) len: u64,
    pub(crate) modified: Option<SystemTime>,
    /// FNV-1a 64 of the content; `None` for files over [`HASH_LIMIT`].
    pub(crate) hash: Option<u64>,
}

impl Snapshot {
    /// The snapshot of a file whose whole content is `bytes`.
    pub(crate) fn of_bytes(bytes: &[u8], modified: Option<SystemTime>) -> Self {
        Self {
            len: bytes.len() as u64,
            modified,
            hash: Some(fnv1a(bytes)),
        }
    }

    /// A snapshot from metadata alone (files too large to hash).
    pub(crate) fn of_metadata(meta: &std::fs::Metadata) -> Self {
        Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            hash: None,
        }
    }

    /// Whether `now` shows the same file content as `self`.
    pub(crate) fn same_as(&self, now: &Snapshot) -> bool {
        if self.len != now.len {
            return false;
        }
        match (self.hash, now.hash) {
            (Some(a), Some(b)) => a == b,
            _ => self.modified.is_some() && self.modified == now.modified,
        }
    }
}

/// FNV-1a, 64 bits (Fowler–Noll–Vo): deterministic and streaming; a change detector, not a
/// defence against an adversary.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))
}

/// How a file stands against what the agent saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Freshness {
    /// The agent never read or wrote it (or forgot it).
    Unseen,
    /// Unchanged since the agent last read or wrote it.
    Fresh,
    /// Changed on disk since then.
    Stale,
}

#[derive(Debug, Default)]
struct Entries {
    map: HashMap<PathBuf, (Snapshot, u64)>,
    /// Increases with every record; the smallest stamp is evicted first.
    clock: u64,
}

/// What the agent last saw of each file it read or wrote. Thread-safe and bounded.
#[derive(Debug, Default)]
pub struct FileTracker {
    entries: Mutex<Entries>,
}

impl FileTracker {
    /// Remembers that the agent saw `snapshot` of `path` (a resolved path).
    pub(crate) fn record(&self, path: &Path, snapshot: Snapshot) {
        let mut entries = self.lock();
        entries.clock += 1;
        let stamp = entries.clock;
        if !entries.map.contains_key(path) && entries.map.len() >= MAX_TRACKED {
            let oldest = entries
                .map
                .iter()
                .min_by_key(|(_, (_, stamp))| *stamp)
                .map(|(p, _)| p.clone());
            if let Some(oldest) = oldest {
                entries.map.remove(&oldest);
            }
        }
        entries.map.insert(path.to_path_buf(), (snapshot, stamp));
    }

    /// After `PostToolUse` hooks ran for a call that wrote `wrote`: when the file's content
    /// is no longer what the tool wrote (a formatter rewrote it), records the file as it is
    /// now, so the next edit is not refused as stale, and returns the line telling the
    /// model. `None` when the file is as the tool left it, is no longer tracked, or cannot
    /// be read (the next edit then decides). A change by the user's own hook right after
    /// the agent's edit is not a foreign change (as in Claude Code).
    pub(crate) fn adopt_hook_change(&self, wrote: &super::Wrote) -> Option<String> {
        let meta = std::fs::metadata(&wrote.real).ok()?;
        if !meta.is_file() {
            return None;
        }
        let now = if meta.len() <= HASH_LIMIT {
            let bytes = std::fs::read(&wrote.real).ok()?;
            Snapshot::of_bytes(&bytes, meta.modified().ok())
        } else {
            Snapshot::of_metadata(&meta)
        };
        if self.check(&wrote.real, &now) != Freshness::Stale {
            return None;
        }
        self.record(&wrote.real, now);
        Some(format!(
            "A PostToolUse hook changed `{}` after this edit (formatter?): read it before an \
             edit that depends on its exact text.",
            wrote.shown
        ))
    }

    /// Compares the file as it is `now` with what the agent last saw.
    pub(crate) fn check(&self, path: &Path, now: &Snapshot) -> Freshness {
        match self.lock().map.get(path) {
            None => Freshness::Unseen,
            Some((seen, _)) if seen.same_as(now) => Freshness::Fresh,
            Some(_) => Freshness::Stale,
        }
    }

    /// Files remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().map.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        match self.entries.lock() {
            Ok(entries) => entries,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::time::Duration;

    fn at(secs: u64) -> Option<SystemTime> {
        Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
    }

    #[test]
    fn content_decides_freshness() {
        let tracker = FileTracker::default();
        let path = Path::new("/w/a.rs");
        assert_eq!(
            tracker.check(path, &Snapshot::of_bytes(b"a", at(1))),
            Freshness::Unseen
        );
        tracker.record(path, Snapshot::of_bytes(b"fn a()", at(1)));
        // Touched, same bytes: fresh. Same size and time, other bytes: stale.
        assert_eq!(
            tracker.check(path, &Snapshot::of_bytes(b"fn a()", at(9))),
            Freshness::Fresh
        );
        assert_eq!(
            tracker.check(path, &Snapshot::of_bytes(b"fn b()", at(1))),
            Freshness::Stale
        );
        assert_eq!(
            tracker.check(path, &Snapshot::of_bytes(b"fn a() ", at(1))),
            Freshness::Stale
        );
    }

    #[test]
    fn unhashed_files_compare_times() {
        let big = |secs| Snapshot {
            len: HASH_LIMIT + 1,
            modified: at(secs),
            hash: None,
        };
        assert!(big(1).same_as(&big(1)));
        assert!(!big(1).same_as(&big(2)));
        let unknown = Snapshot {
            modified: None,
            ..big(1)
        };
        assert!(!unknown.same_as(&unknown));
    }

    #[test]
    fn bounded_and_evicts_the_oldest() {
        let tracker = FileTracker::default();
        let snap = Snapshot::of_bytes(b"x", at(1));
        for i in 0..=MAX_TRACKED {
            tracker.record(&PathBuf::from(format!("/w/{i}")), snap);
        }
        assert_eq!(tracker.len(), MAX_TRACKED);
        assert_eq!(tracker.check(Path::new("/w/0"), &snap), Freshness::Unseen);
        assert_eq!(tracker.check(Path::new("/w/1"), &snap), Freshness::Fresh);
    }

    #[test]
    fn shared_between_threads() {
        let tracker = std::sync::Arc::new(FileTracker::default());
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let tracker = std::sync::Arc::clone(&tracker);
                std::thread::spawn(move || {
                    for i in 0..100 {
                        let path = PathBuf::from(format!("/w/{t}/{i}"));
                        tracker.record(&path, Snapshot::of_bytes(b"x", None));
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(tracker.len(), 400);
    }
}
