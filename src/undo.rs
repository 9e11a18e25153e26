//! `agent undo`: puts back what the workspace's last turn changed (whichever session made
//! it), for one-shot users; `agent undo --list` lists the turns.
//!
//! The summary goes to stdout; the question goes to the terminal (`/dev/tty`), so it works
//! with stdout piped. Without a terminal nothing is restored unless `--yes` is given. Files
//! changed since the turn are left alone unless confirmed at the terminal or `--force`.
//! Exit codes: 0 done (or declined), 1 nothing to undo or a file could not be restored,
//! 2 a configuration error or no way to confirm.

use crate::checkpoints::{CheckpointSettings, Checkpoints, Plan, Setup};
use crate::cli::{RunArgs, UndoArgs};
use crate::config::{Config, Environment};
use crate::exit::Exit;
use crate::governance::events::{EventRecord, PolicyEvent, timestamp};
use crate::run::fail;
use crate::ui::checkpoints::{plan_summary, report_text, turn_list};
use std::io::{BufRead, Write};

/// Runs `agent undo`.
pub fn run(args: &UndoArgs, run: &RunArgs) -> Exit {
    let config = match Config::load(run, Environment::capture()) {
        Ok(config) => config,
        Err(error) => {
            fail(&error.to_string());
            return Exit::Usage;
        }
    };
    let (mut settings, warnings) = CheckpointSettings::resolve(&config);
    for warning in warnings {
        crate::errln!("agent: warning: {warning}");
    }
    // Snapshots taken before checkpoints were switched off can still be restored.
    settings.enabled = true;
    let path = config.environment.get("PATH");
    let checkpoints =
        match Checkpoints::setup(settings, &config.agent_home, &config.workspace, path) {
            Setup::On(checkpoints) => checkpoints,
            Setup::Disabled => return Exit::Done,
            Setup::NoGit(message) => {
                fail(&message);
                return Exit::Failure;
            }
        };
    if args.list {
        let turns = checkpoints.turns();
        if turns.is_empty() {
            crate::outln!("no checkpoints for {}", config.workspace.display());
        } else {
            crate::out!("{}", turn_list(&turns, true));
        }
        return Exit::Done;
    }
    let turn = match checkpoints.last_turn(None) {
        Ok(turn) => turn,
        Err(error) => {
            fail(&error.to_string());
            return Exit::Failure;
        }
    };
    let plan = match checkpoints.plan(std::slice::from_ref(&turn)) {
        Ok(plan) => plan,
        Err(error) => {
            fail(&error.to_string());
            return Exit::Failure;
        }
    };
    crate::out!(
        "undo turn {} of session {} ({}):\n{}",
        turn.key.turn,
        turn.key.session,
        crate::session::format_time(turn.time),
        plan_summary(&plan)
    );
    match confirm(args, &plan) {
        Answer::Restore { overwrite } => {
            restore(&config, &checkpoints, &plan, overwrite, &turn.key.session)
        }
        Answer::Declined => {
            crate::outln!("nothing changed");
            Exit::Done
        }
        Answer::NoTerminal => {
            fail("nothing restored: there is no terminal to confirm on; pass --yes");
            Exit::Usage
        }
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
    config: &Config,
    checkpoints: &Checkpoints,
    plan: &Plan,
    overwrite: bool,
    session: &str,
) -> Exit {
    let report = match checkpoints.restore(plan, overwrite) {
        Ok(report) => report,
        Err(error) => {
            fail(&error.to_string());
            return Exit::Failure;
        }
    };
    crate::out!("{}", report_text(&report));
    let log_path = config.agent_home.join(crate::governance::log::FILE_NAME);
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
    if report.failed.is_empty() {
        Exit::Done
    } else {
        Exit::Failure
    }
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
