//! `[hooks]` from the config files → the hooks of a session, resolved once (issue 18; the
//! governance layer runs them).
//!
//! The format follows Claude Code's hook events so that existing hook scripts work, flattened
//! into TOML tables: `[[hooks.PreToolUse]]` with `matcher` (tool names, `|`-separated, `*`
//! globs, Claude's names `Bash`, `Read`, `Write`, `Edit` accepted), `command` (run with
//! `sh -c`) and `timeout` (seconds, default 60).
//!
//! Rules:
//! - user hooks always run; a project's hooks (`<workspace>/.agents/config.toml`) run only in
//!   a workspace the user trusted (`agent trust`): a cloned repository must not run programs.
//!   An untrusted project's hooks are ignored with one warning.
//! - user hooks run first, then project hooks, each in file order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::{ConfigError, Sources};

/// Seconds a hook may run before its process group is killed (Claude Code's default).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// When a hook runs (Claude Code's event names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum HookEvent {
    /// Before a tool call runs (after the role and budget checks, before the rules).
    PreToolUse,
    /// After a tool call ran.
    PostToolUse,
    /// When the user submits a prompt, before the model sees it.
    UserPromptSubmit,
    /// When the model ends a turn with its answer.
    Stop,
    /// When a subagent (`task`) ends with its answer.
    SubagentStop,
    /// When a session starts (or is resumed, or cleared).
    SessionStart,
    /// When a session ends.
    SessionEnd,
    /// Before the conversation is compacted.
    PreCompact,
    /// When the agent waits for the user (an approval).
    Notification,
}

impl HookEvent {
    pub(crate) const ALL: [HookEvent; 9] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::PreCompact,
        HookEvent::Notification,
    ];

    /// The name as in config files and in `hook_event_name`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::Notification => "Notification",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// One `[[hooks.EVENT]]` table as written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HookSpec {
    /// Which calls the hook sees: tool names for tool events (`write_file|str_replace`,
    /// `mcp__github__*`), the trigger or source for `PreCompact` (`manual`, `auto`) and
    /// `SessionStart` (`startup`, `resume`, `clear`). Empty or `*`: every one.
    #[serde(default)]
    pub(crate) matcher: Option<String>,
    /// Run with `sh -c` in the workspace.
    pub(crate) command: String,
    /// Seconds before the hook's process group is killed (default 60).
    pub(crate) timeout: Option<f64>,
}

/// One hook, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hook {
    pub(crate) event: HookEvent,
    pub(crate) matcher: Option<String>,
    pub(crate) command: String,
    pub(crate) timeout: Duration,
    /// From the project's config file (trusted workspace).
    pub(crate) project: bool,
}

impl Hook {
    /// Whether the hook applies to `subject` (a tool name, trigger or source; `None` for
    /// events without one).
    pub(crate) fn matches(&self, subject: Option<&str>) -> bool {
        let Some(matcher) = self.matcher.as_deref().map(str::trim) else {
            return true;
        };
        if matcher.is_empty() || matcher == "*" {
            return true;
        }
        let Some(subject) = subject else {
            return true;
        };
        matcher
            .split('|')
            .map(str::trim)
            .any(|alternative| matches_name(alternative, subject))
    }
}

/// Claude Code's tool names for ours, so copied matchers work.
const ALIASES: [(&str, &str); 6] = [
    ("Bash", "bash"),
    ("Read", "read_file"),
    ("Write", "write_file"),
    ("Edit", "str_replace"),
    ("MultiEdit", "str_replace"),
    ("Task", "task"),
];

fn matches_name(pattern: &str, subject: &str) -> bool {
    let pattern = ALIASES
        .iter()
        .find(|(claude, _)| *claude == pattern)
        .map_or(pattern, |(_, ours)| ours);
    if !pattern.contains('*') {
        return pattern == subject;
    }
    glob::Pattern::new(pattern).is_ok_and(|p| p.matches(subject))
}

/// The session's hooks in the order they run, and warnings for the user.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct HookSettings {
    pub(crate) hooks: Vec<Hook>,
    /// Where hooks run and what `cwd` says.
    pub(crate) workspace: PathBuf,
    /// Variables hooks do not get (`API_KEY`, the keys of `$AGENT_HOME/env`).
    pub(crate) remove_env: Vec<String>,
    pub(crate) warnings: Vec<String>,
}

impl HookSettings {
    /// The hooks of the user file, then (in a trusted workspace) of the project file.
    pub(crate) fn resolve(sources: &Sources) -> Self {
        let mut hooks = collect(&sources.user.hooks, false);
        let mut warnings = Vec::new();
        if !sources.project.hooks.is_empty() {
            if sources.trusted {
                hooks.extend(collect(&sources.project.hooks, true));
            } else {
                let events: Vec<&str> = sources.project.hooks.keys().map(String::as_str).collect();
                warnings.push(format!(
                    "ignoring [hooks] {} in the untrusted project config {}: a repository may \
                     not run programs; run `agent trust` in this workspace to use them",
                    events.join(", "),
                    sources.paths.project_file().display()
                ));
            }
        }
        Self {
            hooks,
            workspace: sources.paths.workspace.clone(),
            remove_env: sources.secret_vars(),
            warnings,
        }
    }
}

fn collect(section: &BTreeMap<String, Vec<HookSpec>>, project: bool) -> Vec<Hook> {
    let mut hooks = Vec::new();
    for event in HookEvent::ALL {
        for spec in section.get(event.name()).into_iter().flatten() {
            hooks.push(Hook {
                event,
                matcher: spec.matcher.clone(),
                command: spec.command.clone(),
                timeout: spec
                    .timeout
                    .filter(|t| t.is_finite() && *t > 0.0)
                    .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64),
                project,
            });
        }
    }
    hooks
}

/// Checks the `[hooks]` of a file: known event names, a command, a positive timeout.
///
/// # Errors
/// [`ConfigError::Toml`] naming the bad value and the file.
pub(crate) fn check(
    section: &BTreeMap<String, Vec<HookSpec>>,
    path: &Path,
) -> Result<(), ConfigError> {
    let error = |message: String| {
        Err(ConfigError::Toml {
            path: path.to_path_buf(),
            message,
        })
    };
    for (name, specs) in section {
        if HookEvent::from_name(name).is_none() {
            let known: Vec<&str> = HookEvent::ALL.iter().map(|e| e.name()).collect();
            return error(format!(
                "[hooks] `{name}` is not a hook event; use one of {}",
                known.join(", ")
            ));
        }
        for spec in specs {
            if spec.command.trim().is_empty() {
                return error(format!(
                    "[[hooks.{name}]] has an empty `command`; give the program to run"
                ));
            }
            if let Some(t) = spec.timeout.filter(|t| !(t.is_finite() && *t > 0.0)) {
                return error(format!(
                    "[[hooks.{name}]] timeout = `{t}` is not a duration; use seconds, more than 0"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(matcher: Option<&str>) -> Hook {
        Hook {
            event: HookEvent::PreToolUse,
            matcher: matcher.map(str::to_string),
            command: "true".into(),
            timeout: DEFAULT_TIMEOUT,
            project: false,
        }
    }

    #[test]
    fn matchers_take_names_alternatives_globs_and_claude_names() {
        let cases = [
            (None, "bash", true),
            (Some(""), "bash", true),
            (Some("*"), "write_file", true),
            (Some("write_file|str_replace"), "str_replace", true),
            (Some("write_file|str_replace"), "bash", false),
            (Some("Write|Edit"), "str_replace", true),
            (Some("Bash"), "bash", true),
            (Some("mcp__github__*"), "mcp__github__issue", true),
            (Some("mcp__github__*"), "mcp__gitlab__issue", false),
            (Some("bash"), "bash_extra", false),
        ];
        for (matcher, subject, expected) in cases {
            assert_eq!(
                hook(matcher).matches(Some(subject)),
                expected,
                "{matcher:?} {subject}"
            );
        }
    }

    #[test]
    fn unknown_events_and_bad_timeouts_are_errors() {
        let parse = |text: &str| {
            super::super::FileConfig::parse(text, Path::new("/h/config.toml"))
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            parse("[[hooks.PreToolUse]]\nmatcher = \"bash\"\ncommand = \"x\"\ntimeout = 5\n"),
            Ok(())
        );
        let unknown = parse("[[hooks.PreTool]]\ncommand = \"x\"\n")
            .err()
            .unwrap_or_default();
        assert!(
            unknown.contains("`PreTool` is not a hook event"),
            "{unknown}"
        );
        let timeout = parse("[[hooks.Stop]]\ncommand = \"x\"\ntimeout = -1\n")
            .err()
            .unwrap_or_default();
        assert!(timeout.contains("timeout = `-1`"), "{timeout}");
        let field = parse("[[hooks.Stop]]\ncommand = \"x\"\ntype = \"command\"\n")
            .err()
            .unwrap_or_default();
        assert!(field.contains("unknown field `type`"), "{field}");
    }
}
