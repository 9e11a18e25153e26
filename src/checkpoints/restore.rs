//! Carrying out a [`Plan`]: every file is restored atomically (a temporary file in the same
//! directory, its permission bits set, synced, then renamed over the path), so a file is
//! either as it was or as it will be, never half written, whatever fails.
//!
//! Before touching a path the file on disk must still be what the plan saw (the user may
//! have saved in an editor while the prompt waited); otherwise it is left alone and
//! reported. Removals come first (deepest paths first, then directories they emptied that
//! the target does not hold), then writes (shallowest first). A path whose parent is a
//! symbolic link or a file is never written through: it fails with a message. Directories
//! are never removed with anything left in them.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::paths::RelPath;
use super::plan::{Action, Change, Plan, State};
use super::shadow::Store;

/// What a restore did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Report {
    /// Paths now as they were before the turns.
    pub(crate) restored: Vec<RelPath>,
    /// Conflicts left as they are (not confirmed).
    pub(crate) kept: Vec<RelPath>,
    /// Paths that could not be restored, with why; each is as it was before the restore.
    pub(crate) failed: Vec<(RelPath, String)>,
}

/// Applies `plan` to the workspace of `store`; conflicts too when `overwrite_conflicts`.
/// Call with the store's lock held.
pub(crate) fn apply(store: &Store, plan: &Plan, overwrite_conflicts: bool) -> Report {
    let mut report = Report::default();
    let mut chosen: Vec<&Change> = plan.changes.iter().collect();
    if overwrite_conflicts {
        chosen.extend(&plan.conflicts);
    } else {
        report.kept = plan.conflicts.iter().map(|c| c.path.clone()).collect();
    }
    let oids: Vec<&str> = chosen
        .iter()
        .flat_map(|c| [c.current.as_ref(), c.target.as_ref()])
        .flatten()
        .map(|s| s.entry.oid.as_str())
        .collect();
    let blobs = match store.blobs(&oids) {
        Ok(blobs) => blobs,
        Err(error) => {
            report.failed = chosen
                .iter()
                .map(|c| (c.path.clone(), error.to_string()))
                .collect();
            return report;
        }
    };
    let root = store.workspace();
    let mut removals: Vec<&Change> = chosen
        .iter()
        .copied()
        .filter(|c| c.target.is_none())
        .collect();
    removals.sort_by_key(|c| std::cmp::Reverse(c.path.depth()));
    let mut writes: Vec<&Change> = chosen
        .iter()
        .copied()
        .filter(|c| c.target.is_some())
        .collect();
    writes.sort_by_key(|c| c.path.depth());
    for change in removals {
        let result = unchanged(root, change, &blobs).and_then(|()| remove(root, change, plan));
        settle(&mut report, change, result);
    }
    for change in writes {
        let result = unchanged(root, change, &blobs).and_then(|()| write(root, change, &blobs));
        settle(&mut report, change, result);
    }
    report
}

fn settle(report: &mut Report, change: &Change, result: Result<(), String>) {
    match result {
        Ok(()) => report.restored.push(change.path.clone()),
        Err(why) => report.failed.push((change.path.clone(), why)),
    }
}

/// The parent directory of `path` under `root`, checked: every existing component is a real
/// directory (not a link, not a file).
fn safe_parent(root: &Path, path: &RelPath) -> Result<PathBuf, String> {
    let mut dir = root.to_path_buf();
    if let Some(parent) = path.parent() {
        for part in parent.as_bytes().split(|&b| b == b'/') {
            dir.push(std::ffi::OsStr::from_bytes(part));
            match std::fs::symlink_metadata(&dir) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => {
                    return Err(format!(
                        "`{}` is in the way (a file or link where a directory was)",
                        dir.strip_prefix(root).unwrap_or(&dir).display()
                    ));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e.to_string()),
            }
        }
    }
    Ok(dir)
}

/// Whether the path on disk is still what the plan saw as current.
fn unchanged(root: &Path, change: &Change, blobs: &HashMap<String, Vec<u8>>) -> Result<(), String> {
    let parent = safe_parent(root, &change.path)?;
    let full = change.path.under(root);
    debug_assert!(full.starts_with(&parent));
    let moved = || "it changed since the summary was shown; left as it is".to_string();
    let meta = match std::fs::symlink_metadata(&full) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.to_string()),
    };
    match (&change.current, meta) {
        (None, None) => Ok(()),
        (None, Some(_)) | (Some(_), None) => Err(moved()),
        (Some(state), Some(meta)) => {
            let expected = blobs.get(&state.entry.oid).ok_or_else(moved)?;
            let same = if state.entry.is_link() {
                meta.file_type().is_symlink()
                    && std::fs::read_link(&full)
                        .is_ok_and(|t| t.as_os_str().as_bytes() == expected.as_slice())
            } else {
                meta.is_file()
                    && meta.len() == expected.len() as u64
                    && meta.permissions().mode() & 0o7777 == state.perms
                    && std::fs::read(&full).is_ok_and(|b| &b == expected)
            };
            if same { Ok(()) } else { Err(moved()) }
        }
    }
}

/// Removes a file or link the turns created, then the directories that leaves empty and
/// the target does not hold.
fn remove(root: &Path, change: &Change, plan: &Plan) -> Result<(), String> {
    let full = change.path.under(root);
    std::fs::remove_file(&full).map_err(|e| e.to_string())?;
    let mut dir = change.path.parent();
    while let Some(rel) = dir {
        if plan.target_dirs.contains(&rel) || std::fs::remove_dir(rel.under(root)).is_err() {
            break;
        }
        dir = rel.parent();
    }
    Ok(())
}

/// Writes the target state of `change` atomically.
fn write(root: &Path, change: &Change, blobs: &HashMap<String, Vec<u8>>) -> Result<(), String> {
    let Some(target) = &change.target else {
        return Ok(());
    };
    let full = change.path.under(root);
    if change.action == Action::Mode {
        return std::fs::set_permissions(&full, PermissionsExt::from_mode(target.perms))
            .map_err(|e| e.to_string());
    }
    let bytes = blobs
        .get(&target.entry.oid)
        .ok_or_else(|| format!("snapshot object {} is missing", target.entry.oid))?;
    let dir = safe_parent(root, &change.path)?;
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    // The parents may have been made just now; check again that none is a link.
    safe_parent(root, &change.path)?;
    let temp = temp_path(&dir, &full);
    let written = if target.entry.is_link() {
        std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(bytes), &temp)
            .map_err(|e| e.to_string())
    } else {
        write_file(&temp, bytes, target)
    };
    let result = written.and_then(|()| std::fs::rename(&temp, &full).map_err(|e| e.to_string()));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

fn write_file(temp: &Path, bytes: &[u8], target: &State) -> Result<(), String> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(temp)
        .map_err(|e| e.to_string())?;
    file.write_all(bytes).map_err(|e| e.to_string())?;
    file.set_permissions(PermissionsExt::from_mode(target.perms))
        .map_err(|e| e.to_string())?;
    file.sync_all().map_err(|e| e.to_string())
}

/// `.<name>.agent-restore-<pid>-<n>` beside the file.
fn temp_path(dir: &Path, full: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = full
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(40).collect::<String>())
        .unwrap_or_default();
    dir.join(format!(
        ".{name}.agent-restore-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}
