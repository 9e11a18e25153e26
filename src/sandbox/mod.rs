//! How shell commands run: confinement (SPEC §6) and bounded, hang-proof execution (§7.1).

pub mod exec;

use std::path::PathBuf;
use std::time::Duration;

/// Sandbox modes (§6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Read everywhere; write only the workspace, temp dirs and writable roots.
    #[default]
    WorkspaceWrite,
    /// Read everywhere; write nowhere (but device nodes a shell needs).
    ReadOnly,
    /// No confinement.
    Off,
}

/// Settings for running shell commands, fixed for a session.
#[derive(Debug, Clone)]
pub struct ExecSettings {
    pub mode: SandboxMode,
    /// Allow TCP connect/bind.
    pub network: bool,
    /// Directories writable in workspace-write mode besides the workspace and temp dirs.
    pub writable_roots: Vec<PathBuf>,
    /// Environment variables removed from children (secrets from the env file, `API_KEY`).
    pub env_remove: Vec<String>,
    /// Timeout when the call gives none.
    pub default_timeout: Duration,
    /// Grace between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
}

impl Default for ExecSettings {
    fn default() -> Self {
        Self {
            mode: SandboxMode::default(),
            network: false,
            writable_roots: Vec::new(),
            env_remove: vec!["API_KEY".to_string()],
            default_timeout: Duration::from_secs(60),
            kill_grace: Duration::from_secs(2),
        }
    }
}
