//! Command-line flags and subcommands: what the user typed, with no logic.
//!
//! [`crate::config`] turns these raw values into one resolved configuration.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// A terminal coding agent for any OpenAI-compatible model endpoint.
///
/// Run it without a prompt for an interactive session, or give the task as an argument (or on
/// stdin) for a one-shot run whose final answer goes to stdout.
#[derive(Debug, Parser)]
#[command(name = "agent", version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(flatten)]
    pub run: RunArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags for a session (REPL or one-shot).
#[derive(Debug, Args, Default, Clone)]
pub struct RunArgs {
    /// The task. Without it, `agent` reads the task from stdin when stdin is not a terminal,
    /// else starts an interactive session.
    #[arg(value_name = "PROMPT")]
    pub prompt: Vec<String>,

    /// Work in DIR instead of the current directory.
    #[arg(short = 'C', long = "cd", value_name = "DIR", global = true)]
    pub directory: Option<PathBuf>,

    /// Chat-completions endpoint, e.g. https://api.openai.com/v1 (overrides BASE_URL).
    #[arg(long, value_name = "URL", global = true)]
    pub base_url: Option<String>,

    /// Model name (overrides MODEL).
    #[arg(long, short = 'm', value_name = "NAME", global = true)]
    pub model: Option<String>,

    /// Approve every `ask` decision; `deny` rules still apply.
    #[arg(long, short = 'y')]
    pub yes: bool,

    /// Print one JSON event per line on stdout instead of text.
    #[arg(long)]
    pub json: bool,

    /// Stop after this many model calls in one user turn (default 100).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,

    /// Sandbox for shell commands.
    #[arg(long, value_enum, value_name = "MODE")]
    pub sandbox: Option<SandboxArg>,

    /// Allow network access from shell commands.
    #[arg(long)]
    pub network: bool,

    /// Role that sets the tools and budgets (coder, reviewer, debugger, ops, admin, or custom).
    #[arg(long, value_name = "NAME")]
    pub role: Option<String>,

    /// Continue the newest session of this workspace, or the session with this ID.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
}

/// `--sandbox` values (SPEC §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxArg {
    /// Read everywhere; write only the workspace, /tmp and the writable roots (default).
    WorkspaceWrite,
    /// Read everywhere; write nowhere.
    ReadOnly,
    /// No confinement.
    Off,
    /// Like workspace-write, but refuse to run when the kernel cannot confine commands.
    Required,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show how the permission rules rate a shell command (or, with --tool, a file path),
    /// without running anything.
    Check(CheckArgs),
    /// Check the model endpoint: reachable, model known, streaming, tool calling.
    Doctor,
    /// List saved sessions.
    Sessions,
    /// Trust this workspace: its .agents/config.toml may then add allow rules.
    Trust,
    /// Print shell completions.
    Completions {
        /// bash, zsh or fish.
        shell: clap_complete::Shell,
    },
    /// Internal: apply the sandbox, then exec the command (used by the bash tool).
    #[command(name = "__sandbox", hide = true)]
    Sandbox(SandboxHelperArgs),
}

/// `agent check` arguments.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The command to rate, or a path with --tool.
    pub subject: String,
    /// Rate a file path for this tool (read_file, write_file, str_replace) instead.
    #[arg(long, value_name = "TOOL")]
    pub tool: Option<String>,
    /// Print the evaluation as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of the hidden sandbox helper; see [`crate::sandbox`].
#[derive(Debug, Args)]
pub struct SandboxHelperArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

