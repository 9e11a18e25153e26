//! Reading the shadow index's stat cache, so a snapshot of an unchanged tree asks git
//! nothing: a file whose `lstat` matches its index entry (and is not racily clean) is known
//! to be unchanged; only new and changed paths go to `git update-index`.
//!
//! Format: git's index, versions 2 and 3 (gitformat-index(5)): a 12-byte header (`DIRC`,
//! version, entry count), then entries of 32-bit big-endian ctime s/ns, mtime s/ns, dev,
//! ino, mode, uid, gid, size, a 20-byte SHA-1 object id, 16-bit flags (3: plus 16-bit
//! extended flags when flag 0x4000 is set), the path, and NUL padding to a multiple of 8.
//! Any other version or anything unexpected makes [`read`] return `None`, and every path
//! then goes to git (slower, never wrong).
//!
//! The comparison follows git's `ie_match_stat`: times with nanoseconds, inode, owner,
//! size (each truncated to 32 bits as git stores them), file type and executable bit. An
//! entry whose mtime is not older than the index file is racily clean (a write in the
//! same instant would not show in the stat data) and is always handed to git.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The stat data git keeps for a file, as git truncates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) ctime: (u32, u32),
    pub(crate) mtime: (u32, u32),
    pub(crate) ino: u32,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) size: u32,
    /// Git's mode: `0o100644`, `0o100755` or `0o120000`.
    pub(crate) mode: u32,
}

impl Stat {
    /// The stat data of a file or link, from its `lstat` metadata.
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        let mode = if meta.file_type().is_symlink() {
            0o120_000
        } else if meta.mode() & 0o100 != 0 {
            0o100_755
        } else {
            0o100_644
        };
        Self {
            ctime: (meta.ctime() as u32, meta.ctime_nsec() as u32),
            mtime: (meta.mtime() as u32, meta.mtime_nsec() as u32),
            ino: meta.ino() as u32,
            uid: meta.uid(),
            gid: meta.gid(),
            size: meta.size() as u32,
            mode,
        }
    }
}

/// The index's entries by path, and the index file's own mtime.
pub(crate) struct Cache {
    entries: HashMap<Vec<u8>, Stat>,
    written: (u32, u32),
}

impl Cache {
    /// Whether the file at `path` with `stat` is surely what the index holds.
    pub(crate) fn unchanged(&self, path: &[u8], stat: &Stat) -> bool {
        self.entries
            .get(path)
            .is_some_and(|entry| entry == stat && entry.mtime < self.written)
    }

    /// Every path in the index.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.entries.keys()
    }
}

/// Reads the index at `path`; `None` when it is missing or not a version 2 or 3 index.
pub(crate) fn read(path: &Path) -> Option<Cache> {
    let meta = std::fs::metadata(path).ok()?;
    let bytes = std::fs::read(path).ok()?;
    let written = (meta.mtime() as u32, meta.mtime_nsec() as u32);
    parse(&bytes).map(|entries| Cache { entries, written })
}

fn parse(bytes: &[u8]) -> Option<HashMap<Vec<u8>, Stat>> {
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = word(4)?;
    if version != 2 && version != 3 {
        return None;
    }
    let count = word(8)? as usize;
    let mut entries = HashMap::with_capacity(count);
    let mut at = 12;
    for _ in 0..count {
        let flags = u16::from_be_bytes(bytes.get(at + 60..at + 62)?.try_into().ok()?);
        let extended = version == 3 && flags & 0x4000 != 0;
        let name_at = at + 62 + if extended { 2 } else { 0 };
        let name_len = match usize::from(flags & 0x0fff) {
            0x0fff => bytes.get(name_at..)?.iter().position(|&b| b == 0)?,
            len => len,
        };
        let path = bytes.get(name_at..name_at + name_len)?.to_vec();
        let stat = Stat {
            ctime: (word(at)?, word(at + 4)?),
            mtime: (word(at + 8)?, word(at + 12)?),
            ino: word(at + 20)?,
            mode: word(at + 24)?,
            uid: word(at + 28)?,
            gid: word(at + 32)?,
            size: word(at + 36)?,
        };
        // Stage bits: a conflicted entry never happens in the shadow index; skip it anyway.
        if flags & 0x3000 == 0 {
            entries.insert(path, stat);
        }
        let len = name_at + name_len - at;
        at += (len + 8) & !7;
    }
    Some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &[u8], mtime: u32, extended: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for value in [1u32, 2, mtime, 4, 5, 6, 0o100_644, 7, 8, 9] {
            out.extend_from_slice(&value.to_be_bytes());
        }
        out.extend_from_slice(&[0xab; 20]);
        let flags = path.len() as u16 | if extended { 0x4000 } else { 0 };
        out.extend_from_slice(&flags.to_be_bytes());
        if extended {
            out.extend_from_slice(&[0, 0]);
        }
        out.extend_from_slice(path);
        let pad = 8 - out.len() % 8;
        out.extend(std::iter::repeat_n(0, pad));
        out
    }

    #[test]
    fn reads_entries_of_versions_2_and_3() {
        for version in [2u32, 3] {
            let mut bytes = b"DIRC".to_vec();
            bytes.extend_from_slice(&version.to_be_bytes());
            bytes.extend_from_slice(&2u32.to_be_bytes());
            bytes.extend(entry(b"a\nb", 10, false));
            bytes.extend(entry(b"dir/file.rs", 20, version == 3));
            bytes.extend_from_slice(&[0; 20]);
            let entries = parse(&bytes).unwrap();
            assert_eq!(entries.len(), 2);
            let stat = entries[b"dir/file.rs".as_slice()];
            assert_eq!((stat.mtime, stat.ino, stat.size), ((20, 4), 6, 9));
            let cache = Cache {
                entries,
                written: (15, 0),
            };
            assert!(cache.unchanged(b"a\nb", &cache.entries[b"a\nb".as_slice()]));
            // Not older than the index itself: racily clean, so not trusted.
            assert!(!cache.unchanged(b"dir/file.rs", &stat));
        }
        assert!(parse(b"DIRC\0\0\0\x04\0\0\0\0").is_none());
        assert!(parse(b"nope").is_none());
    }

    #[test]
    fn reads_the_index_git_writes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("f"), "x").unwrap();
        let status = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(root)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status();
        if !status.is_ok_and(|s| s.success()) {
            eprintln!("skipped: no git");
            return;
        }
        let added = std::process::Command::new("git")
            .args(["add", "f"])
            .current_dir(root)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap();
        assert!(added.success());
        let cache = read(&root.join(".git/index")).unwrap();
        let meta = std::fs::symlink_metadata(root.join("f")).unwrap();
        assert_eq!(cache.entries[b"f".as_slice()], Stat::of(&meta));
    }
}
