//! `read_file` on a directory: its entries, one per line, so roles without `bash` (reviewer,
//! planner) can still find their way around a workspace.
//!
//! The format is `ls -p`-like: names sorted bytewise, a directory with a trailing `/`, a
//! symlink as `name -> target`. Hidden entries are included. Memory and output stay bounded:
//! at most [`MAX_ENTRIES`] names are kept (the rest are counted), and the text stops at the
//! caller's character budget with a note saying how many entries were left out.

use std::fs;

use super::ToolError;
use super::paths::Resolved;
use super::textfile::io_error;

/// Entries of one directory kept for the listing; the rest are only counted.
pub const MAX_ENTRIES: usize = 2000;

/// The listing of the directory at `r.real`, at most `max_chars` characters plus a note.
///
/// # Errors
/// `io error` when the directory cannot be read.
pub fn list(r: &Resolved, max_chars: usize) -> Result<String, ToolError> {
    let entries = fs::read_dir(&r.real).map_err(|e| io_error("cannot list", r, &e))?;
    let mut names = Vec::new();
    let mut total = 0usize;
    for entry in entries {
        let entry = entry.map_err(|e| io_error("cannot list", r, &e))?;
        total += 1;
        if names.len() < MAX_ENTRIES {
            names.push(describe(&entry));
        }
    }
    names.sort();
    let shown = r.shown.trim_end_matches('/');
    let mut text = match total {
        0 => return Ok(format!("[`{shown}/` is an empty directory]")),
        1 => format!("`{shown}/` (directory, 1 entry):\n"),
        n => format!("`{shown}/` (directory, {n} entries):\n"),
    };
    let mut listed = 0;
    for name in &names {
        if text.len() + name.len() + 1 > max_chars {
            break;
        }
        text.push_str(name);
        text.push('\n');
        listed += 1;
    }
    if listed < total {
        text.push_str(&format!(
            "[{} more entries not shown; read a subdirectory, or list with a pattern using bash \
             where the role allows it]",
            total - listed
        ));
    }
    Ok(text.trim_end().to_string())
}

/// `name`, `name/` for a directory, `name -> target` for a symlink.
fn describe(entry: &fs::DirEntry) -> String {
    let name = entry.file_name().to_string_lossy().into_owned();
    match entry.file_type() {
        Ok(kind) if kind.is_dir() => format!("{name}/"),
        Ok(kind) if kind.is_symlink() => match fs::read_link(entry.path()) {
            Ok(target) => format!("{name} -> {}", target.display()),
            Err(_) => name,
        },
        _ => name,
    }
}
