//! Process exit codes (SPEC §3.3).

use std::process::ExitCode;

/// How a run of `agent` ended, mapped one-to-one onto the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
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
    pub fn code(self) -> u8 {
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
