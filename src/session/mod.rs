//! Resumable sessions (SPEC §8.3): every message appended to
//! `$AGENT_HOME/sessions/<id>.jsonl` as it happens, flushed, and read back on `--resume`.
//!
//! - [`record`]: the line format.
//! - [`log`]: the append-only writer.
//! - [`mod@load`]: replay, skipping torn or corrupt lines, and repair of interrupted calls.
//! - [`mod@list`]: listing and choosing the session to resume.
//! - [`handle`]: the running session's log, shared by the agent and its hooks.
//! - [`turns`]: turn numbers, and where a turn starts in the history.
//!
//! Session ids are `YYYYMMDD-HHMMSS-xxxx` (UTC start time and 4 hex digits), so they sort by
//! start time and are safe as file names.

pub(crate) mod handle;
pub mod list;
pub mod load;
pub(crate) mod log;
pub(crate) mod record;
pub(crate) mod turns;

use std::path::PathBuf;

pub(crate) use handle::SessionHandle;
pub use list::{SessionInfo, find, list};
pub use load::{Loaded, load};
pub(crate) use log::SessionLog;
pub(crate) use record::{Header, Record};
pub(crate) use turns::Turns;

/// What can go wrong finding, reading or writing a session. None of these end a running
/// session: a write failure is shown once and the session goes on unsaved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("no session `{0}`; run `agent sessions` to list them")]
    NotFound(String),
    #[error("`{id}` matches {count} sessions; give more of the id (see `agent sessions`)")]
    Ambiguous { id: String, count: usize },
    #[error("no saved session for `{}`; start one with `agent`, or pick one from `agent sessions` with --resume ID", .0.display())]
    NoneHere(PathBuf),
    #[error("`{0}` is not a session id; ids look like 20261130-142501-1a2b (see `agent sessions`)")]
    BadId(String),
    #[error("cannot save the session to `{}`: {message}; the session goes on without being saved", path.display())]
    Io { path: PathBuf, message: String },
    #[error("session file `{}` cannot be resumed: {message}; run `agent sessions` to list the sessions that can", path.display())]
    Unreadable { path: PathBuf, message: String },
}

/// Whether `text` can be (a prefix of) a session id: starts with a digit, then only ASCII
/// letters, digits, `-` and `_`.
pub(crate) fn looks_like_id(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Splits `--resume VALUE PROMPT...`: clap gives `--resume` an optional value, so
/// `agent --resume "fix the test"` arrives as an id. A value that cannot be a session id is
/// the start of the prompt instead, and `--resume` means the newest session.
pub(crate) fn split_resume_value(
    resume: Option<String>,
    mut prompt: Vec<String>,
) -> (Option<String>, Vec<String>) {
    match resume {
        Some(value) if !value.is_empty() && !looks_like_id(&value) => {
            prompt.insert(0, value);
            (Some(String::new()), prompt)
        }
        other => (other, prompt),
    }
}

pub(crate) use crate::clock::now_secs;

/// A new session id for a session started at `secs` (Unix seconds).
pub(crate) fn new_id(secs: u64) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let noise = (u64::from(nanos) ^ (u64::from(std::process::id()) << 16)) & 0xffff;
    let date = crate::clock::civil_date(secs / 86_400).replace('-', "");
    let t = secs % 86_400;
    format!(
        "{date}-{:02}{:02}{:02}-{noise:04x}",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

/// `YYYY-MM-DD HH:MM UTC`.
pub(crate) fn format_time(secs: u64) -> String {
    let t = secs % 86_400;
    format!(
        "{} {:02}:{:02} UTC",
        crate::clock::civil_date(secs / 86_400),
        t / 3600,
        t / 60 % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_times() {
        let id = new_id(1_796_048_701);
        assert!(id.starts_with("20261130-"), "{id}");
        assert_eq!(id.len(), "20261130-142501-1a2b".len());
        assert_eq!(format_time(0), "1970-01-01 00:00 UTC");
    }

    #[test]
    fn resume_value_that_is_not_an_id_is_the_prompt() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            split_resume_value(Some("fix it".into()), words(&["now"])),
            (Some(String::new()), words(&["fix it", "now"]))
        );
        assert_eq!(
            split_resume_value(Some("20261130-1425".into()), words(&["go"])),
            (Some("20261130-1425".into()), words(&["go"]))
        );
        assert_eq!(split_resume_value(None, vec![]), (None, vec![]));
    }
}
