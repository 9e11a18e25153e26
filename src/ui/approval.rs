//! The approval prompt on the terminal (§5.3).
//!
//! Shows the full command (control and invisible characters escaped, see [`super::visible`]),
//! then every part with its verdict, and for each part that needs approval its reason and the
//! rule that matched. Answers: `y` once, `n` or Enter no, `a` always for this session (the
//! prompt says exactly which command prefixes), `e` no and tell the model why. Any other key,
//! Ctrl-C or a read error is no. Pending type-ahead is discarded before the key is read, so a
//! keystroke typed before the prompt appeared cannot answer it. Reads from `/dev/tty`, so it
//! works in one-shot mode with stdin and stdout redirected.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::sync::Mutex;

use crate::permissions::{ApprovalAnswer, ApprovalRequest, Approver, Decision};
use crate::visible::escape_invisible;

/// Parts listed in full; the rest are counted.
const MAX_PARTS_SHOWN: usize = 12;

/// Asks on the controlling terminal.
pub(crate) struct TerminalApprover {
    tty: Mutex<File>,
    color: bool,
}

impl TerminalApprover {
    /// `None` when there is no controlling terminal.
    pub(crate) fn open(color: bool) -> Option<Self> {
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

/// What the tool will do, for the first line.
fn action(tool: &str) -> &'static str {
    match tool {
        "bash" => "run",
        "read_file" => "read",
        "write_file" | "str_replace" => "write",
        _ => "use",
    }
}

/// The prompt text for `request` (without colour or the key line).
pub(crate) fn prompt_text(request: &ApprovalRequest) -> String {
    let mut text = format!(
        "\n  {} wants to {}:\n    {}\n",
        escape_invisible(&request.tool),
        action(&request.tool),
        escape_invisible(&request.subject)
    );
    let parts = &request.evaluation.parts;
    let single = parts.len() == 1 && parts[0].command == request.subject;
    for part in parts.iter().take(MAX_PARTS_SHOWN) {
        if !single {
            text.push_str(&format!(
                "  {:<5}  {}\n",
                part.decision.to_string(),
                escape_invisible(&part.command)
            ));
        }
        if part.decision != Decision::Allow {
            let rule = part
                .rule
                .as_ref()
                .map(|r| format!(" (rule: {r})"))
                .unwrap_or_default();
            text.push_str(&format!(
                "         {}{}\n",
                escape_invisible(&part.reason),
                escape_invisible(&rule)
            ));
        }
    }
    if parts.len() > MAX_PARTS_SHOWN {
        text.push_str(&format!(
            "  ... and {} more parts\n",
            parts.len() - MAX_PARTS_SHOWN
        ));
    }
    text
}

/// The answer line; `a` names what it would allow for the rest of the session.
pub(crate) fn keys_text(request: &ApprovalRequest) -> String {
    let asked: Vec<String> = request
        .evaluation
        .parts
        .iter()
        .filter(|p| p.decision == Decision::Ask)
        .map(|p| format!("`{}`", escape_invisible(&p.command)))
        .collect();
    let always = match asked.as_slice() {
        [] => "always this session".to_string(),
        [one] => format!("always {one} this session"),
        many => format!("always these {} this session", many.len()),
    };
    format!("[y] yes  [n] no (Enter)  [a] {always}  [e] no, and tell the model why")
}

/// The answer for one key.
pub(crate) fn answer_for(key: Option<u8>) -> Option<ApprovalAnswer> {
    match key {
        Some(b'y' | b'Y') => Some(ApprovalAnswer::Yes),
        Some(b'a' | b'A') => Some(ApprovalAnswer::Always),
        Some(b'e' | b'E') => None,
        _ => Some(ApprovalAnswer::No),
    }
}

impl Approver for TerminalApprover {
    fn ask(&self, request: &ApprovalRequest) -> ApprovalAnswer {
        let mut tty = match self.tty.lock() {
            Ok(tty) => tty,
            Err(poisoned) => poisoned.into_inner(),
        };
        let text = format!(
            "{}  {}\n  {} ",
            self.style("33", &prompt_text(request)),
            self.style("2", &keys_text(request)),
            self.style("1", "allow? ")
        );
        let key = read_key(&mut tty, &text);
        if key == Some(CTRL_C) {
            // Ctrl-C arrives as a key while the prompt owns the terminal: decline, and let the
            // dispatcher interrupt the turn (§3.4).
            let _ = tty.write_all(b"interrupted\n");
            return ApprovalAnswer::Interrupted;
        }
        let answer = match answer_for(key) {
            Some(answer) => answer,
            None => {
                let _ = tty.write_all(b"e\n  tell the model why: ");
                ApprovalAnswer::Explain(read_line(&mut tty))
            }
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

/// The byte Ctrl-C sends when signals are off.
const CTRL_C: u8 = 0x03;

/// Shows `prompt`, then reads one byte from the terminal in non-canonical mode, without echo
/// and without signal keys (Ctrl-C is read as [`CTRL_C`]). Input typed before the prompt
/// appeared is discarded first, so a key pressed earlier cannot answer it; a key pressed once
/// it is visible is kept. `None` at EOF or error (`Unavailable`).
fn read_key(tty: &mut File, prompt: &str) -> Option<u8> {
    let fd = tty.as_raw_fd();
    // SAFETY: termios is plain data; tcgetattr fills it for a valid fd.
    let mut original: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd is an open terminal owned by `tty` for the duration of the call.
    if unsafe { libc::tcgetattr(fd, &raw mut original) } != 0 {
        tty.write_all(prompt.as_bytes()).ok()?;
        return read_line(tty).bytes().next().or(Some(b'\n'));
    }
    let mut raw = original;
    raw.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG);
    raw.c_cc[libc::VMIN] = 1;
    raw.c_cc[libc::VTIME] = 0;
    // SAFETY: as above; TCSAFLUSH also drops input typed before the prompt. The original
    // settings are restored below.
    unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &raw const raw) };
    if tty.write_all(prompt.as_bytes()).is_err() {
        // SAFETY: restores the settings read above.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw const original) };
        return None;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::{Evaluation, PartVerdict, Rule, RuleSource};
    use pretty_assertions::assert_eq;

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            tool: "bash".into(),
            subject: "git status && cargo build\u{200b} > log.txt".into(),
            evaluation: Evaluation::from_parts(vec![
                PartVerdict {
                    command: "git status".into(),
                    decision: Decision::Allow,
                    rule: None,
                    reason: "read-only git".into(),
                },
                PartVerdict {
                    command: "cargo build\u{200b} > log.txt".into(),
                    decision: Decision::Ask,
                    rule: Some(Rule {
                        tool: "bash".into(),
                        pattern: "*".into(),
                        action: Decision::Ask,
                        source: RuleSource::Default,
                    }),
                    reason: "writes to the file `log.txt`".into(),
                },
            ]),
        }
    }

    #[test]
    fn prompt_shows_every_part_with_reason_and_rule() {
        assert_eq!(
            prompt_text(&request()),
            "\n  bash wants to run:\n    git status && cargo build\\u200b > log.txt\n  \
             allow  git status\n  ask    cargo build\\u200b > log.txt\n         \
             writes to the file `log.txt` (rule: ask bash `*` (default))\n"
        );
        assert_eq!(
            keys_text(&request()),
            "[y] yes  [n] no (Enter)  [a] always `cargo build\\u200b > log.txt` this session  \
             [e] no, and tell the model why"
        );
    }

    #[test]
    fn enter_and_unknown_keys_are_no() {
        assert_eq!(answer_for(Some(b'\n')), Some(ApprovalAnswer::No));
        assert_eq!(answer_for(Some(b'x')), Some(ApprovalAnswer::No));
        assert_eq!(answer_for(Some(3)), Some(ApprovalAnswer::No));
        assert_eq!(answer_for(None), Some(ApprovalAnswer::No));
        assert_eq!(answer_for(Some(b'y')), Some(ApprovalAnswer::Yes));
        assert_eq!(answer_for(Some(b'a')), Some(ApprovalAnswer::Always));
        assert_eq!(answer_for(Some(b'e')), None);
    }

    #[test]
    fn file_prompt_is_one_line_per_path() {
        let request = ApprovalRequest {
            tool: "write_file".into(),
            subject: "/etc/hosts".into(),
            evaluation: Evaluation::from_parts(vec![PartVerdict {
                command: "/etc/hosts".into(),
                decision: Decision::Ask,
                rule: None,
                reason: "outside the workspace".into(),
            }]),
        };
        assert_eq!(
            prompt_text(&request),
            "\n  write_file wants to write:\n    /etc/hosts\n         outside the workspace\n"
        );
    }
}
