//! What a snapshot captures: a walk of the workspace.
//!
//! Rules (issue 16):
//! - `.gitignore` files (nested ones too, with git's precedence, each repository's rules
//!   stopping at its own root) and `.git/info/exclude` are honoured; the user's global
//!   excludes file is not read. A workspace that is not a git repository still honours its
//!   `.gitignore` files.
//! - Every `.git` (directory or file: the top-level repository, nested repositories,
//!   submodules) is left out, in any letter case (git refuses such paths).
//! - Symbolic links are captured as links (their target text) and never followed, so a link
//!   out of the workspace or a link loop costs nothing.
//! - Files over the size cap, files that cannot be read, and sockets, FIFOs and devices are
//!   not captured; each is listed as a [`Skipped`] entry that says why (whether a file can
//!   be read is checked by the snapshot, and only for files it has to read).
//! - Files inside nested repositories are captured like any other file (git itself would
//!   record only a link to the nested repository's commit).

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::index::Stat;
use super::paths::RelPath;

/// Why a path was not captured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub(crate) enum SkipReason {
    /// Larger than `[checkpoints] max_file_bytes`.
    TooLarge { bytes: u64, cap: u64 },
    /// Could not be read (permissions, an unreadable directory, an I/O error).
    Unreadable { message: String },
    /// A socket, FIFO or device: not a file git can hold.
    Special,
}

/// A path the snapshot does not hold, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Skipped {
    pub(crate) path: RelPath,
    #[serde(flatten)]
    pub(crate) reason: SkipReason,
}

impl Skipped {
    /// One line for the user: ``big.bin` (2.1 GB) is over the 10 MB cap``.
    pub(crate) fn note(&self) -> String {
        let path = self.path.shown();
        match &self.reason {
            SkipReason::TooLarge { bytes, cap } => format!(
                "`{path}` ({}) is over the {} cap",
                human_bytes(*bytes),
                human_bytes(*cap)
            ),
            SkipReason::Unreadable { message } => format!("`{path}` cannot be read: {message}"),
            SkipReason::Special => format!("`{path}` is a socket, FIFO or device"),
        }
    }
}

/// `2.1 GB`, `10 MB`, `512 B` (powers of 1000).
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 || value >= 10.0 || value.fract() < 0.05 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The result of one walk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    /// Files and symbolic links to capture (readable or not: only files that are new or
    /// changed since the last snapshot need reading, see [`readable`]).
    pub(crate) paths: Vec<RelPath>,
    /// Their stat data, in the same order.
    pub(crate) stats: Vec<Stat>,
    /// Permission bits of captured files whose bits are not the default for their git mode
    /// (0644, or 0755 for an executable): restored exactly.
    pub(crate) perms: BTreeMap<RelPath, u32>,
    pub(crate) skipped: Vec<Skipped>,
}

/// The permission bits git's mode implies: 0755 when any execute bit is set (git looks at
/// the owner's), else 0644.
pub(crate) fn default_perms(executable: bool) -> u32 {
    if executable { 0o755 } else { 0o644 }
}

/// Threads walking the tree at most (directories are read in parallel).
const MAX_THREADS: usize = 4;

impl Walk {
    /// Files and links to capture.
    pub fn files(&self) -> usize {
        self.paths.len()
    }
}

/// Walks `root`, capturing files up to `max_file_bytes` bytes; `None` when `stop` said so
/// (it is asked every 256 entries). The result is sorted by path.
pub fn walk(root: &Path, max_file_bytes: u64, stop: &(dyn Fn() -> bool + Sync)) -> Option<Walk> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS));
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .standard_filters(false)
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .threads(threads)
        .filter_entry(|entry| !entry.file_name().eq_ignore_ascii_case(".git"));
    let parts: Mutex<Vec<Walk>> = Mutex::new(Vec::new());
    let stopped = AtomicBool::new(false);
    builder.build_parallel().run(|| {
        let mut part = Part {
            walk: Walk::default(),
            parts: &parts,
        };
        let mut seen = 0usize;
        let stopped = &stopped;
        Box::new(move |result| {
            seen += 1;
            if seen.is_multiple_of(256) && stop() {
                stopped.store(true, Ordering::SeqCst);
                return ignore::WalkState::Quit;
            }
            match result {
                Ok(entry) if entry.depth() > 0 => {
                    visit(root, &entry, max_file_bytes, &mut part.walk);
                }
                Ok(_) => {}
                Err(error) => {
                    if let Some(path) = error_path(&error).and_then(|p| relative(root, p)) {
                        part.walk.skipped.push(Skipped {
                            path,
                            reason: SkipReason::Unreadable {
                                message: error_message(&error),
                            },
                        });
                    }
                }
            }
            ignore::WalkState::Continue
        })
    });
    if stopped.load(Ordering::SeqCst) {
        return None;
    }
    let parts = match parts.into_inner() {
        Ok(parts) => parts,
        Err(poisoned) => poisoned.into_inner(),
    };
    Some(merge(parts))
}

/// One thread's share of the walk, handed over when the thread is done with it.
struct Part<'a> {
    walk: Walk,
    parts: &'a Mutex<Vec<Walk>>,
}

impl Drop for Part<'_> {
    fn drop(&mut self) {
        let walk = std::mem::take(&mut self.walk);
        match self.parts.lock() {
            Ok(mut parts) => parts.push(walk),
            Err(poisoned) => poisoned.into_inner().push(walk),
        }
    }
}

/// The threads' shares as one walk, sorted by path.
fn merge(parts: Vec<Walk>) -> Walk {
    let mut files: Vec<(RelPath, Stat)> = Vec::new();
    let mut out = Walk::default();
    for part in parts {
        files.extend(part.paths.into_iter().zip(part.stats));
        out.perms.extend(part.perms);
        out.skipped.extend(part.skipped);
    }
    files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    out.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    (out.paths, out.stats) = files.into_iter().unzip();
    out
}

fn visit(root: &Path, entry: &ignore::DirEntry, max_file_bytes: u64, out: &mut Walk) {
    let Some(path) = relative(root, entry.path()) else {
        return;
    };
    let Some(kind) = entry.file_type() else {
        return;
    };
    if kind.is_dir() {
        return;
    }
    if kind.is_symlink() {
        if let Ok(meta) = entry.metadata() {
            out.stats.push(Stat::of(&meta));
            out.paths.push(path);
        }
        return;
    }
    if kind.is_socket() || kind.is_fifo() || kind.is_block_device() || kind.is_char_device() {
        out.skipped.push(Skipped {
            path,
            reason: SkipReason::Special,
        });
        return;
    }
    let meta = match entry.metadata() {
        Ok(meta) => meta,
        Err(error) => {
            out.skipped.push(Skipped {
                path,
                reason: SkipReason::Unreadable {
                    message: error_message(&error),
                },
            });
            return;
        }
    };
    if meta.len() > max_file_bytes {
        out.skipped.push(Skipped {
            path,
            reason: SkipReason::TooLarge {
                bytes: meta.len(),
                cap: max_file_bytes,
            },
        });
        return;
    }
    let perms = meta.permissions().mode() & 0o7777;
    if perms != default_perms(perms & 0o100 != 0) {
        out.perms.insert(path.clone(), perms);
    }
    out.stats.push(Stat::of(&meta));
    out.paths.push(path);
}

/// Whether this process may read `path` (`access(2)`, so ACLs count).
pub(crate) fn readable(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    unsafe { libc::access(c.as_ptr(), libc::R_OK) == 0 }
}

/// `path` relative to `root`, `/`-separated bytes.
fn relative(root: &Path, path: &Path) -> Option<RelPath> {
    let rest = path.strip_prefix(root).ok()?;
    let bytes = rest.as_os_str().as_bytes();
    (!bytes.is_empty()).then(|| RelPath(bytes.to_vec()))
}

fn error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child),
        ignore::Error::Partial(errors) => errors.iter().find_map(error_path),
        _ => None,
    }
}

/// The innermost message, without the path (shown separately).
fn error_message(error: &ignore::Error) -> String {
    match error {
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => error_message(err),
        ignore::Error::Io(io) => match io.kind() {
            std::io::ErrorKind::PermissionDenied => "permission denied".into(),
            _ => io.to_string(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn names(walk: &Walk) -> Vec<String> {
        let mut names: Vec<String> = walk.paths.iter().map(RelPath::shown).collect();
        names.sort();
        names
    }

    #[test]
    fn honours_gitignore_and_skips_every_git_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            (".gitignore", "*.log\nbuild/\n"),
            ("a.txt", "a"),
            ("x.log", "x"),
            ("build/out", "o"),
            (".git/HEAD", "ref"),
            (".git/info/exclude", "secret.txt\n"),
            ("secret.txt", "s"),
            ("nested/.git/HEAD", "ref"),
            ("nested/.gitignore", "inner.tmp\n"),
            ("nested/inner.tmp", "t"),
            ("nested/kept.txt", "k"),
            ("sub/.git", "gitdir: ../.git/modules/sub\n"),
            ("sub/file.rs", "f"),
            ("weird/.GIT/config", "c"),
        ] {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let walk = walk(root, 1000, &|| false).unwrap();
        assert_eq!(
            names(&walk),
            vec![
                ".gitignore",
                "a.txt",
                "nested/.gitignore",
                "nested/kept.txt",
                "sub/file.rs"
            ]
        );
        assert!(walk.skipped.is_empty(), "{:?}", walk.skipped);
    }

    #[test]
    fn links_are_captured_not_followed_and_big_files_are_noted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("d")).unwrap();
        symlink("/etc", root.join("out")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        symlink("..", root.join("d/up")).unwrap();
        std::fs::write(root.join("big"), vec![0u8; 2000]).unwrap();
        std::fs::write(root.join("run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(root.join("run.sh"), PermissionsExt::from_mode(0o750)).unwrap();
        let walk = walk(root, 1000, &|| false).unwrap();
        assert_eq!(names(&walk), vec!["d/up", "loop", "out", "run.sh"]);
        assert_eq!(
            walk.skipped,
            vec![Skipped {
                path: RelPath(b"big".to_vec()),
                reason: SkipReason::TooLarge {
                    bytes: 2000,
                    cap: 1000
                }
            }]
        );
        assert_eq!(walk.skipped[0].note(), "`big` (2 kB) is over the 1 kB cap");
        assert_eq!(walk.perms.get(&RelPath(b"run.sh".to_vec())), Some(&0o750));
    }

    #[test]
    fn a_walk_stops_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..600 {
            std::fs::write(dir.path().join(format!("f{i}")), "x").unwrap();
        }
        assert!(walk(dir.path(), 1000, &|| true).is_none());
        assert_eq!(walk(dir.path(), 1000, &|| false).unwrap().paths.len(), 600);
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(10_000_000), "10 MB");
        assert_eq!(human_bytes(2_147_483_648), "2.1 GB");
    }
}
