//! `[[permissions.rules]]` (SPEC §5.1, §2.2): which configured rules apply, in which order.
//!
//! Order: the built-in defaults (not here), then the user's rules, then — only in a
//! workspace the user trusted with `agent trust` — the project's; the last matching rule
//! wins. An untrusted project config's `ask` and `deny` rules can only make a verdict
//! stricter (the rule engine evaluates them on their own and keeps the stricter result), and
//! its `allow` rules are ignored with one warning.

use super::Sources;
use super::file::{ActionSpec, RuleSpec};

/// The configured rules of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionSettings {
    /// The user's rules, in order.
    pub(crate) user: Vec<RuleSpec>,
    /// The project's rules, in order, after the user's (a trusted workspace only).
    pub(crate) project: Vec<RuleSpec>,
    /// The `ask`/`deny` rules of an untrusted project config: they only tighten.
    pub(crate) tighten: Vec<RuleSpec>,
    /// Ignored project rules, to show once at start.
    pub(crate) warnings: Vec<String>,
}

impl PermissionSettings {
    /// The rules of `sources`.
    pub(crate) fn resolve(sources: &Sources) -> Self {
        let user = sources.user.permissions.rules.clone();
        let project = sources.project.permissions.rules.clone();
        if sources.trusted {
            return Self {
                user,
                project,
                ..Self::default()
            };
        }
        let (ignored, tighten): (Vec<RuleSpec>, Vec<RuleSpec>) = project
            .into_iter()
            .partition(|r| r.action == ActionSpec::Allow);
        let mut warnings = Vec::new();
        if !ignored.is_empty() {
            let names: Vec<String> = ignored
                .iter()
                .map(|r| format!("{} `{}`", r.tool, r.pattern))
                .collect();
            warnings.push(format!(
                "ignoring allow rules in the untrusted project config {} ({}); run `agent trust` in this workspace to apply them",
                sources.paths.project_file().display(),
                names.join(", ")
            ));
        }
        Self {
            user,
            project: Vec::new(),
            tighten,
            warnings,
        }
    }

    /// The project's `allow` rules, as `tool \`pattern\`` (what `agent trust` lets apply).
    pub(crate) fn project_allows(sources: &Sources) -> Vec<String> {
        sources
            .project
            .permissions
            .rules
            .iter()
            .filter(|r| r.action == ActionSpec::Allow)
            .map(|r| format!("{} `{}`", r.tool, r.pattern))
            .collect()
    }
}
