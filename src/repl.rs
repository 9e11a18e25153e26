//! The outer loop at a terminal (SPEC §3.1): read a line, run slash commands or a turn.

use std::path::Path;

use rustyline::error::ReadlineError;
use rustyline::{Cmd, DefaultEditor, KeyCode, KeyEvent, Modifiers};

use crate::agent::{Agent, AgentEvent, TurnOutcome};
use crate::cancel::CancelToken;
use crate::exit::Exit;

/// Slash commands of §3.1.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "show this list"),
    ("/exit", "quit (also Ctrl-D)"),
    ("/clear", "start a new conversation"),
];

/// A parsed line of input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Task(String),
    Help,
    Exit,
    Clear,
    Unknown(String),
    Empty,
}

impl Input {
    /// Parses one (possibly multi-line) input.
    pub fn parse(line: &str) -> Self {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return Self::Empty;
        }
        if !trimmed.starts_with('/') || trimmed.starts_with("//") {
            return Self::Task(line.trim_end().to_string());
        }
        let (command, _rest) = trimmed.split_once(char::is_whitespace).unwrap_or((trimmed, ""));
        match command {
            "/help" => Self::Help,
            "/exit" | "/quit" => Self::Exit,
            "/clear" => Self::Clear,
            other => Self::Unknown(other.to_string()),
        }
    }
}

/// The help text listing every slash command.
pub fn help_text() -> String {
    let mut text = String::from("Type a task, or a command:\n");
    for (name, what) in COMMANDS {
        text.push_str(&format!("  {name:<10} {what}\n"));
    }
    text.push_str("End a line with \\ or press Alt-Enter for a new line; Ctrl-C interrupts.\n");
    text
}

/// Runs the REPL until `/exit`, Ctrl-D or two Ctrl-C at an empty prompt.
pub async fn run(agent: &mut Agent, history_file: &Path) -> Exit {
    let mut editor = match DefaultEditor::new() {
        Ok(editor) => editor,
        Err(error) => {
            agent.sink().emit(AgentEvent::Error {
                message: format!("cannot start the line editor: {error}"),
            });
            return Exit::Failure;
        }
    };
    editor.bind_sequence(KeyEvent(KeyCode::Enter, Modifiers::ALT), Cmd::Newline);
    let _ = editor.load_history(history_file);
    let mut interrupts = 0;
    loop {
        let line = tokio::task::block_in_place(|| read_input(&mut editor));
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
                eprintln!("(Ctrl-C again to exit)");
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
            let _ = editor.add_history_entry(line.as_str());
            if let Some(parent) = history_file.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = editor.save_history(history_file);
        }
        match input {
            Input::Empty => {}
            Input::Help => print!("{}", help_text()),
            Input::Exit => return Exit::Done,
            Input::Clear => {
                agent.clear();
                println!("new conversation");
            }
            Input::Unknown(name) => {
                let known: Vec<&str> = COMMANDS.iter().map(|(n, _)| *n).collect();
                agent.sink().emit(AgentEvent::Error {
                    message: format!("unknown command `{name}`; known: {}", known.join(", ")),
                });
            }
            Input::Task(task) => run_task(agent, &task).await,
        }
    }
}

/// Reads one input, joining lines that end with `\`.
fn read_input(editor: &mut DefaultEditor) -> Result<String, ReadlineError> {
    let mut text = editor.readline("› ")?;
    while text.ends_with('\\') {
        text.pop();
        text.push('\n');
        text.push_str(&editor.readline("  ")?);
    }
    Ok(text)
}

async fn run_task(agent: &mut Agent, task: &str) {
    let cancel = CancelToken::new();
    let watcher = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        })
    };
    let outcome = agent.run_turn(task, &cancel).await;
    watcher.abort();
    let message = match outcome {
        TurnOutcome::Done { .. } => return,
        TurnOutcome::Interrupted => "interrupted".to_string(),
        TurnOutcome::MaxTurns { limit } => {
            format!("stopped after {limit} model calls (--max-turns); say `continue` to go on")
        }
        TurnOutcome::BudgetExhausted { message } | TurnOutcome::Failed { message } => message,
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
        assert_eq!(Input::parse("fix it"), Input::Task("fix it".into()));
        assert_eq!(Input::parse("   "), Input::Empty);
        assert_eq!(Input::parse("// comment-like task"), Input::Task("// comment-like task".into()));
    }
}
