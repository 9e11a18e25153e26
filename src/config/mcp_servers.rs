//! `[mcp_servers.NAME]` tables (issue 17): how to reach each MCP server, with the key names
//! Codex CLI uses so users can copy their settings.
//!
//! A table names exactly one transport: `command` (a program started with stdio pipes) or
//! `url` (streamable HTTP). Checked when the file is parsed, so a broken table is an error
//! naming the server and the file (exit code 2), like any other config error. What the keys
//! resolve to (environment, timeouts, trust) is decided in `crate::mcp::settings`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::BadValue;
use super::ConfigError;

/// One `[mcp_servers.NAME]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerSpec {
    /// stdio: the program to start (looked up in `PATH`).
    pub(crate) command: Option<String>,
    /// stdio: its arguments.
    #[serde(default)]
    pub(crate) args: Vec<String>,
    /// stdio: variables set for it (on top of the few passed through, see `env_vars`).
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    /// stdio: names of further variables passed through from the agent's environment.
    #[serde(default)]
    pub(crate) env_vars: Vec<String>,
    /// stdio: its working directory (`~/` is home, relative is the workspace; default the
    /// workspace).
    pub(crate) cwd: Option<PathBuf>,
    /// streamable HTTP: the endpoint, `http://` or `https://`.
    pub(crate) url: Option<String>,
    /// streamable HTTP: the variable holding a bearer token for `Authorization`.
    pub(crate) bearer_token_env_var: Option<String>,
    /// streamable HTTP: headers sent with every request.
    #[serde(default)]
    pub(crate) http_headers: BTreeMap<String, String>,
    /// streamable HTTP: headers whose values are read from these variables.
    #[serde(default)]
    pub(crate) env_http_headers: BTreeMap<String, String>,
    /// `false` keeps the server configured but not started (default true).
    pub(crate) enabled: Option<bool>,
    /// Seconds to start and list tools before the server counts as failed (default 10).
    pub(crate) startup_timeout_sec: Option<f64>,
    /// Seconds one tool call may take before it is cancelled (default 60).
    pub(crate) tool_timeout_sec: Option<f64>,
    /// Only these tools (the server's own names) are offered; default all.
    pub(crate) enabled_tools: Option<Vec<String>>,
    /// These tools (the server's own names) are never offered.
    #[serde(default)]
    pub(crate) disabled_tools: Vec<String>,
}

/// Checks every table of `servers`: a usable name, one transport, keys that fit it, and
/// positive finite timeouts.
///
/// # Errors
/// [`ConfigError::Toml`] naming the server, the key and `path`.
pub(crate) fn check(
    servers: &BTreeMap<String, McpServerSpec>,
    path: &Path,
) -> Result<(), ConfigError> {
    for (name, spec) in servers {
        check_one(name, spec).map_err(|message| ConfigError::Toml {
            path: path.to_path_buf(),
            message: format!("[mcp_servers.{name}] {message}"),
        })?;
    }
    Ok(())
}

fn check_one(name: &str, spec: &McpServerSpec) -> Result<(), BadValue> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(format!(
            "the server name `{name}` may only hold letters, digits, `_` and `-` (it becomes \
             part of tool names like `mcp__{name}__TOOL`)"
        )
        .into());
    }
    let stdio_only = [
        ("args", !spec.args.is_empty()),
        ("env", !spec.env.is_empty()),
        ("env_vars", !spec.env_vars.is_empty()),
        ("cwd", spec.cwd.is_some()),
    ];
    let http_only = [
        ("bearer_token_env_var", spec.bearer_token_env_var.is_some()),
        ("http_headers", !spec.http_headers.is_empty()),
        ("env_http_headers", !spec.env_http_headers.is_empty()),
    ];
    match (&spec.command, &spec.url) {
        (Some(_), Some(_)) => {
            return Err(
                "sets both `command` and `url`; keep `command` for a server started \
                 over stdio or `url` for streamable HTTP"
                    .into(),
            );
        }
        (None, None) => {
            return Err(
                "needs `command` (a program started over stdio) or `url` (a \
                 streamable HTTP endpoint)"
                    .into(),
            );
        }
        (Some(command), None) => {
            if command.trim().is_empty() {
                return Err("`command` is empty; name the program to start".into());
            }
            if let Some((key, _)) = http_only.iter().find(|(_, set)| *set) {
                return Err(format!("`{key}` applies to `url` servers, not `command`").into());
            }
        }
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "url = `{url}` is not an http(s) URL; write it like \
                     `http://127.0.0.1:8000/mcp`"
                )
                .into());
            }
            if let Some((key, _)) = stdio_only.iter().find(|(_, set)| *set) {
                return Err(format!("`{key}` applies to `command` servers, not `url`").into());
            }
        }
    }
    for (key, value) in [
        ("startup_timeout_sec", spec.startup_timeout_sec),
        ("tool_timeout_sec", spec.tool_timeout_sec),
    ] {
        if let Some(value) = value.filter(|v| !(v.is_finite() && *v > 0.0 && *v <= 86_400.0)) {
            return Err(format!(
                "{key} = `{value}` is not a timeout; use seconds, more than 0 and at most 86400"
            )
            .into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn error(toml: &str) -> String {
        super::super::FileConfig::parse(toml, Path::new("/h/config.toml"))
            .map(|_| String::new())
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn codex_keys_parse() {
        let toml = r#"
            [mcp_servers.fs]
            command = "npx"
            args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
            env = { DEBUG = "1" }
            env_vars = ["GITHUB_TOKEN"]
            cwd = "tools"
            startup_timeout_sec = 20
            tool_timeout_sec = 2.5
            enabled_tools = ["read_file"]
            disabled_tools = ["write_file"]

            [mcp_servers.web]
            url = "https://example.com/mcp"
            bearer_token_env_var = "WEB_TOKEN"
            http_headers = { "X-Team" = "core" }
            env_http_headers = { "X-Key" = "WEB_KEY" }
            enabled = false
        "#;
        let config =
            super::super::FileConfig::parse(toml, Path::new("/h/config.toml")).unwrap_or_default();
        let fs = &config.mcp_servers["fs"];
        assert_eq!(fs.command.as_deref(), Some("npx"));
        assert_eq!(fs.startup_timeout_sec, Some(20.0));
        assert_eq!(fs.tool_timeout_sec, Some(2.5));
        assert_eq!(fs.enabled_tools, Some(vec!["read_file".to_string()]));
        let web = &config.mcp_servers["web"];
        assert_eq!(web.enabled, Some(false));
        assert_eq!(web.http_headers["X-Team"], "core");
    }

    #[test]
    fn broken_tables_are_errors_naming_server_and_file() {
        assert_eq!(
            error("[mcp_servers.x]\nargs = [\"a\"]\n"),
            "/h/config.toml: [mcp_servers.x] needs `command` (a program started over stdio) or \
             `url` (a streamable HTTP endpoint)"
        );
        assert_eq!(
            error("[mcp_servers.x]\ncommand = \"a\"\nurl = \"http://h/mcp\"\n"),
            "/h/config.toml: [mcp_servers.x] sets both `command` and `url`; keep `command` for \
             a server started over stdio or `url` for streamable HTTP"
        );
        assert_eq!(
            error("[mcp_servers.\"a.b\"]\ncommand = \"a\"\n"),
            "/h/config.toml: [mcp_servers.a.b] the server name `a.b` may only hold letters, \
             digits, `_` and `-` (it becomes part of tool names like `mcp__a.b__TOOL`)"
        );
        assert_eq!(
            error("[mcp_servers.x]\nurl = \"localhost:1/mcp\"\n"),
            "/h/config.toml: [mcp_servers.x] url = `localhost:1/mcp` is not an http(s) URL; \
             write it like `http://127.0.0.1:8000/mcp`"
        );
        assert_eq!(
            error("[mcp_servers.x]\nurl = \"http://h/mcp\"\nargs = [\"a\"]\n"),
            "/h/config.toml: [mcp_servers.x] `args` applies to `command` servers, not `url`"
        );
        assert_eq!(
            error("[mcp_servers.x]\ncommand = \"a\"\nbearer_token_env_var = \"T\"\n"),
            "/h/config.toml: [mcp_servers.x] `bearer_token_env_var` applies to `url` servers, \
             not `command`"
        );
        assert_eq!(
            error("[mcp_servers.x]\ncommand = \"a\"\ntool_timeout_sec = 0\n"),
            "/h/config.toml: [mcp_servers.x] tool_timeout_sec = `0` is not a timeout; use \
             seconds, more than 0 and at most 86400"
        );
        let unknown = error("[mcp_servers.x]\ncommand = \"a\"\nstartup_timeout_ms = 1\n");
        assert!(
            unknown.contains("unknown field `startup_timeout_ms`"),
            "{unknown}"
        );
    }
}
