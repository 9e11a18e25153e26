//! The hidden `agent __sandbox <policy> -- PROGRAM ARGS...` entry point.
//!
//! Runs in a fresh child of the agent (never in the agent itself): parses the policy, confines
//! itself with Landlock and seccomp, closes every inherited descriptor above stderr, and execs
//! the program, which inherits the confinement. It does nothing else (no config, no runtime),
//! so it starts in about a millisecond. If anything fails the program does not run: the
//! helper returns a [`HelperError`], which the binary prints as one line starting with
//! [`ERROR_PREFIX`] before it exits with the error's code ([`SETUP_FAILED`] or
//! [`EXEC_FAILED`]).

use std::ffi::OsString;

use super::policy::Policy;

/// The subcommand name, `argv[1]` of the helper.
pub(crate) const NAME: &str = "__sandbox";
/// Exit code when the sandbox could not be applied and the command did not run (as `env`
/// and `timeout` use 125 for their own failures).
pub(crate) const SETUP_FAILED: i32 = 125;
/// Exit code when the program could not be executed (as shells use 127).
pub(crate) const EXEC_FAILED: i32 = 127;
/// Start of the helper's own error line on stderr.
pub(crate) const ERROR_PREFIX: &str = "agent: sandbox error:";

/// Why the helper did not run the command; its display is the line for stderr.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{ERROR_PREFIX} {message}")]
pub(crate) struct HelperError {
    /// [`SETUP_FAILED`] or [`EXEC_FAILED`].
    pub(crate) code: i32,
    pub(crate) message: String,
}

impl HelperError {
    fn new(code: i32, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// Runs the helper with the arguments after `__sandbox`; returns only on failure (on success
/// the process has become the command).
pub(crate) fn main(args: &[OsString]) -> HelperError {
    let (policy, command) = match Policy::parse(args) {
        Ok(parsed) => parsed,
        Err(error) => return HelperError::new(SETUP_FAILED, error.to_string()),
    };
    if let Err(error) = confine(&policy) {
        return HelperError::new(SETUP_FAILED, format!("{error}; the command did not run"));
    }
    close_inherited_descriptors();
    exec(&command)
}

/// Why the helper could not confine itself.
#[derive(Debug, thiserror::Error)]
enum NotConfined {
    /// The kernel offers no Landlock (the reason from the probe).
    #[error("{0}")]
    Unavailable(String),
    /// Landlock or seccomp could not be applied.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Failed(#[from] super::linux::ConfineError),
}

#[cfg(target_os = "linux")]
fn confine(policy: &Policy) -> Result<(), NotConfined> {
    match super::linux::probe() {
        super::SandboxStatus::Available { abi } => Ok(super::linux::confine(policy, abi)?),
        super::SandboxStatus::Unavailable { reason } => Err(NotConfined::Unavailable(reason)),
    }
}

#[cfg(not(target_os = "linux"))]
fn confine(_: &Policy) -> Result<(), NotConfined> {
    Err(NotConfined::Unavailable(
        "Landlock exists only on Linux".to_string(),
    ))
}

/// Closes descriptors 3 and up so nothing the agent opened (a session file, a socket) leaks
/// into the command. Agent descriptors are close-on-exec already; this is the second line.
fn close_inherited_descriptors() {
    #[cfg(target_os = "linux")]
    // SAFETY: close_range(2) only closes descriptors of this process; the helper holds none
    // it still needs (the Landlock ruleset descriptor is already closed).
    unsafe {
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
    }
}

fn exec(command: &[OsString]) -> HelperError {
    use std::os::unix::process::CommandExt;
    let Some((program, rest)) = command.split_first() else {
        return HelperError::new(SETUP_FAILED, "no command");
    };
    let error = std::process::Command::new(program).args(rest).exec();
    HelperError::new(
        EXEC_FAILED,
        format!("cannot run `{}`: {error}", program.to_string_lossy()),
    )
}
