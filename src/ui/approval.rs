//! The approval prompt on the terminal (§5.3): `y` once, `n` or Enter no, `a` always for
//! this session, `e` deny and tell the model why. Reads one key from `/dev/tty`, so it works
//! in one-shot mode with stdin and stdout redirected.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::sync::Mutex;

use crate::permissions::{ApprovalAnswer, ApprovalRequest, Approver};
use crate::ui::visible::escape_invisible;

/// Asks on the controlling terminal.
pub struct TerminalApprover {
    tty: Mutex<File>,
    color: bool,
}

impl TerminalApprover {
    /// `None` when there is no controlling terminal.
    pub fn open(color: bool) -> Option<Self> {
        let tty = OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        Some(Self {
            tty: Mutex::new(tty),
            color,
        })
    }

    fn style(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// The prompt text for `request` (without colour).
pub fn prompt_text(request: &ApprovalRequest) -> String {
    let mut text = format!(
        "\n  {} wants to {}:\n    {}\n",
        request.tool,
        if request.tool == "bash" {
            "run"
        } else {
            "access"
        },
        escape_invisible(&request.subject)
    );
    for part in request
        .evaluation
        .parts
        .iter()
        .filter(|p| p.decision == request.evaluation.decision)
    {
        let rule = part
            .rule
            .as_ref()
            .map(|r| format!("; rule: {r}"))
            .unwrap_or_default();
        text.push_str(&format!(
            "    {}: {}{rule}\n",
            escape_invisible(&part.command),
            part.reason
        ));
    }
    text
}

impl Approver for TerminalApprover {
    fn ask(&self, request: &ApprovalRequest) -> ApprovalAnswer {
        let mut tty = match self.tty.lock() {
            Ok(tty) => tty,
            Err(poisoned) => poisoned.into_inner(),
        };
        let keys = "[y] yes  [n] no (Enter)  [a] always this session  [e] no, and explain";
        let text = format!(
            "{}  {}\n  {} ",
            self.style("33", &prompt_text(request)),
            self.style("2", keys),
            self.style("1", "allow? ")
        );
        if tty.write_all(text.as_bytes()).is_err() {
            return ApprovalAnswer::Unavailable;
        }
        let key = read_key(&mut tty);
        let answer = match key {
            Some(b'y' | b'Y') => ApprovalAnswer::Yes,
            Some(b'a' | b'A') => ApprovalAnswer::Always,
            Some(b'e' | b'E') => {
                let _ = tty.write_all(b"e\n  tell the model why: ");
                ApprovalAnswer::Explain(read_line(&mut tty))
            }
            None => ApprovalAnswer::Unavailable,
            Some(_) => ApprovalAnswer::No,
        };
        let shown = match answer {
            ApprovalAnswer::Yes => "yes\n",
            ApprovalAnswer::Always => "always\n",
            ApprovalAnswer::Explain(_) => "",
            _ => "no\n",
        };
        let _ = tty.write_all(shown.as_bytes());
        answer
    }
}

/// One byte from the terminal in non-canonical mode, without echo. `None` at EOF or error.
fn read_key(tty: &mut File) -> Option<u8> {
    let fd = tty.as_raw_fd();
    // SAFETY: termios is plain data; tcgetattr fills it for a valid fd.
    let mut original: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd is an open terminal owned by `tty` for the duration of the call.
    if unsafe { libc::tcgetattr(fd, &raw mut original) } != 0 {
        return read_line(tty).bytes().next().or(Some(b'\n'));
    }
    let mut raw = original;
    raw.c_lflag &= !(libc::ICANON | libc::ECHO);
    raw.c_cc[libc::VMIN] = 1;
    raw.c_cc[libc::VTIME] = 0;
    // SAFETY: as above; the original settings are restored below.
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw const raw) };
    let mut byte = [0u8; 1];
    let read = tty.read(&mut byte);
    // SAFETY: restores the settings read above.
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw const original) };
    match read {
        Ok(1) => Some(byte[0]),
        _ => None,
    }
}

fn read_line(tty: &mut File) -> String {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while let Ok(1) = tty.read(&mut byte) {
        if byte[0] == b'\n' || byte[0] == b'\r' {
            break;
        }
        line.push(byte[0]);
    }
    String::from_utf8_lossy(&line).into_owned()
}
