//! Atomic file replacement for the writing tools (SPEC §4.1: "atomic (temp file + rename);
//! keeps permissions").
//!
//! The new content goes to a temporary file in the target's own directory (same file system,
//! so the rename is atomic), is flushed to disk, gets the old file's permission bits (or, for
//! a new file, `0666` minus the process umask, like any editor), and is renamed over the
//! target. A reader sees the old file or the new one, never a half-written one; on any error
//! the temporary file is removed and the target is untouched. Renaming replaces the directory
//! entry, so a hard link to the old file keeps the old content (as with most editors).

use std::fs::{self, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Umask assumed when `/proc/self/status` does not say.
const DEFAULT_UMASK: u32 = 0o022;

/// Replaces (or creates) the file at `path` with `bytes`; the parent directory must exist.
///
/// # Errors
/// The I/O error of creating, writing, syncing or renaming the temporary file.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy());
    let permissions = match fs::metadata(path) {
        Ok(meta) => meta.permissions(),
        Err(_) => Permissions::from_mode(0o666 & !umask()),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().set_permissions(permissions)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The process umask, read from `/proc/self/status` (reading it with `umask(2)` would change
/// it for every thread for a moment).
fn umask() -> u32 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(DEFAULT_UMASK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn replaces_and_keeps_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, Permissions::from_mode(0o751)).unwrap();
        write(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o751
        );
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left behind");
    }

    #[test]
    fn new_files_get_the_umask_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.txt");
        write(&path, b"x").unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask());
    }

    #[test]
    fn a_failed_write_leaves_the_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let err = write(&dir.path().join("missing/x.txt"), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
