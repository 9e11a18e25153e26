//! A temp directory the sandbox does not make writable, for tests that check a write outside
//! the workspace is blocked.
//!
//! `CARGO_TARGET_TMPDIR` is used when it is not under a directory every confined command may
//! write (`/tmp`, `/dev/shm`, `$TMPDIR`); a checkout under `/tmp` (a fresh clone, some CI
//! runners) would otherwise make every "outside" path writable and the escape tests fail.
//! `/var/tmp` is the fallback.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// Directories writable inside the sandbox whatever the workspace is.
fn sandbox_writable() -> Vec<PathBuf> {
    let mut roots = vec![PathBuf::from("/tmp"), PathBuf::from("/dev/shm")];
    if let Some(dir) = std::env::var_os("TMPDIR") {
        roots.push(PathBuf::from(dir));
    }
    roots
        .into_iter()
        .map(|root| root.canonicalize().unwrap_or(root))
        .collect()
}

/// Whether `dir` (canonical) is inside a directory the sandbox always lets commands write.
pub(crate) fn is_sandbox_writable(dir: &Path) -> bool {
    sandbox_writable().iter().any(|root| dir.starts_with(root))
}

/// The parent for "outside the workspace" temp directories.
pub(crate) fn outside_root() -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let canonical = target.canonicalize().unwrap_or_else(|_| target.clone());
    if is_sandbox_writable(&canonical) {
        PathBuf::from("/var/tmp")
    } else {
        canonical
    }
}

/// A new temp directory outside every sandbox-writable root.
pub(crate) fn outside_dir() -> TempDir {
    tempfile::tempdir_in(outside_root()).expect("temp dir outside the sandbox-writable roots")
}
