//! Flags and config files → the session's [`ExecSettings`], and the banner line (§2.2, §6).
//!
//! Precedence: `--sandbox`/`--network` > project `[sandbox]` > user `[sandbox]` > defaults
//! (workspace-write, network off). The project file comes from the repository and may be
//! hostile: unless the workspace is trusted it may only tighten (a stricter mode, `required`,
//! `network = false`); a looser mode, `network = true` or `writable_roots` are ignored with
//! one warning each. A trusted project file replaces the user's values.
//!
//! `writable_roots` entries may start with `~/`; relative entries are relative to the
//! workspace. `$TMPDIR` is writable like `/tmp`. Roots that do not exist are dropped with a
//! warning.
//!
//! Issue 15: `deny_read` and `read_only` only add protection, so an untrusted project file may
//! set them; `env_keep` gives commands more, so it is ignored (with a warning) until the
//! workspace is trusted. The namespaces are probed once here; where they are unavailable one
//! warning says what is lost (or, with `required`, the session does not start). The hidden
//! secret locations, the protected paths and the git overrides are found here, once.
//! `AGENT_SANDBOX_NO_NAMESPACES=1` in the environment makes the probe report the namespaces
//! unavailable: it exists for the tests of the Landlock-only path.

use std::path::{Path, PathBuf};

use super::{ExecSettings, NamespaceStatus, SandboxMode, SandboxStatus, probe, probe_namespaces};
use crate::cli::SandboxArg;
use crate::config::{Config, ConfigError, FileConfig};

/// The session's settings and the warnings to show once at start.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub exec: ExecSettings,
    pub warnings: Vec<String>,
}

/// Resolves the sandbox settings of a session.
///
/// # Errors
/// [`ConfigError::Invalid`] for an unknown `[sandbox] mode`, or when the sandbox is required
/// and the kernel cannot provide it (the session must not start).
pub fn resolve(config: &Config, namespaces: NamespaceProbe) -> Result<Resolved, ConfigError> {
    let status = probe();
    let (mode, _) = file_mode(&config.user, &config.user_file())?;
    let off = match config.run.sandbox {
        Some(arg) => arg == SandboxArg::Off,
        None => config.project.sandbox.mode.is_none() && mode == SandboxMode::Off,
    };
    // Nothing will be confined: do not wait for the probe.
    let namespaces = if off || matches!(status, SandboxStatus::Unavailable { .. }) {
        NamespaceStatus::Unavailable {
            reason: "not probed: commands are not confined".to_string(),
        }
    } else {
        namespaces.finish()
    };
    resolve_with(config, status, namespaces)
}

/// The namespace probe, started early on a thread of its own so it overlaps the rest of the
/// session's start-up (it waits for a child process).
#[derive(Debug)]
pub struct NamespaceProbe(ProbeState);

#[derive(Debug)]
enum ProbeState {
    Known(NamespaceStatus),
    Running(std::thread::JoinHandle<NamespaceStatus>),
}

impl NamespaceProbe {
    /// Starts the probe (or notes `AGENT_SANDBOX_NO_NAMESPACES=1`).
    pub fn start(config: &Config) -> Self {
        if config.environment.get(NO_NAMESPACES_ENV) == Some("1") {
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
    pub fn finish(self) -> NamespaceStatus {
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

/// Environment variable that makes [`resolve`] act as if namespaces were unavailable (for
/// the tests of the Landlock-only path).
pub const NO_NAMESPACES_ENV: &str = "AGENT_SANDBOX_NO_NAMESPACES";

/// [`resolve`] with a given kernel status (for tests).
///
/// # Errors
/// As [`resolve`].
pub fn resolve_with(
    config: &Config,
    status: SandboxStatus,
    namespaces: NamespaceStatus,
) -> Result<Resolved, ConfigError> {
    let mut warnings = Vec::new();
    let user_file = config.user_file();
    let project_file = config.project_file();
    let (mut mode, mut required) = file_mode(&config.user, &user_file)?;
    let mut network = config.user.sandbox.network.unwrap_or(false);
    let mut roots = absolute_roots(&config.user.sandbox.writable_roots, config);
    let project = &config.project.sandbox;
    let loosen = |what: String, warnings: &mut Vec<String>| {
        warnings.push(format!(
            "{} sets {what}, which loosens the sandbox; ignored because this workspace is not trusted (run `agent trust` to allow it)",
            project_file.display()
        ));
    };
    if project.mode.is_some() {
        let (project_mode, project_required) = file_mode(&config.project, &project_file)?;
        if config.project_trusted {
            (mode, required) = (project_mode, project_required);
        } else {
            if project_mode < mode {
                loosen(
                    format!("[sandbox] mode = `{}`", project_mode.name()),
                    &mut warnings,
                );
            }
            mode = mode.max(project_mode);
            required |= project_required;
        }
    }
    match project.network {
        Some(value) if config.project_trusted => network = value,
        Some(true) if !network => loosen("[sandbox] network = true".into(), &mut warnings),
        Some(false) => network = false,
        _ => {}
    }
    if !project.writable_roots.is_empty() {
        if config.project_trusted {
            roots.extend(absolute_roots(&project.writable_roots, config));
        } else {
            loosen("[sandbox] writable_roots".into(), &mut warnings);
        }
    }
    match config.run.sandbox {
        Some(SandboxArg::WorkspaceWrite) => (mode, required) = (SandboxMode::WorkspaceWrite, false),
        Some(SandboxArg::ReadOnly) => (mode, required) = (SandboxMode::ReadOnly, false),
        Some(SandboxArg::Off) => (mode, required) = (SandboxMode::Off, false),
        Some(SandboxArg::Required) => (mode, required) = (SandboxMode::WorkspaceWrite, true),
        None => {}
    }
    network |= config.run.network;
    if let Some(tmp) = config
        .environment
        .get("TMPDIR")
        .filter(|t| t.starts_with('/'))
    {
        roots.push(PathBuf::from(tmp));
    }
    roots.retain(|root| {
        let exists = root.is_dir();
        if !exists {
            warnings.push(format!(
                "writable root `{}` is not a directory; ignored",
                root.display()
            ));
        }
        exists
    });
    check_available(mode, required, &status, &mut warnings)?;
    let isolated = mode != SandboxMode::Off && matches!(status, SandboxStatus::Available { .. });
    if isolated {
        check_namespaces(required, &namespaces, &mut warnings)?;
    }
    let isolated = isolated && namespaces == NamespaceStatus::Available;
    let mut exec = ExecSettings {
        mode,
        required,
        network,
        writable_roots: roots,
        status: status.clone(),
        namespaces: namespaces.clone(),
        helper: helper_path(),
        ..ExecSettings::with_status(status, namespaces)
    };
    let environment = environment(config, &mut warnings);
    exec.env_remove = environment.remove;
    exec.env_set = environment.set;
    if isolated {
        let deny_read: Vec<String> = crate::permissions::defaults::SECRET_LOCATIONS
            .iter()
            .map(|s| (*s).to_string())
            .chain(config.user.sandbox.deny_read.iter().cloned())
            .chain(config.project.sandbox.deny_read.iter().cloned())
            .collect();
        let (hidden, hide_warnings) = super::secrets::hidden_paths(
            &deny_read,
            config.home.as_deref(),
            &config.agent_home,
            &config.workspace,
        );
        exec.hidden = hidden;
        warnings.extend(hide_warnings);
    }
    let protected = protect(config, isolated && mode == SandboxMode::WorkspaceWrite);
    warnings.extend(protected.warnings);
    if isolated {
        exec.read_only = protected.read_only;
        exec.pinned = protected.pinned;
    }
    exec.env_set.extend(git_config_env(&protected.git, config));
    Ok(Resolved { exec, warnings })
}

/// The repositories and protected paths of the workspace (missing `hooks/` and `.agents/`
/// are created only when they will be protected).
fn protect(config: &Config, create_missing: bool) -> super::protect::Protected {
    let mut read_only = config.user.sandbox.read_only.clone();
    read_only.extend(config.project.sandbox.read_only.iter().cloned());
    let read_only = absolute_roots(&read_only, config);
    let xdg = config
        .environment
        .get("XDG_CONFIG_HOME")
        .filter(|x| x.starts_with('/'))
        .map(PathBuf::from)
        .or_else(|| config.home.as_ref().map(|h| h.join(".config")));
    let global_configs = config
        .home
        .iter()
        .map(|h| h.join(".gitconfig"))
        .chain(xdg.map(|x| x.join("git/config")))
        .collect();
    super::protect::scan(&super::protect::ScanInput {
        workspace: &config.workspace,
        home: config.home.as_deref(),
        global_configs,
        extra_read_only: &read_only,
        create_missing,
        create_agents: create_missing && config.project_trusted,
    })
}

/// What commands' environment loses and gains.
struct CommandEnvironment {
    remove: Vec<String>,
    set: Vec<(String, String)>,
}

/// `API_KEY`, the env file's keys and the secret-named variables of the agent's environment
/// are removed (`env_keep` keeps some, from a trusted project file only).
fn environment(config: &Config, warnings: &mut Vec<String>) -> CommandEnvironment {
    let mut keep = config.user.sandbox.env_keep.clone();
    if !config.project.sandbox.env_keep.is_empty() {
        if config.project_trusted {
            keep.extend(config.project.sandbox.env_keep.iter().cloned());
        } else {
            warnings.push(format!(
                "{} sets [sandbox] env_keep, which gives commands secret variables; ignored because this workspace is not trusted (run `agent trust` to allow it)",
                config.project_file().display()
            ));
        }
    }
    let secret =
        super::secrets::secret_env_names(config.environment.vars.keys().map(String::as_str), &keep);
    let mut remove = config.secret_vars.clone();
    for name in secret {
        if !remove.contains(&name) {
            remove.push(name);
        }
    }
    CommandEnvironment {
        remove,
        set: Vec::new(),
    }
}

/// `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` for `overrides`, after any the
/// user already set in the environment.
fn git_config_env(overrides: &[(String, String)], config: &Config) -> Vec<(String, String)> {
    let env = &config.environment;
    let existing: usize = env
        .get("GIT_CONFIG_COUNT")
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
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
) -> Result<(), ConfigError> {
    let NamespaceStatus::Unavailable { reason } = namespaces else {
        return Ok(());
    };
    if required {
        return Err(ConfigError::Invalid(format!(
            "the sandbox is required but user namespaces are unavailable: {reason}; allow unprivileged user namespaces, or choose another `--sandbox` mode"
        )));
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
) -> Result<(), ConfigError> {
    let SandboxStatus::Unavailable { reason } = status else {
        return Ok(());
    };
    if required {
        return Err(ConfigError::Invalid(format!(
            "the sandbox is required but unavailable: {reason}; run on a Linux kernel with Landlock, or choose another `--sandbox` mode"
        )));
    }
    if mode != SandboxMode::Off {
        warnings.push(format!(
            "NO SANDBOX: {reason}. Shell commands will run unconfined and can write anywhere you can. Use `--sandbox required` to refuse to run instead, or `--sandbox off` to acknowledge."
        ));
    }
    Ok(())
}

/// `[sandbox] mode` of one file: the mode and whether it is `required`.
fn file_mode(file: &FileConfig, path: &Path) -> Result<(SandboxMode, bool), ConfigError> {
    match file.sandbox.mode.as_deref() {
        None | Some("workspace-write") => Ok((SandboxMode::WorkspaceWrite, false)),
        Some("read-only") => Ok((SandboxMode::ReadOnly, false)),
        Some("off") => Ok((SandboxMode::Off, false)),
        Some("required") => Ok((SandboxMode::WorkspaceWrite, true)),
        Some(other) => Err(ConfigError::Invalid(format!(
            "{}: [sandbox] mode = `{other}`; expected `workspace-write`, `read-only`, `off` or `required`",
            path.display()
        ))),
    }
}

/// `writable_roots` entries made absolute: `~/` → home, relative → workspace.
fn absolute_roots(entries: &[PathBuf], config: &Config) -> Vec<PathBuf> {
    entries
        .iter()
        .map(|entry| match (entry.strip_prefix("~"), &config.home) {
            (Ok(rest), Some(home)) => home.join(rest),
            _ if entry.is_absolute() => entry.clone(),
            _ => config.workspace.join(entry),
        })
        .collect()
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
/// number of secret-named variables removed from commands (names only, never values).
pub fn banner(exec: &ExecSettings, environment: &crate::config::Environment) -> String {
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
    let removed = removed_secret_vars(exec, environment);
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
pub fn removed_secret_vars(
    exec: &ExecSettings,
    environment: &crate::config::Environment,
) -> Vec<String> {
    let mut names: Vec<String> = exec
        .env_remove
        .iter()
        .filter(|name| environment.get(name).is_some())
        .cloned()
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Environment;
    use pretty_assertions::assert_eq;

    const AVAILABLE: SandboxStatus = SandboxStatus::Available { abi: 7 };

    fn resolve_with(config: &Config, status: SandboxStatus) -> Result<Resolved, ConfigError> {
        super::resolve_with(config, status, NamespaceStatus::Available)
    }

    struct Fixture {
        _dir: tempfile::TempDir,
        config: Config,
    }

    fn fixture(user: &str, project: &str, trusted: bool) -> Fixture {
        fixture_with(user, project, trusted, &[])
    }

    fn fixture_with(user: &str, project: &str, trusted: bool, vars: &[(&str, &str)]) -> Fixture {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let base = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let home = base.join("home");
        let ws = base.join("ws");
        std::fs::create_dir_all(ws.join(".agents")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(ws.join("extra")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
        let mut user = user.to_string();
        if trusted {
            user = format!("trusted_workspaces = [\"{}\"]\n{user}", ws.display());
        }
        std::fs::write(home.join("config.toml"), user).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(ws.join(".agents/config.toml"), project).unwrap_or_else(|e| panic!("{e}"));
        let env = Environment {
            vars: std::iter::once(("AGENT_HOME".to_string(), home.display().to_string()))
                .chain(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())))
                .collect(),
            cwd: ws.clone(),
        };
        let config =
            Config::load(&crate::cli::RunArgs::default(), env).unwrap_or_else(|e| panic!("{e}"));
        Fixture { _dir: dir, config }
    }

    fn summary(resolved: &Resolved) -> (SandboxMode, bool, bool, usize, usize) {
        let exec = &resolved.exec;
        let roots = exec.writable_roots.len();
        (
            exec.mode,
            exec.required,
            exec.network,
            roots,
            resolved.warnings.len(),
        )
    }

    #[test]
    fn defaults_are_workspace_write_without_network() {
        let f = fixture("", "", false);
        let resolved = resolve_with(&f.config, AVAILABLE).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            summary(&resolved),
            (SandboxMode::WorkspaceWrite, false, false, 0, 0)
        );
        assert_eq!(
            banner(&resolved.exec, &f.config.environment),
            "sandbox workspace-write, network off (Landlock ABI 7, namespaces)"
        );
    }

    #[test]
    fn untrusted_project_may_tighten_but_not_loosen() {
        let loosen = "[sandbox]\nmode = \"off\"\nnetwork = true\nwritable_roots = [\"extra\"]\n";
        let f = fixture("", loosen, false);
        let resolved = resolve_with(&f.config, AVAILABLE).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            summary(&resolved),
            (SandboxMode::WorkspaceWrite, false, false, 0, 3)
        );
        assert!(
            resolved.warnings[0].contains("not trusted"),
            "{:?}",
            resolved.warnings
        );

        let f = fixture(
            "[sandbox]\nnetwork = true\n",
            "[sandbox]\nmode = \"read-only\"\nnetwork = false\n",
            false,
        );
        let resolved = resolve_with(&f.config, AVAILABLE).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            summary(&resolved),
            (SandboxMode::ReadOnly, false, false, 0, 0)
        );
    }

    #[test]
    fn trusted_project_may_loosen() {
        let loosen = "[sandbox]\nmode = \"off\"\nnetwork = true\nwritable_roots = [\"extra\"]\n";
        let f = fixture("", loosen, true);
        let resolved = resolve_with(&f.config, AVAILABLE).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(summary(&resolved), (SandboxMode::Off, false, true, 1, 0));
        assert_eq!(
            resolved.exec.writable_roots[0],
            f.config.workspace.join("extra")
        );
    }

    #[test]
    fn unavailable_warns_loudly_or_refuses_when_required() {
        let gone = SandboxStatus::Unavailable {
            reason: "no Landlock".into(),
        };
        let f = fixture("", "", false);
        let resolved = resolve_with(&f.config, gone.clone()).unwrap_or_else(|e| panic!("{e}"));
        assert!(resolved.warnings[0].starts_with("NO SANDBOX: no Landlock."));
        assert!(banner(&resolved.exec, &f.config.environment).starts_with("NO SANDBOX"));
        let f = fixture("[sandbox]\nmode = \"required\"\n", "", false);
        let error = resolve_with(&f.config, gone).err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "the sandbox is required but unavailable: no Landlock; run on a Linux kernel with Landlock, or choose another `--sandbox` mode"
            )
        );
    }

    #[test]
    fn without_namespaces_one_warning_or_a_refusal_when_required() {
        let gone = NamespaceStatus::Unavailable {
            reason: "no user namespaces".into(),
        };
        let f = fixture("", "", false);
        let resolved = super::resolve_with(&f.config, AVAILABLE, gone.clone())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(resolved.warnings.len(), 1, "{:?}", resolved.warnings);
        assert!(
            resolved.warnings[0].starts_with("sandbox without namespaces (no user namespaces): commands are confined by Landlock only"),
            "{:?}",
            resolved.warnings
        );
        assert_eq!(
            banner(&resolved.exec, &f.config.environment),
            "sandbox workspace-write, network off (Landlock ABI 7, no namespaces)"
        );
        assert!(resolved.exec.hidden.is_empty() && !resolved.exec.isolates());
        let f = fixture("[sandbox]\nmode = \"required\"\n", "", false);
        let error = super::resolve_with(&f.config, AVAILABLE, gone.clone())
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
        let f = fixture("[sandbox]\nmode = \"off\"\n", "", false);
        let resolved =
            super::resolve_with(&f.config, AVAILABLE, gone).unwrap_or_else(|e| panic!("{e}"));
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
        let f = fixture_with("", keep, false, &vars);
        let resolved = resolve_with(&f.config, AVAILABLE).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            resolved.warnings[0].contains("env_keep"),
            "{:?}",
            resolved.warnings
        );
        assert_eq!(
            removed_secret_vars(&resolved.exec, &f.config.environment),
            vec!["GITHUB_TOKEN", "NPM_TOKEN", "OPENAI_API_KEY"]
        );
        assert_eq!(
            banner(&resolved.exec, &f.config.environment),
            "sandbox workspace-write, network off (Landlock ABI 7, namespaces); 3 secret variables removed from commands (GITHUB_TOKEN, NPM_TOKEN, OPENAI_API_KEY)"
        );
        let f = fixture_with(keep, "", false, &vars);
        let resolved = resolve_with(&f.config, AVAILABLE).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            removed_secret_vars(&resolved.exec, &f.config.environment),
            vec!["GITHUB_TOKEN", "OPENAI_API_KEY"]
        );
        assert!(resolved.exec.env_remove.contains(&"API_KEY".to_string()));
    }

    #[test]
    fn git_overrides_follow_the_users_own() {
        let f = fixture_with("", "", false, &[("GIT_CONFIG_COUNT", "1")]);
        let resolved = resolve_with(&f.config, AVAILABLE).unwrap_or_else(|e| panic!("{e}"));
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

    #[test]
    fn bad_mode_names_the_file() {
        let f = fixture("[sandbox]\nmode = \"strict\"\n", "", false);
        let error = resolve_with(&f.config, AVAILABLE)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("config.toml: [sandbox] mode = `strict`; expected"),
            "{error}"
        );
    }
}
