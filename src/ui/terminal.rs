//! Text rendering of agent events for a terminal or a pipe.
//!
//! Assistant text streams as it arrives; each tool call is one line (`● bash  ls -la`) with a
//! dimmed preview of its result. Colour only when the stream is a terminal and neither
//! `NO_COLOR` nor `TERM=dumb` is set.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use crate::agent::{AgentEvent, EventSink};

/// Lines of a tool result shown under its tool line.
const PREVIEW_LINES: usize = 4;
/// Characters of one preview line.
const PREVIEW_WIDTH: usize = 160;

/// Where each kind of output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Stdout,
    Stderr,
}

/// Renders events as text.
pub struct TerminalSink {
    /// Assistant text.
    text: Target,
    /// Tool lines, notices, warnings.
    activity: Target,
    color: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The last character written was not a newline.
    mid_line: bool,
    in_reasoning: bool,
}

impl TerminalSink {
    /// `text` receives assistant text, `activity` everything else.
    pub fn new(text: Target, activity: Target, no_color: bool) -> Self {
        let is_tty = match activity {
            Target::Stdout => std::io::stdout().is_terminal(),
            Target::Stderr => std::io::stderr().is_terminal(),
        };
        Self {
            text,
            activity,
            color: is_tty && !no_color,
            state: Mutex::new(State::default()),
        }
    }

    fn write(&self, target: Target, text: &str) {
        let result = match target {
            Target::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes()).and_then(|()| out.flush())
            }
            Target::Stderr => {
                let mut err = std::io::stderr().lock();
                err.write_all(text.as_bytes()).and_then(|()| err.flush())
            }
        };
        // A closed pipe (`agent ... | head`) is not an error worth reporting.
        drop(result);
    }

    fn style(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// Ends a partly written line so the next output starts at column 0.
    fn line_break(&self, state: &mut State, target: Target) {
        if state.mid_line {
            self.write(target, "\n");
            state.mid_line = false;
        }
    }

    fn activity_line(&self, state: &mut State, line: &str) {
        self.line_break(state, self.text);
        self.write(self.activity, &format!("{line}\n"));
    }
}

impl EventSink for TerminalSink {
    fn emit(&self, event: AgentEvent) {
        let mut state = match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        match event {
            AgentEvent::TextDelta { text } => {
                if state.in_reasoning {
                    state.in_reasoning = false;
                    self.line_break(&mut state, self.text);
                }
                self.write(self.text, &text);
                state.mid_line = !text.ends_with('\n');
            }
            AgentEvent::ReasoningDelta { text } => {
                state.in_reasoning = true;
                self.write(self.text, &self.style("2", &text));
                state.mid_line = !text.ends_with('\n');
            }
            AgentEvent::MessageCompleted { .. } => self.line_break(&mut state, self.text),
            AgentEvent::ToolStarted { tool, summary, .. } => {
                let summary = one_line(&summary, PREVIEW_WIDTH);
                let line = format!("{} {}  {summary}", self.style("36", "●"), self.style("1", &tool));
                self.activity_line(&mut state, &line);
            }
            AgentEvent::ToolFinished { ok, output, .. } => {
                let lines: Vec<&str> = output.lines().collect();
                let mut preview = String::new();
                for line in lines.iter().take(PREVIEW_LINES) {
                    preview.push_str(&format!("  {}\n", one_line(line, PREVIEW_WIDTH)));
                }
                if lines.len() > PREVIEW_LINES {
                    preview.push_str(&format!("  … {} more lines\n", lines.len() - PREVIEW_LINES));
                }
                let code = if ok { "2" } else { "2;31" };
                if !preview.is_empty() {
                    self.write(self.activity, &self.style(code, &preview));
                }
            }
            AgentEvent::ApprovalRequested { .. } | AgentEvent::TurnStarted { .. } => {}
            AgentEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason,
            } => {
                let line = format!(
                    "retrying in {} s (attempt {attempt}/{max_attempts}): {reason}",
                    delay.as_secs_f64().ceil()
                );
                self.activity_line(&mut state, &self.style("33", &line));
            }
            AgentEvent::Notice { message } => {
                self.activity_line(&mut state, &self.style("2", &message));
            }
            AgentEvent::Warning { message } => {
                self.activity_line(&mut state, &self.style("33", &format!("warning: {message}")));
            }
            AgentEvent::Error { message } => {
                self.activity_line(&mut state, &self.style("31", &format!("error: {message}")));
            }
            AgentEvent::SessionStarted { model, workspace, sandbox, .. } => {
                let line = format!("agent · {model} · {} · {sandbox}", workspace.display());
                self.activity_line(&mut state, &self.style("2", &line));
            }
            AgentEvent::TurnCompleted {
                usage,
                context_tokens,
                context_window,
                ..
            } => {
                let line = usage_line(usage.as_ref(), context_tokens, context_window);
                self.activity_line(&mut state, &self.style("2", &line));
            }
        }
    }
}

/// `tokens 1200 in / 80 out · context 1% of 128000`, or `usage unknown`.
pub fn usage_line(
    usage: Option<&crate::model::Usage>,
    context_tokens: Option<u64>,
    context_window: u64,
) -> String {
    let Some(usage) = usage else {
        return "usage unknown".to_string();
    };
    let mut line = format!(
        "tokens {} in / {} out",
        usage.prompt_tokens, usage.completion_tokens
    );
    if let Some(cached) = usage.cached_tokens {
        line.push_str(&format!(" ({cached} cached)"));
    }
    if let Some(cost) = usage.cost {
        line.push_str(&format!(" · ${cost:.4}"));
    }
    if let Some(tokens) = context_tokens.filter(|_| context_window > 0) {
        line.push_str(&format!(
            " · context {}% of {context_window}",
            tokens * 100 / context_window
        ));
    }
    line
}

/// The first line of `text`, cut to `width` characters with `…`.
pub fn one_line(text: &str, width: usize) -> String {
    let first = text.lines().next().unwrap_or("");
    let more = text.lines().nth(1).is_some();
    let mut out: String = first.chars().take(width).collect();
    if first.chars().count() > width || more {
        out.push('…');
    }
    out
}
