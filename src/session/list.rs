//! Finding sessions: `agent sessions`, `/sessions`, `--resume [ID]`, `/resume [ID]`.
//!
//! Listing reads only what it shows: the header line, the first user message, and a count
//! of message lines. Lines written by [`super::SessionLog`] are recognised by their prefix
//! without JSON parsing; only lines in another key order (written by hand or by another
//! tool) are parsed.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::SessionError;
use super::record::{Header, MESSAGE_PREFIX, Record, USER_MESSAGE_PREFIX};

/// One saved session, as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub(crate) id: String,
    pub path: PathBuf,
    pub(crate) workspace: PathBuf,
    /// Seconds since the Unix epoch.
    pub(crate) started: u64,
    /// Last write to the file.
    pub(crate) modified: SystemTime,
    pub(crate) first_user_message: Option<String>,
    pub(crate) messages: usize,
}

/// Every session in `dir`, most recently active first. Unreadable files are left out.
pub fn list(dir: &Path) -> Vec<SessionInfo> {
    scan(dir, true)
}

/// Like [`list`], reading only each file's header line (no first message, no count).
fn scan(dir: &Path, full: bool) -> Vec<SessionInfo> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<SessionInfo> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter_map(|p| info(&p, full))
        .collect();
    out.sort_by(|a, b| b.modified.cmp(&a.modified).then(b.id.cmp(&a.id)));
    out
}

fn info(path: &Path, full: bool) -> Option<SessionInfo> {
    let file = std::fs::File::open(path).ok()?;
    let modified = file.metadata().and_then(|m| m.modified()).ok()?;
    if !full {
        let mut first = Vec::new();
        BufReader::new(file).read_until(b'\n', &mut first).ok()?;
        let Ok(Record::Session(header)) = serde_json::from_slice(&first) else {
            return None;
        };
        return Some(SessionInfo {
            id: header.id,
            path: path.to_path_buf(),
            workspace: header.workspace,
            started: header.started,
            modified,
            first_user_message: None,
            messages: 0,
        });
    }
    let mut header: Option<Header> = None;
    let mut first_user_message = None;
    let mut messages = 0;
    for line in BufReader::new(file).split(b'\n').map_while(Result::ok) {
        let canonical = line.starts_with(br#"{"type":""#);
        if line.starts_with(MESSAGE_PREFIX.as_bytes()) {
            messages += 1;
            if first_user_message.is_none()
                && line.starts_with(USER_MESSAGE_PREFIX.as_bytes())
                && let Ok(Record::Message { message }) = serde_json::from_slice(&line)
            {
                first_user_message = Some(message.text_content().to_string());
            }
            continue;
        }
        if canonical && header.is_some() {
            continue;
        }
        match serde_json::from_slice::<Record>(&line) {
            Ok(Record::Session(h)) if header.is_none() => header = Some(h),
            Ok(Record::Message { message }) => {
                messages += 1;
                if first_user_message.is_none() && message.role == crate::model::Role::User {
                    first_user_message = Some(message.text_content().to_string());
                }
            }
            _ => {}
        }
    }
    let header = header?;
    Some(SessionInfo {
        id: header.id,
        path: path.to_path_buf(),
        workspace: header.workspace,
        started: header.started,
        modified,
        first_user_message,
        messages,
    })
}

/// The session to resume: `id` (exact, or a unique prefix) or, without one, the most
/// recently active session of `workspace`.
///
/// # Errors
/// [`SessionError::NotFound`], [`SessionError::Ambiguous`], [`SessionError::NoneHere`],
/// [`SessionError::BadId`].
pub fn find(dir: &Path, id: Option<&str>, workspace: &Path) -> Result<SessionInfo, SessionError> {
    let id = id.map(str::trim).filter(|id| !id.is_empty());
    if let Some(id) = id.filter(|id| !super::looks_like_id(id)) {
        return Err(SessionError::BadId(id.to_string()));
    }
    let sessions = scan(dir, false);
    match id {
        None => sessions
            .into_iter()
            .find(|s| s.workspace == workspace)
            .ok_or_else(|| SessionError::NoneHere(workspace.to_path_buf())),
        Some(id) => {
            if let Some(exact) = sessions.iter().find(|s| s.id == id) {
                return Ok(exact.clone());
            }
            let mut matches: Vec<SessionInfo> = sessions
                .into_iter()
                .filter(|s| s.id.starts_with(id))
                .collect();
            match matches.len() {
                0 => Err(skipped(dir, id)),
                1 => Ok(matches.remove(0)),
                n => Err(SessionError::Ambiguous {
                    id: id.to_string(),
                    count: n,
                }),
            }
        }
    }
}

/// Why no session `id` was found: the file [`scan`] skipped (unreadable, a directory, no
/// session header on its first line) is named, else there is no such session.
fn skipped(dir: &Path, id: &str) -> SessionError {
    let path = dir.join(format!("{id}.jsonl"));
    let message = match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return SessionError::NotFound(id.to_string());
        }
        Err(e) => e.to_string(),
        Ok(meta) if meta.is_dir() => "it is a directory".to_string(),
        Ok(_) => match std::fs::File::open(&path) {
            Err(e) => e.to_string(),
            Ok(_) => "its first line is not a session header".to_string(),
        },
    };
    SessionError::Unreadable { path, message }
}

/// A table of sessions for the terminal, one line each.
pub(crate) fn render(sessions: &[SessionInfo]) -> String {
    let mut out = format!(
        "{:<22}  {:<20}  {:>8}  {:<30}  {}\n",
        "ID", "STARTED", "MESSAGES", "WORKSPACE", "FIRST MESSAGE"
    );
    for s in sessions {
        let first = s
            .first_user_message
            .as_deref()
            .map(|m| one_line(m, 60))
            .unwrap_or_default();
        out.push_str(&format!(
            "{:<22}  {:<20}  {:>8}  {:<30}  {}\n",
            s.id,
            super::format_time(s.started),
            s.messages,
            s.workspace.display(),
            first
        ));
    }
    out
}

fn one_line(text: &str, width: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= width {
        return flat;
    }
    let mut out: String = flat.chars().take(width - 1).collect();
    out.push('…');
    out
}
