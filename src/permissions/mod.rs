//! The allow / ask / deny rule engine between model output and execution (SPEC §5).
//!
//! [`PermissionEngine::check_bash`] rates every simple command of a shell command line and
//! returns the strictest verdict with the rule that decided each part;
//! [`PermissionEngine::check_file`] rates a resolved path for a file tool. Evaluation is pure:
//! it never runs anything. Unknown means `ask`, never `allow`.

pub mod approval;
pub mod decision;
pub mod rules;
pub mod shell;

use std::path::{Path, PathBuf};

pub use approval::{ApprovalAnswer, ApprovalRequest, Approver};
pub use decision::{Decision, Evaluation, PartVerdict, Rule, RuleSource};

use crate::config::Config;

/// Paths that file rules refer to.
#[derive(Debug, Clone, Default)]
pub struct PathContext {
    pub workspace: PathBuf,
    pub home: Option<PathBuf>,
    pub agent_home: PathBuf,
}

/// Rules plus the session's "always" approvals.
#[derive(Debug, Clone)]
pub struct PermissionEngine {
    rules: Vec<Rule>,
    paths: PathContext,
    /// Exact command prefixes approved with `a` at the prompt; they turn `ask` into `allow`
    /// for matching parts and never override `deny`.
    session_allows: Vec<String>,
}

impl PermissionEngine {
    /// An engine with the built-in defaults followed by `rules`.
    pub fn new(rules: Vec<Rule>, paths: PathContext) -> Self {
        let mut all = rules::default_bash_rules();
        all.extend(rules);
        Self {
            rules: all,
            paths,
            session_allows: Vec::new(),
        }
    }

    /// Defaults, then user rules, then project rules. Project `allow` rules apply only in a
    /// trusted workspace; otherwise they are dropped and named in the returned warning.
    pub fn from_config(config: &Config) -> (Self, Vec<String>) {
        let mut list = rules::from_specs(&config.user.permissions.rules, RuleSource::User);
        let project = rules::from_specs(&config.project.permissions.rules, RuleSource::Project);
        let mut warnings = Vec::new();
        let (kept, ignored): (Vec<Rule>, Vec<Rule>) = project
            .into_iter()
            .partition(|r| config.project_trusted || r.action != Decision::Allow);
        if !ignored.is_empty() {
            let names: Vec<String> = ignored
                .iter()
                .map(|r| format!("{} `{}`", r.tool, r.pattern))
                .collect();
            warnings.push(format!(
                "ignoring allow rules in the untrusted project config ({}); run `agent trust` to apply them",
                names.join(", ")
            ));
        }
        list.extend(kept);
        let paths = PathContext {
            workspace: config.workspace.clone(),
            home: config.home.clone(),
            agent_home: config.agent_home.clone(),
        };
        (Self::new(list, paths), warnings)
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Rates a shell command line.
    pub fn check_bash(&self, command: &str) -> Evaluation {
        let analysis = shell::analyze(command);
        let mut parts: Vec<PartVerdict> = analysis
            .commands
            .iter()
            .map(|c| self.rate_command(&c.text, &c.program))
            .collect();
        for reason in analysis.opaque {
            parts.push(PartVerdict {
                command: command.to_string(),
                decision: Decision::Ask,
                rule: None,
                reason,
            });
        }
        Evaluation::from_parts(parts)
    }

    fn rate_command(&self, text: &str, program: &str) -> PartVerdict {
        let base = Path::new(program)
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let path_qualified = program.contains('/');
        let base_text = format!("{base}{}", &text[program.len().min(text.len())..]);
        let mut verdict = PartVerdict {
            command: text.to_string(),
            decision: Decision::Ask,
            rule: None,
            reason: "no rule matched".into(),
        };
        for rule in self.rules.iter().filter(|r| rules::applies_to(r, "bash")) {
            let matched = rules::command_matches(&rule.pattern, text)
                || (path_qualified
                    && rule.action == Decision::Deny
                    && rules::command_matches(&rule.pattern, &base_text));
            if matched {
                verdict.decision = rule.action;
                verdict.rule = Some(rule.clone());
                verdict.reason = format!("matched `{}`", rule.pattern);
            }
        }
        if verdict.decision == Decision::Ask
            && self
                .session_allows
                .iter()
                .any(|prefix| text == prefix || text.starts_with(&format!("{prefix} ")))
        {
            verdict.decision = Decision::Allow;
            verdict.reason = "approved for this session".into();
        }
        verdict
    }

    /// Rates access to a resolved path by a file tool (`write` for write_file/str_replace).
    pub fn check_file(&self, tool: &str, path: &Path, write: bool) -> Evaluation {
        let shown = path.display().to_string();
        let (mut decision, mut reason) = if self.is_secret(path) {
            (Decision::Deny, "secret file".to_string())
        } else if !path.starts_with(&self.paths.workspace) {
            (Decision::Ask, "outside the workspace".to_string())
        } else if write && path.starts_with(self.paths.workspace.join(".git")) {
            (Decision::Ask, "write inside .git".to_string())
        } else {
            (Decision::Allow, "inside the workspace".to_string())
        };
        let mut matched = None;
        for rule in self
            .rules
            .iter()
            .filter(|r| r.tool != "bash" && rules::applies_to(r, tool))
        {
            if rules::path_matches(&rule.pattern, path, self.paths.home.as_deref()) {
                decision = rule.action;
                reason = format!("matched `{}`", rule.pattern);
                matched = Some(rule.clone());
            }
        }
        if self.is_secret(path) {
            decision = Decision::Deny;
        }
        Evaluation::from_parts(vec![PartVerdict {
            command: shown,
            decision,
            rule: matched,
            reason,
        }])
    }

    fn is_secret(&self, path: &Path) -> bool {
        let home = self.paths.home.as_deref();
        path == self.paths.agent_home.join("env")
            || rules::path_matches("~/.ssh/**", path, home)
            || rules::path_matches("~/.aws/**", path, home)
            || rules::path_matches("~/.gnupg/**", path, home)
    }

    /// Remembers `prefix` (an exact simple command or its leading words) for this session.
    pub fn allow_for_session(&mut self, prefix: &str) {
        if !prefix.is_empty() && !self.session_allows.iter().any(|p| p == prefix) {
            self.session_allows.push(prefix.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> PermissionEngine {
        PermissionEngine::new(
            Vec::new(),
            PathContext {
                workspace: "/w".into(),
                home: Some("/home/u".into()),
                agent_home: "/home/u/.agents".into(),
            },
        )
    }

    #[test]
    fn strictest_part_wins() {
        let e = engine();
        assert_eq!(e.check_bash("git status && rm -rf build").decision, Decision::Deny);
        assert_eq!(e.check_bash("ls -la").decision, Decision::Allow);
        assert_eq!(e.check_bash("cargo build").decision, Decision::Ask);
        assert_eq!(e.check_bash("/bin/rm x").decision, Decision::Deny);
        assert_eq!(e.check_bash("./git status").decision, Decision::Ask);
    }

    #[test]
    fn session_allow_never_overrides_deny() {
        let mut e = engine();
        e.allow_for_session("cargo build");
        assert_eq!(e.check_bash("cargo build --release").decision, Decision::Allow);
        e.allow_for_session("rm");
        assert_eq!(e.check_bash("rm x").decision, Decision::Deny);
    }

    #[test]
    fn file_defaults() {
        let e = engine();
        let rate = |p: &str, w| e.check_file("write_file", Path::new(p), w).decision;
        assert_eq!(rate("/w/src/a.rs", true), Decision::Allow);
        assert_eq!(rate("/etc/passwd", false), Decision::Ask);
        assert_eq!(rate("/w/.git/config", true), Decision::Ask);
        assert_eq!(rate("/home/u/.ssh/id_rsa", false), Decision::Deny);
        assert_eq!(rate("/home/u/.agents/env", false), Decision::Deny);
    }
}
