//! Running one hook command: `sh -c COMMAND` in the workspace, as the user and outside the
//! command sandbox, with the event's JSON on stdin, in its own process group.
//!
//! Invariants: the hook never outlives its run (on timeout, and once the shell has exited,
//! its whole process group is killed, so a background child cannot hold the pipes open);
//! at most [`MAX_CAPTURE`] bytes of each of stdout and stderr are kept, the rest is read and
//! counted but dropped, so a hook printing megabytes costs no memory; nothing here panics.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Bytes of stdout and of stderr kept from one run (more is counted and dropped).
pub(crate) const MAX_CAPTURE: usize = 256 * 1024;

/// How a hook's process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The shell exited with this code.
    Exited(i32),
    /// The shell was killed by this signal (not by us).
    Signal(i32),
    /// It ran past its timeout; its process group was killed.
    TimedOut,
    /// `sh` could not be started.
    CannotStart(String),
}

/// What one run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ran {
    pub(crate) ending: Ending,
    /// The first [`MAX_CAPTURE`] bytes of stdout, lossy UTF-8.
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// All bytes written to stdout, kept or not.
    pub(crate) stdout_bytes: u64,
    pub(crate) took: Duration,
}

/// Runs `command` with `input` on stdin, in `cwd`, with the environment changed by `set`
/// and `remove`; kills its process group after `timeout`.
pub(crate) fn run(
    command: &str,
    input: &[u8],
    cwd: &Path,
    set: &[(String, String)],
    remove: &[String],
    timeout: Duration,
) -> Ran {
    let started = Instant::now();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for key in remove {
        cmd.env_remove(key);
    }
    cmd.envs(set.iter().map(|(k, v)| (k, v)));
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(error) => {
            return Ran {
                ending: Ending::CannotStart(error.to_string()),
                stdout: String::new(),
                stderr: String::new(),
                stdout_bytes: 0,
                took: started.elapsed(),
            };
        }
    };
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    if let Some(mut stdin) = child.stdin.take() {
        let input = input.to_vec();
        // A hook that does not read its stdin must not block us: write from a thread and
        // ignore a closed pipe.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let stdout = child.stdout.take().map(reader);
    let stderr = child.stderr.take().map(reader);
    let (done, exited) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait());
    });
    let status = match exited.recv_timeout(timeout) {
        Ok(status) => Some(status),
        Err(_) => {
            crate::sandbox::process::signal_group(pgid, libc::SIGKILL);
            let _ = exited.recv();
            None
        }
    };
    // Whatever the hook left running dies with it (and lets go of the pipes).
    crate::sandbox::process::signal_group(pgid, libc::SIGKILL);
    let (stdout, stdout_bytes) = stdout.map(collect).unwrap_or_default();
    let (stderr, _) = stderr.map(collect).unwrap_or_default();
    let ending = match status {
        None => Ending::TimedOut,
        Some(Err(error)) => Ending::CannotStart(error.to_string()),
        Some(Ok(status)) => match (status.code(), status.signal()) {
            (Some(code), _) => Ending::Exited(code),
            (None, Some(signal)) => Ending::Signal(signal),
            (None, None) => Ending::Exited(1),
        },
    };
    Ran {
        ending,
        stdout,
        stderr,
        stdout_bytes,
        took: started.elapsed(),
    }
}

type Captured = mpsc::Receiver<(Vec<u8>, u64)>;

/// Reads `pipe` to its end on a thread, keeping the first [`MAX_CAPTURE`] bytes.
fn reader(mut pipe: impl Read + Send + 'static) -> Captured {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut total = 0u64;
        let mut buffer = [0u8; 16 * 1024];
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => {
                    total += n as u64;
                    let room = MAX_CAPTURE.saturating_sub(kept.len());
                    kept.extend_from_slice(&buffer[..n.min(room)]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = tx.send((kept, total));
    });
    rx
}

fn collect(captured: Captured) -> (String, u64) {
    // The group was killed, so the pipe ends soon; a stuck reader is given up on.
    match captured.recv_timeout(Duration::from_secs(5)) {
        Ok((bytes, total)) => (String::from_utf8_lossy(&bytes).into_owned(), total),
        Err(_) => (String::new(), 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(command: &str, timeout: Duration) -> Ran {
        let dir = std::env::temp_dir();
        run(command, b"{\"x\":1}", &dir, &[], &[], timeout)
    }

    #[test]
    fn stdin_exit_codes_and_output() {
        let ran = sh("cat; echo oops >&2; exit 2", Duration::from_secs(20));
        assert_eq!(ran.ending, Ending::Exited(2));
        assert_eq!(ran.stdout, "{\"x\":1}");
        assert_eq!(ran.stderr, "oops\n");
    }

    #[test]
    fn a_hang_is_killed_with_its_group_at_the_timeout() {
        let ran = sh("sleep 30 & sleep 30; echo late", Duration::from_millis(300));
        assert_eq!(ran.ending, Ending::TimedOut);
        assert!(ran.took < Duration::from_secs(10), "{:?}", ran.took);
        assert_eq!(ran.stdout, "");
    }

    #[test]
    fn megabytes_of_output_are_counted_not_kept() {
        let ran = sh(
            "head -c 5000000 /dev/zero | tr '\\0' x",
            Duration::from_secs(30),
        );
        assert_eq!(ran.ending, Ending::Exited(0));
        assert_eq!(ran.stdout.len(), MAX_CAPTURE);
        assert_eq!(ran.stdout_bytes, 5_000_000);
    }

    #[test]
    fn a_signal_and_a_missing_shell_are_endings() {
        assert_eq!(
            sh("kill -9 $$", Duration::from_secs(20)).ending,
            Ending::Signal(9)
        );
        let ran = run(
            "true",
            b"",
            Path::new("/nonexistent-dir-for-hooks"),
            &[],
            &[],
            Duration::from_secs(5),
        );
        assert!(matches!(ran.ending, Ending::CannotStart(_)), "{ran:?}");
    }
}
