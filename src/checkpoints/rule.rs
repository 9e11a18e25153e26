//! Which tool calls may change the workspace, so a snapshot must come before them.
//!
//! The rule, from the typed facts the dispatcher has after the permission check:
//! - `write_file` and `str_replace` ([`Access::Write`]): always.
//! - A tool the agent cannot inspect ([`Access::Opaque`], an MCP server's tool): always.
//! - `bash` ([`Access::Command`]): unless the permission verdict is a plain `allow` in which
//!   every part is either allowed by a built-in read-only rule (`ls`, `cat`, `grep`,
//!   `git status`, … — the defaults that neither write nor run other programs) or is shell
//!   structure the checker allows on its own (assignments, wrappers whose command is rated
//!   separately). A command allowed by a user or project rule, by an "always" approval, by
//!   the `pytest` default (it runs project code), or approved at the prompt counts as a
//!   change: the rules say it may run, not that it writes nothing.
//! - Reads and tools that touch nothing (`read_file`, `read_skill`, `write_todos`, `task`
//!   itself, whose subagent's calls are judged one by one): never.

use crate::permissions::{Decision, Evaluation, RuleSource};
use crate::tools::Access;

/// Built-in allow rules that run project code, so they may write.
const RUNS_PROJECT_CODE: &[&str] = &["pytest", "pytest *"];

/// Whether a call with `access`, rated `evaluation`, may change the workspace.
pub(crate) fn may_change(access: &Access, evaluation: Option<&Evaluation>) -> bool {
    match access {
        Access::None | Access::Read(_) => false,
        Access::Write(_) | Access::Opaque(_) => true,
        Access::Command(_) => !evaluation.is_some_and(read_only),
    }
}

/// A plain `allow` made only of built-in read-only rules and neutral shell structure.
fn read_only(evaluation: &Evaluation) -> bool {
    evaluation.decision == Decision::Allow
        && !evaluation.parts.is_empty()
        && evaluation.parts.iter().all(|part| {
            part.decision == Decision::Allow
                && part.rule.as_ref().is_none_or(|rule| {
                    rule.source == RuleSource::Default
                        && rule.action == Decision::Allow
                        && !RUNS_PROJECT_CODE.contains(&rule.pattern.as_str())
                })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::{PathContext, PermissionEngine, Rule};
    use std::path::PathBuf;

    fn engine(rules: Vec<Rule>) -> PermissionEngine {
        PermissionEngine::new(
            rules,
            PathContext {
                workspace: PathBuf::from("/ws"),
                cwd: PathBuf::from("/ws"),
                home: Some(PathBuf::from("/home/u")),
                agent_home: PathBuf::from("/home/u/.agents"),
            },
        )
    }

    fn changes(engine: &PermissionEngine, command: &str) -> bool {
        let evaluation = engine.check_bash(command);
        may_change(&Access::Command(command.into()), Some(&evaluation))
    }

    #[test]
    fn read_only_defaults_need_no_snapshot_everything_else_does() {
        let rules = vec![Rule {
            tool: "bash".into(),
            pattern: "cargo test*".into(),
            action: Decision::Allow,
            source: RuleSource::User,
        }];
        let engine = engine(rules);
        for command in [
            "ls -la",
            "cat a.txt | grep x",
            "git status && git diff",
            "cd src && ls",
            "find . -name '*.rs'",
            "sed -n 1,5p a.txt",
        ] {
            assert!(!changes(&engine, command), "{command}");
        }
        for command in [
            "cargo test",
            "sed -i s/a/b/ f",
            "echo hi > f",
            "mv a b",
            "python3 -c 'open(\"x\",\"w\")'",
            "chmod +x run.sh",
            "pytest -q",
            "find . -delete",
            "rm -f x",
        ] {
            assert!(changes(&engine, command), "{command}");
        }
        assert!(may_change(&Access::Command("ls".into()), None));
    }

    #[test]
    fn file_tools_and_opaque_tools() {
        assert!(may_change(&Access::Write(PathBuf::from("/ws/a")), None));
        assert!(may_change(&Access::Opaque("{}".into()), None));
        assert!(!may_change(&Access::Read(PathBuf::from("/ws/a")), None));
        assert!(!may_change(&Access::None, None));
    }
}
