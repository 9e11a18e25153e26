//! From arguments to an exit code: parse, resolve configuration, run the chosen mode.
//! Errors are printed as one line, `agent: error: ...`; nothing here panics.

use std::ffi::OsString;
use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use crate::agent::{Agent, AgentEvent, AgentParts, EventSink};
use crate::cli::{Cli, Command, RunArgs, SandboxArg};
use crate::config::{Config, ConfigError, Environment};
use crate::exit::Exit;
use crate::model::{Client, ProviderSettings, TextToolCalls};
use crate::permissions::approval::{AlwaysYes, NoTerminal};
use crate::permissions::{Approver, PermissionEngine};
use crate::sandbox::{ExecSettings, SandboxMode};
use crate::tools::Registry;
use crate::ui::approval::TerminalApprover;
use crate::ui::terminal::{Target, TerminalSink};

/// Runs `agent` with `args` (including the program name) and returns the exit code.
pub fn run(args: Vec<OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() { Exit::Usage } else { Exit::Done }.into();
        }
    };
    let exit = match cli.command {
        Some(Command::Check(args)) => crate::permissions::check::run(&args, &cli.run),
        Some(Command::Trust) => crate::config::trust::run(&cli.run),
        Some(Command::Completions { shell }) => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "agent", &mut std::io::stdout());
            Exit::Done
        }
        Some(command) => {
            fail(&format!("`{}` is not available yet", command_name(&command)));
            Exit::Usage
        }
        None => session(&cli.run),
    };
    exit.into()
}

fn command_name(command: &Command) -> &'static str {
    match command {
        Command::Check(_) => "check",
        Command::Doctor => "doctor",
        Command::Sessions => "sessions",
        Command::Trust => "trust",
        Command::Completions { .. } => "completions",
        Command::Sandbox(_) => "__sandbox",
    }
}

/// Prints one error line to stderr.
pub fn fail(message: &str) {
    eprintln!("agent: error: {message}");
}

fn load_config(args: &RunArgs) -> Result<Config, ConfigError> {
    Config::load(args, Environment::capture())
}

/// How the task arrives.
enum Mode {
    Interactive,
    OneShot(String),
}

fn session(args: &RunArgs) -> Exit {
    let mode = if !args.prompt.is_empty() {
        Mode::OneShot(args.prompt.join(" "))
    } else if std::io::stdin().is_terminal() {
        Mode::Interactive
    } else {
        let mut task = String::new();
        if let Err(error) = std::io::stdin().read_to_string(&mut task) {
            fail(&format!("cannot read the task from stdin: {error}"));
            return Exit::Usage;
        }
        if task.trim().is_empty() {
            fail("no task given: stdin was empty; usage: agent [OPTIONS] [PROMPT]");
            return Exit::Usage;
        }
        Mode::OneShot(task)
    };
    let config = match load_config(args) {
        Ok(config) => config,
        Err(error) => {
            fail(&error.to_string());
            return Exit::Usage;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            fail(&format!("cannot start the async runtime: {error}"));
            return Exit::Failure;
        }
    };
    runtime.block_on(async move {
        let interactive = matches!(mode, Mode::Interactive);
        let stdout_tty = std::io::stdout().is_terminal();
        let no_color = config.environment.get("NO_COLOR").is_some_and(|v| !v.is_empty())
            || config.environment.get("TERM") == Some("dumb");
        let text_target = if interactive || stdout_tty {
            Target::Stdout
        } else {
            Target::Stderr
        };
        let activity = if interactive { Target::Stdout } else { Target::Stderr };
        let sink: Arc<dyn EventSink> = Arc::new(TerminalSink::new(text_target, activity, no_color));
        let approver: Arc<dyn Approver> = if config.run.yes {
            Arc::new(AlwaysYes)
        } else {
            match TerminalApprover::open(!no_color) {
                Some(approver) => Arc::new(approver),
                None => Arc::new(NoTerminal),
            }
        };
        let mut agent = match build_agent(config, Arc::clone(&sink), approver) {
            Ok(agent) => agent,
            Err(exit) => return exit,
        };
        match mode {
            Mode::Interactive => {
                let history = agent.config().agent_home.join("history");
                crate::repl::run(&mut agent, &history).await
            }
            Mode::OneShot(task) => crate::oneshot::run(&mut agent, &task, !stdout_tty).await,
        }
    })
}

fn build_agent(
    config: Config,
    sink: Arc<dyn EventSink>,
    approver: Arc<dyn Approver>,
) -> Result<Agent, Exit> {
    let endpoint = config.endpoint.require().map_err(|error| {
        fail(&error.to_string());
        Exit::Usage
    })?;
    let settings = provider_settings(&config).map_err(|error| {
        fail(&error.to_string());
        Exit::Usage
    })?;
    let client = Client::new(endpoint.clone(), settings).map_err(|error| {
        fail(&error.to_string());
        Exit::Usage
    })?;
    let (permissions, warnings) = PermissionEngine::from_config(&config);
    for message in warnings {
        sink.emit(AgentEvent::Warning { message });
    }
    let exec = exec_settings(&config);
    sink.emit(AgentEvent::SessionStarted {
        session_id: String::new(),
        model: endpoint.model.clone(),
        workspace: config.workspace.clone(),
        sandbox: sandbox_line(&exec),
    });
    Ok(Agent::new(AgentParts {
        config: Arc::new(config),
        client,
        registry: Registry::builtin(),
        permissions,
        approver,
        sink,
        exec,
    }))
}

fn sandbox_line(exec: &ExecSettings) -> String {
    let mode = match exec.mode {
        SandboxMode::WorkspaceWrite => "workspace-write",
        SandboxMode::ReadOnly => "read-only",
        SandboxMode::Off => "off",
    };
    let network = if exec.network { "network on" } else { "network off" };
    format!("sandbox {mode}, {network}")
}

/// `[provider]` from the user config.
///
/// # Errors
/// [`ConfigError::Invalid`] for an unknown `text_tool_calls` value or a bad `extra_body`.
pub fn provider_settings(config: &Config) -> Result<ProviderSettings, ConfigError> {
    let section = &config.user.provider;
    let defaults = ProviderSettings::default();
    let text_tool_calls = match section.text_tool_calls.as_deref() {
        None | Some("auto") => TextToolCalls::Auto,
        Some("off") => TextToolCalls::Off,
        Some(other) => {
            return Err(ConfigError::Invalid(format!(
                "[provider] text_tool_calls = `{other}`; expected `auto` or `off`"
            )));
        }
    };
    let extra_body = match &section.extra_body {
        None => serde_json::Map::new(),
        Some(table) => match serde_json::to_value(table) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => {
                return Err(ConfigError::Invalid(
                    "[provider] extra_body must be a table".into(),
                ));
            }
        },
    };
    let secs = std::time::Duration::from_secs;
    Ok(ProviderSettings {
        headers: section.headers.clone(),
        connect_timeout: section.connect_timeout_secs.map_or(defaults.connect_timeout, secs),
        idle_timeout: section.idle_timeout_secs.map_or(defaults.idle_timeout, secs),
        max_attempts: section.max_attempts.unwrap_or(defaults.max_attempts).max(1),
        max_retry_wait: section.max_retry_wait_secs.map_or(defaults.max_retry_wait, secs),
        text_tool_calls,
        stream: section.stream.unwrap_or(true),
        extra_body,
    })
}

fn exec_settings(config: &Config) -> ExecSettings {
    let mode = match config.run.sandbox {
        Some(SandboxArg::ReadOnly) => SandboxMode::ReadOnly,
        Some(SandboxArg::Off) => SandboxMode::Off,
        _ => SandboxMode::WorkspaceWrite,
    };
    ExecSettings {
        mode,
        network: config.run.network || config.user.sandbox.network.unwrap_or(false),
        writable_roots: config.user.sandbox.writable_roots.clone(),
        env_remove: config.secret_vars.clone(),
        ..ExecSettings::default()
    }
}
