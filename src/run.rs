//! From arguments to an exit code: parse, resolve configuration, run the chosen mode.
//! Errors are printed as one line, `agent: error: ...`; nothing here panics.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use crate::agent::{Agent, AgentEvent, AgentParts, EventSink, LoopSettings};
use crate::cli::{Cli, Command, RunArgs};
use crate::config::{Config, ConfigError, Environment};
use crate::exit::Exit;
use crate::model::{Client, ProviderSettings};
use crate::permissions::approval::{AlwaysYes, NoTerminal};
use crate::permissions::{Approver, PermissionEngine};
use crate::sandbox;
use crate::tools::Registry;
use crate::ui::announce::AnnouncingApprover;
use crate::ui::approval::TerminalApprover;
use crate::ui::json::JsonSink;
use crate::ui::style::ColorEnv;
use crate::ui::terminal::{Target, TerminalSink};

/// Runs `agent` with `args` (including the program name) and returns the exit code.
pub fn run(args: Vec<OsString>) -> ExitCode {
    // The sandbox helper runs before every shell command: skip everything else.
    if args.get(1).is_some_and(|arg| arg == sandbox::helper::NAME) {
        return helper_exit(sandbox::helper::main(&args[2..]));
    }
    // The guard of a stdio MCP server, likewise.
    if args
        .get(1)
        .is_some_and(|arg| arg == crate::mcp::guard::NAME)
    {
        return helper_exit(crate::mcp::guard::main(&args[2..]));
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() {
                Exit::Usage
            } else {
                Exit::Done
            }
            .into();
        }
    };
    let exit = match cli.command {
        Some(Command::Check(args)) => crate::permissions::check::run(&args, &cli.run),
        Some(Command::Trust) => crate::config::trust::run(&cli.run),
        Some(Command::Sessions) => sessions(&cli.run),
        Some(Command::Doctor) => crate::doctor::run(&cli.run),
        Some(Command::Mcp { command }) => crate::mcp_list::run(command, &cli.run),
        Some(Command::Completions { shell }) => completions(shell),
        Some(Command::Undo(args)) => crate::undo::run(&args, &cli.run),
        Some(Command::Sandbox(args)) => {
            let args: Vec<OsString> = args.args.into_iter().map(OsString::from).collect();
            return helper_exit(sandbox::helper::main(&args));
        }
        None => session(&cli.run),
    };
    exit.into()
}

fn helper_exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Writes the completion script for `shell` to stdout (a closed pipe is not an error).
fn completions(shell: clap_complete::Shell) -> Exit {
    use std::io::Write;
    let mut command = <Cli as clap::CommandFactory>::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "agent", &mut script);
    let _ = std::io::stdout().write_all(&script);
    Exit::Done
}

/// Prints one error line to stderr.
pub fn fail(message: &str) {
    crate::errln!("agent: error: {message}");
}

/// `agent sessions`: every saved session, most recently active first.
fn sessions(run: &RunArgs) -> Exit {
    let config = match load_config(run) {
        Ok(config) => config,
        Err(error) => {
            fail(&error.to_string());
            return Exit::Usage;
        }
    };
    let dir = crate::agent::memory::sessions_dir(&config);
    let list = crate::session::list(&dir);
    if list.is_empty() {
        crate::outln!("no saved sessions in {}", dir.display());
    } else {
        crate::out!("{}", crate::session::list::render(&list));
    }
    Exit::Done
}

fn load_config(args: &RunArgs) -> Result<Config, ConfigError> {
    Config::load(args, Environment::capture())
}

/// How the task arrives.
enum Mode {
    Interactive,
    OneShot(String),
}

/// Where the task comes from: the prompt argument (plus piped stdin, see
/// [`crate::task_input`]), else stdin when it is not a terminal
/// (read to EOF; empty is a usage error), else the interactive session.
fn task_mode(args: &RunArgs) -> Result<Mode, Exit> {
    if !args.prompt.is_empty() {
        let prompt = args.prompt.join(" ");
        return match crate::task_input::extra_for_prompt(crate::task_input::stdin_kind()) {
            Ok(extra) => Ok(Mode::OneShot(crate::task_input::combine(
                &prompt,
                extra.as_deref(),
            ))),
            Err(error) => {
                fail(&format!(
                    "cannot read stdin: {error}; pass the input as text or redirect `</dev/null`"
                ));
                Err(Exit::Usage)
            }
        };
    }
    if std::io::stdin().is_terminal() {
        if args.json {
            fail("`--json` needs a task: pass PROMPT or pipe it on stdin");
            return Err(Exit::Usage);
        }
        return Ok(Mode::Interactive);
    }
    let task = match crate::task_input::read_all() {
        Ok(task) => task,
        Err(error) => {
            fail(&format!("cannot read the task from stdin: {error}"));
            return Err(Exit::Usage);
        }
    };
    if task.trim().is_empty() {
        fail("no task given: stdin was empty; usage: agent [OPTIONS] [PROMPT]");
        return Err(Exit::Usage);
    }
    Ok(Mode::OneShot(task))
}

fn session(args: &RunArgs) -> Exit {
    let mut args = args.clone();
    (args.resume, args.prompt) = crate::session::split_resume_value(args.resume, args.prompt);
    let mode = match task_mode(&args) {
        Ok(mode) => mode,
        Err(exit) => return exit,
    };
    let config = match load_config(&args) {
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
    let exit = runtime.block_on(async move {
        crate::cancel::watch_termination();
        let interactive = matches!(mode, Mode::Interactive);
        let stdout_tty = std::io::stdout().is_terminal();
        let colors = ColorEnv::from_lookup(|k| config.environment.get(k));
        let json = config.run.json;
        let sink = make_sink(json, interactive, stdout_tty, colors);
        let approver: Arc<dyn Approver> = if config.run.yes {
            Arc::new(AlwaysYes)
        } else {
            match TerminalApprover::open(colors.allows_color()) {
                Some(approver) => Arc::new(approver),
                None => Arc::new(NoTerminal),
            }
        };
        let approver = Arc::new(AnnouncingApprover::new(approver, Arc::clone(&sink)));
        let mut agent = match build_agent(config, Arc::clone(&sink), approver) {
            Ok(agent) => agent,
            Err(exit) => return exit,
        };
        let exit = match mode {
            Mode::Interactive => {
                let history = agent.config().agent_home.join("history");
                crate::repl::run(&mut agent, &history).await
            }
            Mode::OneShot(task) => {
                // The tools a script relies on are there for its first request.
                if let Some(mcp) = agent.mcp() {
                    mcp.wait_started().await;
                }
                agent.report_mcp();
                let exit = crate::oneshot::run(&mut agent, &task, !stdout_tty && !json).await;
                agent.report_mcp();
                exit
            }
        };
        if let Some(mcp) = agent.mcp() {
            mcp.shutdown().await;
        }
        exit
    });
    crate::cancel::exit_if_terminated();
    exit
}

/// `--json`: JSON lines on stdout. Otherwise text: at the REPL everything on stdout; one-shot
/// keeps stdout for the final answer (streamed there only when it is a terminal) and sends
/// the rest to stderr (§3.3).
fn make_sink(
    json: bool,
    interactive: bool,
    stdout_tty: bool,
    colors: ColorEnv,
) -> Arc<dyn EventSink> {
    if json {
        return Arc::new(JsonSink::stdout());
    }
    let text_target = if interactive || stdout_tty {
        Target::Stdout
    } else {
        Target::Stderr
    };
    let activity = if interactive {
        Target::Stdout
    } else {
        Target::Stderr
    };
    Arc::new(TerminalSink::new(text_target, activity, colors))
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
    for message in warnings.into_iter().chain(user_only_warnings(&config)) {
        sink.emit(AgentEvent::Warning { message });
    }
    let governance = crate::governance::setup(&config, &endpoint.model, Arc::clone(&sink))
        .map_err(|error| {
            fail(&error.to_string());
            Exit::Usage
        })?;
    for message in governance.warnings {
        sink.emit(AgentEvent::Warning { message });
    }
    let governor = governance.governor;
    let (memory, mut registry) = memory_and_tools(&config, &endpoint.model, &sink)?;
    governor.hide_denied(&mut registry);
    let sandbox = sandbox::settings::resolve(&config).map_err(|error| {
        fail(&error.to_string());
        Exit::Usage
    })?;
    let sandbox_warnings = sandbox.warnings;
    let exec = sandbox.exec;
    let banner = sandbox::settings::banner(&exec);
    let loop_settings = LoopSettings::for_config(&config).map_err(|error| {
        fail(&error.to_string());
        Exit::Usage
    })?;
    let mcp = start_mcp(&config, &sink)?;
    let checkpoints = checkpoints(&config, &sink);
    let mut agent = Agent::new(AgentParts {
        config: Arc::new(config),
        client,
        registry,
        permissions,
        approver,
        sink: Arc::clone(&sink),
        exec,
        loop_settings,
    });
    agent.set_memory(memory);
    agent.set_governor(governor);
    if let Some(mcp) = mcp {
        agent.set_mcp(mcp);
    }
    if let Some(checkpoints) = checkpoints {
        agent.set_checkpoints(Arc::from(checkpoints));
    }
    let resumed = resume_requested(&mut agent)?;
    sink.emit(AgentEvent::SessionStarted {
        session_id: agent.session_id(),
        model: endpoint.model.clone(),
        workspace: agent.config().workspace.clone(),
        sandbox: banner,
        coach: agent.coach_status().line(),
    });
    for message in sandbox_warnings {
        sink.emit(AgentEvent::Warning { message });
    }
    if let Some(summary) = resumed {
        sink.emit(AgentEvent::Notice {
            message: agent.resume_notice(&summary),
        });
    }
    Ok(agent)
}

/// The workspace's checkpoints (issue 16), unless they are off; a warning says why when
/// `git` is missing.
fn checkpoints(
    config: &Config,
    sink: &Arc<dyn EventSink>,
) -> Option<Box<crate::checkpoints::Checkpoints>> {
    use crate::checkpoints::{CheckpointSettings, Checkpoints, Setup};
    let (settings, warnings) = CheckpointSettings::resolve(config);
    for message in warnings {
        sink.emit(AgentEvent::Warning { message });
    }
    let path = config.environment.get("PATH");
    match Checkpoints::setup(settings, &config.agent_home, &config.workspace, path) {
        Setup::On(checkpoints) => Some(checkpoints),
        Setup::Disabled => None,
        Setup::NoGit(message) => {
            sink.emit(AgentEvent::Warning { message });
            None
        }
    }
}

/// Starts the configured MCP servers in the background (issue 17); `None` without any.
fn start_mcp(
    config: &Config,
    sink: &Arc<dyn EventSink>,
) -> Result<Option<Arc<crate::mcp::McpServers>>, Exit> {
    let settings = crate::mcp::settings::resolve(config);
    for message in &settings.warnings {
        sink.emit(AgentEvent::Warning {
            message: message.clone(),
        });
    }
    crate::mcp::McpServers::start(&settings).map_err(|error| {
        fail(&error);
        Exit::Failure
    })
}

/// AGENTS.md, skills and todos (§8), and the tools: the built-ins plus `read_skill`,
/// `write_todos` and `task`.
fn memory_and_tools(
    config: &Config,
    model: &str,
    sink: &Arc<dyn EventSink>,
) -> Result<(crate::context::Memory, Registry), Exit> {
    crate::context::ContextSettings::for_config(config, model).map_err(|message| {
        fail(&message);
        Exit::Usage
    })?;
    let memory = crate::context::Memory::load(config);
    for message in &memory.warnings {
        sink.emit(AgentEvent::Warning {
            message: message.clone(),
        });
    }
    let mut registry = Registry::builtin();
    memory.register_tools(&mut registry);
    Ok((memory, registry))
}

/// `--resume [ID]`: continues the session before anything else happens.
fn resume_requested(
    agent: &mut Agent,
) -> Result<Option<crate::agent::memory::ResumeSummary>, Exit> {
    let Some(id) = agent.config().run.resume.clone() else {
        return Ok(None);
    };
    agent
        .resume(Some(id.as_str()).filter(|id| !id.is_empty()))
        .map(Some)
        .map_err(|error| {
            fail(&error.to_string());
            Exit::Usage
        })
}

/// Warnings for the project file's `[provider]` and `trusted_workspaces`, which only the
/// user file may set: they are ignored, trusted or not, but never silently.
fn user_only_warnings(config: &Config) -> Vec<String> {
    let project = &config.project;
    let file = config.project_file();
    let user_file = config.user_file();
    let mut warnings = Vec::new();
    if project.provider != crate::config::file::ProviderSection::default() {
        warnings.push(format!(
            "ignoring [provider] in the project config {}: only {} may set it; move it there",
            file.display(),
            user_file.display()
        ));
    }
    if !project.trusted_workspaces.is_empty() {
        warnings.push(format!(
            "ignoring trusted_workspaces in the project config {}: only {} may set it; run \
             `agent trust` in a workspace to trust it",
            file.display(),
            user_file.display()
        ));
    }
    warnings
}

/// `[provider]` from the user config (never the project file; see
/// [`crate::model::settings`]).
///
/// # Errors
/// [`ConfigError::Invalid`] naming the key and the bad value.
pub fn provider_settings(config: &Config) -> Result<ProviderSettings, ConfigError> {
    ProviderSettings::from_section(&config.user.provider).map_err(ConfigError::Invalid)
}
