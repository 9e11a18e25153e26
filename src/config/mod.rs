//! Configuration (SPEC §2): the raw sources of one run, read in one place, and the one
//! resolved [`Settings`] value made from them. This is the only place precedence and trust
//! rules live; every other module receives its typed part and never reads a config file, the
//! environment or the list of trusted workspaces itself.
//!
//! As ripgrep splits low-level from high-level arguments:
//! - [`Flags`]: what was typed on the command line (the face maps its `clap` arguments);
//! - [`Sources`]: the flags, a snapshot of the process environment, `$AGENT_HOME/env`, the
//!   user's and the project's `config.toml`, and whether the user trusted the workspace, read
//!   once by [`Sources::load`];
//! - [`Settings`]: resolved by [`Settings::resolve`], one typed part per layer:
//!   [`ProviderSettings`] (model client), [`PermissionSettings`] (rule engine),
//!   [`SandboxSettings`] (sandbox), [`ContextSettings`] (context manager),
//!   [`GovernanceSettings`] (roles and budgets), [`LoopSettings`] (the loop),
//!   [`McpSettings`] (MCP servers), [`HookSettings`] (hooks), [`CheckpointSettings`]
//!   (checkpoints), [`UiSettings`] (the face), and the [`Paths`] of the run. A subcommand
//!   resolves only the parts it needs (`agent check` works without an endpoint).
//!
//! Precedence: flags > process environment > `$AGENT_HOME/env` for the endpoint; flags >
//! project file > user file > defaults for the rest, where the project file of an untrusted
//! workspace may only tighten (§2.2). Each part's module states its own rule.
//!
//! Nothing here touches the process environment; callers pass a snapshot ([`Environment`])
//! so tests never mutate global state. Nothing here prints.

pub(crate) mod checkpoints;
pub(crate) mod context;
pub(crate) mod endpoint;
pub(crate) mod envfile;
pub(crate) mod file;
pub(crate) mod governance;
pub(crate) mod hooks;
pub(crate) mod loop_settings;
pub(crate) mod mcp;
pub(crate) mod mcp_servers;
pub(crate) mod paths;
pub(crate) mod permissions;
pub(crate) mod provider;
pub(crate) mod sandbox;
pub(crate) mod settings;
pub(crate) mod sources;
pub(crate) mod trust;
pub(crate) mod ui;

use std::path::PathBuf;

pub use checkpoints::CheckpointSettings;
pub use context::ContextSettings;
pub use endpoint::{Endpoint, EndpointSettings};
pub use file::FileConfig;
pub use governance::GovernanceSettings;
pub(crate) use hooks::HookSettings;
pub use loop_settings::{CoachSetting, DEFAULT_MAX_TURNS, LoopSettings};
pub(crate) use mcp::McpSettings;
pub use paths::{Paths, project_file, user_file};
pub use permissions::PermissionSettings;
pub use provider::ProviderSettings;
pub use sandbox::{SandboxLevel, SandboxMode, SandboxSettings};
pub use settings::Settings;
pub use sources::{Environment, Flags, Sources};
pub(crate) use ui::{ColorEnv, Notify, UiSettings};

/// Errors while resolving configuration. All of them end the run with exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("missing `{name}`; pass {flag}, set it in the environment, or add it to {}", env_file.display())]
    Missing {
        name: &'static str,
        flag: &'static str,
        env_file: PathBuf,
    },
    #[error("{}:{line}: {message}", path.display())]
    EnvFile {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Toml { path: PathBuf, message: String },
    #[error("cannot use directory `{}`: {source}", path.display())]
    Directory {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot find the home directory; set AGENT_HOME")]
    NoHome,
    #[error("{0}")]
    Invalid(String),
}

/// A bad value in a config section, before the file it came from is known (the resolution
/// names the file in a [`ConfigError::Invalid`]). Lowercase, with the key and the value in
/// backticks and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct BadValue(pub(crate) String);

impl From<String> for BadValue {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for BadValue {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}
