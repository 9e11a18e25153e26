//! Telling the user that the agent waits or is done (issue 18): when an approval is asked,
//! and when a turn that took at least `[ui] notify_after` (30 s by default) ends. `[ui]
//! notify` picks how: a bell, plus a desktop notification escape where the terminal is known
//! to show one (OSC 9 or OSC 777), or a command of the user's.
//!
//! Only the terminal sink notifies, and only when its activity stream is a terminal: with
//! `--json`, or output to a pipe or a file, nothing is written and no command runs.

use std::time::{Duration, Instant};

use crate::config::Notify;
use crate::config::ui::DesktopEscape;
use crate::events::AgentEvent;

/// Decides which events notify, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Notifier {
    notify: Notify,
    escape: DesktopEscape,
    after: Duration,
    turn_started: Option<Instant>,
}

/// What to do for one notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// Write these bytes to the terminal.
    Write(String),
    /// Run `sh -c COMMAND` with the message as `$1`.
    Run { command: String, message: String },
}

impl Notifier {
    /// A notifier for a stream that is (`tty`) or is not a terminal; `None` when nothing
    /// would ever be notified.
    pub(crate) fn new(
        notify: Notify,
        escape: DesktopEscape,
        after: Duration,
        tty: bool,
    ) -> Option<Self> {
        (tty && notify != Notify::Off).then_some(Self {
            notify,
            escape,
            after,
            turn_started: None,
        })
    }

    /// The action `event` calls for, if any (turn timing is tracked here).
    pub(crate) fn on_event(&mut self, event: &AgentEvent) -> Option<Action> {
        let message = match event {
            AgentEvent::TurnStarted { .. } => {
                self.turn_started = Some(Instant::now());
                return None;
            }
            AgentEvent::ApprovalRequested { tool, .. } => {
                format!("agent needs your approval for {tool}")
            }
            AgentEvent::TurnCompleted { .. } => {
                let took = self.turn_started.take()?.elapsed();
                if took < self.after {
                    return None;
                }
                format!("agent finished after {} s", took.as_secs())
            }
            _ => return None,
        };
        Some(self.action(&message))
    }

    fn action(&self, message: &str) -> Action {
        match &self.notify {
            Notify::Command(command) => Action::Run {
                command: command.clone(),
                message: message.to_string(),
            },
            Notify::Bell | Notify::Off => Action::Write("\x07".into()),
            Notify::Auto => Action::Write(escape(self.escape, message)),
        }
    }
}

/// A bell, then the desktop notification for `message` in the terminal's form.
pub(crate) fn escape(kind: DesktopEscape, message: &str) -> String {
    // The message must not end the escape early or carry other escapes.
    let text: String = message.chars().filter(|c| !c.is_control()).collect();
    match kind {
        DesktopEscape::None => "\x07".to_string(),
        DesktopEscape::Osc9 => format!("\x07\x1b]9;{text}\x07"),
        DesktopEscape::Osc777 => format!("\x07\x1b]777;notify;agent;{text}\x07"),
    }
}

/// Runs the user's notification command without waiting for it (a thread reaps it).
pub(crate) fn run_command(command: &str, message: &str) {
    let child = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .arg("agent-notify")
        .arg(message)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = child {
        std::thread::spawn(move || {
            let _ = child.wait();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval() -> AgentEvent {
        AgentEvent::ApprovalRequested {
            tool: "bash".into(),
            subject: "ls".into(),
            reason: String::new(),
            rule: None,
        }
    }

    fn completed() -> AgentEvent {
        AgentEvent::TurnCompleted {
            usage: None,
            model_calls: 1,
            context_tokens: None,
            context_window: 1000,
        }
    }

    #[test]
    fn nothing_without_a_terminal_or_when_off() {
        assert_eq!(
            Notifier::new(Notify::Auto, DesktopEscape::Osc9, Duration::ZERO, false),
            None
        );
        assert_eq!(
            Notifier::new(Notify::Off, DesktopEscape::Osc9, Duration::ZERO, true),
            None
        );
    }

    #[test]
    fn approvals_and_long_turns_notify_in_the_terminal_s_form() {
        let mut osc9 = Notifier::new(Notify::Auto, DesktopEscape::Osc9, Duration::ZERO, true)
            .expect("a terminal");
        assert_eq!(
            osc9.on_event(&approval()),
            Some(Action::Write(
                "\x07\x1b]9;agent needs your approval for bash\x07".into()
            ))
        );
        assert_eq!(osc9.on_event(&completed()), None, "no turn started");
        assert_eq!(
            osc9.on_event(&AgentEvent::TurnStarted { input: "x".into() }),
            None
        );
        assert_eq!(
            osc9.on_event(&completed()),
            Some(Action::Write(
                "\x07\x1b]9;agent finished after 0 s\x07".into()
            ))
        );
        let mut slow = Notifier::new(
            Notify::Bell,
            DesktopEscape::Osc777,
            Duration::from_secs(30),
            true,
        )
        .expect("a terminal");
        slow.on_event(&AgentEvent::TurnStarted { input: "x".into() });
        assert_eq!(slow.on_event(&completed()), None, "a short turn");
        assert_eq!(
            slow.on_event(&approval()),
            Some(Action::Write("\x07".into()))
        );
        assert_eq!(
            escape(DesktopEscape::Osc777, "a\x1b]b"),
            "\x07\x1b]777;notify;agent;a]b\x07"
        );
        let mut command = Notifier::new(
            Notify::Command("notify-send agent \"$1\"".into()),
            DesktopEscape::None,
            Duration::ZERO,
            true,
        )
        .expect("a terminal");
        assert_eq!(
            command.on_event(&approval()),
            Some(Action::Run {
                command: "notify-send agent \"$1\"".into(),
                message: "agent needs your approval for bash".into()
            })
        );
    }
}
