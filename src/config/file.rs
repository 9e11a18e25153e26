//! The TOML schema of `config.toml` (SPEC §2.2): user file `$AGENT_HOME/config.toml` and
//! project file `<workspace>/.agents/config.toml`. Unknown keys are errors naming the key and
//! the file (`deny_unknown_fields` everywhere). Every field is optional; defaults live with the
//! code that uses them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;

/// One parsed config file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Role used when neither `--role` nor `AGENT_ROLE` is given (§9.1).
    pub default_role: Option<String>,
    /// Workspaces whose project config may loosen rules (§2.2); honoured in the user file only.
    #[serde(default)]
    pub(crate) trusted_workspaces: Vec<PathBuf>,
    #[serde(default)]
    pub permissions: PermissionsSection,
    #[serde(default)]
    pub(crate) sandbox: SandboxSection,
    #[serde(default)]
    pub(crate) context: ContextSection,
    #[serde(default)]
    pub(crate) provider: ProviderSection,
    /// Prices per model name (§9.3).
    #[serde(default)]
    pub(crate) pricing: BTreeMap<String, Price>,
    #[serde(default)]
    pub(crate) budget: BudgetSection,
    #[serde(default)]
    pub(crate) model: ModelSection,
    /// `[mcp_servers.NAME]`: MCP servers whose tools are offered (issue 17).
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, super::mcp_servers::McpServerSpec>,
    /// `[[hooks.EVENT]]`: commands run on session events (issue 18), by event name.
    #[serde(default)]
    pub(crate) hooks: BTreeMap<String, Vec<super::hooks::HookSpec>>,
    #[serde(default)]
    pub(crate) ui: super::ui::UiSection,
    /// `[checkpoints]`: snapshots of the workspace for `/undo` (issue 16); user file only.
    #[serde(default)]
    pub checkpoints: CheckpointsSection,
}

/// `[checkpoints]`; resolved by [`super::CheckpointSettings`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointsSection {
    /// Snapshot the workspace before each turn's first change (default true).
    pub enabled: Option<bool>,
    /// Files larger than this many bytes are not captured (default 10,000,000).
    pub max_file_bytes: Option<u64>,
    /// Turns whose snapshots are kept, newest first (default 100).
    pub keep: Option<usize>,
    /// Days a snapshot is kept (default 14).
    pub keep_days: Option<u64>,
}

/// `[model]`: how the loop treats the model (SPEC §3.5).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ModelSection {
    /// Help for weak models: `auto` (default), `on` or `off`.
    pub(crate) coach: Option<String>,
    /// Identical tool calls with identical results in a row before the model is told
    /// (default 3; 0 turns the repeated-call guard off).
    pub(crate) max_identical_calls: Option<u32>,
}

/// `[permissions]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionsSection {
    /// `[[permissions.rules]]`, evaluated in order after the defaults; last match wins.
    #[serde(default)]
    pub rules: Vec<RuleSpec>,
}

/// One `[[permissions.rules]]` entry (§5.1).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// `bash`, `read_file`, `write_file`, `str_replace`, `*`, or MCP tools by name with `*`
    /// globs (`mcp__github__*`).
    pub tool: String,
    /// For `bash`, a glob over the normalized simple command (`*` any text); for file tools,
    /// a path glob (`**` allowed, `~/` expanded); for MCP tools, a glob over the call's
    /// arguments as compact JSON (`*` for every call).
    pub(crate) pattern: String,
    pub(crate) action: ActionSpec,
}

/// `allow`, `ask` or `deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ActionSpec {
    Allow,
    Ask,
    Deny,
}

/// `[sandbox]` (§6).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SandboxSection {
    /// `workspace-write` (default), `read-only`, `off`, `required`.
    pub(crate) mode: Option<String>,
    /// Allow TCP connect/bind from shell commands (default false).
    pub(crate) network: Option<bool>,
    /// Extra directories shell commands may write.
    #[serde(default)]
    pub(crate) writable_roots: Vec<PathBuf>,
    /// Extra paths hidden from shell commands, besides the built-in secret locations
    /// (`~/`, `$AGENT_HOME/`, absolute, or relative to the workspace).
    #[serde(default)]
    pub(crate) deny_read: Vec<String>,
    /// Extra paths shell commands may read but not change, inside writable directories.
    #[serde(default)]
    pub(crate) read_only: Vec<PathBuf>,
    /// Environment variables with secret-like names that commands still get (names or `*`
    /// globs).
    #[serde(default)]
    pub(crate) env_keep: Vec<String>,
}

/// `[context]` (§7). In a project file these may only tighten the user's values
/// (`crate::context::ContextSettings::for_config`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContextSection {
    /// Context window in tokens (default: built-in table by model, else 128,000).
    pub(crate) context_window: Option<u64>,
    /// Cap on one tool result, in characters (default 30,000).
    pub(crate) max_output_chars: Option<usize>,
    /// Share of the window (0, 1] at which old tool results are pruned (default 0.5).
    pub(crate) prune_at: Option<f64>,
    /// Share of the window (0, 1] at which history is compacted (default 0.85).
    pub(crate) compact_at: Option<f64>,
    /// Number of most recent tool results never pruned (default 4).
    pub(crate) keep_recent_tool_results: Option<usize>,
}

/// `[provider]`: endpoint quirks as data (§11).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProviderSection {
    /// Extra HTTP headers sent with every request.
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, String>,
    /// Seconds to establish a connection (default 10).
    pub(crate) connect_timeout_secs: Option<u64>,
    /// Seconds without a byte from the server before the request fails (default 120).
    pub(crate) idle_timeout_secs: Option<u64>,
    /// Attempts per request, including the first (default 5).
    pub(crate) max_attempts: Option<u32>,
    /// Longest wait between attempts in seconds, also caps `Retry-After` (default 60).
    pub(crate) max_retry_wait_secs: Option<u64>,
    /// `auto` (default): read tool calls written as text by small models; `off`: never.
    pub(crate) text_tool_calls: Option<String>,
    /// Stream responses (default true).
    pub(crate) stream: Option<bool>,
    /// Where `reasoning_content` is sent back: `tool-calls` (default), `all`, `off`.
    pub(crate) send_reasoning: Option<String>,
    /// Content of tool-only assistant messages: `auto` (default: null, `""` after a server
    /// rejects null), `null`, `empty`.
    pub(crate) tool_call_content: Option<String>,
    /// Fields merged into every request body, e.g. OpenRouter's `usage = { include = true }`.
    pub(crate) extra_body: Option<toml::Table>,
}

/// `[pricing."<model>"]`, USD per million tokens (§9.3).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Price {
    pub(crate) input_per_mtok: f64,
    pub(crate) output_per_mtok: f64,
    pub(crate) cached_input_per_mtok: Option<f64>,
}

/// `[budget]` (§9.2); resolved by [`crate::governance::settings::BudgetSettings`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BudgetSection {
    /// Share of a limit at which WARNING starts (default 0.8).
    pub(crate) warn_at: Option<f64>,
    /// Share of a limit at which EXHAUSTED starts (default 1.0).
    pub(crate) exhaust_at: Option<f64>,
    /// Replace the active role's limit of tool-output tokens (any role).
    pub(crate) max_context_tokens: Option<u64>,
    /// Replace the active role's limit of `bash` calls (any role).
    pub(crate) max_shell_invocations: Option<u64>,
    /// Replace the active role's cost limit in USD (any role).
    pub(crate) max_cost_usd: Option<f64>,
}

impl FileConfig {
    /// Reads and parses `path`; a missing file is an empty config.
    ///
    /// # Errors
    /// [`ConfigError::Read`] when the file exists but cannot be read, [`ConfigError::Toml`]
    /// (with the key and file) when it does not parse or has an unknown key.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        Self::parse(&text, path)
    }

    /// Parses config text; `path` is used in error messages only.
    ///
    /// # Errors
    /// [`ConfigError::Toml`] as for [`FileConfig::load`].
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let config: Self = toml::from_str(text).map_err(|e| ConfigError::Toml {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        config.check_rule_tools(path)?;
        config.check_prices(path)?;
        super::mcp_servers::check(&config.mcp_servers, path)?;
        super::hooks::check(&config.hooks, path)?;
        super::ui::check(&config.ui, path)?;
        Ok(config)
    }

    /// A rule for a tool no rule can rate (`tool = "Bash"`, `"rm"`) would be silently dead,
    /// and a dead `deny` is a hole: it is an error naming the value and the file.
    fn check_rule_tools(&self, path: &Path) -> Result<(), ConfigError> {
        match self.permissions.rules.iter().find(|rule| {
            !RULE_TOOLS.contains(&rule.tool.as_str()) && !rule.tool.starts_with(MCP_RULE_PREFIX)
        }) {
            Some(rule) => Err(ConfigError::Toml {
                path: path.to_path_buf(),
                message: format!(
                    "[[permissions.rules]] tool = `{}` is not a tool rules apply to; use one of {}, \
                     or the name of an MCP tool (`mcp__SERVER__TOOL`, `*` allowed)",
                    rule.tool,
                    RULE_TOOLS.join(", ")
                ),
            }),
            None => Ok(()),
        }
    }

    /// A negative or NaN price would make costs negative or NaN, and a NaN total never reaches
    /// a limit: the cost budget would be silently off. It is an error naming the value.
    fn check_prices(&self, path: &Path) -> Result<(), ConfigError> {
        for (model, price) in &self.pricing {
            let fields = [
                ("input_per_mtok", Some(price.input_per_mtok)),
                ("output_per_mtok", Some(price.output_per_mtok)),
                ("cached_input_per_mtok", price.cached_input_per_mtok),
            ];
            for (key, value) in fields {
                if let Some(value) = value.filter(|v| !(v.is_finite() && *v >= 0.0)) {
                    return Err(ConfigError::Toml {
                        path: path.to_path_buf(),
                        message: format!(
                            "[pricing.\"{model}\"] {key} = `{value}` is not a price; use USD per million tokens, 0 or more"
                        ),
                    });
                }
            }
        }
        Ok(())
    }
}

/// The `tool` values of `[[permissions.rules]]` (SPEC §5.1).
pub(crate) const RULE_TOOLS: [&str; 5] = ["bash", "read_file", "write_file", "str_replace", "*"];

/// How the `tool` of a rule for MCP tools starts: such rules name tools by glob
/// (`mcp__github__*`) and their `pattern` matches the call's arguments (issue 17).
pub(crate) const MCP_RULE_PREFIX: &str = "mcp__";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_names_the_key_and_file() {
        let err = FileConfig::parse("[sandbox]\nmod = \"off\"\n", Path::new("/h/config.toml"))
            .map(|_| ())
            .map_err(|e| e.to_string())
            .err()
            .unwrap_or_default();
        assert!(err.contains("/h/config.toml"), "{err}");
        assert!(err.contains("unknown field `mod`"), "{err}");
    }

    #[test]
    fn a_rule_for_an_unknown_tool_is_an_error() {
        let err = FileConfig::parse(
            "[[permissions.rules]]\ntool = \"Bash\"\npattern = \"rm *\"\naction = \"deny\"\n",
            Path::new("/h/config.toml"),
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
        .err()
        .unwrap_or_default();
        assert!(err.contains("/h/config.toml"), "{err}");
        assert!(err.contains("tool = `Bash`"), "{err}");
        assert!(
            err.contains("bash, read_file, write_file, str_replace, *"),
            "{err}"
        );
    }

    #[test]
    fn a_negative_or_nan_price_is_an_error() {
        let error = |toml: &str| {
            FileConfig::parse(toml, Path::new("/h/config.toml"))
                .map(|_| ())
                .map_err(|e| e.to_string())
                .err()
                .unwrap_or_default()
        };
        assert_eq!(
            error("[pricing.\"m\"]\ninput_per_mtok = -1\noutput_per_mtok = 2.0\n"),
            "/h/config.toml: [pricing.\"m\"] input_per_mtok = `-1` is not a price; use USD per million tokens, 0 or more"
        );
        assert_eq!(
            error("[pricing.\"m\"]\ninput_per_mtok = 1.0\noutput_per_mtok = nan\n"),
            "/h/config.toml: [pricing.\"m\"] output_per_mtok = `NaN` is not a price; use USD per million tokens, 0 or more"
        );
        assert_eq!(
            error(
                "[pricing.\"m\"]\ninput_per_mtok = 1.0\noutput_per_mtok = 1.0\ncached_input_per_mtok = inf\n"
            ),
            "/h/config.toml: [pricing.\"m\"] cached_input_per_mtok = `inf` is not a price; use USD per million tokens, 0 or more"
        );
        assert_eq!(
            error("[pricing.\"m\"]\ninput_per_mtok = 0.0\noutput_per_mtok = 0.0\n"),
            ""
        );
    }

    #[test]
    fn rules_parse() {
        let config = FileConfig::parse(
            "[[permissions.rules]]\ntool = \"bash\"\npattern = \"cargo test*\"\naction = \"allow\"\n",
            Path::new("c"),
        )
        .unwrap_or_default();
        assert_eq!(
            config.permissions.rules,
            vec![RuleSpec {
                tool: "bash".into(),
                pattern: "cargo test*".into(),
                action: ActionSpec::Allow
            }]
        );
    }
}
