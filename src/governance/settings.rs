//! Budget settings from `[budget]` in config.toml (SPEC §9.2, §2.2).
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
//! The user file sets them. A project file comes from the repository: in a trusted
//! workspace its values replace the user's; otherwise they only tighten (each limit and
//! threshold becomes the smaller of the two), never loosen.

use super::budget::Thresholds;
use super::error::GovernanceError;
use super::roles::Limits;
use crate::config::file::BudgetSection;

/// Limits given in config, each optional.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PartialLimits {
    pub max_context_tokens: Option<u64>,
    pub max_shell_invocations: Option<u64>,
    pub max_cost_usd: Option<f64>,
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
pub struct BudgetSettings {
    pub thresholds: Thresholds,
    /// Replace the role's limits.
    pub set: PartialLimits,
    /// Upper bounds from an untrusted project file.
    pub cap: PartialLimits,
}

impl BudgetSettings {
    /// Resolves the user and project `[budget]` sections.
    ///
    /// # Errors
    /// [`GovernanceError::Budget`] when a threshold is outside `0 < warn_at <= exhaust_at <= 1`
    /// or a cost limit is negative or not a number.
    pub fn resolve(
        user: &BudgetSection,
        project: &BudgetSection,
        trusted: bool,
    ) -> Result<Self, GovernanceError> {
        let user_limits = PartialLimits::from_section(user);
        let project_limits = PartialLimits::from_section(project);
        let warn = user.warn_at.unwrap_or(super::budget::DEFAULT_WARN_AT);
        let exhaust = user.exhaust_at.unwrap_or(super::budget::DEFAULT_EXHAUST_AT);
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

    fn validate(&self) -> Result<(), GovernanceError> {
        let Thresholds {
            warn_at,
            exhaust_at,
        } = self.thresholds;
        if !(warn_at > 0.0 && warn_at <= exhaust_at && exhaust_at <= 1.0) {
            return Err(GovernanceError::Budget(format!(
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
            return Err(GovernanceError::Budget(format!(
                "max_cost_usd = `{cost}`; use a number of USD, 0 or more"
            )));
        }
        Ok(())
    }

    /// The limits in force for a role whose own limits are `role`.
    pub fn apply(&self, role: Limits) -> Limits {
        let set = Limits {
            max_context_tokens: self
                .set
                .max_context_tokens
                .unwrap_or(role.max_context_tokens),
            max_shell_invocations: self
                .set
                .max_shell_invocations
                .unwrap_or(role.max_shell_invocations),
            max_cost_usd: self.set.max_cost_usd.unwrap_or(role.max_cost_usd),
        };
        Limits {
            max_context_tokens: self
                .cap
                .max_context_tokens
                .map_or(set.max_context_tokens, |c| c.min(set.max_context_tokens)),
            max_shell_invocations: self
                .cap
                .max_shell_invocations
                .map_or(set.max_shell_invocations, |c| {
                    c.min(set.max_shell_invocations)
                }),
            max_cost_usd: self
                .cap
                .max_cost_usd
                .map_or(set.max_cost_usd, |c| c.min(set.max_cost_usd)),
        }
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

    fn coder() -> Limits {
        super::super::roles::coder().limits
    }

    #[test]
    fn untrusted_project_only_tightens() -> Result<(), GovernanceError> {
        let user = section(Some(0.7), Some(10.0));
        let loose = section(Some(0.9), Some(100.0));
        let settings = BudgetSettings::resolve(&user, &loose, false)?;
        assert_eq!(settings.thresholds.warn_at, 0.7);
        assert_eq!(settings.apply(coder()).max_cost_usd, 10.0);
        let tight = section(Some(0.5), Some(1.0));
        let settings = BudgetSettings::resolve(&user, &tight, false)?;
        assert_eq!(settings.thresholds.warn_at, 0.5);
        assert_eq!(settings.apply(coder()).max_cost_usd, 1.0);
        let trusted = BudgetSettings::resolve(&user, &loose, true)?;
        assert_eq!(trusted.thresholds.warn_at, 0.9);
        assert_eq!(trusted.apply(coder()).max_cost_usd, 100.0);
        Ok(())
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
