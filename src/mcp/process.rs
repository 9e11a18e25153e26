//! Starting a stdio MCP server so that it never outlives the agent.
//!
//! The server does not run as the agent's child but under a guard: the agent starts
//! `agent __mcp-guard -- PROGRAM ARGS...` ([`super::guard`]) as the leader of a new session
//! (so Ctrl-C at the terminal does not reach it) with `PR_SET_PDEATHSIG = SIGTERM`, and the
//! guard starts the server in its process group. When the agent ends in any way, SIGKILL
//! included, the kernel sends the guard SIGTERM and the guard stops the whole group: the
//! server and everything it started (`npx` starts the real server as a grandchild). On a
//! normal shutdown the agent closes the server's stdin, then signals the group (TERM, then
//! KILL).
//!
//! `PR_SET_PDEATHSIG` fires when the *thread* that started the child ends, not the process.
//! Tokio's threads come and go (`block_in_place` hands a worker's thread over to blocking
//! work), so every guard is started from one [`Spawner`] thread that lives as long as the
//! servers' manager.
//!
//! The server's stderr is drained all the time (a full pipe would block it) and its last
//! 4 KiB are kept for error messages.

use super::McpError;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::sandbox::process::{group_alive, signal_group};

/// Bytes of the server's stderr kept for error messages.
const STDERR_TAIL: usize = 4096;
/// Characters of stderr quoted in a one-line error.
const QUOTED_STDERR: usize = 300;

type Job = Box<dyn FnOnce() + Send>;

/// One long-lived thread that starts every guard (see the module docs).
pub(crate) struct Spawner {
    jobs: Mutex<Option<std::sync::mpsc::Sender<Job>>>,
}

impl Spawner {
    /// Starts the thread. Spawned processes are driven by `runtime`.
    ///
    /// # Errors
    /// When the thread cannot be started.
    pub(crate) fn new(runtime: tokio::runtime::Handle) -> io::Result<Self> {
        let (sender, receiver) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("mcp-spawner".into())
            .spawn(move || {
                let _entered = runtime.enter();
                for job in receiver {
                    job();
                }
            })?;
        Ok(Self {
            jobs: Mutex::new(Some(sender)),
        })
    }

    async fn spawn(&self, mut command: Command) -> io::Result<Child> {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = sender.send(command.spawn());
        });
        let sent = match self.jobs.lock() {
            Ok(jobs) => jobs.as_ref().map(|jobs| jobs.send(job).is_ok()),
            Err(poisoned) => poisoned.into_inner().as_ref().map(|j| j.send(job).is_ok()),
        };
        if sent != Some(true) {
            return Err(io::Error::other("the MCP spawner thread is gone"));
        }
        receiver
            .await
            .map_err(|_| io::Error::other("the MCP spawner thread is gone"))?
    }
}

/// The pipes the protocol runs over.
pub(crate) struct Pipes {
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
}

/// A running stdio server (its guard, really) and the group it leads.
pub(crate) struct ServerProcess {
    guard: Child,
    pgid: i32,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    /// The task reading stderr; it ends at EOF, once every process holding the pipe is gone.
    drain: Option<tokio::task::JoinHandle<()>>,
    stopped: bool,
}

impl ServerProcess {
    /// Starts `program` with exactly `env`, in `cwd`, under a guard.
    ///
    /// # Errors
    /// Why it could not start (the directory is missing, the guard could not be spawned).
    /// A program that does not exist starts a guard that exits at once with its reason on
    /// stderr; that shows when the protocol fails to start.
    pub(crate) async fn start(
        spawner: &Spawner,
        program: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
    ) -> Result<(Self, Pipes), McpError> {
        if !cwd.is_dir() {
            return Err(format!("the directory `{}` (cwd) does not exist", cwd.display()).into());
        }
        let mut command = Command::new(guard_program());
        command
            .arg0("agent")
            .arg(super::guard::NAME)
            .arg("--")
            .arg(program)
            .args(args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let parent = std::process::id();
        // SAFETY: only async-signal-safe calls (setsid, prctl, getppid) between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() == -1 {
                    return Err(io::Error::last_os_error());
                }
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == -1 {
                    return Err(io::Error::last_os_error());
                }
                // The agent may have died between fork and prctl.
                if u32::try_from(libc::getppid()).ok() != Some(parent) {
                    return Err(io::Error::other("the agent exited"));
                }
                Ok(())
            });
        }
        let mut guard = spawner
            .spawn(command)
            .await
            .map_err(|e| format!("cannot start the server: {e}"))?;
        let pgid = guard
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .unwrap_or(0);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (guard.stdin.take(), guard.stdout.take(), guard.stderr.take())
        else {
            signal_group(pgid, libc::SIGKILL);
            return Err("cannot connect to the server's stdio".into());
        };
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
        let drain = tokio::spawn(drain(stderr, Arc::clone(&tail)));
        Ok((
            Self {
                guard,
                pgid,
                stderr: tail,
                drain: Some(drain),
                stopped: false,
            },
            Pipes { stdin, stdout },
        ))
    }

    /// The end of the server's stderr as one line (at most 300 characters), or `None`.
    pub(crate) fn stderr_tail(&self) -> Option<String> {
        let bytes: Vec<u8> = match self.stderr.lock() {
            Ok(tail) => tail.iter().copied().collect(),
            Err(poisoned) => poisoned.into_inner().iter().copied().collect(),
        };
        one_line_tail(&String::from_utf8_lossy(&bytes))
    }

    /// Waits (at most half a second) until everything the stopped server wrote to stderr
    /// has been read.
    pub(crate) async fn settle(&mut self) {
        if let Some(drain) = self.drain.take() {
            let _ = tokio::time::timeout(Duration::from_millis(500), drain).await;
        }
    }

    /// How the server ended (`exit code 1`, `killed by signal 9`) if it ends within `wait`
    /// on its own.
    pub(crate) async fn exited_within(&mut self, wait: Duration) -> Option<String> {
        match tokio::time::timeout(wait, self.guard.wait()).await {
            Ok(Ok(status)) => Some(describe_exit(status)),
            _ => None,
        }
    }

    /// Stops the server: waits up to `grace` for it to exit after its stdin closed, then
    /// sends the group SIGTERM, waits `grace` again, then SIGKILL.
    pub(crate) async fn stop(&mut self, grace: Duration) {
        if tokio::time::timeout(grace, self.guard.wait())
            .await
            .is_err()
        {
            signal_group(self.pgid, libc::SIGTERM);
            if tokio::time::timeout(grace, self.guard.wait())
                .await
                .is_err()
            {
                signal_group(self.pgid, libc::SIGKILL);
                let _ = self.guard.wait().await;
            }
        }
        if group_alive(self.pgid) {
            signal_group(self.pgid, libc::SIGKILL);
        }
        self.stopped = true;
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if !self.stopped && group_alive(self.pgid) {
            signal_group(self.pgid, libc::SIGKILL);
        }
    }
}

/// The agent binary, which runs the guard.
fn guard_program() -> OsString {
    OsString::from("/proc/self/exe")
}

async fn drain(mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<u8>>>) {
    let mut buffer = [0u8; 4096];
    while let Ok(read) = stderr.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        let mut tail = match tail.lock() {
            Ok(tail) => tail,
            Err(poisoned) => poisoned.into_inner(),
        };
        tail.extend(&buffer[..read]);
        let excess = tail.len().saturating_sub(STDERR_TAIL);
        tail.drain(..excess);
    }
}

/// The last non-empty lines of `text` joined with ` | `, cut to the last 300 characters.
fn one_line_tail(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let joined = lines.join(" | ");
    if joined.is_empty() {
        return None;
    }
    let count = joined.chars().count();
    Some(if count > QUOTED_STDERR {
        let tail: String = joined.chars().skip(count - QUOTED_STDERR).collect();
        format!("…{tail}")
    } else {
        joined
    })
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "exited".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn stderr_tail_is_one_line() {
        assert_eq!(one_line_tail(""), None);
        assert_eq!(one_line_tail("\n \n"), None);
        assert_eq!(
            one_line_tail("Error: boom\n  at x\n\n"),
            Some("Error: boom | at x".to_string())
        );
        let long = "x".repeat(500);
        let tail = one_line_tail(&long).unwrap_or_default();
        assert_eq!(tail.chars().count(), QUOTED_STDERR + 1);
        assert!(tail.starts_with('…'));
    }
}
