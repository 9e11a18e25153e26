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

use std::path::{Path, PathBuf};

use super::{ExecSettings, SandboxMode, SandboxStatus, probe};
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
pub fn resolve(config: &Config) -> Result<Resolved, ConfigError> {
    resolve_with(config, probe())
}

/// [`resolve`] with a given kernel status (for tests).
///
/// # Errors
/// As [`resolve`].
pub fn resolve_with(config: &Config, status: SandboxStatus) -> Result<Resolved, ConfigError> {
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
    let exec = ExecSettings {
        mode,
        required,
        network,
        writable_roots: roots,
        env_remove: config.secret_vars.clone(),
        status,
        helper: helper_path(),
        ..ExecSettings::default()
    };
    Ok(Resolved { exec, warnings })
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

/// The one-line description of shell confinement shown when a session starts.
pub fn banner(exec: &ExecSettings) -> String {
    let network = if exec.network {
        "network on"
    } else {
        "network off"
    };
    match (&exec.status, exec.mode) {
        (_, SandboxMode::Off) => "sandbox off: shell commands are not confined".to_string(),
        (SandboxStatus::Available { abi }, mode) => {
            format!("sandbox {}, {network} (Landlock ABI {abi})", mode.name())
        }
        (SandboxStatus::Unavailable { .. }, _) => {
            "NO SANDBOX: Landlock unavailable, shell commands run unconfined".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Environment;
    use pretty_assertions::assert_eq;

    const AVAILABLE: SandboxStatus = SandboxStatus::Available { abi: 7 };

    struct Fixture {
        _dir: tempfile::TempDir,
        config: Config,
    }

    fn fixture(user: &str, project: &str, trusted: bool) -> Fixture {
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
            vars: [("AGENT_HOME".to_string(), home.display().to_string())].into(),
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
            banner(&resolved.exec),
            "sandbox workspace-write, network off (Landlock ABI 7)"
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
        assert!(banner(&resolved.exec).starts_with("NO SANDBOX"));
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
