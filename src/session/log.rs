//! Appending to a session file: one record a line, each written with one `write` call on a
//! file opened for appending, so a `kill -9` loses at most the record in flight and a torn
//! write can only be the last line (skipped on load).
//!
//! The file is created with the first message (a session in which nothing was said leaves
//! no file); records that come before it are held until then. Files are private to the user
//! (mode 0600, directory 0700): they hold the whole conversation.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::SessionError;
use super::record::{Header, Record};

/// The writer for one session.
#[derive(Debug)]
pub(crate) struct SessionLog {
    path: PathBuf,
    header: Header,
    file: Option<File>,
    /// Lines waiting for the file to be created.
    pending: Vec<String>,
    /// Continuing an existing file (resume): no header is written.
    existing: bool,
}

impl SessionLog {
    /// A new session in `dir` (created on the first message).
    pub(crate) fn create(dir: &Path, header: Header) -> Self {
        Self {
            path: dir.join(format!("{}.jsonl", header.id)),
            header,
            file: None,
            pending: Vec::new(),
            existing: false,
        }
    }

    /// Continues the existing session file `path`.
    pub(crate) fn resume(path: PathBuf, header: Header) -> Self {
        Self {
            path,
            header,
            file: None,
            pending: Vec::new(),
            existing: true,
        }
    }

    pub(crate) fn id(&self) -> &str {
        &self.header.id
    }

    /// The JSONL file (written from the first message on).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `record`; before the first message, non-message records are held.
    ///
    /// # Errors
    /// [`SessionError::Io`] when the file cannot be created or written.
    pub(crate) fn append(&mut self, record: &Record) -> Result<(), SessionError> {
        let mut line = serde_json::to_string(record).map_err(|e| SessionError::Io {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        line.push('\n');
        if self.file.is_none() {
            if !matches!(record, Record::Message { .. }) && !self.existing {
                self.pending.push(line);
                return Ok(());
            }
            self.open()?;
        }
        let path = &self.path;
        let file = self.file.as_mut().ok_or_else(|| SessionError::Io {
            path: path.clone(),
            message: "not open".into(),
        })?;
        file.write_all(line.as_bytes())
            .map_err(|e| SessionError::Io {
                path: path.clone(),
                message: e.to_string(),
            })
    }

    /// Opens (or creates) the file; writes the header and held lines for a new one, and
    /// cuts a torn last line off an existing one so new records start on a line of their own.
    fn open(&mut self) -> Result<(), SessionError> {
        let io = |e: std::io::Error| SessionError::Io {
            path: self.path.clone(),
            message: e.to_string(),
        };
        if let Some(dir) = self.path.parent() {
            create_private_dir(dir).map_err(io)?;
        }
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&self.path).map_err(io)?;
        if self.existing {
            cut_torn_tail(&mut file).map_err(io)?;
        } else {
            let mut text = serde_json::to_string(&Record::Session(self.header.clone()))
                .map_err(|e| io(std::io::Error::other(e)))?;
            text.push('\n');
            for line in self.pending.drain(..) {
                text.push_str(&line);
            }
            file.write_all(text.as_bytes()).map_err(io)?;
        }
        self.file = Some(file);
        Ok(())
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Truncates `file` after its last newline when it does not end with one.
fn cut_torn_tail(file: &mut File) -> std::io::Result<()> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    let mut back = 0u64;
    let mut byte = [0u8; 1];
    while back < len {
        file.seek(SeekFrom::Start(len - back - 1))?;
        file.read_exact(&mut byte)?;
        if byte[0] == b'\n' {
            break;
        }
        back += 1;
    }
    if back > 0 {
        file.set_len(len - back)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Message;
    use pretty_assertions::assert_eq;

    fn header(id: &str) -> Header {
        Header {
            id: id.into(),
            workspace: PathBuf::from("/w"),
            started: 1,
            model: "m".into(),
            agent_version: "0".into(),
        }
    }

    #[test]
    fn file_appears_with_the_first_message() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let mut log = SessionLog::create(dir.path(), header("s1"));
        log.append(&Record::Governance {
            state: serde_json::json!({"x": 1}),
        })?;
        assert!(!log.path().exists());
        log.append(&Record::Message {
            message: Message::user("hi"),
        })?;
        let text = std::fs::read_to_string(log.path())?;
        let types: Vec<String> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .map(|v| v["type"].as_str().unwrap_or("").to_string())
            .collect();
        assert_eq!(types, vec!["session", "governance", "message"]);
        Ok(())
    }

    #[test]
    fn resuming_cuts_a_torn_last_line() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("s2.jsonl");
        std::fs::write(&path, "{\"a\":1}\n{\"type\":\"mess")?;
        let mut log = SessionLog::resume(path.clone(), header("s2"));
        log.append(&Record::Message {
            message: Message::user("x"),
        })?;
        let text = std::fs::read_to_string(&path)?;
        assert_eq!(text.lines().count(), 2);
        assert!(
            text.starts_with("{\"a\":1}\n{\"type\":\"message\""),
            "{text}"
        );
        Ok(())
    }
}
