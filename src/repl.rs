//! The outer loop at a terminal (SPEC §3.1): read a line, run slash commands or a turn.
//!
//! Input: rustyline with persistent history, Alt-Enter or a trailing `\` for a new line, Tab
//! completion of slash commands and paths ([`crate::ui::input`]). Ctrl-C clears a line with
//! text; on an empty line it warns once and exits the second time in a row; Ctrl-D on an
//! empty line exits. During a turn Ctrl-C cancels it (§3.4) and the prompt comes back.
//!
//! To add a slash command: a row in [`COMMANDS`] (shown by `/help`, completed with Tab), a
//! variant of [`Input`] with its arm in [`Input::parse`], and its handling in [`run`].
//! A slash command that is not built in runs the custom command or skill of that name
//! ([`crate::context::commands`]), which `/help` lists and Tab completes too.

mod checkpoints;

use std::path::Path;

use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{Cmd, CompletionType, Config, Editor, EventHandler, KeyCode, KeyEvent, Modifiers};

use crate::agent::{Agent, TurnOutcome};
use crate::cancel::CancelToken;
use crate::config::UiSettings;
use crate::context::commands::Commands;
use crate::events::AgentEvent;
use crate::exit::Exit;
use crate::ui::input::{self, ClearOrInterrupt, InputHelper};
use crate::ui::style::Painter;

/// Slash commands of §3.1: name, then what it does (arguments first, in brackets).
pub(crate) const COMMANDS: &[(&str, &str)] = &[
    ("/help", "show this list"),
    ("/exit", "quit (also Ctrl-D)"),
    ("/clear", "start a new conversation"),
    ("/compact", "summarize the conversation to free context"),
    ("/todos", "show the todo list"),
    ("/role", "[NAME] show the role, or switch to NAME"),
    (
        "/budget",
        "show what the session has spent against its limits",
    ),
    ("/model", "[NAME] show the model, or switch to NAME"),
    ("/sessions", "list saved sessions of this workspace"),
    ("/resume", "[ID] continue a saved session"),
    ("/mcp", "list MCP servers, their state and their tools"),
    ("/undo", "put back the files the last turn changed"),
    (
        "/rewind",
        "restore the files to before a turn, and optionally the conversation",
    ),
    (
        "/checkpoints",
        "list the workspace's checkpoints and their disk use",
    ),
];

/// A parsed line of input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    Task(String),
    Help,
    Exit,
    Clear,
    /// `/role` (list) or `/role NAME` (switch).
    Role(Option<String>),
    Budget,
    Compact,
    Todos,
    Sessions,
    Resume(Option<String>),
    /// `/model` (show) or `/model NAME` (switch).
    Model(Option<String>),
    Mcp,
    Undo,
    Rewind,
    Checkpoints,
    Unknown(String),
    /// A known command with an argument it cannot take: the message saying so.
    BadArgument(String),
    Empty,
}

impl Input {
    /// Parses one (possibly multi-line) input.
    pub(crate) fn parse(line: &str) -> Self {
        let line = &input::join_continuations(line);
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return Self::Empty;
        }
        if !trimmed.starts_with('/') || trimmed.starts_with("//") {
            return Self::Task(line.trim_end().to_string());
        }
        let (command, rest) = trimmed
            .split_once(char::is_whitespace)
            .unwrap_or((trimmed, ""));
        let argument = Some(rest.trim().to_string()).filter(|a| !a.is_empty());
        if let Some(message) = argument.as_deref().and_then(|a| bad_argument(command, a)) {
            return Self::BadArgument(message);
        }
        match command {
            "/help" => Self::Help,
            "/exit" | "/quit" => Self::Exit,
            "/clear" => Self::Clear,
            "/role" => Self::Role(argument),
            "/budget" => Self::Budget,
            "/compact" => Self::Compact,
            "/todos" => Self::Todos,
            "/sessions" => Self::Sessions,
            "/resume" => Self::Resume(argument),
            "/model" => Self::Model(argument),
            "/mcp" => Self::Mcp,
            "/undo" => Self::Undo,
            "/rewind" => Self::Rewind,
            "/checkpoints" => Self::Checkpoints,
            other => Self::Unknown(other.to_string()),
        }
    }
}

/// Whether `command` (with its slash) is a built-in command; built-ins win over custom
/// commands of the same name.
fn is_builtin(command: &str) -> bool {
    COMMANDS.iter().any(|(name, _)| *name == command) || command == "/quit"
}

/// Why `argument` does not fit `command`, if it does not: commands without `[NAME]` take
/// nothing (`/clear x` must not clear the conversation as if the `x` were not there), and a
/// name is one word (`/model a b` would set a model no server knows).
fn bad_argument(command: &str, argument: &str) -> Option<String> {
    let takes_name = matches!(command, "/role" | "/resume" | "/model");
    if !is_builtin(command) {
        return None;
    }
    if !takes_name {
        return Some(format!(
            "`{command}` takes no argument, got `{argument}`; type `{command}` alone"
        ));
    }
    argument
        .contains(char::is_whitespace)
        .then(|| format!("`{command}` takes one name, got `{argument}`; names have no spaces"))
}

/// The help text listing every slash command, the custom ones after the built-in ones.
pub(crate) fn help_text(custom: &Commands) -> String {
    let mut text = String::from("Type a task, or a command:\n");
    for (name, what) in COMMANDS {
        text.push_str(&format!("  {name:<13} {what}\n"));
    }
    let shown: Vec<_> = custom
        .list()
        .iter()
        .filter(|c| !is_builtin(&format!("/{}", c.name)))
        .collect();
    if !shown.is_empty() {
        text.push_str("Custom commands (.agents/commands/*.md) and skills:\n");
        for command in shown {
            let name = format!("/{}", command.name);
            let hint = command
                .argument_hint
                .as_deref()
                .map(|h| format!("{h} "))
                .unwrap_or_default();
            text.push_str(&format!("  {name:<10} {hint}{}\n", command.description));
        }
    }
    text.push_str(
        "Keys: Tab completes commands and paths (@path too); Alt-Enter or a trailing \\ \
         starts a new line;\n      Ctrl-C interrupts the model or a command, clears the line, \
         and exits when pressed twice on an empty line; Ctrl-D exits.\n",
    );
    text
}

/// Runs the REPL until `/exit`, Ctrl-D or two Ctrl-C at an empty prompt; the input history
/// is kept in `ui.history_file`.
pub(crate) async fn run(agent: &mut Agent, ui: &UiSettings) -> Exit {
    let history_file = ui.history_file.as_path();
    let painter = Painter::for_stream(
        ui.colors,
        std::io::IsTerminal::is_terminal(&std::io::stdout()),
    );
    let mut editor = match editor(agent, painter) {
        Ok(editor) => editor,
        Err(error) => {
            agent.sink().emit(AgentEvent::Error {
                message: format!("cannot start the line editor: {error}"),
            });
            return Exit::Failure;
        }
    };
    let _ = editor.load_history(history_file);
    agent.sink().emit(AgentEvent::Notice {
        message: "/help lists commands · Tab completes · Ctrl-C interrupts · Ctrl-D exits".into(),
    });
    if let Some(names) = agent
        .mcp()
        .map(|m| m.starting_names())
        .filter(|n| !n.is_empty())
    {
        agent.sink().emit(AgentEvent::Notice {
            message: format!(
                "MCP servers starting: {}; their tools join when ready (/mcp shows them)",
                names.join(", ")
            ),
        });
    }
    let mut interrupts = 0;
    loop {
        agent.report_mcp();
        let line = tokio::task::block_in_place(|| editor.readline(input::PROMPT));
        let line = match line {
            Ok(line) => {
                interrupts = 0;
                line
            }
            Err(ReadlineError::Interrupted) => {
                interrupts += 1;
                if interrupts >= 2 {
                    return Exit::Done;
                }
                agent.sink().emit(AgentEvent::Notice {
                    message: "press Ctrl-C again to exit (or Ctrl-D)".into(),
                });
                continue;
            }
            Err(ReadlineError::Eof) => return Exit::Done,
            Err(error) => {
                agent.sink().emit(AgentEvent::Error {
                    message: format!("cannot read input: {error}"),
                });
                return Exit::Failure;
            }
        };
        let input = Input::parse(&line);
        if !matches!(input, Input::Empty) {
            remember(&mut editor, &line, history_file);
        }
        match input {
            Input::Empty => {}
            Input::Help => crate::out!("{}", help_text(agent.commands())),
            Input::Exit => return Exit::Done,
            Input::Clear => {
                agent.clear();
                crate::outln!("new conversation");
            }
            Input::Role(None) => crate::out!("{}", agent.governor().roles_listing()),
            Input::Role(Some(name)) => match agent.set_role(&name) {
                Ok(()) => crate::outln!("role: {name}\n{}", agent.governor().budget_line()),
                Err(error) => agent.sink().emit(AgentEvent::Error {
                    message: error.to_string(),
                }),
            },
            Input::Budget => crate::outln!("{}", agent.governor().budget_line()),
            Input::Model(name) => model_command(agent, name),
            Input::Mcp => mcp_command(agent),
            Input::Unknown(name) => {
                match agent.commands().expand(&input::join_continuations(&line)) {
                    Some(Ok(prompt)) => run_task(agent, &prompt).await,
                    Some(Err(error)) => agent.sink().emit(AgentEvent::Error {
                        message: error.to_string(),
                    }),
                    None => agent.sink().emit(AgentEvent::Error {
                        message: unknown_command(&name, agent.commands()),
                    }),
                }
            }
            Input::BadArgument(message) => agent.sink().emit(AgentEvent::Error { message }),
            Input::Compact => compact(agent).await,
            input @ (Input::Todos | Input::Sessions | Input::Resume(_)) => {
                memory_command(agent, input);
            }
            Input::Task(task) => run_task(agent, &task).await,
            Input::Undo => checkpoints::undo(agent, &mut ask(&mut editor)),
            Input::Rewind => checkpoints::rewind(agent, &mut ask(&mut editor)),
            Input::Checkpoints => checkpoints::overview_command(agent),
        }
    }
}

/// A question for the user, answered on the prompt's line editor (`None`: Ctrl-C, Ctrl-D).
fn ask(
    editor: &mut Editor<InputHelper, DefaultHistory>,
) -> impl FnMut(&str) -> Option<String> + '_ {
    move |question| tokio::task::block_in_place(|| editor.readline(question)).ok()
}

/// Adds `line` to the history and saves it (failures to save are not worth a message).
fn remember(editor: &mut Editor<InputHelper, DefaultHistory>, line: &str, history_file: &Path) {
    let _ = editor.add_history_entry(line);
    if let Some(parent) = history_file.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let _ = editor.save_history(history_file);
}

/// `unknown command `/x`; known: /help, /exit, ...`
pub(crate) fn unknown_command(name: &str, custom: &Commands) -> String {
    let mut known: Vec<String> = COMMANDS.iter().map(|(n, _)| (*n).to_string()).collect();
    known.extend(
        custom
            .list()
            .iter()
            .map(|c| format!("/{}", c.name))
            .filter(|n| !is_builtin(n)),
    );
    format!("unknown command `{name}`; known: {}", known.join(", "))
}

/// The line editor: history, completion, Alt-Enter for a new line, Ctrl-C that clears.
fn editor(
    agent: &Agent,
    painter: Painter,
) -> rustyline::Result<Editor<InputHelper, DefaultHistory>> {
    let config = Config::builder()
        .completion_type(CompletionType::List)
        .max_history_size(10_000)?
        .auto_add_history(false)
        .build();
    let mut editor = Editor::with_config(config)?;
    let base = agent.paths().cwd.clone();
    let mut commands: Vec<(String, String)> = COMMANDS
        .iter()
        .map(|(n, d)| ((*n).to_string(), (*d).to_string()))
        .collect();
    for custom in agent.commands().list() {
        let name = format!("/{}", custom.name);
        if !is_builtin(&name) {
            commands.push((name, custom.description.clone()));
        }
    }
    editor.set_helper(Some(InputHelper::new(commands, base, painter)));
    editor.bind_sequence(KeyEvent(KeyCode::Enter, Modifiers::ALT), Cmd::Newline);
    editor.bind_sequence(
        KeyEvent::ctrl('C'),
        EventHandler::Conditional(Box::new(ClearOrInterrupt)),
    );
    Ok(editor)
}

/// `/mcp`: the MCP servers, their state and their tools.
fn mcp_command(agent: &Agent) {
    agent.report_mcp();
    match agent.mcp() {
        Some(mcp) => crate::out!("{}", mcp.listing()),
        None => crate::outln!(
            "no MCP servers configured; add [mcp_servers.NAME] to {}",
            agent.paths().user_file().display()
        ),
    }
}

/// `/model`: shows the model, or switches to `name` for the following requests.
fn model_command(agent: &mut Agent, name: Option<String>) {
    let message = match name {
        None => format!("model: {}", agent.model()),
        Some(name) => {
            agent.set_model(&name);
            format!("model set to {name}")
        }
    };
    agent.sink().emit(AgentEvent::Notice { message });
}

/// `/todos`, `/sessions`, `/resume [ID]`.
fn memory_command(agent: &mut Agent, input: Input) {
    match input {
        Input::Todos => crate::outln!("{}", crate::ui::terminal::todos_block(&agent.todos(), "")),
        Input::Sessions => {
            let sessions = agent.list_sessions(false);
            if sessions.is_empty() {
                crate::outln!("no saved sessions for this workspace (`agent sessions` lists all)");
            } else {
                crate::out!("{}", crate::session::list::render(&sessions));
            }
        }
        Input::Resume(id) => match agent.resume(id.as_deref()) {
            Ok(summary) => {
                let message = agent.resume_notice(&summary);
                agent.sink().emit(AgentEvent::Notice { message });
                agent.start_hooks("resume");
            }
            Err(error) => agent.sink().emit(AgentEvent::Error {
                message: error.to_string(),
            }),
        },
        _ => {}
    }
}

/// `/compact`: the manager reports what it did; only failures are shown here.
async fn compact(agent: &mut Agent) {
    let cancel = CancelToken::new();
    let interrupts = crate::cancel::InterruptGuard::watch(&cancel);
    let result = agent.compact(&cancel).await;
    drop(interrupts);
    if let Err(error) = result {
        agent.sink().emit(AgentEvent::Error {
            message: format!("cannot compact: {error}"),
        });
    }
}

async fn run_task(agent: &mut Agent, task: &str) {
    let cancel = CancelToken::new();
    let interrupts = crate::cancel::InterruptGuard::watch(&cancel);
    let outcome = agent.run_turn(task, &cancel).await;
    drop(interrupts);
    let message = match outcome {
        TurnOutcome::Done { .. } => return,
        TurnOutcome::Interrupted => {
            agent.sink().emit(AgentEvent::Notice {
                message: "interrupted by user".into(),
            });
            return;
        }
        TurnOutcome::MaxTurns { limit } => {
            format!("stopped after {limit} model calls (--max-turns); say `continue` to go on")
        }
        TurnOutcome::BudgetExhausted { message }
        | TurnOutcome::Failed { message }
        | TurnOutcome::Repeating { message } => message,
        TurnOutcome::Refused { message } => {
            format!("a UserPromptSubmit hook refused the prompt: {message}")
        }
    };
    agent.sink().emit(AgentEvent::Error { message });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands() {
        assert_eq!(Input::parse("  /help "), Input::Help);
        assert_eq!(Input::parse("/nope x"), Input::Unknown("/nope".into()));
        assert_eq!(Input::parse("/role"), Input::Role(None));
        assert_eq!(Input::parse("/role  ops "), Input::Role(Some("ops".into())));
        assert_eq!(Input::parse("/budget"), Input::Budget);
        assert_eq!(Input::parse("/mcp"), Input::Mcp);
        assert_eq!(Input::parse("fix it"), Input::Task("fix it".into()));
        assert_eq!(Input::parse("   "), Input::Empty);
        assert_eq!(Input::parse("/resume"), Input::Resume(None));
        assert_eq!(
            Input::parse("/resume  2026-x "),
            Input::Resume(Some("2026-x".into()))
        );
        assert_eq!(Input::parse("/compact"), Input::Compact);
        assert_eq!(
            Input::parse("// comment-like task"),
            Input::Task("// comment-like task".into())
        );
        assert_eq!(Input::parse("/model"), Input::Model(None));
        assert_eq!(
            Input::parse("/model  gpt-x "),
            Input::Model(Some("gpt-x".into()))
        );
        assert_eq!(
            Input::parse("line one\\\nline two"),
            Input::Task("line one\nline two".into())
        );
    }

    #[test]
    fn an_argument_a_command_cannot_take_is_an_error() {
        assert_eq!(
            Input::parse("/clear all"),
            Input::BadArgument("`/clear` takes no argument, got `all`; type `/clear` alone".into())
        );
        assert_eq!(
            Input::parse("/quit now"),
            Input::BadArgument("`/quit` takes no argument, got `now`; type `/quit` alone".into())
        );
        assert_eq!(
            Input::parse("/model  gpt 4 "),
            Input::BadArgument("`/model` takes one name, got `gpt 4`; names have no spaces".into())
        );
        assert_eq!(Input::parse("/role ünï"), Input::Role(Some("ünï".into())));
        assert_eq!(Input::parse("/nope x y"), Input::Unknown("/nope".into()));
    }

    #[test]
    fn help_lists_every_command_of_the_spec() {
        let help = help_text(&Commands::default());
        for name in [
            "/help",
            "/exit",
            "/clear",
            "/compact",
            "/todos",
            "/role",
            "/budget",
            "/model",
            "/sessions",
            "/resume",
        ] {
            assert!(help.contains(name), "{name} missing from /help");
        }
    }
}
