//! How shell commands run: kernel confinement (SPEC §6) and bounded, hang-proof execution
//! (§6, §7.1).
//!
//! The agent process itself is never confined. For every `bash` call it starts a child of its
//! own binary, `agent __sandbox <policy> -- bash -c CMD` ([`helper`]); that child applies a
//! Landlock ruleset and a seccomp filter to itself ([`linux`]) and then execs the shell, so the
//! confinement is inherited by the shell and everything it starts, and nothing else.
//!
//! | module | job |
//! |---|---|
//! | [`settings`] | resolved `[sandbox]` settings + the kernel's answer → [`ExecSettings`], banner line |
//! | [`policy`] | the helper's arguments: what one command may write, encoded and parsed |
//! | [`linux`] | probe Landlock, apply the Landlock ruleset in the helper |
//! | [`seccomp`] | the helper's seccomp filter (what Landlock cannot express) |
//! | [`helper`] | the hidden `__sandbox` entry point |
//! | [`exec`] | spawn, wait on the shell's exit, kill the group on timeout or interrupt |
//! | [`process`] | process-group signals, pidfd, poll |
//! | [`capture`] | bounded head + tail capture, ANSI stripping, UTF-8 repair |
//! | [`diagnose`] | recognise failures caused by the sandbox and say so |
//!
//! Never silently unconfined: when Landlock is missing the banner says so and every `bash`
//! result carries a one-line note; with `required` the session refuses to start.

pub(crate) mod capture;
pub(crate) mod diagnose;
pub mod exec;
pub(crate) mod helper;
#[cfg(target_os = "linux")]
pub(crate) mod linux;
pub(crate) mod policy;
pub(crate) mod process;
#[cfg(target_os = "linux")]
pub(crate) mod seccomp;
pub(crate) mod settings;

use std::path::PathBuf;
use std::time::Duration;

pub use crate::config::SandboxMode;

/// What the kernel offers, found once per session by [`probe`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxStatus {
    /// Landlock works; `abi` is the kernel's Landlock ABI version (TCP rules need 4,
    /// signal scoping 6). Network confinement below ABI 4 falls back to seccomp alone.
    Available { abi: u32 },
    /// Commands cannot be confined; the reason is shown to the user.
    Unavailable { reason: String },
}

/// Asks the kernel whether Landlock is usable. Touches no state of this process.
pub fn probe() -> SandboxStatus {
    #[cfg(target_os = "linux")]
    {
        linux::probe()
    }
    #[cfg(not(target_os = "linux"))]
    {
        SandboxStatus::Unavailable {
            reason: "Landlock exists only on Linux".to_string(),
        }
    }
}

/// Settings for running shell commands, fixed for a session.
///
/// Build it with [`settings::resolve`] for a session. [`Default`] is workspace-write with the
/// helper at `/proc/self/exe`, which is only right inside the `agent` binary itself; tests
/// that link the library set `helper` to the built `agent` binary or use [`SandboxMode::Off`].
#[derive(Debug, Clone)]
pub struct ExecSettings {
    pub mode: SandboxMode,
    /// Refuse to run a command that cannot be confined (`--sandbox required`).
    pub required: bool,
    /// Allow TCP connect/bind and other sockets.
    pub network: bool,
    /// Absolute directories writable in workspace-write mode besides the workspace and `/tmp`
    /// (`$TMPDIR` and `[sandbox] writable_roots`).
    pub writable_roots: Vec<PathBuf>,
    /// Environment variables removed from children (secrets from the env file, `API_KEY`).
    pub env_remove: Vec<String>,
    /// Timeout when the call gives none.
    pub default_timeout: Duration,
    /// Grace between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// What [`probe`] found.
    pub status: SandboxStatus,
    /// The program started as `<helper> __sandbox ...`: this very binary.
    pub helper: PathBuf,
}

impl ExecSettings {}

impl Default for ExecSettings {
    fn default() -> Self {
        Self {
            mode: SandboxMode::default(),
            required: false,
            network: false,
            writable_roots: Vec::new(),
            env_remove: vec!["API_KEY".to_string()],
            default_timeout: Duration::from_secs(60),
            kill_grace: Duration::from_secs(2),
            status: probe(),
            helper: PathBuf::from("/proc/self/exe"),
        }
    }
}
