//! Command-line flags and subcommands: what the user typed, with no logic.
//!
//! [`RunArgs::flags`] hands the flags to [`crate::config`] as configuration values; the
//! configuration resolves them with the environment and the config files.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::{CoachSetting, Flags, SandboxLevel};

/// A terminal coding agent for any OpenAI-compatible model endpoint.
///
/// Run it without a prompt for an interactive session, or give the task as an argument (or on
/// stdin) for a one-shot run whose final answer goes to stdout.
#[derive(Debug, Parser)]
#[command(
    name = "agent",
    version,
    about,
    long_about,
    args_conflicts_with_subcommands = true,
    after_help = "Run `agent --help` for examples, environment variables and exit codes.",
    after_long_help = AFTER_LONG_HELP
)]
pub struct Cli {
    #[command(flatten)]
    pub run: RunArgs,

    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// Shown at the end of `agent --help`.
const AFTER_LONG_HELP: &str = "\
Examples:
  agent                                  interactive session in this repository
  agent \"fix the failing test\"           one task; the answer goes to stdout
  git diff | agent \"review this change\"  the task from stdin
  agent --json -y \"run the tests\" | jq -c 'select(.type == \"tool.finished\")'
  agent check \"rm -rf build\"             how the permission rules rate a command
  agent undo                             put back the files the last turn changed

Environment:
  BASE_URL, API_KEY, MODEL   the model endpoint (also read from $AGENT_HOME/env)
  AGENT_HOME                 settings, history and sessions (default ~/.agents)
  NO_COLOR                   plain output without colour or escape codes

In the interactive session, /help lists the slash commands; Ctrl-C interrupts the model or a
running command, Ctrl-D exits.

Exit codes: 0 done, 1 runtime failure, 2 usage or configuration error, 3 stopped by a budget
or --max-turns, 130 interrupted.";

/// Flags for a session (REPL or one-shot).
#[derive(Debug, Args, Default, Clone)]
pub struct RunArgs {
    /// The task. Without it, `agent` reads the task from stdin when stdin is not a terminal,
    /// else starts an interactive session.
    #[arg(value_name = "PROMPT")]
    pub(crate) prompt: Vec<String>,

    /// Work in DIR instead of the current directory.
    #[arg(short = 'C', long = "cd", value_name = "DIR", global = true)]
    pub(crate) directory: Option<PathBuf>,

    /// Chat-completions endpoint, e.g. https://api.openai.com/v1 (overrides BASE_URL).
    #[allow(
        rustdoc::bare_urls,
        reason = "the comment is the --help text, shown as typed"
    )]
    #[arg(long, value_name = "URL", global = true)]
    pub(crate) base_url: Option<String>,

    /// Model name (overrides MODEL).
    #[arg(long, short = 'm', value_name = "NAME", global = true)]
    pub(crate) model: Option<String>,

    /// Approve every `ask` decision; `deny` rules still apply.
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,

    /// Print one JSON event per line on stdout instead of text (session.started, turn.started,
    /// message.delta, tool.started, tool.finished, approval.requested, turn.completed, error, ...).
    /// Needs a task (PROMPT or stdin).
    #[arg(long)]
    pub(crate) json: bool,

    /// Stop after this many model calls in one user turn (default 100, at least 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_turns: Option<u32>,

    /// Sandbox for shell commands.
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) sandbox: Option<SandboxArg>,

    /// Allow network access from shell commands.
    #[arg(long)]
    pub(crate) network: bool,

    /// Role that sets the tools and budgets (coder, reviewer, debugger, ops, admin, or custom).
    #[arg(long, value_name = "NAME")]
    pub(crate) role: Option<String>,

    /// Continue the newest session of this workspace, or the session with this ID.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub(crate) resume: Option<String>,

    /// Help for weak models: auto (only when the model needs it), on, or off.
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) coach: Option<CoachArg>,
}

impl RunArgs {
    /// The flags as configuration values.
    pub fn flags(&self) -> Flags {
        Flags {
            directory: self.directory.clone(),
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            yes: self.yes,
            json: self.json,
            max_turns: self.max_turns,
            sandbox: self.sandbox.map(|arg| match arg {
                SandboxArg::WorkspaceWrite => SandboxLevel::WorkspaceWrite,
                SandboxArg::ReadOnly => SandboxLevel::ReadOnly,
                SandboxArg::Off => SandboxLevel::Off,
                SandboxArg::Required => SandboxLevel::Required,
            }),
            network: self.network,
            role: self.role.clone(),
            resume: self.resume.clone(),
            coach: self.coach.map(|arg| match arg {
                CoachArg::Auto => CoachSetting::Auto,
                CoachArg::On => CoachSetting::On,
                CoachArg::Off => CoachSetting::Off,
            }),
        }
    }
}

/// `--coach` values (SPEC §3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CoachArg {
    /// On only when the model's name is a small model's or it writes tool calls as text.
    Auto,
    On,
    Off,
}

/// `--sandbox` values (SPEC §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SandboxArg {
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
pub(crate) enum Command {
    /// Show how the permission rules rate a shell command (or, with --tool, a file path),
    /// without running anything.
    Check(CheckArgs),
    /// Check the model endpoint: reachable, model known, streaming, tool calling.
    Doctor,
    /// List saved sessions.
    Sessions,
    /// Trust this workspace: its .agents/config.toml may then add allow rules.
    Trust,
    /// MCP servers: `agent mcp list` starts each configured server and shows its state and
    /// tools.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Put back the files the last turn changed (from the workspace's checkpoints), after
    /// showing what will change and asking; `--list` shows the turns instead.
    Undo(UndoArgs),
    /// Print shell completions, e.g. `agent completions bash > ~/.local/share/bash-completion/completions/agent`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Internal: apply the sandbox, then exec the command (used by the bash tool).
    #[command(name = "__sandbox", hide = true)]
    Sandbox(SandboxHelperArgs),
}

/// `agent mcp` subcommands.
#[derive(Debug, Clone, Copy, Subcommand)]
pub(crate) enum McpCommand {
    /// Start every configured MCP server, list its state and tools, then stop it.
    List,
}

/// `agent undo` arguments.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// List the workspace's turns that changed files (newest last) instead of undoing.
    #[arg(long)]
    pub list: bool,
    /// Restore without asking (files changed since the turn are still left alone).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Also overwrite files changed since the turn.
    #[arg(long)]
    pub force: bool,
}

/// `agent check` arguments.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The command to rate, or a path with --tool.
    pub(crate) subject: String,
    /// Rate a file path for this tool (read_file, write_file, str_replace) instead.
    #[arg(long, value_name = "TOOL")]
    pub(crate) tool: Option<String>,
    /// Print the evaluation as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Arguments of the hidden sandbox helper; see [`crate::sandbox`].
#[derive(Debug, Args)]
pub(crate) struct SandboxHelperArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(crate) args: Vec<String>,
}
