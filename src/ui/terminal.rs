//! Text rendering of agent events for a terminal or a pipe (SPEC §10).
//!
//! Assistant text streams as rendered markdown ([`super::markdown`]); each tool call is one
//! line (`● bash  cargo test`) followed by a dimmed preview of its result, or by a coloured
//! diff for file edits; a spinner shows while the model or a tool is being waited for (and,
//! while a reply that may be a tool call is held back, `writing N chars`); a usage line ends
//! each turn; a blank line separates blocks.
//!
//! Each output stream gets its own [`Painter`]: colour and markdown only when that stream is
//! a terminal and neither `NO_COLOR` nor `TERM=dumb` is set. Plain mode writes no escape
//! code at all and prints the model's text as it came (less control characters), which is
//! the most useful form for logs and pipes. The spinner and width fitting exist only in
//! colour mode. Text from the model and from tools is cleaned of escape sequences in both
//! modes, so it cannot drive the terminal.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::markdown::MarkdownStream;
use super::notify::{self, Action, Notifier};
use super::spinner::{self, Canvas, Waiting};
use super::style::{ColorEnv, Painter};
use super::{diff, highlight, lines, text, theme};
use crate::events::{AgentEvent, EventSink};
use crate::tools::ToolDisplay;

/// Diff lines shown for one edit.
const DIFF_LINES: usize = 40;
/// How often the terminal width is read again.
const WIDTH_REFRESH: Duration = Duration::from_millis(250);

/// Where each kind of output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Stdout,
    Stderr,
}

/// How wide the output is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// The terminal's current width (read again as it changes).
    Terminal,
    /// A fixed number of columns (tests, benchmarks); 0 = no fitting.
    Fixed(usize),
}

/// One output stream and what is known about its cursor.
struct Stream {
    out: Box<dyn Write + Send>,
    painter: Painter,
    /// The last character written was not a newline.
    mid_line: bool,
}

impl Stream {
    fn write(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        // A closed pipe (`agent ... | head`) is not an error worth reporting.
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
        self.mid_line = !text.ends_with('\n');
    }

    fn end_line(&mut self) {
        if self.mid_line {
            self.write("\n");
        }
    }
}

/// The whole screen state behind one lock (shared with the spinner thread).
struct Screen {
    text: Stream,
    /// `None`: activity goes to the text stream.
    activity: Option<Stream>,
    markdown: MarkdownStream,
    width: Width,
    cached_width: (usize, Option<Instant>),
    /// A message's text has started (its block gap is written).
    in_message: bool,
    in_reasoning: bool,
    /// Something was printed in this turn: the next block starts after a blank line.
    gap_pending: bool,
    waiting: Option<Waiting>,
    /// When the running tool started (after its approval, if it needed one).
    tool_started: Option<Instant>,
    spinner_enabled: bool,
    spinner_drawn: bool,
    /// The activity stream is a terminal (notifications go only there).
    activity_tty: bool,
    /// Bell / desktop notification on approvals and long turns (issue 18).
    notifier: Option<Notifier>,
}

/// Renders events as text on the terminal or a pipe.
pub struct TerminalSink {
    screen: Arc<Mutex<Screen>>,
}

impl TerminalSink {
    /// `text` receives assistant text, `activity` everything else; colour is decided per
    /// stream from whether it is a terminal and from `env`.
    pub(crate) fn new(text: Target, activity: Target, env: ColorEnv) -> Self {
        let (text_out, text_tty) = open(text);
        let activity_out = (activity != text).then(|| open(activity));
        let activity_tty = activity_out.as_ref().map_or(text_tty, |(_, tty)| *tty);
        let text_painter = Painter::for_stream(env, text_tty);
        let activity_painter = Painter::for_stream(env, activity_tty);
        // Lines are fitted to the terminal; a pipe or file gets them whole.
        let width = if activity_tty {
            Width::Terminal
        } else {
            Width::Fixed(0)
        };
        let sink = Self::with_writers(
            (text_out, text_painter),
            activity_out.map(|(out, _)| (out, activity_painter)),
            width,
        );
        sink.lock().activity_tty = activity_tty;
        if !activity_painter.is_plain() {
            sink.enable_spinner();
        }
        if !text_painter.is_plain() {
            highlight::warm_up();
        }
        sink
    }

    /// A sink writing to the given streams with their painters; `activity` `None` shares the
    /// text stream. No spinner (see [`TerminalSink::enable_spinner`]).
    pub fn with_writers(
        text: (Box<dyn Write + Send>, Painter),
        activity: Option<(Box<dyn Write + Send>, Painter)>,
        width: Width,
    ) -> Self {
        let stream = |(out, painter): (Box<dyn Write + Send>, Painter)| Stream {
            out,
            painter,
            mid_line: false,
        };
        let text = stream(text);
        let markdown = MarkdownStream::new(text.painter, 0).without_waiting();
        Self {
            screen: Arc::new(Mutex::new(Screen {
                text,
                activity: activity.map(stream),
                markdown,
                width,
                cached_width: (0, None),
                in_message: false,
                in_reasoning: false,
                gap_pending: false,
                waiting: None,
                tool_started: None,
                spinner_enabled: false,
                spinner_drawn: false,
                activity_tty: false,
                notifier: None,
            })),
        }
    }

    /// Notifies approvals and turns longer than `ui.notify_after` as `ui.notify` says, when
    /// the activity stream is a terminal ([`super::notify`]).
    pub(crate) fn enable_notifications(&self, ui: &crate::config::UiSettings) {
        let mut screen = self.lock();
        screen.notifier = Notifier::new(
            ui.notify.clone(),
            ui.escape,
            ui.notify_after,
            screen.activity_tty,
        );
    }

    /// Shows a spinner while waiting (only call for a terminal in colour mode).
    pub(crate) fn enable_spinner(&self) {
        self.lock().spinner_enabled = true;
        spinner::spawn(&self.screen);
    }

    fn lock(&self) -> MutexGuard<'_, Screen> {
        match self.screen.lock() {
            Ok(screen) => screen,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

fn open(target: Target) -> (Box<dyn Write + Send>, bool) {
    match target {
        Target::Stdout => (Box::new(std::io::stdout()), std::io::stdout().is_terminal()),
        Target::Stderr => (Box::new(std::io::stderr()), std::io::stderr().is_terminal()),
    }
}

impl EventSink for TerminalSink {
    fn emit(&self, event: AgentEvent) {
        let mut screen = self.lock();
        if let AgentEvent::TextHeld { chars } = event {
            // Progress only: the next spinner frame shows it; nothing is printed.
            screen.held(chars);
            return;
        }
        screen.clear_spinner();
        screen.handle(event);
    }
}

impl Canvas for Screen {
    fn tick(&mut self, index: usize) {
        let Some(waiting) = self.waiting else {
            return;
        };
        let elapsed = waiting.since.elapsed();
        if !self.spinner_enabled || elapsed < spinner::DELAY {
            return;
        }
        // Draw only at the start of a line (or over our own previous frame).
        if !self.spinner_drawn && (self.text.mid_line || self.activity().mid_line) {
            return;
        }
        let width = self.width();
        let stream = self.activity();
        let frame = spinner::frame(index, &waiting, elapsed, stream.painter, width);
        stream.write(&format!("{}{frame}", spinner::CLEAR));
        self.spinner_drawn = true;
    }
}

impl Screen {
    fn activity(&mut self) -> &mut Stream {
        self.activity.as_mut().unwrap_or(&mut self.text)
    }

    /// Erases the spinner frame, if one is on screen.
    fn clear_spinner(&mut self) {
        if self.spinner_drawn {
            self.spinner_drawn = false;
            let stream = self.activity();
            stream.write(spinner::CLEAR);
            stream.mid_line = false;
        }
    }

    fn wait(&mut self, label: &'static str) {
        if self.waiting.map(|w| w.label) != Some(label) {
            self.waiting = Some(Waiting {
                label,
                since: Instant::now(),
                chars: None,
            });
        }
    }

    /// A reply is being written but held back: the spinner says `writing` with the count.
    /// Reasoning shown before it is over (the reply's text has started).
    fn held(&mut self, chars: usize) {
        if self.in_reasoning {
            self.clear_spinner();
            self.in_reasoning = false;
            self.text.end_line();
            self.gap_pending = true;
        }
        self.wait("writing");
        if let Some(waiting) = self.waiting.as_mut() {
            waiting.chars = Some(chars);
        }
    }

    /// Columns to fit output to (0 = no fitting).
    fn width(&mut self) -> usize {
        match self.width {
            Width::Fixed(width) => width,
            Width::Terminal => {
                let (width, at) = self.cached_width;
                if at.is_none_or(|at| at.elapsed() > WIDTH_REFRESH) {
                    let width = crossterm::terminal::size().map_or(0, |(w, _)| usize::from(w));
                    self.cached_width = (width, Some(Instant::now()));
                    return width;
                }
                width
            }
        }
    }

    fn handle(&mut self, event: AgentEvent) {
        let action = self.notifier.as_mut().and_then(|n| n.on_event(&event));
        self.render(event);
        match action {
            Some(Action::Write(bytes)) => {
                // Raw: the escape must reach the terminal as it is, and moves no cursor.
                let stream = self.activity();
                let _ = stream.out.write_all(bytes.as_bytes());
                let _ = stream.out.flush();
            }
            Some(Action::Run { command, message }) => notify::run_command(&command, &message),
            None => {}
        }
    }

    fn render(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::TextDelta { text } => self.text_delta(&text),
            AgentEvent::TextHeld { chars } => self.held(chars),
            AgentEvent::ReasoningDelta { text } => self.reasoning_delta(&text),
            AgentEvent::MessageCompleted { .. } => {
                self.end_message();
            }
            AgentEvent::ToolStarted { tool, summary, .. } => {
                self.waiting = None;
                self.end_message();
                self.gap();
                let width = self.width();
                let stream = self.activity();
                stream.write(&lines::tool_line(&tool, &summary, stream.painter, width));
                self.tool_started = Some(Instant::now());
                self.wait("running");
            }
            AgentEvent::ApprovalRequested { .. } => {
                // The approver writes its prompt on the terminal next: nothing may be drawn.
                self.waiting = None;
                self.end_message();
            }
            AgentEvent::ApprovalAnswered { approved, .. } => {
                if approved {
                    self.tool_started = Some(Instant::now());
                    self.wait("running");
                }
            }
            AgentEvent::ToolFinished {
                ok,
                output,
                display,
                duration,
                ..
            } => self.tool_finished(ok, &output, display.as_ref(), duration),
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
                self.notice(&line, theme::WARNING);
                self.waiting = None;
                self.wait("thinking");
            }
            AgentEvent::Notice { message } => self.notice(&message, theme::SECONDARY),
            AgentEvent::TodosChanged { todos } => {
                self.notice(&todos_block(&todos, ""), theme::SECONDARY);
            }
            AgentEvent::Subagent { event } => self.child_event(*event),
            AgentEvent::CheckpointSaved {
                files,
                skipped,
                first,
                duration,
                ..
            } => {
                // Only a first snapshot the user waited for is worth a line (a large
                // tree); a quick one is as silent as the later ones.
                if first && duration >= lines::CHECKPOINT_LINE_AFTER {
                    let line = lines::checkpoint_line(files, duration);
                    self.notice(&line, theme::SECONDARY);
                }
                for note in skipped {
                    let line = format!("warning: checkpoint: not captured: {note}");
                    self.notice(&line, theme::WARNING);
                }
            }
            // The command that restored prints its own report.
            AgentEvent::CheckpointRestored { .. } => {}
            AgentEvent::HookRan {
                warning: Some(message),
                ..
            }
            | AgentEvent::Warning { message } => {
                self.notice(&format!("warning: {message}"), theme::WARNING);
            }
            // A hook that did its job is seen through what it did (a blocked call's result).
            AgentEvent::HookRan { warning: None, .. } => {}
            AgentEvent::Error { message } => {
                self.notice(&format!("error: {message}"), theme::ERROR)
            }
            AgentEvent::SessionStarted {
                model,
                workspace,
                sandbox,
                coach,
                ..
            } => {
                let line = format!(
                    "agent {} · {model} · {} · {sandbox} · {coach}",
                    env!("CARGO_PKG_VERSION"),
                    home_relative(&workspace)
                );
                self.notice(&line, theme::SECONDARY);
            }
            AgentEvent::TurnStarted { .. } => {
                // A blank line between the user's input and the first output.
                self.gap_pending = true;
                self.wait("thinking");
            }
            AgentEvent::TurnCompleted {
                usage,
                model_calls,
                context_tokens,
                context_window,
            } => {
                self.waiting = None;
                self.end_message();
                let line =
                    lines::usage_line(usage.as_ref(), model_calls, context_tokens, context_window);
                self.notice(&line, theme::SECONDARY);
                self.gap_pending = false;
            }
        }
    }

    fn text_delta(&mut self, delta: &str) {
        self.waiting = None;
        if self.in_reasoning {
            self.in_reasoning = false;
            self.text.end_line();
            self.gap_pending = true;
            self.in_message = false;
        }
        let cleaned = clean_stream(delta);
        if !self.in_message {
            if cleaned.trim().is_empty() {
                return;
            }
            self.in_message = true;
            self.gap();
        }
        if self.text.painter.is_plain() {
            self.text.write(&cleaned);
        } else {
            let width = self.width();
            self.markdown.set_width(width);
            let mut out = String::new();
            self.markdown.push(&cleaned, &mut out);
            self.text.write(&out);
        }
    }

    fn reasoning_delta(&mut self, delta: &str) {
        self.waiting = None;
        let cleaned = clean_stream(delta);
        if !self.in_reasoning {
            if cleaned.trim().is_empty() {
                return;
            }
            self.end_message();
            self.gap();
            self.in_reasoning = true;
        }
        let painted = self.text.painter.paint(theme::REASONING, &cleaned);
        self.text.write(&painted);
    }

    /// Finishes the message being shown (renders what waits, ends the line).
    fn end_message(&mut self) {
        if self.in_message && !self.text.painter.is_plain() {
            let mut out = String::new();
            self.markdown.finish(&mut out);
            self.text.write(&out);
        }
        if self.in_message || self.in_reasoning {
            self.gap_pending = true;
        }
        self.in_message = false;
        self.in_reasoning = false;
        self.text.end_line();
    }

    fn tool_finished(
        &mut self,
        ok: bool,
        output: &str,
        display: Option<&ToolDisplay>,
        duration: Duration,
    ) {
        // The time the user spent on an approval is not the tool's.
        let duration = self
            .tool_started
            .take()
            .map_or(duration, |started| duration.min(started.elapsed()));
        let width = self.width();
        let stream = self.activity();
        let painter = stream.painter;
        let rendered = match display {
            Some(ToolDisplay::Diff { before, after, .. }) if ok => {
                diff::render(before, after, painter, width, DIFF_LINES)
            }
            _ => lines::preview(output, ok, duration, painter, width),
        };
        stream.write(&rendered);
        self.gap_pending = true;
        self.waiting = None;
        self.wait("thinking");
    }

    /// A line of activity in `style`, on a line of its own.
    fn notice(&mut self, line: &str, style: super::style::Style) {
        self.end_message();
        let cleaned = text::clean(line, 4);
        let stream = self.activity();
        let painted = stream.painter.paint(style, &cleaned);
        stream.write(&format!("{painted}\n"));
    }

    /// A subagent's event, indented under the parent's `task` line; its successful tool
    /// results are not previewed (only the subagent's answer matters to the parent).
    fn child_event(&mut self, event: AgentEvent) {
        const INDENT: &str = "    ";
        match event {
            AgentEvent::ToolStarted { tool, summary, .. } => {
                self.waiting = None;
                self.end_message();
                let width = self.width().saturating_sub(INDENT.len());
                let stream = self.activity();
                let line = lines::tool_line(&tool, &summary, stream.painter, width);
                stream.write(&format!("{INDENT}{line}"));
                self.wait("running");
            }
            AgentEvent::ToolFinished {
                ok: false, output, ..
            } => {
                let width = self.width().saturating_sub(INDENT.len() + 2);
                self.notice(
                    &format!("{INDENT}  {}", one_line(&output, width)),
                    theme::ERROR,
                );
            }
            AgentEvent::Notice { message } => {
                self.notice(&format!("{INDENT}{message}"), theme::SECONDARY);
            }
            AgentEvent::Warning { message } => {
                self.notice(&format!("{INDENT}warning: {message}"), theme::WARNING);
            }
            AgentEvent::Error { message } => {
                self.notice(&format!("{INDENT}error: {message}"), theme::ERROR);
            }
            AgentEvent::Retrying { reason, .. } => {
                self.notice(&format!("{INDENT}retrying: {reason}"), theme::WARNING);
            }
            AgentEvent::TodosChanged { todos } => {
                self.notice(&todos_block(&todos, INDENT), theme::SECONDARY);
            }
            _ => {}
        }
    }

    /// A blank line before a new block, when something was printed before it in this turn.
    fn gap(&mut self) {
        self.text.end_line();
        if self.gap_pending {
            self.gap_pending = false;
            self.activity().write("\n");
        }
        self.gap_pending = true;
    }
}

/// Model text for the screen: escape sequences and control characters removed (tabs and
/// newlines kept).
fn clean_stream(text: &str) -> String {
    if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        text::clean(text, 4)
    } else {
        text.to_string()
    }
}

/// `~/work/project` for a path under the home directory.
fn home_relative(path: &std::path::Path) -> String {
    match dirs::home_dir().and_then(|home| path.strip_prefix(home).ok().map(|p| p.to_path_buf())) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

/// The todo list as shown after a change, each line prefixed with `indent`.
pub(crate) fn todos_block(todos: &[crate::tools::todos::Todo], indent: &str) -> String {
    if todos.is_empty() {
        return format!("{indent}todos: (empty)");
    }
    let mut out = format!("{indent}todos:");
    for line in crate::tools::todos::render(todos).lines() {
        out.push_str(&format!("\n{indent}  {line}"));
    }
    out
}

/// The first line of `text`, cut to `width` characters with `…` (also when more lines follow).
pub(crate) fn one_line(text: &str, width: usize) -> String {
    let first = text.lines().next().unwrap_or("");
    let more = text.lines().nth(1).is_some();
    let mut out: String = first.chars().take(width).collect();
    if first.chars().count() > width || more {
        out.push('…');
    }
    out
}
