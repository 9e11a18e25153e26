//! Verdicts and their explanations.

use std::fmt;

/// A verdict, ordered by strictness so that the strictest of several is the `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        })
    }
}

/// Where a rule came from; shown when a verdict explains itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleSource {
    /// Built into `agent`.
    Default,
    /// `$AGENT_HOME/config.toml`.
    User,
    /// `<workspace>/.agents/config.toml`.
    Project,
    /// Added at the approval prompt with `a` (always).
    Session,
}

/// One permission rule (§5.1).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rule {
    /// `bash`, a file tool name, or `*`.
    pub tool: String,
    pub pattern: String,
    pub action: Decision,
    pub source: RuleSource,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = match self.source {
            RuleSource::Default => "default",
            RuleSource::User => "user config",
            RuleSource::Project => "project config",
            RuleSource::Session => "this session",
        };
        write!(
            f,
            "{} {} `{}` ({source})",
            self.action, self.tool, self.pattern
        )
    }
}

/// The verdict on one part of a request (one simple command, or one path).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PartVerdict {
    /// The normalized simple command, or the resolved path.
    pub(crate) command: String,
    pub decision: Decision,
    /// The rule that decided, when one matched.
    pub(crate) rule: Option<Rule>,
    /// Why, in a few words.
    pub(crate) reason: String,
}

/// The verdict on a whole request: the strictest of its parts.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Evaluation {
    pub decision: Decision,
    pub parts: Vec<PartVerdict>,
}

impl Evaluation {
    /// Combines parts; an empty list is `ask` (nothing was understood, so nothing is allowed).
    pub(crate) fn from_parts(parts: Vec<PartVerdict>) -> Self {
        let decision = parts
            .iter()
            .map(|p| p.decision)
            .max()
            .unwrap_or(Decision::Ask);
        Self { decision, parts }
    }

    /// The part that decided the verdict (the first of the strictest).
    pub(crate) fn deciding_part(&self) -> Option<&PartVerdict> {
        self.parts.iter().find(|p| p.decision == self.decision)
    }

    /// One line: the deciding part's command, reason and rule, for results and prompts,
    /// e.g. ``rm -rf build`: deletes files (rule: deny bash `rm *` (default))``.
    pub fn summary(&self) -> String {
        match self.deciding_part() {
            Some(part) => {
                let rule = part
                    .rule
                    .as_ref()
                    .map(|r| format!(" (rule: {r})"))
                    .unwrap_or_default();
                format!("`{}`: {}{rule}", part.command, part.reason)
            }
            None => "nothing to evaluate".to_string(),
        }
    }
}
