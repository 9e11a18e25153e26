//! How shell commands run: kernel confinement (SPEC §6) and bounded, hang-proof execution
//! (§6, §7.1).
//!
//! The agent process itself is never confined. For every `bash` call it starts a child of its
//! own binary, `agent __sandbox <policy> -- bash -c CMD` ([`helper`]). Where the kernel lets
//! this user create them, the helper enters new user, mount and PID namespaces
//! ([`namespaces`]): secret locations are hidden, protected paths made read-only, and a
//! supervisor ([`supervise`]) runs as the namespace's init, so everything the command starts
//! dies with the call, with the agent, or with the helper. The shell's own process applies a
//! Landlock ruleset and a seccomp filter to itself ([`linux`]) and then execs `bash`, so the
//! confinement is inherited by the shell and everything it starts, and nothing else.
//!
//! | module | job |
//! |---|---|
//! | [`settings`] | resolved `[sandbox]` settings + the kernel's answer → [`ExecSettings`], banner line |
//! | [`policy`] | the helper's arguments: what one command may write, encoded and parsed |
//! | [`linux`] | probe Landlock, apply the Landlock ruleset in the helper |
//! | [`seccomp`] | the helper's seccomp filter (what Landlock cannot express) |
//! | [`namespaces`] | user/mount/PID namespaces: hidden secrets, read-only paths |
//! | [`supervise`] | the namespace's init: runs the shell, stops what is left, reaps |
//! | [`protect`] | at session start: the repositories, protected paths and git overrides |
//! | [`secrets`] | secret locations to hide and secret-named variables to remove |
//! | [`helper`] | the hidden `__sandbox` entry point |
//! | [`exec`] | spawn, wait on the shell's exit, kill the group on timeout or interrupt |
//! | [`process`] | process-group signals, pidfd, poll |
//! | [`capture`] | bounded head + tail capture, ANSI stripping, UTF-8 repair |
//! | [`diagnose`] | recognise failures caused by the sandbox and say so |
//!
//! Never silently unconfined: when Landlock is missing the banner says so and every `bash`
//! result carries a one-line note; when only the namespaces are missing one warning line
//! says what is lost; with `required` the session refuses to start in both cases.

pub(crate) mod capture;
pub mod diagnose;
pub mod exec;
pub(crate) mod helper;
#[cfg(target_os = "linux")]
pub(crate) mod linux;
#[cfg(target_os = "linux")]
pub(crate) mod namespaces;
pub(crate) mod policy;
pub(crate) mod process;
pub mod protect;
pub(crate) mod protocol;
#[cfg(target_os = "linux")]
pub(crate) mod seccomp;
pub mod secrets;
pub(crate) mod settings;
pub(crate) mod supervise;

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

/// Whether user, mount and PID namespaces can be created (see [`namespaces::probe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamespaceStatus {
    Available,
    /// Commands are confined by Landlock alone; the reason is shown to the user.
    Unavailable {
        reason: String,
    },
}

/// Asks the kernel whether this user may create the namespaces the helper uses. Starts and
/// waits for a throw-away child (about a millisecond).
pub fn probe_namespaces() -> NamespaceStatus {
    #[cfg(target_os = "linux")]
    {
        namespaces::probe()
    }
    #[cfg(not(target_os = "linux"))]
    {
        NamespaceStatus::Unavailable {
            reason: "namespaces exist only on Linux".to_string(),
        }
    }
}

/// Keeps commands out of the agent's own process: not dumpable, so `/proc/<agent>/environ`
/// (the endpoint's key, the user's secret variables) and `/proc/<agent>/mem` are not
/// readable by the user's other processes. Landlock stops a command from attaching to the
/// agent but not from reading those files; in the sandbox's PID namespace the agent is not
/// visible at all, so this matters without namespaces (and does not stop root). Side effect:
/// no core dumps of the agent, and a debugger needs root to attach.
pub(crate) fn shield_agent_process() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(2) with integer arguments, no memory effects.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
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
    /// Environment variables removed from children: `API_KEY`, the env file's keys, and
    /// variables with secret-like names ([`secrets::secret_env_names`]).
    pub env_remove: Vec<String>,
    /// Environment variables set for children besides [`exec::NON_INTERACTIVE_ENV`]: the git
    /// configuration overrides of [`protect`].
    pub env_set: Vec<(String, String)>,
    /// What [`probe_namespaces`] found.
    pub namespaces: NamespaceStatus,
    /// Secret locations hidden from commands (canonical, existing at session start).
    pub hidden: Vec<PathBuf>,
    /// Protected paths made read-only inside writable directories (canonical).
    pub read_only: Vec<PathBuf>,
    /// Directories that commands may not rename or remove (canonical).
    pub pinned: Vec<PathBuf>,
    /// Timeout when the call gives none.
    pub default_timeout: Duration,
    /// Grace between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// What [`probe`] found.
    pub status: SandboxStatus,
    /// The program started as `<helper> __sandbox ...`: this very binary.
    pub helper: PathBuf,
}

impl ExecSettings {
    /// Whether commands run through the helper (confinement wanted and possible).
    pub(crate) fn confines(&self) -> bool {
        self.mode != SandboxMode::Off && matches!(self.status, SandboxStatus::Available { .. })
    }

    /// Whether confined commands also run in their own namespaces.
    pub(crate) fn isolates(&self) -> bool {
        self.confines() && self.namespaces == NamespaceStatus::Available
    }
}

impl Default for ExecSettings {
    /// Probes Landlock and the namespaces (a throw-away child process).
    fn default() -> Self {
        Self::with_status(probe(), probe_namespaces())
    }
}

impl ExecSettings {
    /// The defaults with the given kernel facts (no probe).
    pub(crate) fn with_status(status: SandboxStatus, namespaces: NamespaceStatus) -> Self {
        Self {
            mode: SandboxMode::default(),
            required: false,
            network: false,
            writable_roots: Vec::new(),
            env_remove: vec!["API_KEY".to_string()],
            env_set: Vec::new(),
            namespaces,
            hidden: Vec::new(),
            read_only: Vec::new(),
            pinned: Vec::new(),
            default_timeout: Duration::from_secs(60),
            kill_grace: Duration::from_secs(2),
            status,
            helper: PathBuf::from("/proc/self/exe"),
        }
    }
}
