//! Governance (SPEC §9): what an agent may do (roles), how much it may spend (budgets of
//! tool-output tokens, shell calls and cost), and an audit trail of policy events.
//!
//! - [`roles`]: the five built-in roles and the tool / shell policy; [`role_files`]: custom
//!   roles from TOML, inheritance, and the rules for untrusted project roles;
//! - [`budget`]: spending, signals and the `/budget` line; [`settings`]: a role's limits
//!   under `[budget]`;
//! - [`cost`]: cost from `usage.cost` or prices; [`compress`]: the `compress` shell policy;
//! - [`events`]: the event bus and its records; [`log`]: `$AGENT_HOME/events.jsonl`;
//!   [`audit`]: what is recorded about each tool call;
//! - [`hooks`]: the user's hook commands on session events (issue 18);
//! - [`governor`]: all of it per session, as the dispatcher's and the loop's one
//!   [`crate::tools::Policy`].
//!
//! Which role a session starts with, the `[budget]` overrides and the prices are resolved in
//! [`crate::config::governance`]; this layer loads the role files and runs the governor.
//!
//! Choices where the SPEC and the issue are silent:
//! - the role is chosen by `--role`, then `AGENT_ROLE`, then `default_role` of the project
//!   config (trusted workspaces only), then of the user config, then `coder`;
//! - the session's signal is its worst dimension's; at `EXHAUSTED` every tool call is
//!   blocked (not just the exhausted kind), the turn ends, and new turns are refused until
//!   the user switches role or raises the limit; `/clear` does not reset spending;
//! - a role without `inherits` starts from `coder`'s tools, shell policy and limits;
//! - denied tools are hidden from the model rather than removed, so a call to one anyway is
//!   answered `Blocked by policy: role <name> does not allow <tool>`;
//! - when a model call cannot be priced, the cost dimension is unknown for the rest of the
//!   session (a partial sum would understate it).

pub(crate) mod audit;
pub(crate) mod budget;
pub(crate) mod compress;
pub(crate) mod cost;
pub(crate) mod error;
pub mod events;
pub(crate) mod governor;
pub(crate) mod hooks;
pub mod log;
pub(crate) mod role_files;
pub mod roles;
pub(crate) mod settings;

use std::sync::Arc;

pub use budget::{Signal, Spending, Status};
pub use error::GovernanceError;
pub use governor::Governor;
pub use role_files::RoleSet;
pub use roles::{Role, ShellPolicy};

use crate::config::GovernanceSettings;
use crate::events::EventSink;
use cost::PriceBook;
use events::UiBridge;

/// A governor ready for a session, and warnings to show once.
pub struct Setup {
    pub governor: Arc<Governor>,
    pub(crate) warnings: Vec<String>,
}

/// Loads the role files, selects the active role, and subscribes the user interface
/// (`sink`) and the event log to the governor's events.
///
/// # Errors
/// Any [`GovernanceError`]: a bad role file, an unknown selected role. All are
/// configuration errors (exit code 2).
pub fn setup(
    settings: &GovernanceSettings,
    model: &str,
    sink: Arc<dyn EventSink>,
) -> Result<Setup, GovernanceError> {
    let files = &settings.roles;
    let (roles, mut warnings) =
        RoleSet::load(&files.user_dir, &files.project_dir, files.project_trusted)?;
    let active = settings
        .role
        .clone()
        .unwrap_or_else(|| roles::DEFAULT_ROLE.to_string());
    if roles.get(&active).is_none() {
        return Err(GovernanceError::UnknownRole {
            name: active,
            available: roles.names(),
        });
    }
    warnings.extend(settings.warnings.iter().cloned());
    let prices = PriceBook::new(settings.prices.clone());
    let governor = Governor::new(roles, &active, settings.budget, prices, model)?;
    let log_path = &settings.event_log;
    match log::EventLog::open(log_path, Some(Arc::clone(&sink))) {
        Ok(log) => governor.subscribe(Arc::new(log)),
        Err(error) => warnings.push(format!(
            "cannot open the event log {}: {error}; this session's events are not logged",
            log_path.display()
        )),
    }
    governor.subscribe(Arc::new(UiBridge::new(sink)));
    Ok(Setup {
        governor: Arc::new(governor),
        warnings,
    })
}
