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
//! warning.
//!
//! Issue 15: `deny_read` and `read_only` only add protection, so an untrusted project file may
//! set them; `env_keep` gives commands more, so it is ignored (with a warning) until the
//! workspace is trusted. What the environment says is read here too: the names of its
//! variables (secret-named ones are removed from commands), an existing `GIT_CONFIG_COUNT`,
//! `XDG_CONFIG_HOME` (where the user's git config is) and `AGENT_SANDBOX_NO_NAMESPACES=1`
//! (for the tests of the Landlock-only path). Whether the kernel can confine anything is not
//! decided here: the sandbox probes it when it builds its execution settings from these.

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
    /// Environment variables removed from children (every key of the env file, `API_KEY`);
    /// the sandbox adds the secret-named ones of `env_names` not in `env_keep`.
    pub(crate) env_remove: Vec<String>,
    /// Secret-named variables commands still get (names or `*` globs): the user's, and a
    /// trusted project's.
    pub(crate) env_keep: Vec<String>,
    /// Names of the variables set in the agent's environment.
    pub(crate) env_names: Vec<String>,
    /// Extra paths hidden from commands besides the built-in secret locations, as written
    /// (`~/`, `$AGENT_HOME/`, absolute, or relative to the workspace): the user's and the
    /// project's.
    pub(crate) deny_read: Vec<String>,
    /// Extra paths commands may read but not change, absolute: the user's and the project's.
    pub(crate) read_only: Vec<PathBuf>,
    /// The user's git config files (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`).
    pub(crate) global_git_configs: Vec<PathBuf>,
    /// `GIT_CONFIG_COUNT` of the agent's environment (0 when unset).
    pub(crate) git_config_count: usize,
    /// A missing `.agents/` may be created to protect it: the workspace is trusted, so its
    /// project config is obeyed in full next time.
    pub(crate) create_agents_dir: bool,
    /// `AGENT_SANDBOX_NO_NAMESPACES=1`: act as if namespaces were unavailable.
    pub(crate) no_namespaces: bool,
    /// Ignored project settings and dropped roots, to show once at start.
    pub(crate) warnings: Vec<String>,
}

/// Environment variable that makes the sandbox act as if namespaces were unavailable (for
/// the tests of the Landlock-only path).
pub(crate) const NO_NAMESPACES_ENV: &str = "AGENT_SANDBOX_NO_NAMESPACES";

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
        let env_keep = Self::env_keep(sources, &mut warnings);
        let mut read_only = sources.user.sandbox.read_only.clone();
        read_only.extend(sources.project.sandbox.read_only.iter().cloned());
        Ok(Self {
            mode,
            required,
            network,
            writable_roots: roots,
            env_remove: sources.secret_vars(),
            env_keep,
            env_names: sources.env.vars.keys().cloned().collect(),
            deny_read: sources
                .user
                .sandbox
                .deny_read
                .iter()
                .chain(&sources.project.sandbox.deny_read)
                .cloned()
                .collect(),
            read_only: absolute_roots(&read_only, sources),
            global_git_configs: global_git_configs(sources),
            git_config_count: sources
                .env
                .get("GIT_CONFIG_COUNT")
                .and_then(|c| c.parse().ok())
                .unwrap_or(0),
            create_agents_dir: sources.trusted,
            no_namespaces: sources.env.get(NO_NAMESPACES_ENV) == Some("1"),
            warnings,
        })
    }

    /// `env_keep`: the user's, and the project's in a trusted workspace (ignored with a
    /// warning in `warnings` otherwise).
    pub(crate) fn env_keep(sources: &Sources, warnings: &mut Vec<String>) -> Vec<String> {
        let mut keep = sources.user.sandbox.env_keep.clone();
        if !sources.project.sandbox.env_keep.is_empty() {
            if sources.trusted {
                keep.extend(sources.project.sandbox.env_keep.iter().cloned());
            } else {
                warnings.push(format!(
                    "{} sets [sandbox] env_keep, which gives commands secret variables; ignored because this workspace is not trusted (run `agent trust` to allow it)",
                    sources.paths.project_file().display()
                ));
            }
        }
        keep
    }
}

/// The user's git config files: `~/.gitconfig`, and `git/config` under `$XDG_CONFIG_HOME`
/// (when absolute) or `~/.config`.
fn global_git_configs(sources: &Sources) -> Vec<PathBuf> {
    let home = sources.paths.home.as_ref();
    let xdg = sources
        .env
        .get("XDG_CONFIG_HOME")
        .filter(|x| x.starts_with('/'))
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".config")));
    home.map(|h| h.join(".gitconfig"))
        .into_iter()
        .chain(xdg.map(|x| x.join("git/config")))
        .collect()
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
