//! Runs one shell command (§6): confined through the helper when the sandbox is on, in a new
//! session (own process group, no controlling terminal, so `/dev/tty` prompts fail at once),
//! stdin `/dev/null`, the non-interactive environment, secrets removed, stdout and stderr
//! through one pipe so they interleave in arrival order, output kept by [`Capture`].
//!
//! Completion is keyed on the shell's exit (a pidfd), not on pipe EOF. One thread polls the
//! pipe and the pidfd together, so nothing waits on a full pipe and exit is seen at once.
//!
//! Background processes: when the shell exits, whatever is still running is stopped with it
//! (SIGTERM, SIGKILL after the grace period) and the result says so. Chosen over "report as
//! left running" because a left-over server keeps holding ports, files and the sandbox's write
//! access after the tool call that started it is over, and the model cannot see or stop it;
//! start it and use it within one command instead (`server & sleep 1; curl ...`). For a
//! confined command the helper's supervisor does this for every process the command started,
//! `setsid` daemons included, and reports it on a status pipe ([`super::supervise`]); the
//! helper dies with the agent (`PR_SET_PDEATHSIG`). Unconfined (`--sandbox off`), only the
//! process group is stopped; a process that left it still holding the output pipe is reported
//! as left running, and reading stops after a short wait so it never hangs the tool.
//!
//! Timeout and interrupt: SIGTERM to the whole group, SIGKILL after the grace period (§6).

use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::capture::{Capture, Captured};
use super::policy::Policy;
use super::process::{self, group_alive, signal_group};
use super::supervise::BACKGROUND_STOPPED;
use super::{ExecSettings, SandboxMode, SandboxStatus, helper, protocol};
use crate::cancel::CancelToken;

/// Environment set for every command so nothing waits for a terminal (§6).
pub(crate) const NON_INTERACTIVE_ENV: &[(&str, &str)] = &[
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("EDITOR", "true"),
    ("VISUAL", "true"),
    ("GIT_SEQUENCE_EDITOR", "false"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("CI", "1"),
];

/// Variable telling the command how it is confined: `workspace-write`, `read-only`, `off` or
/// `unsandboxed`.
pub(crate) const SANDBOX_ENV: &str = "AGENT_SANDBOX";

/// How long output is still read after the process group is gone (only a process that left
/// the group can still hold the pipe then).
const FINAL_DRAIN: Duration = Duration::from_millis(100);
/// How often the cancel flag is checked while waiting.
const CANCEL_POLL: Duration = Duration::from_millis(50);
/// Tick while waiting for a group to die (no descriptor signals that).
const GROUP_POLL: Duration = Duration::from_millis(10);
/// Largest read per wake-up before deadlines are checked again.
const DRAIN_SLICE: usize = 8 << 20;
/// Pipe buffer asked for, in bytes.
const PIPE_SIZE: i32 = 1 << 20;
/// Descriptor number of the status pipe in the helper.
const STATUS_FD: i32 = 3;

/// One command to run.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    pub command: &'a str,
    /// Working directory.
    pub cwd: &'a Path,
    /// Workspace root: writable in workspace-write mode.
    pub workspace: &'a Path,
    pub timeout: Duration,
    /// Cap on the output text, in characters.
    pub budget: usize,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The shell exited with this code (or `128 + signal`).
    Exited(i32),
    /// Killed after the timeout.
    TimedOut(Duration),
    /// Killed because the user interrupted.
    Interrupted,
}

/// Processes other than the shell at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Background {
    None,
    /// Still in the group when the shell exited; stopped with it.
    Stopped,
    /// Left the group and still held the output pipe; left running.
    LeftRunning,
}

/// How the command was confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// Through the helper with this policy.
    Confined(Policy),
    /// The user turned the sandbox off.
    Off,
    /// The sandbox was wanted but the kernel cannot provide it.
    Unsandboxed { reason: String },
}

/// The result of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutcome {
    pub output: Captured,
    pub ending: Ending,
    pub background: Background,
    pub confinement: Confinement,
    /// The helper's own error line when it could not confine itself (the command did not run).
    pub sandbox_error: Option<String>,
}

/// Why a command did not start.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// `--sandbox required` and no sandbox: the command is refused, never run unconfined.
    #[error("the sandbox is required but unavailable ({0}); the command did not run")]
    Refused(String),
    #[error("cannot start the shell: {0}")]
    Spawn(#[from] std::io::Error),
}

/// Runs `job` under `settings`, stopping early when `cancel` fires.
///
/// # Errors
/// [`ExecError`] when the command could not be started at all.
pub fn run(
    job: &Job<'_>,
    settings: &ExecSettings,
    cancel: &CancelToken,
) -> Result<ExecOutcome, ExecError> {
    let mut confinement = confinement(job, settings)?;
    let (reader, writer) = std::io::pipe()?;
    process::grow_pipe(&reader, PIPE_SIZE);
    process::set_nonblocking(&reader)?;
    let status = match &mut confinement {
        Confinement::Confined(policy) => {
            policy.status_fd = Some(STATUS_FD);
            let (status_reader, status_writer) = std::io::pipe()?;
            process::set_nonblocking(&status_reader)?;
            Some((status_reader, status_writer))
        }
        _ => None,
    };
    let mut command = build_command(job, settings, &confinement, status.as_ref().map(|s| &s.1));
    command.stdout(writer.try_clone()?).stderr(writer);
    let child = command.spawn()?;
    // The parent's copies of the write ends go with `command`, so EOF can be seen.
    drop(command);
    let status_reader = status.map(|(reader, _)| reader);
    let mut monitor = Monitor::new(child, reader, job.budget);
    let (ending, mut background) = monitor.supervise(job.timeout, settings.kill_grace, cancel);
    // After a timeout or interrupt everything was stopped on purpose; not worth a note.
    if let Some(mut status) = status_reader.filter(|_| matches!(ending, Ending::Exited(_))) {
        let mut byte = [0u8; 1];
        if status.read(&mut byte).is_ok_and(|n| n == 1) && byte[0] == BACKGROUND_STOPPED {
            background = Background::Stopped;
        }
    }
    let output = monitor.capture.finish();
    let sandbox_error = match (&confinement, &ending) {
        (Confinement::Confined(_), Ending::Exited(protocol::SETUP_FAILED)) => output
            .text
            .lines()
            .find(|line| line.starts_with(protocol::ERROR_PREFIX))
            .map(str::to_string),
        _ => None,
    };
    Ok(ExecOutcome {
        output,
        ending,
        background,
        confinement,
        sandbox_error,
    })
}

fn confinement(job: &Job<'_>, settings: &ExecSettings) -> Result<Confinement, ExecError> {
    if settings.mode == SandboxMode::Off {
        return Ok(Confinement::Off);
    }
    match &settings.status {
        SandboxStatus::Available { .. } => Ok(Confinement::Confined(Policy::for_command(
            settings,
            job.workspace,
        ))),
        SandboxStatus::Unavailable { reason } if settings.required => {
            Err(ExecError::Refused(reason.clone()))
        }
        SandboxStatus::Unavailable { reason } => Ok(Confinement::Unsandboxed {
            reason: reason.clone(),
        }),
    }
}

fn build_command(
    job: &Job<'_>,
    settings: &ExecSettings,
    confinement: &Confinement,
    status: Option<&std::io::PipeWriter>,
) -> Command {
    use std::os::unix::process::CommandExt;
    let (mut command, label) = match confinement {
        Confinement::Confined(policy) => {
            let mut command = Command::new(&settings.helper);
            command.arg(helper::NAME).args(policy.to_args()).arg("--");
            command.arg("bash");
            (command, policy.mode.name())
        }
        Confinement::Off => (Command::new("bash"), "off"),
        Confinement::Unsandboxed { .. } => (Command::new("bash"), "unsandboxed"),
    };
    command
        .arg("-c")
        .arg(job.command)
        .current_dir(job.cwd)
        .stdin(Stdio::null());
    for key in &settings.env_remove {
        command.env_remove(key);
    }
    command.envs(NON_INTERACTIVE_ENV.iter().copied());
    command.envs(settings.env_set.iter().map(|(k, v)| (k, v)));
    command.env(SANDBOX_ENV, label);
    // Without namespaces the helper supervises the command itself and must learn of the
    // agent's death to stop it (SIGTERM, which it handles); otherwise the kernel's SIGKILL of
    // the helper is enough: its namespace dies with it.
    let death = match confinement {
        Confinement::Confined(policy) if !policy.namespaces => libc::SIGTERM,
        _ => libc::SIGKILL,
    };
    let parent = std::process::id();
    let status = status.map(AsRawFd::as_raw_fd);
    // SAFETY: the closure runs between fork and exec and makes only async-signal-safe calls.
    unsafe {
        command.pre_exec(move || {
            process::new_session()?;
            process::die_with_parent(death, parent)?;
            if let Some(fd) = status {
                process::dup_to(fd, STATUS_FD)?;
            }
            Ok(())
        });
    }
    command
}

/// Where the supervision of a command stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    /// SIGTERM sent to the group at this time.
    Terminating(Instant),
    /// SIGKILL sent to the group at this time.
    Killed(Instant),
}

/// Watches one running command: its pipe, its exit, its process group.
struct Monitor {
    child: Child,
    /// The shell's pid, which is also its process group and session id.
    pgid: i32,
    pidfd: Option<std::os::fd::OwnedFd>,
    reader: Option<std::io::PipeReader>,
    capture: Capture,
    status: Option<ExitStatus>,
    buffer: Vec<u8>,
}

impl Monitor {
    fn new(child: Child, reader: std::io::PipeReader, budget: usize) -> Self {
        let pgid = i32::try_from(child.id()).unwrap_or(0);
        Self {
            pidfd: process::pidfd(child.id()),
            child,
            pgid,
            reader: Some(reader),
            capture: Capture::new(budget),
            status: None,
            buffer: vec![0; 256 * 1024],
        }
    }

    /// Runs until the shell has exited and its group is gone; returns how it ended.
    fn supervise(
        &mut self,
        timeout: Duration,
        grace: Duration,
        cancel: &CancelToken,
    ) -> (Ending, Background) {
        let deadline = Instant::now() + timeout;
        let mut phase = Phase::Running;
        let mut stop = None;
        let mut background = Background::None;
        loop {
            self.wait(self.next_wake(phase, deadline));
            self.drain(DRAIN_SLICE);
            self.reap();
            let now = Instant::now();
            let gone = self.status.is_some() && !group_alive(self.pgid);
            phase = match phase {
                _ if gone => break,
                Phase::Running if self.status.is_some() => {
                    background = Background::Stopped;
                    self.terminate(now)
                }
                Phase::Running if cancel.is_cancelled() => {
                    stop = Some(Ending::Interrupted);
                    self.terminate(now)
                }
                Phase::Running if now >= deadline => {
                    stop = Some(Ending::TimedOut(timeout));
                    self.terminate(now)
                }
                Phase::Terminating(at) if now >= at + grace => {
                    signal_group(self.pgid, libc::SIGKILL);
                    Phase::Killed(now)
                }
                Phase::Killed(at) if now >= at + grace => break,
                other => other,
            };
        }
        self.finish(stop, background)
    }

    /// SIGTERM to the whole group.
    fn terminate(&self, now: Instant) -> Phase {
        signal_group(self.pgid, libc::SIGTERM);
        Phase::Terminating(now)
    }

    /// How long to sleep: until the deadline or the next cancel check while running; short
    /// ticks while a group dies (nothing signals that) or when there is no pidfd.
    fn next_wake(&self, phase: Phase, deadline: Instant) -> Duration {
        let now = Instant::now();
        let mut wake = now + CANCEL_POLL;
        if phase == Phase::Running {
            wake = wake.min(deadline);
        }
        if phase != Phase::Running || self.pidfd.is_none() {
            wake = wake.min(now + GROUP_POLL);
        }
        wake.saturating_duration_since(now)
    }

    /// Reaps the shell if needed, reads what is left, and settles the ending.
    fn finish(&mut self, stop: Option<Ending>, mut background: Background) -> (Ending, Background) {
        if self.status.is_none() {
            signal_group(self.pgid, libc::SIGKILL);
            self.status = self.child.wait().ok();
        }
        let until = Instant::now() + FINAL_DRAIN;
        while self.reader.is_some() && Instant::now() < until {
            self.wait(GROUP_POLL);
            self.drain(DRAIN_SLICE);
        }
        if self.reader.is_some() {
            background = Background::LeftRunning;
            self.reader = None;
        }
        let ending = stop.unwrap_or_else(|| Ending::Exited(self.status.map_or(-1, exit_code)));
        (ending, background)
    }

    /// Sleeps until output arrives, the shell exits, or `timeout` passes.
    fn wait(&self, timeout: Duration) {
        let mut fds = Vec::with_capacity(2);
        if let Some(reader) = &self.reader {
            fds.push(reader.as_raw_fd());
        }
        if self.status.is_none()
            && let Some(pidfd) = &self.pidfd
        {
            fds.push(pidfd.as_raw_fd());
        }
        if fds.is_empty() {
            std::thread::sleep(timeout);
        } else {
            process::wait_readable(&fds, timeout);
        }
    }

    /// Reads what is available, up to `limit` bytes; notes EOF.
    fn drain(&mut self, limit: usize) {
        let Some(reader) = self.reader.as_mut() else {
            return;
        };
        let mut read = 0;
        while read < limit {
            match reader.read(&mut self.buffer) {
                Ok(0) => {
                    self.reader = None;
                    return;
                }
                Ok(n) => {
                    self.capture.push(&self.buffer[..n]);
                    read += n;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.reader = None;
                    return;
                }
            }
        }
    }

    fn reap(&mut self) {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
    }
}

fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn unavailable(required: bool) -> ExecSettings {
        ExecSettings {
            required,
            status: SandboxStatus::Unavailable {
                reason: "no Landlock here".to_string(),
            },
            ..ExecSettings::default()
        }
    }

    fn job(dir: &Path) -> Job<'_> {
        Job {
            command: "echo $AGENT_SANDBOX",
            cwd: dir,
            workspace: dir,
            timeout: Duration::from_secs(10),
            budget: 1000,
        }
    }

    #[test]
    fn without_landlock_commands_run_marked_unsandboxed() -> Result<(), ExecError> {
        let dir = tempfile::tempdir()?;
        let outcome = run(&job(dir.path()), &unavailable(false), &CancelToken::new())?;
        assert_eq!(outcome.output.text, "unsandboxed\n");
        assert_eq!(
            outcome.confinement,
            Confinement::Unsandboxed {
                reason: "no Landlock here".to_string()
            }
        );
        Ok(())
    }

    #[test]
    fn without_landlock_required_refuses_to_run() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let error = run(&job(dir.path()), &unavailable(true), &CancelToken::new())
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "the sandbox is required but unavailable (no Landlock here); the command did not run"
            )
        );
        Ok(())
    }
}
