//! `read_file` on a directory: its entries, one per line, so roles without `bash` (reviewer,
//! planner) can still find their way around a workspace.
//!
//! The format is `ls -p`-like: names sorted bytewise, a directory with a trailing `/`, a
//! symlink as `name -> target`; control and invisible characters in a name are escaped
//! (`\n`, `\u001b`), so one name is always one line. Hidden entries are included. Memory
//! and output stay bounded: the [`MAX_ENTRIES`] first names in sorted order are kept (the
//! rest are counted), so the listing is always a gap-free prefix of the sorted directory, and
//! the text stops at the caller's character budget with a note saying how many entries were
//! left out.

use std::collections::BinaryHeap;
use std::fs;

use super::ToolError;
use super::paths::Resolved;
use super::textfile::io_error;

/// Entries of one directory kept for the listing; the rest are only counted.
pub(crate) const MAX_ENTRIES: usize = 2000;

/// The listing of the directory at `r.real`, at most `max_chars` characters plus a note.
///
/// # Errors
/// `io error` when the directory cannot be read.
pub(crate) fn list(r: &Resolved, max_chars: usize) -> Result<String, ToolError> {
    let entries = fs::read_dir(&r.real).map_err(|e| io_error("cannot list", r, &e))?;
    // The smallest names seen so far; the largest of them is popped past the limit.
    let mut kept = BinaryHeap::new();
    let mut total = 0usize;
    for entry in entries {
        let entry = entry.map_err(|e| io_error("cannot list", r, &e))?;
        total += 1;
        kept.push(entry.file_name());
        if kept.len() > MAX_ENTRIES {
            kept.pop();
        }
    }
    let names: Vec<String> = kept
        .into_sorted_vec()
        .iter()
        .map(|name| describe(&r.real.join(name), name))
        .collect();
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

/// `name`, `name/` for a directory, `name -> target` for a symlink, with invisible
/// characters escaped.
fn describe(path: &std::path::Path, name: &std::ffi::OsStr) -> String {
    let name = crate::visible::escape_invisible(&name.to_string_lossy());
    match fs::symlink_metadata(path).map(|m| m.file_type()) {
        Ok(kind) if kind.is_dir() => format!("{name}/"),
        Ok(kind) if kind.is_symlink() => match fs::read_link(path) {
            Ok(target) => {
                let target = crate::visible::escape_invisible(&target.to_string_lossy());
                format!("{name} -> {target}")
            }
            Err(_) => name,
        },
        _ => name,
    }
}
