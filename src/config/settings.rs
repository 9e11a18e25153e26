//! [`Settings`]: everything a session runs with, resolved once from the [`Sources`], one
//! typed part per layer. Each part's module holds its precedence and trust rules; a module
//! of another layer receives its part and never reads a file, the environment or the trust
//! list again.

use super::endpoint::Endpoint;
use super::{
    CheckpointSettings, ConfigError, ContextSettings, GovernanceSettings, HookSettings,
    LoopSettings, McpSettings, Paths, PermissionSettings, ProviderSettings, SandboxSettings,
    Sources, UiSettings,
};

/// The resolved settings of one session.
#[derive(Debug, Clone)]
pub struct Settings {
    pub paths: Paths,
    /// The model endpoint (required for a session).
    pub endpoint: Endpoint,
    /// Endpoint behaviour (`[provider]`, the user file only): for the model client.
    pub(crate) provider: ProviderSettings,
    /// The configured rules: for the permission engine.
    pub permissions: PermissionSettings,
    /// Role, budgets, prices: for governance.
    pub governance: GovernanceSettings,
    /// Context window and thresholds: for the context manager.
    pub context: ContextSettings,
    /// Mode, network and writable roots: for the sandbox.
    pub(crate) sandbox: SandboxSettings,
    /// Coach, repeated-call guard and `--max-turns`: for the loop.
    pub loop_settings: LoopSettings,
    /// The MCP servers to start (project servers only in a trusted workspace).
    pub(crate) mcp: McpSettings,
    /// The hooks to run (project hooks only in a trusted workspace).
    pub(crate) hooks: HookSettings,
    /// `[checkpoints]` (user file only): for the checkpoints.
    pub(crate) checkpoints: CheckpointSettings,
    /// `--json`, `--yes`, colours, history file: for the face.
    pub(crate) ui: UiSettings,
    /// `--resume [ID]`: `Some("")` for the newest session of the workspace.
    pub(crate) resume: Option<String>,
    /// Settings only the user file may hold, found in the project file and ignored.
    pub(crate) warnings: Vec<String>,
}

impl Settings {
    /// Resolves every part, in this order: endpoint, provider, permissions, governance,
    /// context, sandbox, loop, MCP servers, hooks, checkpoints, UI.
    ///
    /// # Errors
    /// The first [`ConfigError`]: a missing or bad endpoint, a bad value in a config file.
    pub fn resolve(sources: &Sources) -> Result<Self, ConfigError> {
        let endpoint = sources.endpoint().require()?;
        let provider = ProviderSettings::resolve(sources)?;
        let permissions = PermissionSettings::resolve(sources);
        let governance = GovernanceSettings::resolve(sources)?;
        let context = ContextSettings::resolve(sources, &endpoint.model)?;
        let sandbox = SandboxSettings::resolve(sources)?;
        let loop_settings = LoopSettings::resolve(sources)?;
        Ok(Self {
            paths: sources.paths.clone(),
            endpoint,
            provider,
            permissions,
            governance,
            context,
            sandbox,
            loop_settings,
            mcp: McpSettings::resolve(sources),
            hooks: HookSettings::resolve(sources),
            checkpoints: CheckpointSettings::resolve(sources),
            ui: UiSettings::resolve(sources),
            resume: sources.flags.resume.clone(),
            warnings: sources.ignored_in_project(),
        })
    }
}
