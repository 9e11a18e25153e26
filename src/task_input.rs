//! Where a one-shot task comes from (SPEC §3.3): the PROMPT argument, stdin, or both.
//!
//! - PROMPT and a terminal, `/dev/null` or another character device on stdin: the task is
//!   PROMPT.
//! - PROMPT and a pipe or a file on stdin: what stdin holds is added after PROMPT in a
//!   `<stdin>` block, so `git diff | agent "review this change"` sends the diff (as Claude Code
//!   and `codex exec` do). Empty stdin adds nothing.
//! - No PROMPT and stdin not a terminal: the task is stdin read to EOF (empty is a usage error,
//!   decided by the caller).
//!
//! A pipe with a PROMPT is read only when it has data or is closed within [`PIPE_WAIT`]: an
//! inherited pipe nobody writes to (CI runners, editors, programs that spawn `agent`) would
//! otherwise block forever, a known `codex exec` trap. Then stdin is ignored with a warning
//! that names the fix. Once data arrives, stdin is read to EOF however slow the writer is.

use std::io::Read;
use std::time::Duration;

/// How long a pipe on stdin may stay silent before a PROMPT run ignores it.
pub(crate) const PIPE_WAIT: Duration = Duration::from_secs(2);

/// What fd 0 is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StdinKind {
    /// A terminal: never read for a one-shot task.
    Terminal,
    /// `/dev/null`, another character device, or a closed fd: holds no task text.
    Device,
    /// A regular file (`agent "x" < notes.md`): read at once.
    File,
    /// A pipe or socket: read when it has data or EOF within [`PIPE_WAIT`].
    Pipe,
}

/// Classifies fd 0 with `fstat`.
pub(crate) fn stdin_kind() -> StdinKind {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return StdinKind::Terminal;
    }
    // SAFETY: fstat writes only into the zeroed struct we pass; fd 0 may be closed (EBADF).
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(0, &raw mut stat) } != 0 {
        return StdinKind::Device;
    }
    match stat.st_mode & libc::S_IFMT {
        libc::S_IFREG => StdinKind::File,
        libc::S_IFIFO | libc::S_IFSOCK => StdinKind::Pipe,
        _ => StdinKind::Device,
    }
}

/// Whether fd 0 becomes readable (data or EOF) within `wait`.
fn readable_within(wait: Duration) -> bool {
    let mut fd = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = libc::c_int::try_from(wait.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd, count 1.
    let ready = unsafe { libc::poll(&raw mut fd, 1, millis) };
    ready > 0
}

/// The most stdin may hold for a task (bytes): far more than any context window, small
/// enough that `cat huge.log | agent "..."` cannot grow agent without bound.
pub(crate) const MAX_STDIN_BYTES: u64 = 4 * 1024 * 1024;

/// Why stdin could not be used as (part of) the task.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StdinError {
    /// Reading failed: the system's message.
    #[error("{0}")]
    Read(#[from] std::io::Error),
    /// More than [`MAX_STDIN_BYTES`].
    #[error(
        "it holds more than {} MiB; save it to a file in the workspace and name the file in the \
         task",
        MAX_STDIN_BYTES / (1024 * 1024)
    )]
    TooLarge,
    #[error("stream did not contain valid UTF-8")]
    NotUtf8,
}

/// Reads stdin to EOF as UTF-8, at most [`MAX_STDIN_BYTES`].
///
/// # Errors
/// A [`StdinError`]: the read failed, stdin holds more than [`MAX_STDIN_BYTES`], or it is
/// not UTF-8.
pub(crate) fn read_all() -> Result<String, StdinError> {
    // Bytes first: a cut at the cap may split a character, which is "too big", not bad UTF-8.
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_STDIN_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_STDIN_BYTES {
        return Err(StdinError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|_| StdinError::NotUtf8)
}

/// What stdin adds to a PROMPT run: `Ok(None)` when nothing.
///
/// # Errors
/// As [`read_all`].
pub(crate) fn extra_for_prompt(kind: StdinKind) -> Result<Option<String>, StdinError> {
    match kind {
        StdinKind::Terminal | StdinKind::Device => Ok(None),
        StdinKind::File => read_all().map(Some),
        StdinKind::Pipe if readable_within(PIPE_WAIT) => read_all().map(Some),
        StdinKind::Pipe => {
            crate::errln!(
                "agent: warning: stdin is a pipe that sent nothing in {} s; ignoring it (redirect `</dev/null` when there is no input)",
                PIPE_WAIT.as_secs()
            );
            Ok(None)
        }
    }
}

/// The task for PROMPT plus what came on stdin: stdin goes in a `<stdin>` block after the
/// prompt; blank stdin adds nothing.
pub(crate) fn combine(prompt: &str, stdin: Option<&str>) -> String {
    match stdin.map(|text| text.trim_end_matches(['\n', '\r'])) {
        Some(text) if !text.trim().is_empty() => format!("{prompt}\n\n<stdin>\n{text}\n</stdin>"),
        _ => prompt.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdin_goes_in_a_block_after_the_prompt() {
        assert_eq!(
            combine("review this change", Some("+added\n-removed\n")),
            "review this change\n\n<stdin>\n+added\n-removed\n</stdin>"
        );
    }

    #[test]
    fn blank_or_missing_stdin_leaves_the_prompt_alone() {
        assert_eq!(combine("do it", None), "do it");
        assert_eq!(combine("do it", Some("")), "do it");
        assert_eq!(combine("do it", Some(" \n\n")), "do it");
    }
}
