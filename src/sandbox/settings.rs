//! The resolved `[sandbox]` settings and what the kernel offers → the session's
//! [`ExecSettings`], and the banner line (§6, issue 15).
//!
//! Which mode, network, writable roots, extra hidden and read-only paths and kept variables
//! apply is decided once, in [`crate::config::SandboxSettings`]; this adds the kernel's
//! answers and what follows from them: without Landlock a `required` sandbox refuses to start
//! the session, any other confining mode starts with a loud warning; without namespaces one
//! warning says what is lost (or, with `required`, the session does not start). The hidden
//! secret locations, the protected paths and the git overrides are found here, once. The
//! namespaces are probed on a thread of their own ([`NamespaceProbe`]) while the rest of the
//! session starts.

use std::path::PathBuf;

use super::{ExecSettings, NamespaceStatus, SandboxMode, SandboxStatus, probe, probe_namespaces};
use crate::config::sandbox::NO_NAMESPACES_ENV;
use crate::config::{Paths, SandboxSettings};

/// The session's settings and the warnings to show once at start.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub(crate) exec: ExecSettings,
    pub(crate) warnings: Vec<String>,
}

/// The sandbox is required but the kernel cannot provide it: the session must not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Unavailable {
    #[error(
        "the sandbox is required but unavailable: {reason}; run on a Linux kernel with Landlock, or choose another `--sandbox` mode"
    )]
    Landlock { reason: String },
    #[error(
        "the sandbox is required but user namespaces are unavailable: {reason}; allow unprivileged user namespaces, or choose another `--sandbox` mode"
    )]
    Namespaces { reason: String },
}

/// The execution settings of a session configured with `settings` in `paths`, on this
/// kernel.
///
/// # Errors
/// [`Unavailable`] when the sandbox is required and the kernel cannot provide it.
pub(crate) fn resolve(
    settings: &SandboxSettings,
    paths: &Paths,
    namespaces: NamespaceProbe,
) -> Result<Resolved, Unavailable> {
    let status = probe();
    // Nothing will be confined: do not wait for the probe.
    let namespaces = if settings.mode == SandboxMode::Off
        || matches!(status, SandboxStatus::Unavailable { .. })
    {
        NamespaceStatus::Unavailable {
            reason: "not probed: commands are not confined".to_string(),
        }
    } else {
        namespaces.finish()
    };
    resolve_with(settings, paths, status, namespaces)
}

/// The namespace probe, started early on a thread of its own so it overlaps the rest of the
/// session's start-up (it waits for a child process).
#[derive(Debug)]
pub(crate) struct NamespaceProbe(ProbeState);

#[derive(Debug)]
enum ProbeState {
    Known(NamespaceStatus),
    Running(std::thread::JoinHandle<NamespaceStatus>),
}

impl NamespaceProbe {
    /// Starts the probe (or notes `AGENT_SANDBOX_NO_NAMESPACES=1`).
    pub(crate) fn start(settings: &SandboxSettings) -> Self {
        if settings.no_namespaces {
            return Self(ProbeState::Known(NamespaceStatus::Unavailable {
                reason: format!("turned off by {NO_NAMESPACES_ENV}=1"),
            }));
        }
        match std::thread::Builder::new()
            .name("namespace-probe".into())
            .spawn(probe_namespaces)
        {
            Ok(handle) => Self(ProbeState::Running(handle)),
            Err(_) => Self(ProbeState::Known(probe_namespaces())),
        }
    }

    /// The probe's answer (waits for it).
    pub(crate) fn finish(self) -> NamespaceStatus {
        match self.0 {
            ProbeState::Known(status) => status,
            ProbeState::Running(handle) => {
                handle
                    .join()
                    .unwrap_or_else(|_| NamespaceStatus::Unavailable {
                        reason: "the namespace probe failed".to_string(),
                    })
            }
        }
    }
}

/// [`resolve`] with given kernel facts (for tests).
///
/// # Errors
/// As [`resolve`].
pub(crate) fn resolve_with(
    settings: &SandboxSettings,
    paths: &Paths,
    status: SandboxStatus,
    namespaces: NamespaceStatus,
) -> Result<Resolved, Unavailable> {
    let mode = settings.mode;
    let mut warnings = settings.warnings.clone();
    check_available(mode, settings.required, &status, &mut warnings)?;
    let isolated = mode != SandboxMode::Off && matches!(status, SandboxStatus::Available { .. });
    if isolated {
        check_namespaces(settings.required, &namespaces, &mut warnings)?;
    }
    let isolated = isolated && namespaces == NamespaceStatus::Available;
    let mut exec = ExecSettings {
        mode,
        required: settings.required,
        network: settings.network,
        writable_roots: settings.writable_roots.clone(),
        status: status.clone(),
        namespaces: namespaces.clone(),
        helper: helper_path(),
        ..ExecSettings::with_status(status, namespaces)
    };
    exec.env_remove = env_remove(settings);
    exec.env_set = Vec::new();
    if isolated {
        let deny_read: Vec<String> = crate::permissions::defaults::SECRET_LOCATIONS
            .iter()
            .map(|s| (*s).to_string())
            .chain(settings.deny_read.iter().cloned())
            .collect();
        let (hidden, hide_warnings) = super::secrets::hidden_paths(
            &deny_read,
            paths.home.as_deref(),
            &paths.agent_home,
            &paths.workspace,
        );
        exec.hidden = hidden;
        warnings.extend(hide_warnings);
    }
    let protected = protect(
        settings,
        paths,
        isolated && mode == SandboxMode::WorkspaceWrite,
    );
    warnings.extend(protected.warnings);
    if isolated {
        exec.read_only = protected.read_only;
        exec.pinned = protected.pinned;
    }
    exec.env_set
        .extend(git_config_env(&protected.git, settings.git_config_count));
    Ok(Resolved { exec, warnings })
}

/// The repositories and protected paths of the workspace (missing `hooks/` and `.agents/`
/// are created only when they will be protected).
fn protect(
    settings: &SandboxSettings,
    paths: &Paths,
    create_missing: bool,
) -> super::protect::Protected {
    super::protect::scan(&super::protect::ScanInput {
        workspace: &paths.workspace,
        home: paths.home.as_deref(),
        global_configs: settings.global_git_configs.clone(),
        extra_read_only: &settings.read_only,
        create_missing,
        create_agents: create_missing && settings.create_agents_dir,
    })
}

/// `API_KEY`, the env file's keys and the secret-named variables of the agent's environment
/// (`env_keep` keeps some).
fn env_remove(settings: &SandboxSettings) -> Vec<String> {
    let secret = super::secrets::secret_env_names(
        settings.env_names.iter().map(String::as_str),
        &settings.env_keep,
    );
    let mut remove = settings.env_remove.clone();
    for name in secret {
        if !remove.contains(&name) {
            remove.push(name);
        }
    }
    remove
}

/// `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` for `overrides`, after the
/// `existing` ones the user already set in the environment.
fn git_config_env(overrides: &[(String, String)], existing: usize) -> Vec<(String, String)> {
    let mut vars = Vec::new();
    for (i, (key, value)) in overrides.iter().enumerate() {
        let n = existing + i;
        vars.push((format!("GIT_CONFIG_KEY_{n}"), key.clone()));
        vars.push((format!("GIT_CONFIG_VALUE_{n}"), value.clone()));
    }
    vars.push((
        "GIT_CONFIG_COUNT".to_string(),
        (existing + overrides.len()).to_string(),
    ));
    vars
}

/// Without namespaces: one warning, or an error with `required`.
fn check_namespaces(
    required: bool,
    namespaces: &NamespaceStatus,
    warnings: &mut Vec<String>,
) -> Result<(), Unavailable> {
    let NamespaceStatus::Unavailable { reason } = namespaces else {
        return Ok(());
    };
    if required {
        return Err(Unavailable::Namespaces {
            reason: reason.clone(),
        });
    }
    warnings.push(format!(
        "sandbox without namespaces ({reason}): commands are confined by Landlock only, so secret files such as ~/.ssh stay readable by them, .git hooks and config stay writable, and they see your other processes; use `--sandbox required` to refuse to run instead"
    ));
    Ok(())
}

fn check_available(
    mode: SandboxMode,
    required: bool,
    status: &SandboxStatus,
    warnings: &mut Vec<String>,
) -> Result<(), Unavailable> {
    let SandboxStatus::Unavailable { reason } = status else {
        return Ok(());
    };
    if required {
        return Err(Unavailable::Landlock {
            reason: reason.clone(),
        });
    }
    if mode != SandboxMode::Off {
        warnings.push(format!(
            "NO SANDBOX: {reason}. Shell commands will run unconfined and can write anywhere you can. Use `--sandbox required` to refuse to run instead, or `--sandbox off` to acknowledge."
        ));
    }
    Ok(())
}

/// The helper program: this very binary, even if the file was replaced since it started.
fn helper_path() -> PathBuf {
    if cfg!(target_os = "linux") {
        PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe().unwrap_or_else(|_| PathBuf::from("agent"))
    }
}

/// Names of removed secret variables shown in the banner at most.
const BANNER_NAMES: usize = 4;

/// The one-line description of shell confinement shown when a session starts, with the
/// number of secret-named variables removed from commands (names only, never values);
/// `env_names` are the variables set in the agent's environment.
pub(crate) fn banner(exec: &ExecSettings, env_names: &[String]) -> String {
    let network = if exec.network {
        "network on"
    } else {
        "network off"
    };
    let isolation = if exec.namespaces == NamespaceStatus::Available {
        "namespaces"
    } else {
        "no namespaces"
    };
    let mut line = match (&exec.status, exec.mode) {
        (_, SandboxMode::Off) => "sandbox off: shell commands are not confined".to_string(),
        (SandboxStatus::Available { abi }, mode) => {
            format!(
                "sandbox {}, {network} (Landlock ABI {abi}, {isolation})",
                mode.name()
            )
        }
        (SandboxStatus::Unavailable { .. }, _) => {
            "NO SANDBOX: Landlock unavailable, shell commands run unconfined".to_string()
        }
    };
    let removed = removed_secret_vars(exec, env_names);
    if !removed.is_empty() {
        let mut names = removed
            .iter()
            .take(BANNER_NAMES)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if removed.len() > BANNER_NAMES {
            names.push_str(", …");
        }
        line.push_str(&format!(
            "; {} secret variable{} removed from commands ({names})",
            removed.len(),
            if removed.len() == 1 { "" } else { "s" }
        ));
    }
    line
}

/// The removed variables that were actually set in the agent's environment, sorted.
pub(crate) fn removed_secret_vars(exec: &ExecSettings, env_names: &[String]) -> Vec<String> {
    let mut names: Vec<String> = exec
        .env_remove
        .iter()
        .filter(|name| env_names.contains(name))
        .cloned()
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Environment, Flags, Sources};
    use pretty_assertions::assert_eq;

    const AVAILABLE: SandboxStatus = SandboxStatus::Available { abi: 7 };

    struct Fixture {
        _dir: tempfile::TempDir,
        settings: SandboxSettings,
        paths: Paths,
    }

    impl Fixture {
        fn resolve(
            &self,
            status: SandboxStatus,
            namespaces: NamespaceStatus,
        ) -> Result<Resolved, Unavailable> {
            resolve_with(&self.settings, &self.paths, status, namespaces)
        }

        /// With Landlock (`status`) and namespaces available.
        fn resolved(&self, status: SandboxStatus) -> Result<Resolved, Unavailable> {
            self.resolve(status, NamespaceStatus::Available)
        }
    }

    fn fixture(user: &str) -> Fixture {
        fixture_with(user, "", &[])
    }

    fn fixture_with(user: &str, project: &str, vars: &[(&str, &str)]) -> Fixture {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let base = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let home = base.join("home");
        let ws = base.join("ws");
        std::fs::create_dir_all(ws.join(".agents")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(home.join("config.toml"), user).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(ws.join(".agents/config.toml"), project).unwrap_or_else(|e| panic!("{e}"));
        let env = Environment {
            vars: std::iter::once(("AGENT_HOME".to_string(), home.display().to_string()))
                .chain(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())))
                .collect(),
            cwd: ws,
        };
        let sources = Sources::load(Flags::default(), env).unwrap_or_else(|e| panic!("{e}"));
        let settings = SandboxSettings::resolve(&sources).unwrap_or_else(|e| panic!("{e}"));
        Fixture {
            _dir: dir,
            settings,
            paths: sources.paths,
        }
    }

    #[test]
    fn defaults_are_workspace_write_without_network() {
        let f = fixture("");
        let resolved = f.resolved(AVAILABLE).unwrap_or_else(|e| panic!("{e}"));
        let exec = &resolved.exec;
        assert_eq!(
            (
                exec.mode,
                exec.required,
                exec.network,
                resolved.warnings.len()
            ),
            (SandboxMode::WorkspaceWrite, false, false, 0)
        );
        assert_eq!(
            banner(exec, &f.settings.env_names),
            "sandbox workspace-write, network off (Landlock ABI 7, namespaces)"
        );
    }

    #[test]
    fn unavailable_warns_loudly_or_refuses_when_required() {
        let gone = SandboxStatus::Unavailable {
            reason: "no Landlock".into(),
        };
        let f = fixture("");
        let resolved = f.resolved(gone.clone()).unwrap_or_else(|e| panic!("{e}"));
        assert!(resolved.warnings[0].starts_with("NO SANDBOX: no Landlock."));
        assert!(banner(&resolved.exec, &f.settings.env_names).starts_with("NO SANDBOX"));
        let f = fixture("[sandbox]\nmode = \"required\"\n");
        let error = f.resolved(gone).err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "the sandbox is required but unavailable: no Landlock; run on a Linux kernel with Landlock, or choose another `--sandbox` mode"
            )
        );
    }

    #[test]
    fn configured_warnings_come_first() {
        let f = fixture("[sandbox]\nwritable_roots = [\"/no/such/dir\"]\n");
        let gone = SandboxStatus::Unavailable {
            reason: "no Landlock".into(),
        };
        let resolved = f.resolved(gone).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(resolved.warnings.len(), 2, "{:?}", resolved.warnings);
        assert_eq!(
            resolved.warnings[0],
            "writable root `/no/such/dir` is not a directory; ignored"
        );
        assert!(resolved.warnings[1].starts_with("NO SANDBOX"));
    }

    #[test]
    fn without_namespaces_one_warning_or_a_refusal_when_required() {
        let gone = NamespaceStatus::Unavailable {
            reason: "no user namespaces".into(),
        };
        let f = fixture("");
        let resolved = f
            .resolve(AVAILABLE, gone.clone())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(resolved.warnings.len(), 1, "{:?}", resolved.warnings);
        assert!(
            resolved.warnings[0].starts_with("sandbox without namespaces (no user namespaces): commands are confined by Landlock only"),
            "{:?}",
            resolved.warnings
        );
        assert_eq!(
            banner(&resolved.exec, &f.settings.env_names),
            "sandbox workspace-write, network off (Landlock ABI 7, no namespaces)"
        );
        assert!(resolved.exec.hidden.is_empty() && !resolved.exec.isolates());
        let f = fixture("[sandbox]\nmode = \"required\"\n");
        let error = f
            .resolve(AVAILABLE, gone.clone())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.starts_with(
                "the sandbox is required but user namespaces are unavailable: no user namespaces;"
            ),
            "{error}"
        );
        // With the sandbox off nothing is lost, so nothing is said.
        let f = fixture("[sandbox]\nmode = \"off\"\n");
        let resolved = f.resolve(AVAILABLE, gone).unwrap_or_else(|e| panic!("{e}"));
        assert!(resolved.warnings.is_empty(), "{:?}", resolved.warnings);
    }

    #[test]
    fn secret_variables_are_removed_and_counted_env_keep_from_trusted_files_only() {
        let vars = [
            ("OPENAI_API_KEY", "sk-x"),
            ("GITHUB_TOKEN", "ghp-x"),
            ("NPM_TOKEN", "npm-x"),
            ("PATH", "/bin"),
        ];
        let keep = "[sandbox]\nenv_keep = [\"NPM_*\"]\n";
        let f = fixture_with("", keep, &vars);
        let resolved = f.resolved(AVAILABLE).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            resolved.warnings[0].contains("env_keep"),
            "{:?}",
            resolved.warnings
        );
        assert_eq!(
            removed_secret_vars(&resolved.exec, &f.settings.env_names),
            vec!["GITHUB_TOKEN", "NPM_TOKEN", "OPENAI_API_KEY"]
        );
        assert_eq!(
            banner(&resolved.exec, &f.settings.env_names),
            "sandbox workspace-write, network off (Landlock ABI 7, namespaces); 3 secret variables removed from commands (GITHUB_TOKEN, NPM_TOKEN, OPENAI_API_KEY)"
        );
        let f = fixture_with(keep, "", &vars);
        let resolved = f.resolved(AVAILABLE).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            removed_secret_vars(&resolved.exec, &f.settings.env_names),
            vec!["GITHUB_TOKEN", "OPENAI_API_KEY"]
        );
        assert!(resolved.exec.env_remove.contains(&"API_KEY".to_string()));
    }

    #[test]
    fn git_overrides_follow_the_users_own() {
        let f = fixture_with("", "", &[("GIT_CONFIG_COUNT", "1")]);
        let resolved = f.resolved(AVAILABLE).unwrap_or_else(|e| panic!("{e}"));
        let set = &resolved.exec.env_set;
        let get = |k: &str| {
            set.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("GIT_CONFIG_COUNT"), Some("2"));
        assert_eq!(get("GIT_CONFIG_KEY_1"), Some("core.fsmonitor"));
        assert_eq!(get("GIT_CONFIG_VALUE_1"), Some("false"));
        assert_eq!(get("GIT_CONFIG_KEY_0"), None);
    }
}
