//! Rules (§5.1): built-in and configured, compiled once, matched many times.
//!
//! A bash pattern is a glob over the normalized command text where `*` matches any text
//! (spaces and `/` included) and every other character matches itself. A file pattern is a
//! path glob on the resolved path: `*` within one component, `**` across components; `~/`,
//! `$HOME/`, `$WORKSPACE/` and `$AGENT_HOME/` at the start are expanded, other relative
//! patterns are relative to the workspace, and `*` or `**` alone match every path.
//! A pattern that is not a valid glob matches only itself, with a warning.

use std::path::{Path, PathBuf};

use super::decision::{Decision, Rule, RuleSource};
use super::defaults::{self, DefaultRule};
use crate::config::Paths;
use crate::config::file::{ActionSpec, RuleSpec};

/// Paths that file rules refer to.
#[derive(Debug, Clone, Default)]
pub struct PathContext {
    /// Workspace root, canonical.
    pub workspace: PathBuf,
    /// Directory shell commands start in (relative bash arguments resolve against it);
    /// empty means the workspace.
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
    pub agent_home: PathBuf,
}

impl From<&Paths> for PathContext {
    fn from(paths: &Paths) -> Self {
        Self {
            workspace: paths.workspace.clone(),
            cwd: paths.cwd.clone(),
            home: paths.home.clone(),
            agent_home: paths.agent_home.clone(),
        }
    }
}

impl PathContext {
    /// The directory relative paths of shell commands start from.
    pub(crate) fn start_dir(&self) -> &Path {
        if self.cwd.as_os_str().is_empty() {
            &self.workspace
        } else {
            &self.cwd
        }
    }
}

/// A rule ready to match.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    pub(crate) rule: Rule,
    /// Why a built-in rule exists.
    pub(crate) reason: Option<&'static str>,
    command: Vec<String>,
    path: PathPattern,
    /// Precomputed [`Compiled::for_bash`].
    bash: bool,
}

#[derive(Debug, Clone)]
enum PathPattern {
    Any,
    Glob(glob::Pattern),
    Literal(PathBuf),
    /// Refers to an unknown directory (`~` without a home directory).
    Never,
}

const GLOB_OPTIONS: glob::MatchOptions = glob::MatchOptions {
    case_sensitive: true,
    require_literal_separator: true,
    require_literal_leading_dot: false,
};

impl Compiled {
    /// Compiles `rule`; the warning names a pattern that is not a valid glob.
    pub(crate) fn new(
        rule: Rule,
        reason: Option<&'static str>,
        paths: &PathContext,
    ) -> (Self, Option<String>) {
        let command = rule.pattern.split('*').map(str::to_string).collect();
        let by_name = rule.tool.starts_with(crate::config::file::MCP_RULE_PREFIX);
        let (path, warning) = if rule.tool == "bash" || by_name {
            (PathPattern::Never, None)
        } else {
            compile_path(&rule.pattern, paths)
        };
        let bash = rule.tool == "bash" || rule.tool == "*" && rule.source != RuleSource::Default;
        (
            Self {
                rule,
                reason,
                command,
                path,
                bash,
            },
            warning,
        )
    }

    /// Whether this rule rates shell commands: `bash` rules, and configured `*` rules (the
    /// built-in `*` rules are path rules).
    pub(crate) fn for_bash(&self) -> bool {
        self.bash
    }

    /// Whether this rule rates `tool` touching a path. File tools without rules of their
    /// own are rated by the `read_file` / `write_file` rules.
    pub(crate) fn for_file(&self, tool: &str, write: bool) -> bool {
        let own = ["read_file", "write_file", "str_replace"].contains(&tool);
        match self.rule.tool.as_str() {
            "bash" => false,
            "*" => true,
            t if t == tool => true,
            "write_file" => !own && write,
            "read_file" => !own && !write,
            _ => false,
        }
    }

    pub(crate) fn matches_command(&self, text: &str) -> bool {
        glob_text(&self.command, text)
    }

    pub(crate) fn matches_path(&self, path: &Path) -> bool {
        match &self.path {
            PathPattern::Any => true,
            // Lossy: a non-UTF-8 name must still match `*` (glob's matches_path says no).
            PathPattern::Glob(pattern) => {
                pattern.matches_with(&path.to_string_lossy(), GLOB_OPTIONS)
            }
            PathPattern::Literal(literal) => literal == path,
            PathPattern::Never => false,
        }
    }

    /// The literal text a matching path must start and end with (before the first and
    /// after the last glob metacharacter), for cheap rejection.
    pub(crate) fn literal_ends(&self) -> (String, String) {
        match &self.path {
            PathPattern::Glob(pattern) => {
                let text = pattern.as_str();
                let first = text.find(['*', '?', '[']).unwrap_or(text.len());
                let last = text.rfind(['*', '?', ']']).map_or(text.len(), |at| at + 1);
                if first == text.len() {
                    (text.to_string(), String::new())
                } else {
                    (
                        text[..first].to_string(),
                        text[last.max(first)..].to_string(),
                    )
                }
            }
            PathPattern::Literal(path) => (path.to_string_lossy().into_owned(), String::new()),
            PathPattern::Any | PathPattern::Never => (String::new(), String::new()),
        }
    }

    /// Whether the pattern matches what is inside a directory (`dir/**`, `dir/*`), so
    /// naming the directory itself exposes what the rule protects.
    pub(crate) fn covers_contents(&self) -> bool {
        matches!(&self.path, PathPattern::Glob(p) if p.as_str().ends_with("/**") || p.as_str().ends_with("/*"))
    }

    /// The absolute path before the first glob metacharacter of a path pattern
    /// (`/home/u/.ssh` for `~/.ssh/**`), when there is one.
    pub(crate) fn literal_root(&self) -> Option<PathBuf> {
        let text = match &self.path {
            PathPattern::Glob(pattern) => pattern.as_str().to_string(),
            PathPattern::Literal(path) => path.to_string_lossy().into_owned(),
            PathPattern::Any | PathPattern::Never => return None,
        };
        let root = match text.find(['*', '?', '[']) {
            Some(at) => text[..at].rsplit_once('/').map(|(dir, _)| dir)?,
            None => text.as_str(),
        };
        (root.starts_with('/') && root.len() > 1).then(|| PathBuf::from(root))
    }

    /// Why this rule decided, for the user.
    pub(crate) fn explain(&self) -> String {
        match (self.reason, self.rule.source) {
            (Some(reason), _) => reason.to_string(),
            (None, RuleSource::User) => "matched a rule in your config".into(),
            (None, RuleSource::Project) => "matched a rule in the project config".into(),
            (None, RuleSource::Session) => "approved for this session".into(),
            (None, RuleSource::Default) => "built-in rule".into(),
        }
    }
}

/// `*` matches any text; the pieces between stars match literally.
pub(super) fn glob_text(pieces: &[String], text: &str) -> bool {
    if let [only] = pieces {
        return only == text;
    }
    let [first, middle @ .., last] = pieces else {
        return false;
    };
    let Some(mut rest) = text.strip_prefix(first.as_str()) else {
        return false;
    };
    for piece in middle {
        match rest.find(piece.as_str()) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last.as_str())
}

fn compile_path(pattern: &str, paths: &PathContext) -> (PathPattern, Option<String>) {
    if pattern == "*" || pattern == "**" {
        return (PathPattern::Any, None);
    }
    let escape = |p: &Path| glob::Pattern::escape(&p.to_string_lossy());
    let expanded = if let Some(rest) = strip_root(pattern, &["~", "$HOME"]) {
        match &paths.home {
            Some(home) => format!("{}{rest}", escape(home)),
            None => return (PathPattern::Never, None),
        }
    } else if let Some(rest) = strip_root(pattern, &["$WORKSPACE"]) {
        format!("{}{rest}", escape(&paths.workspace))
    } else if let Some(rest) = strip_root(pattern, &["$AGENT_HOME"]) {
        format!("{}{rest}", escape(&paths.agent_home))
    } else if pattern.starts_with('/') || pattern.starts_with('*') {
        pattern.to_string()
    } else {
        format!("{}/{pattern}", escape(&paths.workspace))
    };
    match glob::Pattern::new(&expanded) {
        Ok(glob) => (PathPattern::Glob(glob), None),
        Err(error) => (
            PathPattern::Literal(PathBuf::from(&expanded)),
            Some(format!(
                "the rule pattern `{pattern}` is not a valid glob ({error}); it matches only that exact path"
            )),
        ),
    }
}

/// `pattern` without a leading `root` (`~`, `$WORKSPACE`, ...) when followed by `/` or the end.
fn strip_root<'a>(pattern: &'a str, roots: &[&str]) -> Option<&'a str> {
    roots.iter().find_map(|root| {
        let rest = pattern.strip_prefix(root)?;
        (rest.is_empty() || rest.starts_with('/')).then_some(rest)
    })
}

/// The built-in rules as [`Rule`]s with their reasons.
pub(crate) fn defaults() -> Vec<(Rule, Option<&'static str>)> {
    defaults::BASH
        .iter()
        .chain(defaults::FILES)
        .map(|(tool, pattern, action, reason): &DefaultRule| {
            (
                Rule {
                    tool: (*tool).into(),
                    pattern: (*pattern).into(),
                    action: *action,
                    source: RuleSource::Default,
                },
                Some(*reason),
            )
        })
        .collect()
}

/// Converts config entries into rules of `source`.
pub fn from_specs(specs: &[RuleSpec], source: RuleSource) -> Vec<Rule> {
    specs
        .iter()
        .map(|spec| Rule {
            tool: spec.tool.clone(),
            pattern: spec.pattern.clone(),
            action: match spec.action {
                ActionSpec::Allow => Decision::Allow,
                ActionSpec::Ask => Decision::Ask,
                ActionSpec::Deny => Decision::Deny,
            },
            source,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> PathContext {
        PathContext {
            workspace: "/w".into(),
            cwd: "/w".into(),
            home: Some("/home/u".into()),
            agent_home: "/home/u/.agents".into(),
        }
    }

    fn rule(tool: &str, pattern: &str) -> Compiled {
        let rule = Rule {
            tool: tool.into(),
            pattern: pattern.into(),
            action: Decision::Deny,
            source: RuleSource::User,
        };
        Compiled::new(rule, None, &paths()).0
    }

    #[test]
    fn star_globs() {
        let m = |p: &str, t: &str| rule("bash", p).matches_command(t);
        assert!(m("git status*", "git status"));
        assert!(m("git status*", "git status -s"));
        assert!(m("*", ""));
        assert!(m("rm *", "rm -rf /"));
        assert!(!m("rm *", "rmdir x"));
        assert!(m("a*b*c", "a-b-c"));
        assert!(!m("a*b*c", "a-c"));
        assert!(!m("ls", "ls -la"));
        assert!(!m("ls *", "ls\u{200b} -la"));
    }

    #[test]
    fn path_globs() {
        let m = |p: &str, path: &str| rule("*", p).matches_path(Path::new(path));
        assert!(m("~/.ssh/**", "/home/u/.ssh/id_rsa"));
        assert!(m("~/.ssh/**", "/home/u/.ssh/a/b"));
        assert!(!m("~/.ssh/**", "/home/u/.sshx/a"));
        assert!(m("**/.env", "/w/app/.env"));
        assert!(m("**/.env", "/.env"));
        assert!(!m("**/.env", "/w/app/.env.example"));
        assert!(m("$WORKSPACE/**", "/w/src/a.rs"));
        assert!(!m("$WORKSPACE/**", "/wx/a"));
        assert!(m("$AGENT_HOME/env", "/home/u/.agents/env"));
        assert!(m("src/*.rs", "/w/src/a.rs"));
        assert!(!m("src/*.rs", "/w/src/x/a.rs"));
        assert!(m("**", "/etc/passwd"));
        assert!(m("/etc/*", "/etc/passwd"));
    }

    #[test]
    fn tools() {
        assert!(rule("write_file", "x").for_file("write_file", true));
        assert!(!rule("write_file", "x").for_file("read_file", false));
        assert!(rule("write_file", "x").for_file("edit", true));
        assert!(rule("*", "x").for_file("read_file", false));
        assert!(!rule("bash", "x").for_file("read_file", false));
        assert!(rule("*", "x").for_bash());
    }
}
