//! Configuration: raw flags, process environment, env file and config files → one resolved
//! [`Config`]. This is the only place precedence lives (SPEC §2).
//!
//! Precedence for endpoint settings: flags > process environment > `$AGENT_HOME/env`.
//! Nothing here touches the process environment; callers pass a snapshot ([`Environment`]) so
//! tests never mutate global state.

pub mod envfile;
pub mod file;
pub mod mcp_servers;
pub mod trust;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::cli::{RunArgs, SandboxArg};
pub use file::FileConfig;

/// Default number of model calls per user turn (§3.2).
pub const DEFAULT_MAX_TURNS: u32 = 100;

/// Errors while resolving configuration. All of them end the run with exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("missing `{name}`; pass {flag}, set it in the environment, or add it to {}", env_file.display())]
    Missing {
        name: &'static str,
        flag: &'static str,
        env_file: PathBuf,
    },
    #[error("{}:{line}: {message}", path.display())]
    EnvFile {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Toml { path: PathBuf, message: String },
    #[error("cannot use directory `{}`: {source}", path.display())]
    Directory {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot find the home directory; set AGENT_HOME")]
    NoHome,
    #[error("{0}")]
    Invalid(String),
}

/// A snapshot of the process environment and working directory.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    pub vars: BTreeMap<String, String>,
    pub cwd: PathBuf,
}

impl Environment {
    /// Reads the real process environment (non-UTF-8 variables are skipped).
    pub fn capture() -> Self {
        Self {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars.get(key).map(String::as_str)
    }
}

/// Endpoint settings after precedence, before the required ones are checked.
#[derive(Debug, Clone, Default)]
pub struct EndpointSettings {
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub model: Option<String>,
    /// The env file consulted, for error messages.
    pub env_file: PathBuf,
}

/// A usable endpoint: base URL and model are present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Base URL without a trailing slash, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// Bearer token; empty for local servers that need none.
    pub api_key: String,
    pub model: String,
}

impl EndpointSettings {
    /// The endpoint, or an error naming the first missing variable and the env file.
    ///
    /// # Errors
    /// [`ConfigError::Missing`] for a missing or empty `BASE_URL` or `MODEL`;
    /// [`ConfigError::Invalid`] for a `BASE_URL` that is not an http(s) URL.
    pub fn require(&self) -> Result<Endpoint, ConfigError> {
        let missing = |name, flag| ConfigError::Missing {
            name,
            flag,
            env_file: self.env_file.clone(),
        };
        let base_url =
            non_empty(&self.base_url).ok_or_else(|| missing("BASE_URL", "--base-url"))?;
        let model = non_empty(&self.model).ok_or_else(|| missing("MODEL", "--model"))?;
        check_base_url(base_url)?;
        Ok(Endpoint {
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key: self.api_key.clone().unwrap_or_default(),
            model: model.to_string(),
        })
    }
}

/// A `BASE_URL` without a scheme (`localhost:8080/v1`) or with another one is a
/// configuration error at once, not five retried "builder error"s and exit 1.
fn check_base_url(base_url: &str) -> Result<(), ConfigError> {
    match reqwest::Url::parse(base_url) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => Ok(()),
        _ => Err(ConfigError::Invalid(format!(
            "BASE_URL `{base_url}` is not an http(s) URL; write it like `http://127.0.0.1:8080/v1`"
        ))),
    }
}

fn non_empty(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// Options of this run that are not endpoint or file settings.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub yes: bool,
    pub json: bool,
    pub max_turns: u32,
    pub sandbox: Option<SandboxArg>,
    pub network: bool,
    pub role: Option<String>,
    pub resume: Option<String>,
    /// `--coach`, as given.
    pub coach: Option<crate::cli::CoachArg>,
}

/// The resolved configuration of one run.
#[derive(Debug, Clone)]
pub struct Config {
    pub endpoint: EndpointSettings,
    /// `$AGENT_HOME` (default `~/.agents`).
    pub agent_home: PathBuf,
    /// Workspace root (§2.3), canonical.
    pub workspace: PathBuf,
    /// Directory the agent was started in (or `-C DIR`), canonical.
    pub cwd: PathBuf,
    /// The user's home directory, when known (for `~` in rules).
    pub home: Option<PathBuf>,
    /// `$AGENT_HOME/config.toml`.
    pub user: FileConfig,
    /// `<workspace>/.agents/config.toml`.
    pub project: FileConfig,
    /// Whether the user trusted this workspace (`agent trust`).
    pub project_trusted: bool,
    pub run: RunOptions,
    /// Environment variable names that never reach child processes: `API_KEY` and every
    /// key of the env file.
    pub secret_vars: Vec<String>,
    /// The process environment snapshot.
    pub environment: Environment,
}

/// The user's config file: `$AGENT_HOME/config.toml` (SPEC §2.2).
pub fn user_file(agent_home: &Path) -> PathBuf {
    agent_home.join("config.toml")
}

/// A workspace's project config file: `<workspace>/.agents/config.toml` (SPEC §2.2).
pub fn project_file(workspace: &Path) -> PathBuf {
    workspace.join(".agents").join("config.toml")
}

impl Config {
    /// [`user_file`] of this configuration.
    pub fn user_file(&self) -> PathBuf {
        user_file(&self.agent_home)
    }

    /// [`project_file`] of this configuration's workspace.
    pub fn project_file(&self) -> PathBuf {
        project_file(&self.workspace)
    }

    /// Resolves flags, environment and files into a configuration.
    ///
    /// # Errors
    /// Any [`ConfigError`] except `Missing` (checked later by [`EndpointSettings::require`],
    /// so commands that need no endpoint still work).
    pub fn load(args: &RunArgs, env: Environment) -> Result<Self, ConfigError> {
        let home = env.get("HOME").map(PathBuf::from).or_else(dirs::home_dir);
        let agent_home = match env.get("AGENT_HOME").filter(|v| !v.is_empty()) {
            Some(dir) => absolute(&env.cwd, Path::new(dir)),
            None => home.as_ref().ok_or(ConfigError::NoHome)?.join(".agents"),
        };
        let env_file = agent_home.join("env");
        let file_vars = match std::fs::read_to_string(&env_file) {
            Ok(text) => envfile::parse(&text, &env_file)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: env_file,
                    source,
                });
            }
        };
        let lookup = |flag: &Option<String>, key: &str| {
            flag.clone()
                .or_else(|| env.get(key).map(str::to_string))
                .or_else(|| file_vars.get(key).cloned())
        };
        let endpoint = EndpointSettings {
            base_url: lookup(&args.base_url, "BASE_URL"),
            api_key: lookup(&None, "API_KEY"),
            model: lookup(&args.model, "MODEL"),
            env_file,
        };
        let (cwd, workspace) = resolve_dirs(&env.cwd, args.directory.as_deref())?;
        let user = FileConfig::load(&user_file(&agent_home))?;
        let project = FileConfig::load(&project_file(&workspace))?;
        let project_trusted = user
            .trusted_workspaces
            .iter()
            .any(|p| p.canonicalize().is_ok_and(|p| p == workspace));
        let mut secret_vars: Vec<String> = file_vars.keys().cloned().collect();
        if !secret_vars.iter().any(|k| k == "API_KEY") {
            secret_vars.push("API_KEY".to_string());
        }
        let run = RunOptions {
            yes: args.yes,
            json: args.json,
            max_turns: args.max_turns.unwrap_or(DEFAULT_MAX_TURNS).max(1),
            sandbox: args.sandbox,
            network: args.network,
            role: args.role.clone(),
            resume: args.resume.clone(),
            coach: args.coach,
        };
        Ok(Self {
            endpoint,
            agent_home,
            workspace,
            cwd,
            home,
            user,
            project,
            project_trusted,
            run,
            secret_vars,
            environment: env,
        })
    }
}

fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// The working directory and workspace root (§2.3): `-C DIR` makes DIR both; otherwise the
/// workspace is the nearest ancestor of the current directory holding `.git`, else the
/// current directory itself.
fn resolve_dirs(cwd: &Path, directory: Option<&Path>) -> Result<(PathBuf, PathBuf), ConfigError> {
    let canonical = |path: &Path| {
        path.canonicalize()
            .map_err(|source| ConfigError::Directory {
                path: path.to_path_buf(),
                source,
            })
    };
    if let Some(dir) = directory {
        let dir = canonical(&absolute(cwd, dir))?;
        if !dir.is_dir() {
            return Err(ConfigError::Invalid(format!(
                "`{}` is not a directory",
                dir.display()
            )));
        }
        return Ok((dir.clone(), dir));
    }
    let cwd = canonical(cwd)?;
    let workspace = cwd
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(&cwd)
        .to_path_buf();
    Ok((cwd, workspace))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(vars: &[(&str, &str)], cwd: &Path) -> Environment {
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
        let args = RunArgs {
            base_url: Some("http://flag/v1/".into()),
            ..RunArgs::default()
        };
        let config = Config::load(&args, env)?;
        let endpoint = config.endpoint.require()?;
        assert_eq!(
            endpoint,
            Endpoint {
                base_url: "http://flag/v1".into(),
                api_key: "secret".into(),
                model: "env-model".into()
            }
        );
        assert_eq!(
            config.secret_vars,
            vec!["API_KEY", "BASE_URL", "MODEL", "OTHER"]
        );
        Ok(())
    }

    #[test]
    fn base_url_must_be_http_or_https() {
        for good in ["http://127.0.0.1:8080/v1", "https://api.openai.com/v1"] {
            assert!(check_base_url(good).is_ok(), "{good}");
        }
        for bad in [
            "localhost:8080/v1",
            "127.0.0.1:8080/v1",
            "not a url",
            "ftp://x/v1",
        ] {
            let message = check_base_url(bad).err().map(|e| e.to_string());
            assert_eq!(
                message,
                Some(format!(
                    "BASE_URL `{bad}` is not an http(s) URL; write it like `http://127.0.0.1:8080/v1`"
                ))
            );
        }
    }

    #[test]
    fn missing_model_names_variable_and_file() -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let home_str = home.path().to_string_lossy().to_string();
        let env = env_with(
            &[("AGENT_HOME", &home_str), ("BASE_URL", "http://x")],
            home.path(),
        );
        let config = Config::load(&RunArgs::default(), env)?;
        let message = config.endpoint.require().err().map(|e| e.to_string());
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

    #[test]
    fn workspace_is_nearest_git_ancestor() -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let root_path = root.path().canonicalize()?;
        std::fs::create_dir_all(root_path.join(".git"))?;
        std::fs::create_dir_all(root_path.join("a/b"))?;
        let (cwd, workspace) = resolve_dirs(&root_path.join("a/b"), None)?;
        assert_eq!(cwd, root_path.join("a/b"));
        assert_eq!(workspace, root_path);
        let (_, workspace) = resolve_dirs(&root_path, Some(Path::new("a")))?;
        assert_eq!(workspace, root_path.join("a"));
        Ok(())
    }
}
