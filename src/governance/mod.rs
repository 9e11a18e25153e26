//! Governance (SPEC §9): what an agent may do (roles), how much it may spend (budgets of
//! tool-output tokens, shell calls and cost), and an audit trail of policy events.
//!
//! - [`roles`]: the five built-in roles and the tool / shell policy; [`role_files`]: custom
//!   roles from TOML, inheritance, and the rules for untrusted project roles;
//! - [`budget`]: spending, signals and the `/budget` line; [`settings`]: `[budget]`;
//! - [`cost`]: cost from `usage.cost` or prices; [`compress`]: the `compress` shell policy;
//! - [`events`]: the event bus and its records; [`log`]: `$AGENT_HOME/events.jsonl`;
//!   [`audit`]: what is recorded about each tool call;
//! - [`governor`]: all of it per session, as the dispatcher's and the loop's one
//!   [`crate::tools::Policy`].
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

pub mod audit;
pub mod budget;
pub mod compress;
pub mod cost;
pub mod error;
pub mod events;
pub mod governor;
pub mod log;
pub mod role_files;
pub mod roles;
pub mod settings;

use std::sync::Arc;

pub use budget::{Signal, Spending, Status};
pub use error::GovernanceError;
pub use governor::Governor;
pub use role_files::RoleSet;
pub use roles::{Role, ShellPolicy};

use crate::config::Config;
use crate::events::EventSink;
use cost::PriceBook;
use events::UiBridge;
use settings::BudgetSettings;

/// Environment variable naming the role (below `--role`, above config).
pub const ROLE_VAR: &str = "AGENT_ROLE";

/// A governor ready for a session, and warnings to show once.
pub struct Setup {
    pub governor: Arc<Governor>,
    pub warnings: Vec<String>,
}

/// Loads roles, selects the active one, resolves budgets and prices, and subscribes the user
/// interface (`sink`) and `$AGENT_HOME/events.jsonl` to the governor's events.
///
/// # Errors
/// Any [`GovernanceError`]: a bad role file, an unknown selected role, bad `[budget]` values.
/// All are configuration errors (exit code 2).
pub fn setup(
    config: &Config,
    model: &str,
    sink: Arc<dyn EventSink>,
) -> Result<Setup, GovernanceError> {
    let trusted = config.project_trusted;
    let (roles, mut warnings) = RoleSet::load(
        &config.agent_home.join("roles"),
        &config.workspace.join(".agents").join("roles"),
        trusted,
    )?;
    let active = select_role(config, &roles, &mut warnings)?;
    let settings = BudgetSettings::resolve(&config.user.budget, &config.project.budget, trusted)?;
    let mut prices = config.user.pricing.clone();
    if trusted {
        prices.extend(config.project.pricing.clone());
    } else if !config.project.pricing.is_empty() {
        warnings.push(
            "ignoring [pricing] in the project config: this workspace is not trusted (run \
             `agent trust` to use it)"
                .to_string(),
        );
    }
    let governor = Governor::new(roles, &active, settings, PriceBook::new(prices), model)?;
    let log_path = config.agent_home.join(log::FILE_NAME);
    match log::EventLog::open(&log_path, Some(Arc::clone(&sink))) {
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

/// The role to start with: `--role` > `AGENT_ROLE` > project `default_role` (trusted only) >
/// user `default_role` > `coder`.
///
/// # Errors
/// [`GovernanceError::UnknownRole`] listing the available roles.
pub fn select_role(
    config: &Config,
    roles: &RoleSet,
    warnings: &mut Vec<String>,
) -> Result<String, GovernanceError> {
    let given = |value: Option<&str>| {
        value
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    // An empty `--role=` or `default_role = ""` names no role; it is not the default role.
    // (An empty `AGENT_ROLE` is unset, as for any environment variable.)
    let named = [
        config.run.role.as_deref(),
        config.project.default_role.as_deref(),
        config.user.default_role.as_deref(),
    ];
    if let Some(empty) = named.into_iter().flatten().find(|v| v.trim().is_empty()) {
        return Err(GovernanceError::UnknownRole {
            name: empty.to_string(),
            available: roles.names(),
        });
    }
    let explicit =
        given(config.run.role.as_deref()).or_else(|| given(config.environment.get(ROLE_VAR)));
    let project = given(config.project.default_role.as_deref());
    let name = match (explicit, project) {
        (Some(name), _) => name,
        (None, Some(name)) if config.project_trusted => name,
        (None, project) => {
            if let Some(name) = project {
                warnings.push(format!(
                    "ignoring default_role = `{name}` in the project config: this workspace is \
                     not trusted (run `agent trust` to use it)"
                ));
            }
            given(config.user.default_role.as_deref())
                .unwrap_or_else(|| roles::DEFAULT_ROLE.to_string())
        }
    };
    if roles.get(&name).is_none() {
        return Err(GovernanceError::UnknownRole {
            name,
            available: roles.names(),
        });
    }
    Ok(name)
}
