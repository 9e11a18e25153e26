//! Rule lists: the built-in defaults, rules from config files, and matching (§5.1).

use std::path::Path;

use super::decision::{Decision, Rule, RuleSource};
use crate::config::file::{ActionSpec, RuleSpec};

/// Built-in bash rules, evaluated first (so any config rule can refine them).
const DEFAULT_BASH: &[(&str, Decision)] = &[
    ("*", Decision::Ask),
    ("ls", Decision::Allow),
    ("ls *", Decision::Allow),
    ("cat *", Decision::Allow),
    ("head *", Decision::Allow),
    ("tail *", Decision::Allow),
    ("wc *", Decision::Allow),
    ("grep *", Decision::Allow),
    ("rg *", Decision::Allow),
    ("pwd", Decision::Allow),
    ("echo", Decision::Allow),
    ("echo *", Decision::Allow),
    ("which *", Decision::Allow),
    ("git status", Decision::Allow),
    ("git status *", Decision::Allow),
    ("git diff", Decision::Allow),
    ("git diff *", Decision::Allow),
    ("git log", Decision::Allow),
    ("git log *", Decision::Allow),
    ("git show", Decision::Allow),
    ("git show *", Decision::Allow),
    ("pytest", Decision::Allow),
    ("pytest *", Decision::Allow),
    ("rm *", Decision::Deny),
    ("sudo *", Decision::Deny),
    ("curl *", Decision::Deny),
    ("wget *", Decision::Deny),
    ("git push", Decision::Deny),
    ("git push *", Decision::Deny),
];

/// The built-in bash rules.
pub fn default_bash_rules() -> Vec<Rule> {
    DEFAULT_BASH
        .iter()
        .map(|(pattern, action)| Rule {
            tool: "bash".into(),
            pattern: (*pattern).into(),
            action: *action,
            source: RuleSource::Default,
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

/// Whether `rule` applies to `tool`.
pub fn applies_to(rule: &Rule, tool: &str) -> bool {
    rule.tool == "*" || rule.tool == tool
}

/// Glob over command text where `*` matches any text (including `/` and spaces) and every
/// other character matches itself.
pub fn command_matches(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == text;
    };
    if parts.len() == 1 {
        return pattern == text;
    }
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Path glob (`*` within a component, `**` across components) against a resolved path.
/// `~/` at the start of the pattern is the home directory.
pub fn path_matches(pattern: &str, path: &Path, home: Option<&Path>) -> bool {
    let expanded = match (pattern.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => format!("{}/{rest}", home.display()),
        _ => pattern.to_string(),
    };
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    glob::Pattern::new(&expanded).is_ok_and(|p| p.matches_path_with(path, options))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_globs() {
        assert!(command_matches("git status*", "git status"));
        assert!(command_matches("git status*", "git status -s"));
        assert!(command_matches("*", ""));
        assert!(command_matches("rm *", "rm -rf /"));
        assert!(!command_matches("rm *", "rmdir x"));
        assert!(command_matches("a*b*c", "a-b-c"));
        assert!(!command_matches("a*b*c", "a-c"));
        assert!(!command_matches("ls", "ls -la"));
    }

    #[test]
    fn path_globs() {
        let home = Path::new("/home/u");
        assert!(path_matches("~/.ssh/**", Path::new("/home/u/.ssh/id_rsa"), Some(home)));
        assert!(path_matches("**/.env", Path::new("/w/app/.env"), None));
        assert!(!path_matches("/w/*", Path::new("/w/a/b"), None));
    }
}
