//! The hidden `agent __sandbox <policy> -- PROGRAM ARGS...` entry point.
//!
//! Runs in a fresh child of the agent (never in the agent itself): parses the policy and hands
//! over to [`super::supervise`], which starts the init of new namespaces when the policy asks
//! for them ([`super::namespaces`]: mounts, `/proc`) and forks the shell's process. That process confines itself with Landlock and seccomp, closes every inherited
//! descriptor above stderr, and execs the program, which inherits the confinement. The helper
//! does nothing else (no config, no runtime), so it starts in about a millisecond. If anything
//! fails the program does not run: the helper prints one line starting with [`super::protocol::ERROR_PREFIX`]
//! and exits with [`super::protocol::SETUP_FAILED`].

use std::ffi::OsString;

use super::policy::Policy;
use super::protocol::{EXEC_FAILED, SETUP_FAILED, fail};

/// The subcommand name, `argv[1]` of the helper.
pub(crate) const NAME: &str = "__sandbox";
/// Runs the helper with the arguments after `__sandbox`; returns only on failure, with the
/// exit code to use.
pub(crate) fn main(args: &[OsString]) -> i32 {
    let (policy, command) = match Policy::parse(args) {
        Ok(parsed) => parsed,
        Err(error) => return fail(SETUP_FAILED, &error.to_string()),
    };
    super::supervise::run(&policy, &|orphan_guard| {
        exec_confined(&policy, &command, orphan_guard)
    })
}

/// In the shell's own process: confine, close inherited descriptors, exec. Returns only on
/// failure, with the exit code. With `orphan_guard` the process dies with its parent (the
/// supervisor) even if that one is killed outright.
fn exec_confined(policy: &Policy, command: &[OsString], orphan_guard: bool) -> i32 {
    if orphan_guard {
        // SAFETY: prctl(2) with integer arguments.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    }
    if let Err(error) = confine(policy) {
        return fail(SETUP_FAILED, &format!("{error}; the command did not run"));
    }
    close_inherited_descriptors();
    exec(command)
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

fn exec(command: &[OsString]) -> i32 {
    use std::os::unix::process::CommandExt;
    let Some((program, rest)) = command.split_first() else {
        return fail(SETUP_FAILED, "no command");
    };
    let error = std::process::Command::new(program).args(rest).exec();
    fail(
        EXEC_FAILED,
        &format!("cannot run `{}`: {error}", program.to_string_lossy()),
    )
}
