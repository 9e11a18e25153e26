//! `/undo`, `/rewind` and `/checkpoints` at the prompt.
//!
//! Each shows what it will do first and asks; Enter, `n`, Ctrl-C or Ctrl-D is no, and then
//! nothing changes. Questions are read with the REPL's own line editor (`ask`), so they work
//! wherever the prompt does.

use crate::agent::Agent;
use crate::checkpoints::{CheckpointError, Plan};
use crate::events::AgentEvent;
use crate::ui::checkpoints::{overview, plan_summary, report_text, turn_list};

/// Reads one answer to a question; `None` when the user pressed Ctrl-C or Ctrl-D.
pub(crate) type Ask<'a> = dyn FnMut(&str) -> Option<String> + 'a;

fn yes(answer: Option<String>) -> bool {
    answer.is_some_and(|a| matches!(a.trim(), "y" | "Y" | "yes" | "Yes" | "YES"))
}

fn error(agent: &Agent, error: &CheckpointError) {
    agent.sink().emit(AgentEvent::Error {
        message: error.to_string(),
    });
}

/// `/checkpoints`.
pub(crate) fn overview_command(agent: &Agent) {
    match agent.checkpoints() {
        Some(checkpoints) => crate::out!("{}", overview(checkpoints)),
        None => error(agent, &CheckpointError::Disabled),
    }
}

/// `/undo`: puts back what this session's last turn that changed files changed.
pub(crate) fn undo(agent: &mut Agent, ask: &mut Ask<'_>) {
    let plan = match agent.undo_plan() {
        Ok(plan) => plan,
        Err(e) => return error(agent, &e),
    };
    let turn = plan.turns.first().map_or(0, |k| k.turn);
    crate::out!("undo turn {turn} of this session:\n{}", plan_summary(&plan));
    if plan.is_empty() {
        finish(agent, &plan, false);
        return;
    }
    if !yes(ask("restore these files? [y/N] ")) {
        crate::outln!("nothing changed");
        return;
    }
    let overwrite = confirm_conflicts(&plan, ask);
    finish(agent, &plan, overwrite);
    crate::outln!(
        "the conversation still holds that turn; /rewind can also take it out of the \
         conversation"
    );
}

/// `/rewind`: lists this session's turns and restores the workspace to before one of them,
/// offering to cut the conversation back too.
pub(crate) fn rewind(agent: &mut Agent, ask: &mut Ask<'_>) {
    let turns = match agent.rewind_choices() {
        Ok(turns) => turns,
        Err(e) => return error(agent, &e),
    };
    if turns.is_empty() {
        crate::outln!(
            "nothing to rewind: no turn of this session changed files (or all were undone)"
        );
        return;
    }
    crate::out!(
        "turns of this session that changed files:\n{}",
        turn_list(&turns, false)
    );
    let answer = ask(&format!(
        "rewind to before which? [1-{}, Enter to cancel] ",
        turns.len()
    ));
    let Some(chosen) = answer
        .and_then(|a| a.trim().parse::<usize>().ok())
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| turns.get(i))
    else {
        crate::outln!("nothing changed");
        return;
    };
    let turn = chosen.key.turn;
    let plan = match agent.rewind_plan(turn) {
        Ok(plan) => plan,
        Err(e) => return error(agent, &e),
    };
    crate::out!("rewind to before turn {turn}:\n{}", plan_summary(&plan));
    let restore = plan.is_empty() || yes(ask("restore these files? [y/N] "));
    let overwrite = restore && confirm_conflicts(&plan, ask);
    let cut = if agent.can_cut_conversation(turn) {
        yes(ask(&format!(
            "also cut the conversation back to before turn {turn}, so the model forgets it? [y/N] "
        )))
    } else {
        crate::outln!(
            "(the conversation cannot be cut back there: that part was compacted, or the \
             session is not being saved)"
        );
        false
    };
    if restore {
        finish(agent, &plan, overwrite);
    }
    if cut && agent.cut_conversation(turn) {
        crate::outln!("the conversation now ends before turn {turn}");
    }
    if !restore && !cut {
        crate::outln!("nothing changed");
    }
}

/// Asks about the conflicts of `plan`, if it has any.
fn confirm_conflicts(plan: &Plan, ask: &mut Ask<'_>) -> bool {
    if plan.conflicts.is_empty() {
        return false;
    }
    let n = plan.conflicts.len();
    yes(ask(&format!(
        "also overwrite the {n} file{} changed since the turn? [y/N] ",
        if n == 1 { "" } else { "s" }
    )))
}

fn finish(agent: &Agent, plan: &Plan, overwrite: bool) {
    match agent.restore(plan, overwrite) {
        Ok(report) => crate::out!("{}", report_text(&report)),
        Err(e) => error(agent, &e),
    }
}
