//! Checks the writing tools make before touching a file: unchanged since the agent saw it
//! (SPEC §4.1 stale-file rule, via the [`super::FileTracker`]), writable, and present (with
//! a "did you mean" for a mistyped name).

use std::fs;

use super::ToolErrorKind;
use super::paths::Resolved;
use super::tracker::{Freshness, Snapshot};
use super::{ToolContext, ToolError};

/// Refuses to change the file at `r` when it changed since the agent last saw it, or, with
/// `require_seen`, when the agent never saw it and it is not empty.
///
/// # Errors
/// `stale file` or `not read`, telling the model to re-read the file.
pub(crate) fn check_fresh(
    ctx: &ToolContext<'_>,
    r: &Resolved,
    now: &Snapshot,
    require_seen: bool,
) -> Result<(), ToolError> {
    match ctx.files.check(&r.real, now) {
        Freshness::Fresh => Ok(()),
        Freshness::Unseen if !require_seen || now.len == 0 => Ok(()),
        Freshness::Unseen => Err(ToolError::new(
            ToolErrorKind::NotRead,
            format!(
                "`{}` already exists and has not been read in this session; read it first \
                 (read_file), or change part of it with str_replace",
                r.shown
            ),
        )),
        Freshness::Stale => Err(ToolError::new(
            ToolErrorKind::StaleFile,
            format!(
                "{} changed on disk since last read; re-read it (read_file) and retry",
                r.shown
            ),
        )),
    }
}

/// Refuses a file whose permissions forbid writing.
///
/// # Errors
/// `read-only` with the mode.
pub(crate) fn check_writable(r: &Resolved, meta: &fs::Metadata) -> Result<(), ToolError> {
    use std::os::unix::fs::PermissionsExt;
    if !meta.permissions().readonly() {
        return Ok(());
    }
    Err(ToolError::new(
        ToolErrorKind::ReadOnly,
        format!(
            "`{}` is read-only (mode {:o}); leave it alone, or ask the user to make it writable",
            r.shown,
            meta.permissions().mode() & 0o7777
        ),
    ))
}

/// The error for a path where nothing exists, naming similar files in the same directory.
pub(crate) fn not_found(r: &Resolved, fix: &str) -> ToolError {
    let mut message = format!("`{}` does not exist", r.shown);
    let similar = similar_names(r);
    if !similar.is_empty() {
        message.push_str(&format!(" (did you mean {}?)", similar.join(", ")));
    }
    message.push_str(&format!("; {fix}"));
    ToolError::new(ToolErrorKind::NotFound, message)
}

/// Up to 3 siblings of `r` whose names differ only in case or extension.
fn similar_names(r: &Resolved) -> Vec<String> {
    let (Some(dir), Some(name)) = (r.real.parent(), r.real.file_name()) else {
        return Vec::new();
    };
    let name = name.to_string_lossy().to_lowercase();
    let stem = |n: &str| n.split('.').next().unwrap_or("").to_string();
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            let lower = n.to_lowercase();
            lower == name || (!stem(&name).is_empty() && stem(&lower) == stem(&name))
        })
        .map(|n| {
            let shown = std::path::Path::new(&r.shown).with_file_name(&n);
            format!("`{}`", shown.display())
        })
        .collect();
    found.sort();
    found.truncate(3);
    found
}
