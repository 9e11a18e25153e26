//! The allow / ask / deny rule engine between model output and execution (SPEC §5).
//!
//! [`PermissionEngine::check_bash`] rates every command a shell command line would execute
//! ([`shell`]) and returns the strictest verdict with the rule that decided each part;
//! [`PermissionEngine::check_file`] rates a resolved path for a file tool. Evaluation never
//! runs anything (it may list directories to expand globs and resolve symlinks). Unknown
//! means `ask`, never `allow`.
//!
//! Rule order (§5.1, §2.2): built-in defaults, then the configured rules in the order
//! [`crate::config::PermissionSettings`] resolved them (the user's, then a trusted project's);
//! the last matching rule wins. The `ask` and `deny` rules of an untrusted project config
//! can only make a verdict stricter: they are evaluated on their own and the stricter result
//! is kept. Session approvals (`a` at the prompt) turn `ask` into `allow` and never override
//! `deny`.
//!
//! Choices where the SPEC and the issue are silent (what a Codex / Claude Code user expects):
//! - A session approval remembers the part as shown; it also covers the same command with
//!   more words appended, unless something other than the rules made it `ask` (a redirection
//!   to a file, a risky option), which must match exactly.
//! - Path rules reach bash commands only through `deny`: an argument or redirection naming a
//!   denied path (checked for reading and writing, since we cannot tell which) is `deny`;
//!   `ask` path rules (outside the workspace) do not make `cat /etc/hosts` prompt. Paths are
//!   those named literally, through `~`, `$HOME`, `$AGENT_HOME`, a literal value the line
//!   assigns, `$(echo literal)`, or a glob; values only known at run time are not checked
//!   (the sandbox confines what commands can do). A recursive search (`grep -r`, `rg`,
//!   `find`) over a directory holding a denied path is `ask`, and so is one that follows
//!   symlinks (`grep -R`, `rg -L`, `find -L`) over a tree holding a link to one.
//! - Reading `.env` files with `read_file` is `ask` (their secrets would go to the model
//!   provider); writing them is `deny` (issue 3).

pub mod approval;
mod by_name;
pub(crate) mod decision;
pub mod defaults;
pub(crate) mod paths;
mod printed;
mod rate;
pub mod rules;
pub mod shell;
pub(crate) mod symlinks;

use std::path::Path;

pub use approval::{ApprovalAnswer, ApprovalRequest, Approver};
pub use decision::{Decision, Evaluation, PartVerdict, Rule, RuleSource};
pub use rules::PathContext;

use crate::config::PermissionSettings;
use rules::Compiled;

/// Rules plus the session's "always" approvals.
#[derive(Debug, Clone)]
pub struct PermissionEngine {
    /// Defaults, user rules and trusted project rules, in order.
    rules: Vec<Compiled>,
    /// `ask`/`deny` rules of an untrusted project config: they only tighten.
    tighten: Vec<Compiled>,
    paths: PathContext,
    /// Command prefixes approved with `a` at the prompt.
    session_commands: Vec<String>,
    /// `(tool, path)` pairs approved with `a` at the prompt.
    session_paths: Vec<(String, String)>,
    /// Tools rated by name (MCP tools) approved with `a` at the prompt.
    session_tools: Vec<String>,
    /// Problems found while compiling rules (invalid globs).
    warnings: Vec<String>,
    /// Deny file rules with the literal start and end a matching path must have.
    denies: Vec<DenyIndex>,
    /// Literal roots of absolute deny file rules (`~/.ssh`), with their reasons.
    secret_roots: Vec<(std::path::PathBuf, String)>,
    /// Directories whose contents a deny rule covers (`~/.ssh` for `~/.ssh/**`).
    secret_dirs: Vec<std::path::PathBuf>,
    /// Bash rules of `rules` by the first byte of their pattern.
    bash_index: BashIndex,
}

/// Positions of bash rules in the main list, so a command is only matched against rules
/// that can match it. Order is restored (last match wins) by the caller.
#[derive(Debug, Clone)]
struct BashIndex {
    /// Rules whose pattern starts with a literal byte, by that byte.
    by_first: Vec<Vec<usize>>,
    /// Rules whose pattern starts with `*` (or is empty).
    wildcard: Vec<usize>,
}

impl BashIndex {
    fn new(rules: &[Compiled]) -> Self {
        let mut index = Self {
            by_first: vec![Vec::new(); 256],
            wildcard: Vec::new(),
        };
        for (i, rule) in rules.iter().enumerate().filter(|(_, r)| r.for_bash()) {
            match rule.rule.pattern.as_bytes().first() {
                Some(b'*') | None => index.wildcard.push(i),
                Some(first) => index.by_first[usize::from(*first)].push(i),
            }
        }
        index
    }
}

/// A deny file rule in `rules` (or `tighten`), with cheap necessary conditions.
#[derive(Debug, Clone)]
struct DenyIndex {
    tighten: bool,
    index: usize,
    prefix: String,
    suffix: String,
}

impl PermissionEngine {
    /// An engine with the built-in defaults followed by `rules`.
    pub fn new(rules: Vec<Rule>, paths: PathContext) -> Self {
        Self::build(rules, Vec::new(), paths)
    }

    fn build(rules: Vec<Rule>, tighten: Vec<Rule>, paths: PathContext) -> Self {
        let mut warnings = Vec::new();
        let mut compile = |rule: Rule, reason| {
            let (compiled, warning) = Compiled::new(rule, reason, &paths);
            warnings.extend(warning);
            compiled
        };
        let mut list: Vec<Compiled> = rules::defaults()
            .into_iter()
            .map(|(rule, reason)| compile(rule, reason))
            .collect();
        list.extend(rules.into_iter().map(|rule| compile(rule, None)));
        let tighten: Vec<Compiled> = tighten
            .into_iter()
            .map(|rule| compile(rule, None))
            .collect();
        let mut denies = deny_index(&list, false);
        denies.extend(deny_index(&tighten, true));
        let compiled = |d: &DenyIndex| {
            if d.tighten {
                &tighten[d.index]
            } else {
                &list[d.index]
            }
        };
        let secret_roots = denies
            .iter()
            .filter_map(|d| {
                compiled(d)
                    .literal_root()
                    .map(|r| (r, compiled(d).explain()))
            })
            .collect();
        let secret_dirs = denies
            .iter()
            .filter(|d| compiled(d).covers_contents())
            .filter_map(|d| compiled(d).literal_root())
            .collect();
        Self {
            tighten,
            paths,
            session_commands: Vec::new(),
            session_paths: Vec::new(),
            session_tools: Vec::new(),
            warnings,
            denies,
            secret_roots,
            secret_dirs,
            bash_index: BashIndex::new(&list),
            rules: list,
        }
    }

    /// Defaults, then the configured rules of `settings` (see
    /// [`crate::config::PermissionSettings`] for which apply), with `paths` for path rules.
    /// The strings are warnings for the user: ignored project rules, bad globs.
    pub fn from_settings(settings: &PermissionSettings, paths: PathContext) -> (Self, Vec<String>) {
        let mut rules = rules::from_specs(&settings.user, RuleSource::User);
        rules.extend(rules::from_specs(&settings.project, RuleSource::Project));
        let tighten = rules::from_specs(&settings.tighten, RuleSource::Project);
        let engine = Self::build(rules, tighten, paths);
        let mut warnings = settings.warnings.clone();
        warnings.extend(engine.warnings.iter().cloned());
        (engine, warnings)
    }

    /// Rates a shell command line: one part per command bash would execute.
    pub fn check_bash(&self, command: &str) -> Evaluation {
        rate::bash(self, command)
    }

    /// Rates access to a resolved path by a file tool (`write` for write_file/str_replace).
    pub fn check_file(&self, tool: &str, path: &Path, write: bool) -> Evaluation {
        let shown = path.display().to_string();
        let mut part = self.file_part(tool, path, write);
        part.command = shown.clone();
        if part.decision == Decision::Ask
            && self
                .session_paths
                .iter()
                .any(|(t, p)| t == tool && *p == shown)
        {
            part.decision = Decision::Allow;
            part.reason = "approved for this session".into();
            part.rule = Some(session_rule(tool, &shown));
        }
        Evaluation::from_parts(vec![part])
    }

    /// The verdict of the file rules on `path` (last match wins; tightening rules on top).
    fn file_part(&self, tool: &str, path: &Path, write: bool) -> PartVerdict {
        let pick = |list: &[Compiled]| {
            list.iter()
                .rev()
                .find(|c| c.for_file(tool, write) && c.matches_path(path))
                .cloned()
        };
        let main = pick(&self.rules);
        let tight = pick(&self.tighten);
        let decider = match (main, tight) {
            (Some(m), Some(t)) if t.rule.action > m.rule.action => Some(t),
            (m, t) => m.or(t),
        };
        match decider {
            Some(c) => PartVerdict {
                command: path.display().to_string(),
                decision: c.rule.action,
                reason: c.explain(),
                rule: Some(c.rule),
            },
            None => PartVerdict {
                command: path.display().to_string(),
                decision: Decision::Ask,
                rule: None,
                reason: "no rule matched".into(),
            },
        }
    }

    /// Remembers a bash command prefix approved with `a`: later commands equal to it, or
    /// extending it with more words when nothing but a rule made them `ask`, are allowed.
    pub(crate) fn allow_for_session(&mut self, prefix: &str) {
        if !prefix.is_empty() && !self.session_commands.iter().any(|p| p == prefix) {
            self.session_commands.push(prefix.to_string());
        }
    }

    /// Remembers a file path approved with `a` for `tool`.
    pub(crate) fn allow_file_for_session(&mut self, tool: &str, path: &str) {
        let entry = (tool.to_string(), path.to_string());
        if !path.is_empty() && !self.session_paths.contains(&entry) {
            self.session_paths.push(entry);
        }
    }
}

/// The deny file rules of `list`, with their literal ends.
fn deny_index(list: &[Compiled], tighten: bool) -> Vec<DenyIndex> {
    list.iter()
        .enumerate()
        .filter(|(_, c)| c.rule.action == Decision::Deny && c.rule.tool != "bash")
        .map(|(index, c)| {
            let (prefix, suffix) = c.literal_ends();
            DenyIndex {
                tighten,
                index,
                prefix,
                suffix,
            }
        })
        .collect()
}

fn session_rule(tool: &str, pattern: &str) -> Rule {
    Rule {
        tool: tool.to_string(),
        pattern: pattern.to_string(),
        action: Decision::Allow,
        source: RuleSource::Session,
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
                cwd: "/w".into(),
                home: Some("/home/u".into()),
                agent_home: "/home/u/.agents".into(),
            },
        )
    }

    #[test]
    fn strictest_part_wins() {
        let e = engine();
        assert_eq!(
            e.check_bash("git status && rm -rf build").decision,
            Decision::Deny
        );
        assert_eq!(e.check_bash("ls -la").decision, Decision::Allow);
        assert_eq!(e.check_bash("cargo build").decision, Decision::Ask);
        assert_eq!(e.check_bash("/bin/rm x").decision, Decision::Deny);
        assert_eq!(e.check_bash("./git status").decision, Decision::Ask);
    }

    #[test]
    fn session_allow_never_overrides_deny() {
        let mut e = engine();
        e.allow_for_session("cargo build");
        assert_eq!(
            e.check_bash("cargo build --release").decision,
            Decision::Allow
        );
        assert_eq!(e.check_bash("cargo buildx").decision, Decision::Ask);
        e.allow_for_session("rm");
        assert_eq!(e.check_bash("rm x").decision, Decision::Deny);
        e.allow_for_session("cat a > b");
        assert_eq!(e.check_bash("cat a > b").decision, Decision::Allow);
        assert_eq!(e.check_bash("cat a > c").decision, Decision::Ask);
    }

    #[test]
    fn file_defaults() {
        let e = engine();
        let rate = |tool: &str, p: &str, w| e.check_file(tool, Path::new(p), w).decision;
        assert_eq!(rate("write_file", "/w/src/a.rs", true), Decision::Allow);
        assert_eq!(rate("read_file", "/etc/passwd", false), Decision::Ask);
        assert_eq!(rate("write_file", "/w/.git/config", true), Decision::Ask);
        assert_eq!(rate("read_file", "/w/.git/config", false), Decision::Allow);
        assert_eq!(
            rate("read_file", "/home/u/.ssh/id_rsa", false),
            Decision::Deny
        );
        assert_eq!(
            rate("read_file", "/home/u/.agents/env", false),
            Decision::Deny
        );
        assert_eq!(rate("write_file", "/w/app/.env", true), Decision::Deny);
        assert_eq!(rate("read_file", "/w/app/.env", false), Decision::Ask);
    }

    #[test]
    fn session_paths_are_per_tool() {
        let mut e = engine();
        e.allow_file_for_session("read_file", "/etc/hosts");
        let rate = |e: &PermissionEngine, tool: &str| {
            e.check_file(tool, Path::new("/etc/hosts"), tool != "read_file")
                .decision
        };
        assert_eq!(rate(&e, "read_file"), Decision::Allow);
        assert_eq!(rate(&e, "write_file"), Decision::Ask);
        assert_eq!(e.check_bash("/etc/hosts").decision, Decision::Ask);
    }
}
