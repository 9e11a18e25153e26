//! `--sandbox`, `--network` and `[sandbox]` (SPEC §2.2, §6): how far shell commands are
//! confined.
//!
//! Precedence: `--sandbox`/`--network` > project `[sandbox]` > user `[sandbox]` > defaults
//! (workspace-write, network off). The project file comes from the repository and may be
//! hostile: unless the workspace is trusted it may only tighten (a stricter mode, `required`,
//! `network = false`); a looser mode, `network = true` or `writable_roots` are ignored with
//! one warning each. A trusted project file replaces the user's values.
//!
//! `writable_roots` entries may start with `~/`; relative entries are relative to the
//! workspace. `$TMPDIR` is writable like `/tmp`. Roots that do not exist are dropped with a
//! warning. Whether the kernel can confine anything is not decided here: the sandbox probes
//! it when it builds its execution settings from these.

use std::path::{Path, PathBuf};

use super::file::FileConfig;
use super::{ConfigError, Sources};

/// Sandbox modes (§6), from the loosest to the strictest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub enum SandboxMode {
    /// No confinement.
    Off,
    /// Read everywhere; write only the workspace, temp dirs and writable roots.
    #[default]
    WorkspaceWrite,
    /// Read everywhere; write nowhere (but the device nodes a shell needs).
    ReadOnly,
}

impl SandboxMode {
    /// The name used on the command line and in `config.toml`.
    pub fn name(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
        }
    }
}

/// The four values of `--sandbox` and `[sandbox] mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxLevel {
    /// Read everywhere; write only the workspace, /tmp and the writable roots (default).
    WorkspaceWrite,
    /// Read everywhere; write nowhere.
    ReadOnly,
    /// No confinement.
    Off,
    /// Like workspace-write, but refuse to run when the kernel cannot confine commands.
    Required,
}

impl SandboxLevel {
    /// The mode, and whether it is required.
    pub(crate) fn mode(self) -> (SandboxMode, bool) {
        match self {
            Self::WorkspaceWrite => (SandboxMode::WorkspaceWrite, false),
            Self::ReadOnly => (SandboxMode::ReadOnly, false),
            Self::Off => (SandboxMode::Off, false),
            Self::Required => (SandboxMode::WorkspaceWrite, true),
        }
    }
}

/// How shell commands of a session are confined, as configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    pub(crate) mode: SandboxMode,
    /// Refuse to start when the kernel cannot confine commands (`required`).
    pub(crate) required: bool,
    /// Allow TCP connect/bind and other sockets.
    pub(crate) network: bool,
    /// Absolute, existing directories writable besides the workspace and `/tmp`.
    pub(crate) writable_roots: Vec<PathBuf>,
    /// Environment variables removed from children (every key of the env file, `API_KEY`).
    pub(crate) env_remove: Vec<String>,
    /// Ignored project settings and dropped roots, to show once at start.
    pub(crate) warnings: Vec<String>,
}

impl SandboxSettings {
    /// Resolves the sandbox settings of a session.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] for an unknown `[sandbox] mode`, naming the file.
    pub(crate) fn resolve(sources: &Sources) -> Result<Self, ConfigError> {
        let mut warnings = Vec::new();
        let paths = &sources.paths;
        let user_file = paths.user_file();
        let project_file = paths.project_file();
        let (mut mode, mut required) = file_mode(&sources.user, &user_file)?;
        let mut network = sources.user.sandbox.network.unwrap_or(false);
        let mut roots = absolute_roots(&sources.user.sandbox.writable_roots, sources);
        let project = &sources.project.sandbox;
        let trusted = sources.trusted;
        let loosen = |what: String, warnings: &mut Vec<String>| {
            warnings.push(format!(
                "{} sets {what}, which loosens the sandbox; ignored because this workspace is not trusted (run `agent trust` to allow it)",
                project_file.display()
            ));
        };
        if project.mode.is_some() {
            let (project_mode, project_required) = file_mode(&sources.project, &project_file)?;
            if trusted {
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
            Some(value) if trusted => network = value,
            Some(true) if !network => loosen("[sandbox] network = true".into(), &mut warnings),
            Some(false) => network = false,
            _ => {}
        }
        if !project.writable_roots.is_empty() {
            if trusted {
                roots.extend(absolute_roots(&project.writable_roots, sources));
            } else {
                loosen("[sandbox] writable_roots".into(), &mut warnings);
            }
        }
        if let Some(level) = sources.flags.sandbox {
            (mode, required) = level.mode();
        }
        network |= sources.flags.network;
        if let Some(tmp) = sources.env.get("TMPDIR").filter(|t| t.starts_with('/')) {
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
        Ok(Self {
            mode,
            required,
            network,
            writable_roots: roots,
            env_remove: sources.secret_vars(),
            warnings,
        })
    }
}

/// `[sandbox] mode` of one file: the mode and whether it is `required`.
fn file_mode(file: &FileConfig, path: &Path) -> Result<(SandboxMode, bool), ConfigError> {
    let level = match file.sandbox.mode.as_deref() {
        None | Some("workspace-write") => SandboxLevel::WorkspaceWrite,
        Some("read-only") => SandboxLevel::ReadOnly,
        Some("off") => SandboxLevel::Off,
        Some("required") => SandboxLevel::Required,
        Some(other) => {
            return Err(ConfigError::Invalid(format!(
                "{}: [sandbox] mode = `{other}`; expected `workspace-write`, `read-only`, `off` or `required`",
                path.display()
            )));
        }
    };
    Ok(level.mode())
}

/// `writable_roots` entries made absolute: `~/` → home, relative → workspace.
fn absolute_roots(entries: &[PathBuf], sources: &Sources) -> Vec<PathBuf> {
    entries
        .iter()
        .map(
            |entry| match (entry.strip_prefix("~"), &sources.paths.home) {
                (Ok(rest), Some(home)) => home.join(rest),
                _ if entry.is_absolute() => entry.clone(),
                _ => sources.paths.workspace.join(entry),
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Environment, Flags};
    use pretty_assertions::assert_eq;

    struct Fixture {
        _dir: tempfile::TempDir,
        sources: Sources,
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
        let sources = Sources::load(Flags::default(), env).unwrap_or_else(|e| panic!("{e}"));
        Fixture { _dir: dir, sources }
    }

    fn summary(settings: &SandboxSettings) -> (SandboxMode, bool, bool, usize, usize) {
        (
            settings.mode,
            settings.required,
            settings.network,
            settings.writable_roots.len(),
            settings.warnings.len(),
        )
    }

    fn resolve(f: &Fixture) -> SandboxSettings {
        SandboxSettings::resolve(&f.sources).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn defaults_are_workspace_write_without_network() {
        let f = fixture("", "", false);
        assert_eq!(
            summary(&resolve(&f)),
            (SandboxMode::WorkspaceWrite, false, false, 0, 0)
        );
    }

    #[test]
    fn untrusted_project_may_tighten_but_not_loosen() {
        let loosen = "[sandbox]\nmode = \"off\"\nnetwork = true\nwritable_roots = [\"extra\"]\n";
        let f = fixture("", loosen, false);
        let resolved = resolve(&f);
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
        assert_eq!(
            summary(&resolve(&f)),
            (SandboxMode::ReadOnly, false, false, 0, 0)
        );
    }

    #[test]
    fn trusted_project_may_loosen() {
        let loosen = "[sandbox]\nmode = \"off\"\nnetwork = true\nwritable_roots = [\"extra\"]\n";
        let f = fixture("", loosen, true);
        let resolved = resolve(&f);
        assert_eq!(summary(&resolved), (SandboxMode::Off, false, true, 1, 0));
        assert_eq!(
            resolved.writable_roots[0],
            f.sources.paths.workspace.join("extra")
        );
    }

    #[test]
    fn required_in_a_file_is_required() {
        let f = fixture("[sandbox]\nmode = \"required\"\n", "", false);
        assert_eq!(
            summary(&resolve(&f)),
            (SandboxMode::WorkspaceWrite, true, false, 0, 0)
        );
    }

    #[test]
    fn bad_mode_names_the_file() {
        let f = fixture("[sandbox]\nmode = \"strict\"\n", "", false);
        let error = SandboxSettings::resolve(&f.sources)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("config.toml: [sandbox] mode = `strict`; expected"),
            "{error}"
        );
    }
}
