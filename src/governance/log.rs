//! `$AGENT_HOME/events.jsonl` (SPEC §9.4): one JSON object per line, appended as events
//! happen, so a person or a script can audit afterwards every tool call, verdict and cost.
//!
//! Several agents may append to the same file at once. Lines never interleave because:
//! 1. the file is opened with `O_APPEND`, so the kernel moves to the end and writes in one
//!    step for each `write` (no agent ever writes at a stale offset);
//! 2. each line, newline included, is serialized first and handed to the kernel with one
//!    `write_all` (one `write` call unless the kernel returns a short write);
//! 3. that write happens under an exclusive advisory lock on the file (`flock(LOCK_EX)`
//!    through [`std::fs::File::lock`]), so even a short write that needs a second `write`,
//!    or a file system with weaker `O_APPEND` guarantees, cannot let another agent's line
//!    land in the middle. Within one process a mutex serializes threads.
//!
//! The data reaches the kernel before `append` returns (no user-space buffer), so a crash of
//! the agent loses nothing already logged. A failing log never stops the session: the first
//! failure is shown once as a warning and later ones are ignored.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::events::{EventRecord, Subscriber};
use crate::events::{AgentEvent, EventSink};

/// An append-only JSONL event log.
pub struct EventLog {
    path: PathBuf,
    file: Mutex<File>,
    /// Where to report the first write failure.
    sink: Option<Arc<dyn EventSink>>,
    failed: AtomicBool,
}

impl EventLog {
    /// Opens (creating it and its directory if needed) the log at `path` for appending.
    ///
    /// # Errors
    /// The I/O error when the directory or file cannot be created or opened.
    pub fn open(path: &Path, sink: Option<Arc<dyn EventSink>>) -> std::io::Result<Self> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            sink,
            failed: AtomicBool::new(false),
        })
    }

    /// Appends `record` as one line (see the module doc for why lines never interleave).
    ///
    /// # Errors
    /// The I/O error of serializing, locking or writing.
    pub fn append(&self, record: &EventRecord) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        let file = match self.file.lock() {
            Ok(file) => file,
            Err(poisoned) => poisoned.into_inner(),
        };
        file.lock()?;
        let written = (&*file).write_all(&line);
        let unlocked = file.unlock();
        written.and(unlocked)
    }
}

impl Subscriber for EventLog {
    fn notify(&self, record: &EventRecord) {
        if let Err(error) = self.append(record)
            && !self.failed.swap(true, Ordering::Relaxed)
            && let Some(sink) = &self.sink
        {
            sink.emit(AgentEvent::Warning {
                message: format!(
                    "cannot write the event log {}: {error}; events of this session may be \
                     missing from it",
                    self.path.display()
                ),
            });
        }
    }
}
