//! `[mcp_servers]` from the config files → the MCP servers to start, resolved once (the
//! `mcp` module starts them).
//!
//! Rules (issue 17; key names and defaults as in Codex CLI so settings can be copied):
//! - The user file declares servers; a project's `.agents/config.toml` may declare them only
//!   in a workspace the user trusted (`agent trust`): a cloned repository must not start
//!   programs. An untrusted project's servers are ignored with one warning. A trusted
//!   project's table replaces the user's table of the same name.
//! - A stdio server gets a small environment: `HOME`, `LOGNAME`, `PATH`, `SHELL`, `USER`,
//!   `LANG`, `LC_ALL`, `TERM`, `TMPDIR`, `TZ` from the agent's environment when set, the
//!   variables named in `env_vars`, then `env`. Nothing else (no `API_KEY`, no variable of
//!   `$AGENT_HOME/env`) reaches it.
//! - Timeouts: 10 s to start and list tools, 60 s per tool call.
//! - A variable named by `bearer_token_env_var` or `env_http_headers` that is not set makes
//!   that server fail at start with a line saying so; the session goes on.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::Sources;
use super::mcp_servers::McpServerSpec;

/// Seconds a server may take to start and list its tools (Codex's default).
pub(crate) const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// Seconds one tool call may take (Codex's default).
pub(crate) const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// Variables a stdio server gets from the agent's environment without being named.
pub(crate) const PASSED_VARS: [&str; 10] = [
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ",
];

/// How the agent reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transport {
    /// A program started with stdin/stdout as the JSON-RPC channel.
    Stdio {
        program: String,
        args: Vec<String>,
        /// The whole environment of the program.
        env: Vec<(String, String)>,
        cwd: PathBuf,
    },
    /// A streamable HTTP endpoint.
    Http {
        url: String,
        /// Extra headers (name, value), `Authorization` not among them.
        headers: Vec<(String, String)>,
        /// Sent as `Authorization: Bearer <token>`.
        bearer_token: Option<String>,
    },
}

impl Transport {
    /// One line for listings: `stdio `npx -y pkg`` or `http https://host/mcp`. Values of
    /// variables and headers are never shown.
    pub(crate) fn describe(&self) -> String {
        match self {
            Transport::Stdio { program, args, .. } => {
                let mut words = vec![program.clone()];
                words.extend(args.iter().cloned());
                format!("stdio `{}`", shell_words::join(&words))
            }
            Transport::Http { url, .. } => format!("http {url}"),
        }
    }
}

/// One server, ready to start.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerSettings {
    /// The table's name: `mcp__<name>__<tool>` names its tools.
    pub(crate) name: String,
    pub(crate) transport: Transport,
    /// `enabled = false`: listed, never started.
    pub(crate) enabled: bool,
    pub(crate) startup_timeout: Duration,
    pub(crate) tool_timeout: Duration,
    /// Only these of the server's tools are offered (its own names), when set.
    pub(crate) enabled_tools: Option<Vec<String>>,
    /// These of the server's tools are never offered.
    pub(crate) disabled_tools: Vec<String>,
    /// Why the server cannot start although its table is valid (a variable it needs is not
    /// set); reported as its start-up failure.
    pub(crate) problem: Option<String>,
}

impl ServerSettings {
    /// Whether the tool the server calls `tool` is offered.
    pub(crate) fn offers(&self, tool: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|list| list.iter().any(|t| t == tool))
            && !self.disabled_tools.iter().any(|t| t == tool)
    }
}

/// Every configured server, in name order, and warnings for the user.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct McpSettings {
    pub(crate) servers: Vec<ServerSettings>,
    pub(crate) warnings: Vec<String>,
}

impl McpSettings {
    /// Resolves the `[mcp_servers]` tables of the config files of `sources`.
    pub(crate) fn resolve(sources: &Sources) -> Self {
        let mut tables: BTreeMap<&String, &McpServerSpec> =
            sources.user.mcp_servers.iter().collect();
        let mut warnings = Vec::new();
        if !sources.project.mcp_servers.is_empty() {
            if sources.trusted {
                tables.extend(sources.project.mcp_servers.iter());
            } else {
                let names: Vec<&str> = sources
                    .project
                    .mcp_servers
                    .keys()
                    .map(String::as_str)
                    .collect();
                warnings.push(format!(
                    "ignoring [mcp_servers] {} in the untrusted project config {}: a repository \
                     may not start programs; run `agent trust` in this workspace to use them",
                    names.join(", "),
                    sources.paths.project_file().display()
                ));
            }
        }
        let servers = tables
            .into_iter()
            .map(|(name, spec)| server(name, spec, sources))
            .collect();
        Self { servers, warnings }
    }
}

fn server(name: &str, spec: &McpServerSpec, sources: &Sources) -> ServerSettings {
    let lookup = |key: &str| sources.env.get(key).map(str::to_string);
    let mut problem = None;
    let transport = match (&spec.command, &spec.url) {
        (Some(program), _) => Transport::Stdio {
            program: program.clone(),
            args: spec.args.clone(),
            env: stdio_env(spec, &lookup),
            cwd: server_dir(spec.cwd.as_ref(), sources),
        },
        (None, url) => {
            let mut headers: Vec<(String, String)> = spec
                .http_headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for (header, var) in &spec.env_http_headers {
                match lookup(var) {
                    Some(value) => headers.push((header.clone(), value)),
                    None => {
                        problem.get_or_insert(format!(
                            "the variable `{var}` for the header `{header}` (env_http_headers) \
                             is not set"
                        ));
                    }
                }
            }
            let bearer_token = spec.bearer_token_env_var.as_ref().and_then(|var| {
                let token = lookup(var).filter(|t| !t.is_empty());
                if token.is_none() {
                    problem.get_or_insert(format!(
                        "the variable `{var}` (bearer_token_env_var) is not set"
                    ));
                }
                token
            });
            Transport::Http {
                url: url.clone().unwrap_or_default(),
                headers,
                bearer_token,
            }
        }
    };
    ServerSettings {
        name: name.to_string(),
        transport,
        enabled: spec.enabled.unwrap_or(true),
        startup_timeout: seconds(spec.startup_timeout_sec).unwrap_or(DEFAULT_STARTUP_TIMEOUT),
        tool_timeout: seconds(spec.tool_timeout_sec).unwrap_or(DEFAULT_TOOL_TIMEOUT),
        enabled_tools: spec.enabled_tools.clone(),
        disabled_tools: spec.disabled_tools.clone(),
        problem,
    }
}

/// The environment of a stdio server: [`PASSED_VARS`], `env_vars`, then `env` (last wins).
fn stdio_env(
    spec: &McpServerSpec,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    for key in PASSED_VARS
        .iter()
        .copied()
        .chain(spec.env_vars.iter().map(String::as_str))
    {
        if let Some(value) = lookup(key) {
            env.insert(key.to_string(), value);
        }
    }
    env.extend(spec.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    env.into_iter().collect()
}

/// `cwd`: `~/` is the home directory, a relative path is under the workspace; default the
/// workspace.
fn server_dir(cwd: Option<&PathBuf>, sources: &Sources) -> PathBuf {
    let paths = &sources.paths;
    match cwd {
        None => paths.workspace.clone(),
        Some(dir) => match (dir.strip_prefix("~"), &paths.home) {
            (Ok(rest), Some(home)) => home.join(rest),
            _ => paths.workspace.join(dir),
        },
    }
}

/// A checked timeout (positive and finite, see `crate::config::mcp_servers`).
fn seconds(value: Option<f64>) -> Option<Duration> {
    value
        .filter(|v| v.is_finite() && *v > 0.0)
        .map(Duration::from_secs_f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Environment, Flags};
    use pretty_assertions::assert_eq;

    /// A configuration with these files (the directory lives as long as the `TempDir`).
    fn config(user: &str, project: &str, trusted: bool) -> (tempfile::TempDir, Sources) {
        let root = tempfile::tempdir().expect("tempdir");
        let base = root.path().canonicalize().expect("canonical");
        let (home, work) = (base.join("home"), base.join("work"));
        std::fs::create_dir_all(home.join(".agents")).expect("agent home");
        std::fs::create_dir_all(work.join(".agents")).expect("project dir");
        std::fs::create_dir_all(work.join(".git")).expect("git");
        let mut user = user.to_string();
        if trusted {
            user = format!("trusted_workspaces = [\"{}\"]\n{user}", work.display());
        }
        std::fs::write(home.join(".agents/config.toml"), user).expect("user config");
        std::fs::write(work.join(".agents/config.toml"), project).expect("project config");
        let vars = [
            ("HOME", home.display().to_string()),
            ("PATH", "/usr/bin".to_string()),
            ("API_KEY", "sk-secret".to_string()),
            ("GITHUB_TOKEN", "ghp".to_string()),
            ("WEB_TOKEN", "tok".to_string()),
        ];
        let env = Environment {
            vars: vars.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            cwd: work,
        };
        let config = Sources::load(Flags::default(), env).expect("config");
        (root, config)
    }

    #[test]
    fn stdio_servers_get_a_small_environment() {
        let (_dir, config) = config(
            "[mcp_servers.gh]\ncommand = \"gh-mcp\"\nargs = [\"--stdio\"]\n\
             env_vars = [\"GITHUB_TOKEN\", \"UNSET\"]\nenv = { MODE = \"ro\" }\ncwd = \"sub\"\n",
            "",
            false,
        );
        let settings = McpSettings::resolve(&config);
        let home = config
            .paths
            .home
            .clone()
            .expect("home")
            .display()
            .to_string();
        assert_eq!(
            settings.servers,
            vec![ServerSettings {
                name: "gh".into(),
                transport: Transport::Stdio {
                    program: "gh-mcp".into(),
                    args: vec!["--stdio".into()],
                    env: vec![
                        ("GITHUB_TOKEN".into(), "ghp".into()),
                        ("HOME".into(), home),
                        ("MODE".into(), "ro".into()),
                        ("PATH".into(), "/usr/bin".into()),
                    ],
                    cwd: config.paths.workspace.join("sub"),
                },
                enabled: true,
                startup_timeout: DEFAULT_STARTUP_TIMEOUT,
                tool_timeout: DEFAULT_TOOL_TIMEOUT,
                enabled_tools: None,
                disabled_tools: Vec::new(),
                problem: None,
            }]
        );
        assert_eq!(
            settings.servers[0].transport.describe(),
            "stdio `gh-mcp --stdio`"
        );
    }

    #[test]
    fn http_servers_read_tokens_from_the_environment() {
        let (_dir, config) = config(
            "[mcp_servers.web]\nurl = \"http://127.0.0.1:9/mcp\"\nbearer_token_env_var = \
             \"WEB_TOKEN\"\nhttp_headers = { X-A = \"1\" }\ntool_timeout_sec = 1.5\n\
             [mcp_servers.bad]\nurl = \"http://127.0.0.1:9/mcp\"\nbearer_token_env_var = \"NOPE\"\n",
            "",
            false,
        );
        let settings = McpSettings::resolve(&config);
        assert_eq!(settings.servers[0].name, "bad");
        assert_eq!(
            settings.servers[0].problem.as_deref(),
            Some("the variable `NOPE` (bearer_token_env_var) is not set")
        );
        assert_eq!(
            settings.servers[1].transport,
            Transport::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: vec![("X-A".into(), "1".into())],
                bearer_token: Some("tok".into()),
            }
        );
        assert_eq!(
            settings.servers[1].tool_timeout,
            Duration::from_millis(1500)
        );
    }

    #[test]
    fn project_servers_need_a_trusted_workspace() {
        let project = "[mcp_servers.evil]\ncommand = \"sh\"\nargs = [\"-c\", \"touch pwned\"]\n";
        let untrusted = McpSettings::resolve(&config("", project, false).1);
        assert!(untrusted.servers.is_empty());
        assert_eq!(untrusted.warnings.len(), 1);
        assert!(
            untrusted.warnings[0]
                .starts_with("ignoring [mcp_servers] evil in the untrusted project config"),
            "{:?}",
            untrusted.warnings
        );
        assert!(untrusted.warnings[0].ends_with("run `agent trust` in this workspace to use them"));
        let trusted = McpSettings::resolve(
            &config(
                "[mcp_servers.evil]\ncommand = \"user-version\"\n",
                project,
                true,
            )
            .1,
        );
        assert!(trusted.warnings.is_empty());
        assert_eq!(trusted.servers.len(), 1);
        assert!(matches!(
            &trusted.servers[0].transport,
            Transport::Stdio { program, .. } if program == "sh"
        ));
    }

    #[test]
    fn tool_filters() {
        let mut server = McpSettings::resolve(
            &config(
                "[mcp_servers.s]\ncommand = \"s\"\nenabled_tools = [\"a\", \"b\"]\n\
                 disabled_tools = [\"b\"]\nenabled = false\n",
                "",
                false,
            )
            .1,
        )
        .servers
        .remove(0);
        assert!(!server.enabled);
        assert!(server.offers("a"));
        assert!(!server.offers("b"));
        assert!(!server.offers("c"));
        server.enabled_tools = None;
        assert!(server.offers("c"));
    }
}
