//! The hidden `agent __mcp-guard -- PROGRAM ARGS...` entry point: runs a stdio MCP server and
//! makes sure it and everything it starts end with the agent ([`super::process`]).
//!
//! The agent starts the guard as a session leader with `PR_SET_PDEATHSIG = SIGTERM`. The
//! guard starts the server in its own process group (stdin, stdout and stderr inherited,
//! `PR_SET_PDEATHSIG = SIGKILL` so the server cannot outlive the guard either), then waits
//! for a signal:
//! - the server exited: the rest of the group gets SIGTERM and the guard exits with the
//!   server's status (128 + signal when it was killed);
//! - SIGTERM, SIGHUP or SIGINT (the agent died or is stopping it): the group gets SIGTERM,
//!   and SIGKILL if the server has not exited 2 s later.
//!
//! No runtime, no config: it starts in about a millisecond.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::time::{Duration, Instant};

/// The subcommand name, `argv[1]` of the guard.
pub(crate) const NAME: &str = "__mcp-guard";
/// Exit code when the server could not be started (as shells use 127).
const START_FAILED: i32 = 127;
/// How long the server has to exit after SIGTERM before the group is killed.
const GRACE: Duration = Duration::from_secs(2);

/// Why the guard could not start the server: printed as one line by the binary, which then
/// exits with [`GuardError::code`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum GuardError {
    #[error("agent: usage: agent {NAME} -- PROGRAM [ARGS...]")]
    Usage,
    #[error("agent: cannot run `{program}`: {source}")]
    Spawn { program: String, source: io::Error },
}

impl GuardError {
    /// The exit code: 127, as shells use when a program cannot be run.
    pub(crate) fn code(&self) -> i32 {
        START_FAILED
    }
}

/// Runs the guard with the arguments after `__mcp-guard`; returns the exit code (the
/// server's status, or 128 + the signal that stopped the guard).
///
/// # Errors
/// A [`GuardError`] when the arguments are wrong or the server cannot be started.
pub(crate) fn main(args: &[OsString]) -> Result<i32, GuardError> {
    let Some((program, rest)) = args
        .split_first()
        .filter(|(dash, _)| *dash == "--")
        .and_then(|(_, command)| command.split_first())
    else {
        return Err(GuardError::Usage);
    };
    let signals = watched_signals();
    // SAFETY: plain signal-mask and disposition calls on this single-threaded process.
    unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        libc::sigprocmask(libc::SIG_BLOCK, &raw const signals, std::ptr::null_mut());
    }
    let guard = std::process::id();
    let mut command = std::process::Command::new(program);
    command.args(rest);
    // SAFETY: only async-signal-safe calls (sigprocmask, prctl, getppid) between fork and
    // exec.
    unsafe {
        command.pre_exec(move || {
            // The server must not inherit the signals the guard blocks (std keeps the mask).
            libc::sigprocmask(libc::SIG_UNBLOCK, &raw const signals, std::ptr::null_mut());
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(io::Error::last_os_error());
            }
            if u32::try_from(libc::getppid()).ok() != Some(guard) {
                return Err(io::Error::other("the guard exited"));
            }
            Ok(())
        });
    }
    let mut server = command.spawn().map_err(|source| GuardError::Spawn {
        program: program.to_string_lossy().into_owned(),
        source,
    })?;
    loop {
        let signal = wait_signal(&signals, None);
        if let Ok(Some(status)) = server.try_wait() {
            signal_group(libc::SIGTERM);
            return Ok(exit_code(status));
        }
        if signal == Some(libc::SIGCHLD) {
            continue;
        }
        if let Some(signal) = signal {
            stop(&mut server, &signals);
            return Ok(128 + signal);
        }
    }
}

/// SIGTERM to the group, up to [`GRACE`] for the server to exit, then SIGKILL.
fn stop(server: &mut std::process::Child, signals: &libc::sigset_t) {
    signal_group(libc::SIGTERM);
    let deadline = Instant::now() + GRACE;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        if matches!(server.try_wait(), Ok(Some(_))) {
            return;
        }
        wait_signal(signals, Some(left));
    }
    signal_group(libc::SIGKILL);
}

fn watched_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialize and fill a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        for signal in [libc::SIGCHLD, libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
            libc::sigaddset(&raw mut set, signal);
        }
        set
    }
}

/// The next of `signals` (all blocked), or `None` after `timeout` or an error.
fn wait_signal(signals: &libc::sigset_t, timeout: Option<Duration>) -> Option<i32> {
    let timespec = timeout.map(|t| libc::timespec {
        tv_sec: libc::time_t::try_from(t.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: libc::c_long::from(t.subsec_nanos()),
    });
    let pointer = timespec
        .as_ref()
        .map_or(std::ptr::null(), std::ptr::from_ref);
    // SAFETY: sigtimedwait reads the set and the optional timeout; no info struct is wanted.
    let signal = unsafe { libc::sigtimedwait(signals, std::ptr::null_mut(), pointer) };
    (signal > 0).then_some(signal)
}

/// Sends `signal` to the guard's group (the guard has it blocked, so only the others act
/// on it; SIGKILL ends the guard too).
fn signal_group(signal: i32) {
    // SAFETY: kill(2) with pid 0 signals the caller's process group; no memory is touched.
    unsafe {
        libc::kill(0, signal);
    }
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}
