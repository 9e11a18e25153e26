//! Roles, budgets and prices (SPEC §9, §2.2): which role a session starts with, `[budget]`,
//! `[pricing]`, and where role files and the event log are.
//!
//! The role: `--role` > `AGENT_ROLE` > the project's `default_role` (a trusted workspace
//! only) > the user's `default_role` > the default role (`coder`).
//!
//! `[budget]`: the user file sets it. A project file comes from the repository: in a trusted
//! workspace its values replace the user's; otherwise they only tighten (each limit and
//! threshold becomes the smaller of the two), never loosen.
//!
//! ```toml
//! [budget]
//! warn_at = 0.8              # share of a limit where WARNING starts
//! exhaust_at = 1.0           # share of a limit where EXHAUSTED starts
//! max_context_tokens = 300000   # replace the active role's limits (any role)
//! max_shell_invocations = 150
//! max_cost_usd = 10.0
//! ```
//!
//! `[pricing]`: the user's, plus the project's in a trusted workspace (ignored with a warning
//! otherwise).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::file::{BudgetSection, Price};
use super::{ConfigError, Sources};

/// Environment variable naming the role (below `--role`, above config).
pub(crate) const ROLE_VAR: &str = "AGENT_ROLE";
/// Default share of a limit at which `WARNING` starts.
pub(crate) const DEFAULT_WARN_AT: f64 = 0.8;
/// Default share of a limit at which `EXHAUSTED` starts.
pub(crate) const DEFAULT_EXHAUST_AT: f64 = 1.0;

/// The thresholds of §9.2, as shares of a limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Thresholds {
    pub(crate) warn_at: f64,
    pub(crate) exhaust_at: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            warn_at: DEFAULT_WARN_AT,
            exhaust_at: DEFAULT_EXHAUST_AT,
        }
    }
}

/// Where custom roles are defined (§9.1), and how far the project's may go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RoleFiles {
    /// `$AGENT_HOME/roles`.
    pub(crate) user_dir: PathBuf,
    /// `<workspace>/.agents/roles`.
    pub(crate) project_dir: PathBuf,
    /// Whether the user trusted the workspace: an untrusted project's roles may not replace
    /// the user's, inherit privileged roles or loosen limits (the role files' own rules).
    pub(crate) project_trusted: bool,
}

/// Governance settings of a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GovernanceSettings {
    /// The role to start with; `None` for the default role. A name given empty (`--role=`)
    /// is kept as given, so looking it up fails with the list of roles.
    pub(crate) role: Option<String>,
    pub(crate) roles: RoleFiles,
    pub(crate) budget: BudgetSettings,
    /// USD per million tokens, by model name.
    pub(crate) prices: BTreeMap<String, Price>,
    /// `$AGENT_HOME/events.jsonl`.
    pub(crate) event_log: PathBuf,
    /// Ignored project settings, to show once at start.
    pub(crate) warnings: Vec<String>,
}

/// The event log's file name under `$AGENT_HOME`.
pub(crate) const EVENT_LOG: &str = "events.jsonl";

impl GovernanceSettings {
    /// The governance settings of `sources`.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] for bad `[budget]` values.
    pub(crate) fn resolve(sources: &Sources) -> Result<Self, ConfigError> {
        let mut warnings = Vec::new();
        let trusted = sources.trusted;
        let role = choose_role(sources, &mut warnings);
        let budget =
            BudgetSettings::resolve(&sources.user.budget, &sources.project.budget, trusted)?;
        let mut prices = sources.user.pricing.clone();
        if trusted {
            prices.extend(sources.project.pricing.clone());
        } else if !sources.project.pricing.is_empty() {
            warnings.push(
                "ignoring [pricing] in the project config: this workspace is not trusted (run \
                 `agent trust` to use it)"
                    .to_string(),
            );
        }
        let paths = &sources.paths;
        Ok(Self {
            role,
            roles: RoleFiles {
                user_dir: paths.agent_home.join("roles"),
                project_dir: paths.workspace.join(".agents").join("roles"),
                project_trusted: trusted,
            },
            budget,
            prices,
            event_log: paths.agent_home.join(EVENT_LOG),
            warnings,
        })
    }
}

/// The role to start with (see the module doc); `None` for the default role.
fn choose_role(sources: &Sources, warnings: &mut Vec<String>) -> Option<String> {
    let given = |value: Option<&str>| {
        value
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    // An empty `--role=` or `default_role = ""` names no role; it is not the default role.
    // (An empty `AGENT_ROLE` is unset, as for any environment variable.)
    let named = [
        sources.flags.role.as_deref(),
        sources.project.default_role.as_deref(),
        sources.user.default_role.as_deref(),
    ];
    if let Some(empty) = named.into_iter().flatten().find(|v| v.trim().is_empty()) {
        return Some(empty.to_string());
    }
    let explicit =
        given(sources.flags.role.as_deref()).or_else(|| given(sources.env.get(ROLE_VAR)));
    let project = given(sources.project.default_role.as_deref());
    match (explicit, project) {
        (Some(name), _) => Some(name),
        (None, Some(name)) if sources.trusted => Some(name),
        (None, project) => {
            if let Some(name) = project {
                warnings.push(format!(
                    "ignoring default_role = `{name}` in the project config: this workspace is \
                     not trusted (run `agent trust` to use it)"
                ));
            }
            given(sources.user.default_role.as_deref())
        }
    }
}

fn budget_error(message: String) -> ConfigError {
    ConfigError::Invalid(format!("invalid [budget] setting: {message}"))
}

/// Limits given in config, each optional.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct PartialLimits {
    pub(crate) max_context_tokens: Option<u64>,
    pub(crate) max_shell_invocations: Option<u64>,
    pub(crate) max_cost_usd: Option<f64>,
}

impl PartialLimits {
    fn from_section(section: &BudgetSection) -> Self {
        Self {
            max_context_tokens: section.max_context_tokens,
            max_shell_invocations: section.max_shell_invocations,
            max_cost_usd: section.max_cost_usd,
        }
    }

    /// `other`'s values where given, else `self`'s.
    fn overlay(self, other: Self) -> Self {
        Self {
            max_context_tokens: other.max_context_tokens.or(self.max_context_tokens),
            max_shell_invocations: other.max_shell_invocations.or(self.max_shell_invocations),
            max_cost_usd: other.max_cost_usd.or(self.max_cost_usd),
        }
    }
}

/// Thresholds and limit overrides in force for a session.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct BudgetSettings {
    pub(crate) thresholds: Thresholds,
    /// Replace the role's limits.
    pub(crate) set: PartialLimits,
    /// Upper bounds from an untrusted project file.
    pub(crate) cap: PartialLimits,
}

impl BudgetSettings {
    /// Resolves the user and project `[budget]` sections.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] (`invalid [budget] setting: ...`) when a threshold is outside `0 < warn_at <= exhaust_at <= 1`
    /// or a cost limit is negative or not a number.
    pub(crate) fn resolve(
        user: &BudgetSection,
        project: &BudgetSection,
        trusted: bool,
    ) -> Result<Self, ConfigError> {
        let user_limits = PartialLimits::from_section(user);
        let project_limits = PartialLimits::from_section(project);
        let warn = user.warn_at.unwrap_or(DEFAULT_WARN_AT);
        let exhaust = user.exhaust_at.unwrap_or(DEFAULT_EXHAUST_AT);
        let settings = if trusted {
            Self {
                thresholds: Thresholds {
                    warn_at: project.warn_at.unwrap_or(warn),
                    exhaust_at: project.exhaust_at.unwrap_or(exhaust),
                },
                set: user_limits.overlay(project_limits),
                cap: PartialLimits::default(),
            }
        } else {
            Self {
                thresholds: Thresholds {
                    warn_at: project.warn_at.map_or(warn, |p| p.min(warn)),
                    exhaust_at: project.exhaust_at.map_or(exhaust, |p| p.min(exhaust)),
                },
                set: user_limits,
                cap: project_limits,
            }
        };
        settings.validate()?;
        Ok(settings)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let Thresholds {
            warn_at,
            exhaust_at,
        } = self.thresholds;
        if !(warn_at > 0.0 && warn_at <= exhaust_at && exhaust_at <= 1.0) {
            return Err(budget_error(format!(
                "warn_at = `{warn_at}`, exhaust_at = `{exhaust_at}`; use 0 < warn_at <= \
                 exhaust_at <= 1, e.g. 0.8 and 1.0"
            )));
        }
        let costs = [self.set.max_cost_usd, self.cap.max_cost_usd];
        if let Some(cost) = costs
            .into_iter()
            .flatten()
            .find(|c| !c.is_finite() || *c < 0.0)
        {
            return Err(budget_error(format!(
                "max_cost_usd = `{cost}`; use a number of USD, 0 or more"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(warn: Option<f64>, cost: Option<f64>) -> BudgetSection {
        BudgetSection {
            warn_at: warn,
            max_cost_usd: cost,
            ..BudgetSection::default()
        }
    }

    #[test]
    fn bad_thresholds_are_errors() {
        let bad = section(Some(1.5), None);
        let message = BudgetSettings::resolve(&bad, &BudgetSection::default(), false)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            message.as_deref(),
            Some(
                "invalid [budget] setting: warn_at = `1.5`, exhaust_at = `1`; use 0 < warn_at \
                 <= exhaust_at <= 1, e.g. 0.8 and 1.0"
            )
        );
    }
}
