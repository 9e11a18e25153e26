//! From arguments to an exit code: parse, pick the subcommand or the session, print the
//! error that ended it (`agent: error: ...`, the one place errors are printed) and map the
//! outcome to an exit code. Nothing here panics.
//!
//! A session is assembled here from the resolved [`Settings`]: the model client, the
//! permission engine, the governor, the tools and memory, the sandbox's execution settings,
//! the event sink and the approver; then the REPL or one-shot mode runs it.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use crate::agent::{Agent, AgentParts};
use crate::cli::{Cli, Command, RunArgs};
use crate::commands;
use crate::config::{Environment, Settings, Sources, UiSettings};
use crate::events::{AgentEvent, EventSink};
use crate::exit::{Error, Exit};
use crate::model::Client;
use crate::permissions::approval::{AlwaysYes, NoTerminal};
use crate::permissions::{Approver, PathContext, PermissionEngine};
use crate::sandbox;
use crate::ui::announce::AnnouncingApprover;
use crate::ui::approval::TerminalApprover;
use crate::ui::json::JsonSink;
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
        return guard_exit(crate::mcp::guard::main(&args[2..]));
    }
    // The guard of a stdio MCP server, likewise.
    if args
        .get(1)
        .is_some_and(|arg| arg == crate::mcp::guard::NAME)
    {
        return guard_exit(crate::mcp::guard::main(&args[2..]));
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
    let outcome = match cli.command {
        Some(Command::Check(args)) => commands::check::run(&args, &cli.run),
        Some(Command::Trust) => commands::trust::run(&cli.run),
        Some(Command::Sessions) => commands::sessions::run(&cli.run),
        Some(Command::Doctor) => commands::doctor::run(&cli.run),
        Some(Command::Mcp { command }) => commands::mcp::run(command, &cli.run),
        Some(Command::Completions { shell }) => commands::completions::run(shell),
        Some(Command::Undo(args)) => commands::undo::run(&args, &cli.run),
        Some(Command::Sandbox(args)) => {
            let args: Vec<OsString> = args.args.into_iter().map(OsString::from).collect();
            return helper_exit(sandbox::helper::main(&args));
        }
        None => session(&cli.run),
    };
    match outcome {
        Ok(exit) => exit.into(),
        Err(error) => {
            crate::errln!("agent: error: {error}");
            error.code().into()
        }
    }
}

/// The sandbox helper's exit code (it printed its own error line, if any).
fn helper_exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// The MCP guard's exit: the server's status, or why it could not start the server.
fn guard_exit(result: Result<i32, crate::mcp::guard::GuardError>) -> ExitCode {
    let code = match result {
        Ok(code) => code,
        Err(error) => {
            crate::errln!("{error}");
            error.code()
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// How the task arrives.
enum Mode {
    Interactive,
    OneShot(String),
}

/// Where the task comes from: the prompt argument (plus piped stdin, see
/// [`crate::task_input`]), else stdin when it is not a terminal
/// (read to EOF; empty is a usage error), else the interactive session.
fn task_mode(args: &RunArgs) -> Result<Mode, Error> {
    if !args.prompt.is_empty() {
        let prompt = args.prompt.join(" ");
        return match crate::task_input::extra_for_prompt(crate::task_input::stdin_kind()) {
            Ok(extra) => Ok(Mode::OneShot(crate::task_input::combine(
                &prompt,
                extra.as_deref(),
            ))),
            Err(error) => Err(Error::Usage(format!(
                "cannot read stdin: {error}; pass the input as text or redirect `</dev/null`"
            ))),
        };
    }
    if std::io::stdin().is_terminal() {
        if args.json {
            return Err(Error::Usage(
                "`--json` needs a task: pass PROMPT or pipe it on stdin".into(),
            ));
        }
        return Ok(Mode::Interactive);
    }
    let task = crate::task_input::read_all()
        .map_err(|error| Error::Usage(format!("cannot read the task from stdin: {error}")))?;
    if task.trim().is_empty() {
        return Err(Error::Usage(
            "no task given: stdin was empty; usage: agent [OPTIONS] [PROMPT]".into(),
        ));
    }
    Ok(Mode::OneShot(task))
}

/// A session: the REPL, or one task in one-shot mode.
fn session(args: &RunArgs) -> commands::Outcome {
    let mut args = args.clone();
    (args.resume, args.prompt) = crate::session::split_resume_value(args.resume, args.prompt);
    let mode = task_mode(&args)?;
    let sources = Sources::load(args.flags(), Environment::capture())?;
    let settings = Settings::resolve(&sources)?;
    sandbox::shield_agent_process();
    let namespaces = sandbox::settings::NamespaceProbe::start(&settings.sandbox);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| Error::Failed(format!("cannot start the async runtime: {error}")))?;
    let outcome = runtime.block_on(async move {
        crate::cancel::watch_termination();
        let interactive = matches!(mode, Mode::Interactive);
        let stdout_tty = std::io::stdout().is_terminal();
        let ui = settings.ui.clone();
        let sink = make_sink(&ui, interactive, stdout_tty);
        let approver: Arc<dyn Approver> = if ui.yes {
            Arc::new(AlwaysYes)
        } else {
            match TerminalApprover::open(ui.colors.allows_color()) {
                Some(approver) => Arc::new(approver),
                None => Arc::new(NoTerminal),
            }
        };
        let approver = Arc::new(AnnouncingApprover::new(approver, Arc::clone(&sink)));
        let mut agent = build_agent(settings, Arc::clone(&sink), approver, namespaces)?;
        let exit = match mode {
            Mode::Interactive => crate::repl::run(&mut agent, &ui).await,
            Mode::OneShot(task) => {
                // The tools a script relies on are there for its first request.
                if let Some(mcp) = agent.mcp() {
                    mcp.wait_started().await;
                }
                agent.report_mcp();
                let exit = crate::oneshot::run(&mut agent, &task, !stdout_tty && !ui.json).await;
                agent.report_mcp();
                exit
            }
        };
        agent.end_hooks(if matches!(exit, Exit::Interrupted) {
            "other"
        } else {
            "exit"
        });
        if let Some(mcp) = agent.mcp() {
            mcp.shutdown().await;
        }
        Ok(exit)
    });
    crate::cancel::exit_if_terminated();
    outcome
}

/// `--json`: JSON lines on stdout. Otherwise text: at the REPL everything on stdout; one-shot
/// keeps stdout for the final answer (streamed there only when it is a terminal) and sends
/// the rest to stderr (§3.3). The text sink notifies (bell, desktop) when its activity
/// stream is a terminal; JSON never does.
fn make_sink(ui: &UiSettings, interactive: bool, stdout_tty: bool) -> Arc<dyn EventSink> {
    if ui.json {
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
    let sink = TerminalSink::new(text_target, activity, ui.colors);
    sink.enable_notifications(ui);
    Arc::new(sink)
}

/// Builds the session's agent from `settings`, showing the warnings of each part as it goes.
fn build_agent(
    settings: Settings,
    sink: Arc<dyn EventSink>,
    approver: Arc<dyn Approver>,
    namespaces: sandbox::settings::NamespaceProbe,
) -> Result<Agent, Error> {
    let warn = |messages: Vec<String>| {
        for message in messages {
            sink.emit(AgentEvent::Warning { message });
        }
    };
    let model = settings.endpoint.model.clone();
    let client = Client::new(settings.endpoint, settings.provider)?;
    let (permissions, warnings) =
        PermissionEngine::from_settings(&settings.permissions, PathContext::from(&settings.paths));
    warn(warnings);
    warn(settings.warnings);
    let governance = crate::governance::setup(&settings.governance, &model, Arc::clone(&sink))?;
    warn(governance.warnings);
    warn(settings.hooks.warnings.clone());
    governance
        .governor
        .set_hooks(crate::governance::hooks::Hooks::new(settings.hooks));
    let memory = crate::context::Memory::load(&settings.paths);
    warn(memory.warnings.clone());
    let registry = crate::agent::memory::session_tools(&memory);
    let sandbox = sandbox::settings::resolve(&settings.sandbox, &settings.paths, namespaces)?;
    let banner = sandbox::settings::banner(&sandbox.exec, &settings.sandbox.env_names);
    warn(settings.mcp.warnings.clone());
    let mcp =
        crate::mcp::McpServers::start(&settings.mcp).map_err(|e| Error::Failed(e.to_string()))?;
    let checkpoints = checkpoints(settings.checkpoints, &settings.paths, &sink);
    let mut agent = Agent::new(AgentParts {
        paths: settings.paths,
        client,
        registry,
        permissions,
        approver,
        sink: Arc::clone(&sink),
        exec: sandbox.exec,
        context: settings.context,
        loop_settings: settings.loop_settings,
    });
    agent.set_memory(memory);
    agent.set_governor(governance.governor);
    if let Some(mcp) = mcp {
        agent.set_mcp(mcp);
    }
    if let Some(checkpoints) = checkpoints {
        agent.set_checkpoints(Arc::from(checkpoints));
    }
    let resumed = match settings.resume {
        Some(id) => Some(agent.resume(Some(id.as_str()).filter(|id| !id.is_empty()))?),
        None => None,
    };
    sink.emit(AgentEvent::SessionStarted {
        session_id: agent.session_id(),
        model,
        workspace: agent.paths().workspace.clone(),
        sandbox: banner,
        coach: agent.coach_status().line(),
    });
    warn(sandbox.warnings);
    agent.start_hooks(if resumed.is_some() {
        "resume"
    } else {
        "startup"
    });
    if let Some(summary) = resumed {
        sink.emit(AgentEvent::Notice {
            message: agent.resume_notice(&summary),
        });
    }
    Ok(agent)
}

/// The workspace's checkpoints (issue 16), unless they are off; a warning says why when
/// `git` is missing, another when the project file tried to set them.
fn checkpoints(
    settings: crate::config::CheckpointSettings,
    paths: &crate::config::Paths,
    sink: &Arc<dyn EventSink>,
) -> Option<Box<crate::checkpoints::Checkpoints>> {
    use crate::checkpoints::{Checkpoints, Setup};
    for message in settings.warnings.clone() {
        sink.emit(AgentEvent::Warning { message });
    }
    match Checkpoints::setup(settings, &paths.agent_home, &paths.workspace) {
        Setup::On(checkpoints) => Some(checkpoints),
        Setup::Disabled => None,
        Setup::NoGit(message) => {
            sink.emit(AgentEvent::Warning { message });
            None
        }
    }
}
