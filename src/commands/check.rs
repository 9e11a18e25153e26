//! `agent check`: how the rules rate a shell command or a file path, without running it.
//!
//! The first line of output is the verdict (`allow`, `ask` or `deny`); then one line per
//! part: its verdict, the command (control and invisible characters escaped), the reason and
//! the rule that decided. `--json` prints `{"verdict", "parts": [{"command", "verdict",
//! "rule", "reason"}]}` instead. The exit status is 0 whatever the verdict, 2 for a usage or
//! configuration error. Warnings (ignored project rules) go to stderr.

use std::path::{Path, PathBuf};

use super::Outcome;
use crate::cli::{CheckArgs, RunArgs};
use crate::config::PermissionSettings;
use crate::exit::{Error, Exit};
use crate::permissions::{Evaluation, PathContext, PermissionEngine, paths};
use crate::visible::escape_invisible;

/// File tools `--tool` accepts.
pub(crate) const FILE_TOOLS: &[&str] = &["read_file", "write_file", "str_replace"];

/// Runs `agent check`.
///
/// # Errors
/// [`Error::Config`] when the configuration cannot be read, [`Error::Usage`] for an unknown
/// `--tool`.
pub(crate) fn run(args: &CheckArgs, run: &RunArgs) -> Outcome {
    let sources = super::sources(run)?;
    let paths = &sources.paths;
    let settings = PermissionSettings::resolve(&sources);
    let (engine, warnings) = PermissionEngine::from_settings(&settings, PathContext::from(paths));
    for warning in warnings {
        crate::errln!("agent: warning: {}", escape_invisible(&warning));
    }
    let evaluation = match args.tool.as_deref() {
        None | Some("bash") => engine.check_bash(&args.subject),
        Some(tool) if FILE_TOOLS.contains(&tool) => {
            let path = resolve(&paths.cwd, paths.home.as_deref(), &args.subject);
            engine.check_file(tool, &path, tool != "read_file")
        }
        Some(other) => {
            return Err(Error::Usage(format!(
                "unknown tool `{}` for --tool; use read_file, write_file or str_replace, or \
                 leave --tool out to check a shell command",
                escape_invisible(other)
            )));
        }
    };
    if args.json {
        crate::outln!("{}", render_json(&evaluation));
    } else {
        crate::out!("{}", render_text(&evaluation));
    }
    Ok(Exit::Done)
}

/// A path as a file tool would resolve it: relative to `cwd`, `~` expanded, symlinks followed.
pub(crate) fn resolve(cwd: &Path, home: Option<&Path>, subject: &str) -> PathBuf {
    let path = match (subject.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => cwd.join(subject),
    };
    paths::resolve(&paths::normalize(&path))
}

/// The verdict line, then one line per part.
pub(crate) fn render_text(evaluation: &Evaluation) -> String {
    let mut out = format!("{}\n", evaluation.decision);
    for part in &evaluation.parts {
        let rule = part
            .rule
            .as_ref()
            .map(|r| format!("  [{}]", escape_invisible(&r.to_string())))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {:<5}  {}  — {}{rule}\n",
            part.decision.to_string(),
            escape_invisible(&part.command),
            escape_invisible(&part.reason),
        ));
    }
    out
}

/// `{"verdict", "parts": [{"command", "verdict", "rule", "reason"}]}`.
pub(crate) fn render_json(evaluation: &Evaluation) -> String {
    let parts: Vec<serde_json::Value> = evaluation
        .parts
        .iter()
        .map(|p| {
            serde_json::json!({
                "command": p.command,
                "verdict": p.decision,
                "rule": p.rule.as_ref().map(ToString::to_string),
                "reason": p.reason,
            })
        })
        .collect();
    serde_json::json!({ "verdict": evaluation.decision, "parts": parts }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::{Decision, PartVerdict, Rule, RuleSource};
    use pretty_assertions::assert_eq;

    fn evaluation() -> Evaluation {
        Evaluation::from_parts(vec![
            PartVerdict {
                command: "git status".into(),
                decision: Decision::Allow,
                rule: Some(Rule {
                    tool: "bash".into(),
                    pattern: "git status".into(),
                    action: Decision::Allow,
                    source: RuleSource::Default,
                }),
                reason: "read-only git".into(),
            },
            PartVerdict {
                command: "rm\u{200b} x".into(),
                decision: Decision::Ask,
                rule: None,
                reason: "no rule matched".into(),
            },
        ])
    }

    #[test]
    fn text() {
        assert_eq!(
            render_text(&evaluation()),
            "ask\n  allow  git status  — read-only git  [allow bash `git status` (default)]\n  \
             ask    rm\\u200b x  — no rule matched\n"
        );
    }

    #[test]
    fn json() {
        let value: serde_json::Value = serde_json::from_str(&render_json(&evaluation())).unwrap();
        assert_eq!(
            value,
            serde_json::json!({
                "verdict": "ask",
                "parts": [
                    {"command": "git status", "verdict": "allow",
                     "rule": "allow bash `git status` (default)", "reason": "read-only git"},
                    {"command": "rm\u{200b} x", "verdict": "ask", "rule": null,
                     "reason": "no rule matched"}
                ]
            })
        );
    }
}
