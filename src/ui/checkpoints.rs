//! Text for checkpoints (pure functions): the diff summary a restore shows before it asks,
//! the report after it, the list of turns `/rewind` and `agent undo --list` offer, and the
//! `/checkpoints` overview. File names are shown with control characters escaped.

use crate::checkpoints::plan::{Action, Change, Plan};
use crate::checkpoints::walk::human_bytes;
use crate::checkpoints::{Checkpoints, Report, TurnEntry};

/// Characters of a request shown in a list.
const REQUEST_SHOWN: usize = 60;
/// Files named in a list row before `…`.
const FILES_SHOWN: usize = 3;

/// The summary of `plan`: what will be restored, the conflicts, what is not captured.
pub(crate) fn plan_summary(plan: &Plan) -> String {
    let mut text = String::new();
    if plan.changes.is_empty() && plan.conflicts.is_empty() {
        text.push_str("  nothing to restore: the files are already as they were\n");
    }
    for change in &plan.changes {
        text.push_str(&change_line(change));
    }
    if !plan.conflicts.is_empty() {
        text.push_str(
            "  changed since the turn by you (or another session); left as they are unless \
             you confirm:\n",
        );
        for change in &plan.conflicts {
            text.push_str(&format!("  {}", change_line(change)));
        }
    }
    if !plan.uncaptured.is_empty() {
        text.push_str("  not captured by the checkpoints, so left as they are:\n");
        for item in &plan.uncaptured {
            text.push_str(&format!("    {}\n", item.note));
        }
    }
    if plan.unknown_after {
        text.push_str(
            "  (a turn ended without its final checkpoint: edits made by hand while it ran \
             count as the agent's)\n",
        );
    }
    text
}

/// `  restore   src/lib.rs  (+3 -1)`.
fn change_line(change: &Change) -> String {
    let perms = (
        change.current.as_ref().map_or(0, |s| s.perms),
        change.target.as_ref().map_or(0, |s| s.perms),
    );
    let (verb, detail) = match change.action {
        Action::Restore if perms.0 != perms.1 && perms.0 != 0 && perms.1 != 0 => {
            let lines = counts(change.lines);
            let sep = if lines.is_empty() { "" } else { ", " };
            (
                "restore",
                format!("{lines}{sep}{:04o} → {:04o}", perms.0, perms.1),
            )
        }
        Action::Restore => ("restore", counts(change.lines)),
        Action::Remove => ("remove", "created by the turn".to_string()),
        Action::Recreate => ("recreate", "deleted by the turn".to_string()),
        Action::Mode => ("mode", format!("{:04o} → {:04o}", perms.0, perms.1)),
    };
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!("  ({detail})")
    };
    format!("  {verb:<9} {}{detail}\n", change.path.shown())
}

fn counts(lines: Option<(usize, usize)>) -> String {
    lines.map_or_else(String::new, |(added, removed)| {
        format!("+{added} -{removed}")
    })
}

/// What a restore did, for the user.
pub(crate) fn report_text(report: &Report) -> String {
    let mut text = format!(
        "restored {} file{}",
        report.restored.len(),
        plural(report.restored.len())
    );
    if !report.kept.is_empty() {
        text.push_str(&format!(
            "; left {} file{} changed since the turn as {}",
            report.kept.len(),
            plural(report.kept.len()),
            if report.kept.len() == 1 {
                "it is"
            } else {
                "they are"
            }
        ));
    }
    text.push('\n');
    for (path, why) in &report.failed {
        text.push_str(&format!("could not restore `{}`: {why}\n", path.shown()));
    }
    if !report.failed.is_empty() {
        text.push_str(
            "those files are as they were before the restore; try again after fixing that\n",
        );
    }
    text
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// One row per turn, numbered from 1 (oldest first):
/// `  1  2026-12-01 14:02 UTC  turn 3  "fix the test"  2 files: a.rs, b.rs`.
pub(crate) fn turn_list(turns: &[TurnEntry], with_session: bool) -> String {
    let mut text = String::new();
    for (i, turn) in turns.iter().enumerate() {
        let session = if with_session {
            format!("  {}", turn.key.session)
        } else {
            String::new()
        };
        let undone = if turn.undone { "  (undone)" } else { "" };
        text.push_str(&format!(
            "  {:>2}  {}{session}  turn {}  \"{}\"  {}{undone}\n",
            i + 1,
            crate::session::format_time(turn.time),
            turn.key.turn,
            short_request(&turn.request),
            files_text(turn)
        ));
    }
    text
}

fn short_request(request: &str) -> String {
    let flat: String = request.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut short: String = crate::visible::escape_invisible(&flat)
        .chars()
        .take(REQUEST_SHOWN)
        .collect();
    if flat.chars().count() > REQUEST_SHOWN {
        short.push('…');
    }
    short
}

fn files_text(turn: &TurnEntry) -> String {
    if turn.after.is_none() {
        return "files unknown (the turn did not finish)".into();
    }
    let n = turn.files.len();
    let mut names: Vec<String> = turn
        .files
        .iter()
        .take(FILES_SHOWN)
        .map(|p| p.shown())
        .collect();
    if n > FILES_SHOWN {
        names.push("…".into());
    }
    if n == 0 {
        "no files changed".into()
    } else {
        format!("{n} file{}: {}", plural(n), names.join(", "))
    }
}

/// `/checkpoints`: where they are, disk use, retention, and the turns.
pub(crate) fn overview(checkpoints: &Checkpoints) -> String {
    let settings = checkpoints.settings();
    let turns = checkpoints.turns();
    let undone = turns.iter().filter(|t| t.undone).count();
    let mut text = format!(
        "checkpoints of {}\n  stored in {} ({})\n  kept: the last {} turns, at most {} days; \
         files over {} are not captured\n",
        checkpoints.workspace().display(),
        checkpoints.dir().display(),
        human_bytes(checkpoints.disk_use()),
        settings.keep,
        settings.keep_days,
        human_bytes(settings.max_file_bytes)
    );
    if turns.is_empty() {
        text.push_str("  no turn has changed files yet\n");
    } else {
        text.push_str(&format!(
            "  {} turn{} with snapshots ({undone} undone), newest last:\n",
            turns.len(),
            plural(turns.len())
        ));
        let shown = turns.len().saturating_sub(20);
        text.push_str(&turn_list(&turns[shown..], true));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoints::plan::{State, Uncaptured};
    use crate::checkpoints::shadow::Entry;
    use crate::checkpoints::{RelPath, TurnKey};
    use pretty_assertions::assert_eq;

    fn state(oid: &str, perms: u32) -> Option<State> {
        Some(State {
            entry: Entry {
                mode: 0o100_644,
                oid: oid.into(),
            },
            perms,
        })
    }

    fn change(path: &str, action: Action, lines: Option<(usize, usize)>) -> Change {
        Change {
            path: RelPath(path.as_bytes().to_vec()),
            action,
            current: state("a", 0o755),
            target: state("b", 0o644),
            lines,
        }
    }

    #[test]
    fn summary_lists_changes_conflicts_and_what_was_not_captured() {
        let plan = Plan {
            turns: vec![],
            target: "t".into(),
            safety: "s".into(),
            changes: vec![
                Change {
                    target: state("b", 0o755),
                    ..change("src/lib.rs", Action::Restore, Some((3, 1)))
                },
                change("data.bin", Action::Restore, None),
                change("new\nname", Action::Remove, None),
                change("old.rs", Action::Recreate, None),
                change("run.sh", Action::Mode, None),
            ],
            conflicts: vec![change("README.md", Action::Restore, Some((1, 1)))],
            // (current 0755, target 0644: the mode change is shown with the line counts)
            uncaptured: vec![Uncaptured {
                path: RelPath(b"big".to_vec()),
                note: "`big` (2.1 GB) is over the 10 MB cap".into(),
            }],
            unknown_after: false,
            target_dirs: Default::default(),
        };
        assert_eq!(
            plan_summary(&plan),
            "  restore   src/lib.rs  (+3 -1)\n  restore   data.bin  (0755 → 0644)\n  remove    new\\nname  (created by the turn)\n  \
             recreate  old.rs  (deleted by the turn)\n  mode      run.sh  (0755 → 0644)\n  \
             changed since the turn by you (or another session); left as they are unless you \
             confirm:\n    restore   README.md  (+1 -1, 0755 → 0644)\n  not captured by the checkpoints, so \
             left as they are:\n    `big` (2.1 GB) is over the 10 MB cap\n"
        );
    }

    #[test]
    fn turn_rows_and_reports() {
        let turn = TurnEntry {
            key: TurnKey {
                session: "s1".into(),
                turn: 3,
            },
            time: 0,
            request: "fix\nthe   test".into(),
            before: "b".into(),
            after: Some("a".into()),
            files: ["a", "b", "c", "d"]
                .iter()
                .map(|p| RelPath(p.as_bytes().to_vec()))
                .collect(),
            undone: false,
        };
        assert_eq!(
            turn_list(&[turn], false),
            "   1  1970-01-01 00:00 UTC  turn 3  \"fix the test\"  4 files: a, b, c, …\n"
        );
        let report = Report {
            restored: vec![RelPath(b"a".to_vec())],
            kept: vec![RelPath(b"b".to_vec()), RelPath(b"c".to_vec())],
            failed: vec![(RelPath(b"d".to_vec()), "disk full".into())],
        };
        assert_eq!(
            report_text(&report),
            "restored 1 file; left 2 files changed since the turn as they are\ncould not \
             restore `d`: disk full\nthose files are as they were before the restore; try \
             again after fixing that\n"
        );
    }
}
