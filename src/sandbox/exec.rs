//! Runs one shell command: own process group, stdin `/dev/null`, the non-interactive
//! environment of §6, stdout and stderr interleaved through one pipe, output kept as a
//! bounded head and tail, the whole group killed on timeout or interrupt.
//!
//! Completion is keyed on the shell's exit, not on pipe EOF: background processes still
//! holding the pipe are killed with the group once the shell is gone.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::ExecSettings;
use crate::cancel::CancelToken;

/// Environment set for every command so nothing waits for a terminal (§6).
pub const NON_INTERACTIVE_ENV: &[(&str, &str)] = &[
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("EDITOR", "true"),
    ("VISUAL", "true"),
    ("GIT_SEQUENCE_EDITOR", "false"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("CI", "1"),
];

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

/// The captured result of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutcome {
    /// Output (stdout and stderr interleaved), capped to head + tail with an omission note.
    pub output: String,
    pub ending: Ending,
    /// Bytes the command wrote in total.
    pub total_bytes: u64,
    /// Lines the command wrote in total.
    pub total_lines: u64,
    /// Background processes were still running when the shell exited and were killed.
    pub killed_background: bool,
}

/// Runs `command` with `bash -c` in `cwd`.
///
/// # Errors
/// An I/O error when the shell cannot be started.
pub fn run(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    settings: &ExecSettings,
    max_chars: usize,
    cancel: &CancelToken,
) -> std::io::Result<ExecOutcome> {
    use std::os::unix::process::CommandExt;

    let (reader, writer) = std::io::pipe()?;
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .process_group(0);
    for key in &settings.env_remove {
        cmd.env_remove(key);
    }
    for (key, value) in NON_INTERACTIVE_ENV {
        cmd.env(key, value);
    }
    let mut child = cmd.spawn()?;
    drop(cmd);
    let pgid = child.id();
    let (tx, rx) = mpsc::channel();
    let reader_thread = std::thread::spawn(move || capture(reader, max_chars, &tx));
    let started = Instant::now();
    let ending = loop {
        if let Some(status) = child.try_wait()? {
            break Ending::Exited(exit_code(status));
        }
        if cancel.is_cancelled() {
            kill_group(pgid, settings.kill_grace, &mut child);
            break Ending::Interrupted;
        }
        if started.elapsed() >= timeout {
            kill_group(pgid, settings.kill_grace, &mut child);
            break Ending::TimedOut(timeout);
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // Give the reader a moment to drain what the shell wrote; anything still holding the
    // pipe after that is a background process, killed with the group.
    let captured = match rx.recv_timeout(Duration::from_millis(200)) {
        Ok(captured) => captured,
        Err(_) => {
            signal_group(pgid, libc::SIGKILL);
            rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default()
        }
    };
    let killed_background = !reader_thread.is_finished() || captured.background_hint;
    drop(reader_thread);
    Ok(ExecOutcome {
        output: captured.text,
        ending,
        total_bytes: captured.bytes,
        total_lines: captured.lines,
        killed_background,
    })
}

#[derive(Debug, Default)]
struct Captured {
    text: String,
    bytes: u64,
    lines: u64,
    background_hint: bool,
}

fn capture(mut reader: std::io::PipeReader, max_chars: usize, tx: &mpsc::Sender<Captured>) {
    let mut buffer = crate::sandbox::exec::HeadTail::new(max_chars);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buffer.push(&chunk[..n]),
        }
    }
    let (text, bytes, lines) = buffer.finish();
    let _ = tx.send(Captured {
        text,
        bytes,
        lines,
        background_hint: false,
    });
}

/// Keeps the first and last bytes of a stream with memory bounded by the cap.
#[derive(Debug)]
pub struct HeadTail {
    max_chars: usize,
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    bytes: u64,
    lines: u64,
}

impl HeadTail {
    pub fn new(max_chars: usize) -> Self {
        Self {
            max_chars,
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            bytes: 0,
            lines: 0,
        }
    }

    pub fn push(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
        self.lines += data.iter().filter(|&&b| b == b'\n').count() as u64;
        let half = self.max_chars / 2 * 4;
        let room = half.saturating_sub(self.head.len());
        let (to_head, rest) = data.split_at(room.min(data.len()));
        self.head.extend_from_slice(to_head);
        self.tail.extend(rest);
        let excess = self.tail.len().saturating_sub(half);
        self.tail.drain(..excess);
    }

    /// The text (capped at about `max_chars` characters), total bytes and lines.
    pub fn finish(self) -> (String, u64, u64) {
        let head = String::from_utf8_lossy(&self.head).into_owned();
        let tail_bytes: Vec<u8> = self.tail.into_iter().collect();
        let tail = String::from_utf8_lossy(&tail_bytes).into_owned();
        let whole = head.chars().count() + tail.chars().count();
        let text = if whole <= self.max_chars && self.bytes as usize == self.head.len() + tail_bytes.len() {
            format!("{head}{tail}")
        } else {
            let keep = self.max_chars / 2;
            let head: String = head.chars().take(keep).collect();
            let tail_chars: Vec<char> = tail.chars().collect();
            let tail: String = tail_chars[tail_chars.len().saturating_sub(keep)..].iter().collect();
            format!(
                "{head}\n[... output truncated: {} bytes, {} lines in total; showing the first and last {keep} characters ...]\n{tail}",
                self.bytes, self.lines
            )
        };
        (text, self.bytes, self.lines)
    }
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

fn signal_group(pgid: u32, signal: i32) {
    if let Ok(pgid) = i32::try_from(pgid) {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

fn kill_group(pgid: u32, grace: Duration, child: &mut std::process::Child) {
    signal_group(pgid, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    signal_group(pgid, libc::SIGKILL);
    let _ = child.wait();
}
