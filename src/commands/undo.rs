//! `agent undo`: puts back what the workspace's last turn changed (whichever session made
//! it), for one-shot users; `agent undo --list` lists the turns.
//!
//! The summary goes to stdout; the question goes to the terminal (`/dev/tty`), so it works
//! with stdout piped. Without a terminal nothing is restored unless `--yes` is given. Files
//! changed since the turn are left alone unless confirmed at the terminal or `--force`.
//! Exit codes: 0 done (or declined), 1 nothing to undo or a file could not be restored,
//! 2 a configuration error or no way to confirm.

use std::io::{BufRead, Write};

use super::Outcome;
use crate::checkpoints::{Checkpoints, Plan, Setup};
use crate::cli::{RunArgs, UndoArgs};
use crate::config::{CheckpointSettings, Paths};
use crate::exit::{Error, Exit};
use crate::governance::events::{EventRecord, PolicyEvent, timestamp};
use crate::ui::checkpoints::{plan_summary, report_text, turn_list};

/// Runs `agent undo`.
///
/// # Errors
/// [`Error::Config`] when the configuration cannot be read; [`Error::Checkpoint`] when
/// there is no `git`, nothing to undo, or the shadow repository cannot be read;
/// [`Error::Usage`] when a restore needs confirming and there is no terminal.
pub(crate) fn run(args: &UndoArgs, run: &RunArgs) -> Outcome {
    let sources = super::sources(run)?;
    let mut settings = CheckpointSettings::resolve(&sources);
    for warning in &settings.warnings {
        crate::errln!("agent: warning: {warning}");
    }
    // Snapshots taken before checkpoints were switched off can still be restored.
    settings.enabled = true;
    let paths = sources.paths;
    let checkpoints = match Checkpoints::setup(settings, &paths.agent_home, &paths.workspace) {
        Setup::On(checkpoints) => checkpoints,
        Setup::Disabled => return Ok(Exit::Done),
        Setup::NoGit(message) => return Err(Error::Failed(message)),
    };
    checkpoints.set_lock_notice(|message| crate::errln!("agent: {message}"));
    if args.list {
        let turns = checkpoints.turns();
        if turns.is_empty() {
            crate::outln!("no checkpoints for {}", paths.workspace.display());
        } else {
            crate::out!("{}", turn_list(&turns, true));
        }
        return Ok(Exit::Done);
    }
    let turn = checkpoints.last_turn(None)?;
    let plan = checkpoints.plan(std::slice::from_ref(&turn))?;
    crate::out!(
        "undo turn {} of session {} ({}):\n{}",
        turn.key.turn,
        turn.key.session,
        crate::session::format_time(turn.time),
        plan_summary(&plan)
    );
    match confirm(args, &plan) {
        Answer::Restore { overwrite } => {
            restore(&paths, &checkpoints, &plan, overwrite, &turn.key.session)
        }
        Answer::Declined => {
            crate::outln!("nothing changed");
            Ok(Exit::Done)
        }
        Answer::NoTerminal => Err(Error::Usage(
            "nothing restored: there is no terminal to confirm on; pass --yes".into(),
        )),
    }
}

/// What the user said to the summary.
enum Answer {
    /// Restore; `overwrite`: conflicts too.
    Restore {
        overwrite: bool,
    },
    Declined,
    NoTerminal,
}

fn confirm(args: &UndoArgs, plan: &Plan) -> Answer {
    if plan.is_empty() {
        return Answer::Restore { overwrite: false };
    }
    if args.yes {
        return Answer::Restore {
            overwrite: args.force,
        };
    }
    match ask("restore these files? [y/N] ") {
        None => return Answer::NoTerminal,
        Some(answer) if !yes(&answer) => return Answer::Declined,
        Some(_) => {}
    }
    let overwrite = args.force
        || (!plan.conflicts.is_empty()
            && ask(&format!(
                "also overwrite the {} files changed since the turn? [y/N] ",
                plan.conflicts.len()
            ))
            .is_some_and(|a| yes(&a)));
    Answer::Restore { overwrite }
}

fn restore(
    paths: &Paths,
    checkpoints: &Checkpoints,
    plan: &Plan,
    overwrite: bool,
    session: &str,
) -> Outcome {
    let report = checkpoints.restore(plan, overwrite)?;
    crate::out!("{}", report_text(&report));
    let log_path = paths.agent_home.join(crate::config::governance::EVENT_LOG);
    if let Ok(log) = crate::governance::log::EventLog::open(&log_path, None) {
        let _ = log.append(&EventRecord {
            ts: timestamp(),
            session: session.to_string(),
            role: String::new(),
            event: PolicyEvent::CheckpointRestored {
                turns: plan.turns.iter().map(|k| k.turn).collect(),
                snapshot: plan.target.clone(),
                restored: report.restored.len(),
                kept: report.kept.len(),
                failed: report.failed.len(),
            },
        });
    }
    Ok(if report.failed.is_empty() {
        Exit::Done
    } else {
        Exit::Failure
    })
}

fn yes(answer: &str) -> bool {
    matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES")
}

/// Asks on the terminal; `None` without one (or when it cannot be read).
fn ask(question: &str) -> Option<String> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .ok()?;
    (&tty).write_all(question.as_bytes()).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(&tty).read_line(&mut line).ok()?;
    Some(line)
}
