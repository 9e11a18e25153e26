//! The running session's log, shared by the agent, the inner loop's message hook and the
//! context manager's edit recorder.
//!
//! A write failure (disk full, permissions) is shown once as a warning and saving stops for
//! this session: a file with a gap would resume into a different conversation.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::log::SessionLog;
use super::record::Record;
use crate::events::{AgentEvent, EventSink};

/// Thread-safe access to the current [`SessionLog`].
pub(crate) struct SessionHandle {
    log: Mutex<SessionLog>,
    failed: AtomicBool,
    sink: Arc<dyn EventSink>,
}

impl SessionHandle {
    pub(crate) fn new(log: SessionLog, sink: Arc<dyn EventSink>) -> Self {
        Self {
            log: Mutex::new(log),
            failed: AtomicBool::new(false),
            sink,
        }
    }

    fn lock(&self) -> MutexGuard<'_, SessionLog> {
        match self.log.lock() {
            Ok(log) => log,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Appends `record`, unless saving already failed in this session.
    pub(crate) fn record(&self, record: &Record) {
        if self.failed.load(Ordering::SeqCst) {
            return;
        }
        if let Err(error) = self.lock().append(record) {
            self.failed.store(true, Ordering::SeqCst);
            self.sink.emit(AgentEvent::Warning {
                message: error.to_string(),
            });
        }
    }

    /// Switches to another session log (`/clear`, resume).
    pub(crate) fn replace(&self, log: SessionLog) {
        *self.lock() = log;
        self.failed.store(false, Ordering::SeqCst);
    }

    /// Whether records still reach the file (saving has not failed).
    pub(crate) fn is_saving(&self) -> bool {
        !self.failed.load(Ordering::SeqCst)
    }

    pub(crate) fn id(&self) -> String {
        self.lock().id().to_string()
    }

    /// The session's JSONL file (it appears with the first message).
    pub(crate) fn path(&self) -> std::path::PathBuf {
        self.lock().path().to_path_buf()
    }
}
