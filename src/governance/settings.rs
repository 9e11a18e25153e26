//! The limits in force: a role's own limits under the session's `[budget]` settings, which
//! [`crate::config::governance`] resolved (SPEC §9.2, §2.2).

pub(crate) use crate::config::governance::BudgetSettings;

use super::roles::Limits;

impl Limits {
    /// The limits in force for a role whose own limits are these, under `budget`: its
    /// overrides replace them, then an untrusted project's caps bound them.
    pub(crate) fn under(self, budget: &BudgetSettings) -> Limits {
        let role = self;
        let set = Limits {
            max_context_tokens: budget
                .set
                .max_context_tokens
                .unwrap_or(role.max_context_tokens),
            max_shell_invocations: budget
                .set
                .max_shell_invocations
                .unwrap_or(role.max_shell_invocations),
            max_cost_usd: budget.set.max_cost_usd.unwrap_or(role.max_cost_usd),
        };
        Limits {
            max_context_tokens: budget
                .cap
                .max_context_tokens
                .map_or(set.max_context_tokens, |c| c.min(set.max_context_tokens)),
            max_shell_invocations: budget
                .cap
                .max_shell_invocations
                .map_or(set.max_shell_invocations, |c| {
                    c.min(set.max_shell_invocations)
                }),
            max_cost_usd: budget
                .cap
                .max_cost_usd
                .map_or(set.max_cost_usd, |c| c.min(set.max_cost_usd)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigError;
    use crate::config::file::BudgetSection;

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
    fn untrusted_project_only_tightens() -> Result<(), ConfigError> {
        let user = section(Some(0.7), Some(10.0));
        let loose = section(Some(0.9), Some(100.0));
        let settings = BudgetSettings::resolve(&user, &loose, false)?;
        assert_eq!(settings.thresholds.warn_at, 0.7);
        assert_eq!(coder().under(&settings).max_cost_usd, 10.0);
        let tight = section(Some(0.5), Some(1.0));
        let settings = BudgetSettings::resolve(&user, &tight, false)?;
        assert_eq!(settings.thresholds.warn_at, 0.5);
        assert_eq!(coder().under(&settings).max_cost_usd, 1.0);
        let trusted = BudgetSettings::resolve(&user, &loose, true)?;
        assert_eq!(trusted.thresholds.warn_at, 0.9);
        assert_eq!(coder().under(&trusted).max_cost_usd, 100.0);
        Ok(())
    }
}
