//! How a run of `agent` ends (SPEC §3.3): the exit codes, and the errors that end a run
//! early, each knowing its code. [`crate::run()`] is the one place that prints an error.

use std::process::ExitCode;

use crate::checkpoints::CheckpointError;
use crate::config::ConfigError;
use crate::governance::GovernanceError;
use crate::model::ModelError;
use crate::sandbox::settings::Unavailable;
use crate::session::SessionError;

/// How a run of `agent` ended, mapped one-to-one onto the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// 0: the task is done.
    Done,
    /// 1: runtime failure (endpoint unreachable after retries, fatal error).
    Failure,
    /// 2: usage or configuration error.
    Usage,
    /// 3: stopped by a budget or `--max-turns`.
    Stopped,
    /// 130: interrupted by the user (Ctrl-C).
    Interrupted,
}

impl Exit {
    /// The numeric exit status.
    pub(crate) fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Failure => 1,
            Exit::Usage => 2,
            Exit::Stopped => 3,
            Exit::Interrupted => 130,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}

/// Why a run ended before its work was done. Printed once, as `agent: error: <message>`,
/// by [`crate::run()`]; [`Error::code`] is the exit code.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A missing endpoint or a bad value in a flag, the environment or a config file.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A bad role file or an unknown role.
    #[error(transparent)]
    Governance(#[from] GovernanceError),
    /// `--sandbox required` (or `mode = "required"`) on a kernel without Landlock.
    #[error(transparent)]
    Sandbox(#[from] Unavailable),
    /// `--resume` found no session to continue, or could not read it.
    #[error(transparent)]
    Resume(#[from] SessionError),
    /// The model client could not be built from the settings (a bad header).
    #[error(transparent)]
    Client(#[from] ModelError),
    /// `agent undo` found nothing to undo, no `git`, or a shadow repository it cannot read.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// The command line asks for something impossible (`--json` without a task, an unknown
    /// `--tool`, an unreadable or empty stdin).
    #[error("{0}")]
    Usage(String),
    /// The run could not go on (the async runtime would not start).
    #[error("{0}")]
    Failed(String),
}

impl Error {
    /// The exit code for this error: 1 for a failure at run time, 2 for everything the user
    /// can fix in the command line or the configuration.
    pub(crate) fn code(&self) -> Exit {
        match self {
            Error::Failed(_) | Error::Checkpoint(_) => Exit::Failure,
            Error::Config(_)
            | Error::Governance(_)
            | Error::Sandbox(_)
            | Error::Resume(_)
            | Error::Client(_)
            | Error::Usage(_) => Exit::Usage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_know_their_exit_codes() {
        assert_eq!(Error::Usage("x".into()).code().code(), 2);
        assert_eq!(Error::Failed("x".into()).code().code(), 1);
        assert_eq!(Error::Config(ConfigError::NoHome).code(), Exit::Usage);
        assert_eq!(
            Error::Sandbox(Unavailable::Landlock { reason: "r".into() }).to_string(),
            "the sandbox is required but unavailable: r; run on a Linux kernel with Landlock, \
             or choose another `--sandbox` mode"
        );
    }
}
