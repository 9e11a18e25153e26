//! One-shot mode (SPEC §3.3): one task from the command line or stdin; the final answer to
//! stdout, everything else to stderr; the exit code says how it ended.

use crate::agent::{Agent, TurnOutcome};
use crate::cancel::CancelToken;
use crate::events::AgentEvent;
use crate::exit::Exit;

/// Runs `task` (a custom command's prompt when it is `/name args`) to its end and prints the final answer to stdout when `print_final` (the
/// answer was not already streamed there).
pub(crate) async fn run(agent: &mut Agent, task: &str, print_final: bool) -> Exit {
    // `agent /name args` runs a custom command or skill.
    let expanded = match agent.commands().expand(task) {
        Some(Ok(prompt)) => prompt,
        Some(Err(error)) => {
            agent.sink().emit(AgentEvent::Error {
                message: error.to_string(),
            });
            return Exit::Usage;
        }
        None => task.to_string(),
    };
    let task = expanded.as_str();
    let cancel = CancelToken::new();
    let interrupts = crate::cancel::InterruptGuard::watch(&cancel);
    let outcome = agent.run_turn(task, &cancel).await;
    drop(interrupts);
    let (exit, message) = match outcome {
        TurnOutcome::Done { text } => {
            if print_final && !text.is_empty() {
                crate::outln!("{}", text.trim_end());
            }
            return Exit::Done;
        }
        TurnOutcome::Interrupted => (Exit::Interrupted, "interrupted".to_string()),
        TurnOutcome::MaxTurns { limit } => (
            Exit::Stopped,
            format!("stopped after {limit} model calls (--max-turns {limit})"),
        ),
        TurnOutcome::BudgetExhausted { message } | TurnOutcome::Repeating { message } => {
            (Exit::Stopped, message)
        }
        TurnOutcome::Failed { message } => (Exit::Failure, message),
        TurnOutcome::Refused { message } => (
            Exit::Stopped,
            format!("a UserPromptSubmit hook refused the prompt: {message}"),
        ),
    };
    agent.sink().emit(AgentEvent::Error { message });
    exit
}
