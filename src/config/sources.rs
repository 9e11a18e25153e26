//! The raw sources of one run, read once: the flags as typed, a snapshot of the process
//! environment, `$AGENT_HOME/env`, the user's and the project's `config.toml`, and whether
//! the user trusted the workspace (`agent trust`). Nothing here decides what wins; the
//! resolution into [`super::Settings`] does.
//!
//! Nothing here touches the process environment: callers pass a snapshot ([`Environment`]),
//! so tests never mutate global state.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::endpoint::EndpointSettings;
use super::file::{FileConfig, ProviderSection};
use super::loop_settings::CoachSetting;
use super::paths::{Paths, absolute, project_file, user_file};
use super::sandbox::SandboxLevel;
use super::{ConfigError, envfile};

/// What was typed on the command line, as configuration values (the face maps its `clap`
/// arguments onto this).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags {
    /// `-C DIR`.
    pub(crate) directory: Option<PathBuf>,
    /// `--base-url`.
    pub(crate) base_url: Option<String>,
    /// `--model`.
    pub(crate) model: Option<String>,
    /// `--yes`: approve every `ask`.
    pub(crate) yes: bool,
    /// `--json`: JSON lines on stdout.
    pub(crate) json: bool,
    /// `--max-turns`: model calls per user turn.
    pub(crate) max_turns: Option<u32>,
    /// `--sandbox`.
    pub(crate) sandbox: Option<SandboxLevel>,
    /// `--network`.
    pub(crate) network: bool,
    /// `--role`.
    pub(crate) role: Option<String>,
    /// `--resume [ID]`: `Some("")` for the newest session of the workspace.
    pub(crate) resume: Option<String>,
    /// `--coach`.
    pub(crate) coach: Option<CoachSetting>,
}

/// A snapshot of the process environment and working directory.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    pub vars: BTreeMap<String, String>,
    pub cwd: PathBuf,
}

impl Environment {
    /// Reads the real process environment (non-UTF-8 variables are skipped).
    pub(crate) fn capture() -> Self {
        Self {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.vars.get(key).map(String::as_str)
    }
}

/// Every raw source of one run.
#[derive(Debug, Clone)]
pub struct Sources {
    pub(crate) flags: Flags,
    /// The process environment snapshot.
    pub(crate) env: Environment,
    pub(crate) paths: Paths,
    /// `$AGENT_HOME/env`, and what it sets.
    pub(crate) env_file: PathBuf,
    pub(crate) env_file_vars: BTreeMap<String, String>,
    /// `$AGENT_HOME/config.toml`.
    pub(crate) user: FileConfig,
    /// `<workspace>/.agents/config.toml`.
    pub(crate) project: FileConfig,
    /// Whether the user trusted this workspace (`agent trust`).
    pub(crate) trusted: bool,
}

impl Sources {
    /// Reads the env file and both config files for `flags` and `env`.
    ///
    /// # Errors
    /// [`ConfigError::NoHome`] without `AGENT_HOME` or a home directory; a read, parse or
    /// directory error naming the file. A missing endpoint is not an error here (commands
    /// that need no endpoint still work; see [`EndpointSettings::require`]).
    pub fn load(flags: Flags, env: Environment) -> Result<Self, ConfigError> {
        let home = env.get("HOME").map(PathBuf::from).or_else(dirs::home_dir);
        let agent_home = match env.get("AGENT_HOME").filter(|v| !v.is_empty()) {
            Some(dir) => absolute(&env.cwd, std::path::Path::new(dir)),
            None => home.as_ref().ok_or(ConfigError::NoHome)?.join(".agents"),
        };
        let env_file = agent_home.join("env");
        let env_file_vars = match std::fs::read_to_string(&env_file) {
            Ok(text) => envfile::parse(&text, &env_file)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: env_file,
                    source,
                });
            }
        };
        let paths = Paths::resolve(&env.cwd, flags.directory.as_deref(), home, agent_home)?;
        let user = FileConfig::load(&user_file(&paths.agent_home))?;
        let project = FileConfig::load(&project_file(&paths.workspace))?;
        let trusted = user
            .trusted_workspaces
            .iter()
            .any(|p| p.canonicalize().is_ok_and(|p| p == paths.workspace));
        Ok(Self {
            flags,
            env,
            paths,
            env_file,
            env_file_vars,
            user,
            project,
            trusted,
        })
    }

    /// The endpoint: each of `BASE_URL` and `MODEL` from its flag, else the process
    /// environment, else the env file; `API_KEY` from the environment, else the env file.
    pub(crate) fn endpoint(&self) -> EndpointSettings {
        let lookup = |flag: &Option<String>, key: &str| {
            flag.clone()
                .or_else(|| self.env.get(key).map(str::to_string))
                .or_else(|| self.env_file_vars.get(key).cloned())
        };
        EndpointSettings {
            base_url: lookup(&self.flags.base_url, "BASE_URL"),
            api_key: lookup(&None, "API_KEY"),
            model: lookup(&self.flags.model, "MODEL"),
            env_file: self.env_file.clone(),
        }
    }

    /// Environment variable names that never reach child processes: every key of the env
    /// file, and `API_KEY`.
    pub(crate) fn secret_vars(&self) -> Vec<String> {
        let mut secret: Vec<String> = self.env_file_vars.keys().cloned().collect();
        if !secret.iter().any(|k| k == "API_KEY") {
            secret.push("API_KEY".to_string());
        }
        secret
    }

    /// Warnings for the project file's `[provider]` and `trusted_workspaces`, which only the
    /// user file may set: they are ignored, trusted or not, but never silently.
    pub(crate) fn ignored_in_project(&self) -> Vec<String> {
        let file = self.paths.project_file();
        let user_file = self.paths.user_file();
        let mut warnings = Vec::new();
        if self.project.provider != ProviderSection::default() {
            warnings.push(format!(
                "ignoring [provider] in the project config {}: only {} may set it; move it there",
                file.display(),
                user_file.display()
            ));
        }
        if self.project.ui != super::ui::UiSection::default() {
            warnings.push(format!(
                "ignoring [ui] in the project config {}: only {} may set it; move it there",
                file.display(),
                user_file.display()
            ));
        }
        if !self.project.trusted_workspaces.is_empty() {
            warnings.push(format!(
                "ignoring trusted_workspaces in the project config {}: only {} may set it; run \
                 `agent trust` in a workspace to trust it",
                file.display(),
                user_file.display()
            ));
        }
        warnings
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::Path;

    /// An environment snapshot with `vars`, started in `cwd`.
    pub(crate) fn env_with(vars: &[(&str, &str)], cwd: &Path) -> Environment {
        Environment {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cwd: cwd.to_path_buf(),
        }
    }

    #[test]
    fn flags_beat_env_beat_file() -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        std::fs::write(
            home.path().join("env"),
            "BASE_URL=http://file/v1\nMODEL=file-model\nAPI_KEY=secret\nOTHER=x\n",
        )?;
        let home_str = home.path().to_string_lossy().to_string();
        let env = env_with(
            &[("AGENT_HOME", &home_str), ("MODEL", "env-model")],
            home.path(),
        );
        let flags = Flags {
            base_url: Some("http://flag/v1/".into()),
            ..Flags::default()
        };
        let sources = Sources::load(flags, env)?;
        let endpoint = sources.endpoint().require()?;
        assert_eq!(
            endpoint,
            super::super::Endpoint {
                base_url: "http://flag/v1".into(),
                api_key: "secret".into(),
                model: "env-model".into()
            }
        );
        assert_eq!(
            sources.secret_vars(),
            vec!["API_KEY", "BASE_URL", "MODEL", "OTHER"]
        );
        Ok(())
    }

    #[test]
    fn missing_model_names_variable_and_file() -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let home_str = home.path().to_string_lossy().to_string();
        let env = env_with(
            &[("AGENT_HOME", &home_str), ("BASE_URL", "http://x")],
            home.path(),
        );
        let sources = Sources::load(Flags::default(), env)?;
        let message = sources.endpoint().require().err().map(|e| e.to_string());
        assert_eq!(
            message.as_deref(),
            Some(
                format!(
                    "missing `MODEL`; pass --model, set it in the environment, or add it to {}/env",
                    home_str
                )
                .as_str()
            )
        );
        Ok(())
    }
}
