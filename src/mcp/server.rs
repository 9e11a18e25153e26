//! One configured MCP server: its life (starting, ready, failed, stopped, restarted) and its
//! calls.
//!
//! States and what the model sees:
//! - `starting`: not offered yet; `ready`: its tools are offered;
//! - `failed` (could not start, or a restart failed): not offered, and not tried again;
//! - `stopped` (died, mid-call or idle): still offered; the next call restarts it once
//!   (within `startup_timeout_sec`) and goes on if that worked, else the server is `failed`;
//! - `disabled` (`enabled = false`): listed, never started.
//!
//! A call races the answer against Ctrl-C and `tool_timeout_sec`; an abandoned call is
//! cancelled on the server (`notifications/cancelled`). Every change worth telling
//! the user is queued as a [`Report`], shown by the face at a moment that does not disturb
//! the prompt.

use super::McpError;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use super::connection::{Called, Caller, Connection, RemoteTool, RequestError, Stop};
use super::content::{self, Rendered};
use super::process::{ServerProcess, Spawner};
use super::tool::{Interner, McpTool, Remote};
use crate::cancel::CancelToken;
use crate::config::mcp::{ServerSettings, Transport};
use crate::tools::{Args, Tool, ToolError, ToolErrorKind};

/// How long a closing server may take to exit after its stdin closed (then SIGTERM, again,
/// then SIGKILL).
const STOP_GRACE: Duration = Duration::from_millis(1000);

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State {
    Disabled,
    Starting,
    Ready,
    /// Could not start; the reason.
    Failed(String),
    /// Died after it started; restarted at the next call.
    Stopped(String),
}

impl State {
    /// One word for listings.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            State::Disabled => "disabled",
            State::Starting => "starting",
            State::Ready => "ready",
            State::Failed(_) => "failed",
            State::Stopped(_) => "stopped",
        }
    }
}

/// Something the user should be told, once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Report {
    /// A failure (a warning) rather than news (a notice).
    pub(crate) warning: bool,
    pub(crate) message: String,
}

/// A tool of the server as offered: the offered name, the server's name, the description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolLine {
    pub(crate) offered: String,
    pub(crate) description: String,
}

/// One server and its connection.
pub(crate) struct Server {
    pub(crate) settings: ServerSettings,
    spawner: Arc<Spawner>,
    interner: Arc<Interner>,
    me: Weak<Server>,
    live: tokio::sync::Mutex<Live>,
    shared: Mutex<Shared>,
}

#[derive(Default)]
struct Live {
    connection: Option<Connection>,
    process: Option<ServerProcess>,
}

struct Shared {
    state: State,
    tools: Vec<Arc<McpTool>>,
    reports: Vec<Report>,
}

impl Server {
    /// A server in its first state (`starting`, or `disabled`); [`Server::start`] starts it.
    pub(crate) fn new(
        settings: ServerSettings,
        spawner: Arc<Spawner>,
        interner: Arc<Interner>,
    ) -> Arc<Self> {
        let state = if settings.enabled {
            State::Starting
        } else {
            State::Disabled
        };
        Arc::new_cyclic(|me| Self {
            settings,
            spawner,
            interner,
            me: me.clone(),
            live: tokio::sync::Mutex::new(Live::default()),
            shared: Mutex::new(Shared {
                state,
                tools: Vec::new(),
                reports: Vec::new(),
            }),
        })
    }

    fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        match self.shared.lock() {
            Ok(shared) => shared,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub(crate) fn state(&self) -> State {
        self.shared().state.clone()
    }

    /// The tools offered now: none unless the server is ready (or stopped, to be restarted).
    pub(crate) fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let shared = self.shared();
        match shared.state {
            State::Ready | State::Stopped(_) => shared
                .tools
                .iter()
                .map(|t| Arc::clone(t) as Arc<dyn Tool>)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The offered tools with their descriptions, for listings.
    pub(crate) fn tool_lines(&self) -> Vec<ToolLine> {
        self.shared()
            .tools
            .iter()
            .map(|t| ToolLine {
                offered: t.spec().name.to_string(),
                description: t.spec().description.to_string(),
            })
            .collect()
    }

    /// Reports not yet shown, oldest first.
    pub(crate) fn take_reports(&self) -> Vec<Report> {
        std::mem::take(&mut self.shared().reports)
    }

    fn set_state(&self, state: State, report: Option<Report>) {
        let mut shared = self.shared();
        shared.state = state;
        shared.reports.extend(report);
    }

    /// Starts the server (at session start): ready with its tools, or failed with a reason.
    pub(crate) async fn start(&self) {
        if !self.settings.enabled {
            return;
        }
        let mut live = self.live.lock().await;
        match self.connect(&mut live).await {
            Ok(count) => self.set_state(
                State::Ready,
                Some(Report {
                    warning: false,
                    message: format!(
                        "MCP server `{}` ready: {}",
                        self.settings.name,
                        tools(count)
                    ),
                }),
            ),
            Err(reason) => self.set_state(
                State::Failed(reason.0.clone()),
                Some(Report {
                    warning: true,
                    message: format!(
                        "MCP server `{}` failed to start: {reason}",
                        self.settings.name
                    ),
                }),
            ),
        }
    }

    /// Connects and lists the tools within `startup_timeout_sec`; `Ok(number of tools
    /// offered)`. On failure nothing is left running.
    async fn connect(&self, live: &mut Live) -> Result<usize, McpError> {
        if let Some(problem) = &self.settings.problem {
            return Err(problem.clone().into());
        }
        let timeout = self.settings.startup_timeout;
        let result = tokio::time::timeout(timeout, self.open(live)).await;
        let outcome = match result {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(reason)) => Err(reason),
            Err(_) => Err(format!(
                "no answer within {} s (startup_timeout_sec)",
                seconds(timeout)
            )
            .into()),
        };
        match outcome {
            Ok(tools) => Ok(self.offer(tools)),
            Err(reason) => {
                let reason = self.with_process_facts(live, reason.0).await;
                if let Some(connection) = live.connection.take() {
                    connection.close(Duration::from_millis(200)).await;
                }
                Err(reason.into())
            }
        }
    }

    /// Opens the connection (starting the process for stdio) and lists the tools.
    async fn open(&self, live: &mut Live) -> Result<Vec<RemoteTool>, McpError> {
        let connection = match &self.settings.transport {
            Transport::Stdio {
                program,
                args,
                env,
                cwd,
            } => {
                let (process, pipes) =
                    ServerProcess::start(&self.spawner, program, args, env, cwd).await?;
                live.process = Some(process);
                Connection::over_pipes(pipes.stdout, pipes.stdin).await?
            }
            Transport::Http {
                url,
                headers,
                bearer_token,
            } => Connection::over_http(url, headers, bearer_token.as_deref())
                .await
                .map_err(|e| format!("cannot connect to {url}: {e}"))?,
        };
        let tools = connection.list_tools().await.map_err(|e| match e {
            RequestError::Server(m) | RequestError::Closed(m) => format!("tools/list failed: {m}"),
        })?;
        live.connection = Some(connection);
        Ok(tools)
    }

    /// Adds how the process ended and the end of its stderr to `reason`, and makes sure it
    /// is gone.
    async fn with_process_facts(&self, live: &mut Live, reason: String) -> String {
        let Some(mut process) = live.process.take() else {
            return reason;
        };
        // A server that exited explains more by how it ended than by the broken pipe.
        let exited = process.exited_within(Duration::from_millis(200)).await;
        process.stop(Duration::from_millis(200)).await;
        process.settle().await;
        let mut text = match exited {
            Some(exit) => format!("the server exited ({exit})"),
            None => reason,
        };
        if let Some(stderr) = process.stderr_tail() {
            text.push_str(&format!("; stderr: {stderr}"));
        }
        text
    }

    /// Makes the offered tools from the server's list; returns how many are offered.
    fn offer(&self, tools: Vec<RemoteTool>) -> usize {
        let kept: Vec<RemoteTool> = tools
            .into_iter()
            .filter(|t| self.settings.offers(&t.name))
            .collect();
        let names: Vec<&str> = kept.iter().map(|t| t.name.as_str()).collect();
        let offered = super::names::offered_names(&self.settings.name, &names);
        let tools: Vec<Arc<McpTool>> = kept
            .iter()
            .zip(offered)
            .map(|(remote, name)| {
                Arc::new(McpTool::new(
                    &self.interner,
                    &name,
                    remote,
                    &self.settings.name,
                    self.me.clone() as Weak<dyn Remote>,
                ))
            })
            .collect();
        let count = tools.len();
        self.shared().tools = tools;
        count
    }

    /// Calls `tool` (the server's name for it) with `args`, restarting a stopped server
    /// first.
    ///
    /// # Errors
    /// A [`ToolError`] for the model: the server is not running, it stopped during the
    /// call, the call timed out or was interrupted, or the server answered with an error.
    pub(crate) async fn call(
        &self,
        tool: &str,
        args: Args,
        cancel: &CancelToken,
    ) -> Result<Rendered, ToolError> {
        let interrupted = || {
            ToolError::new(
                ToolErrorKind::Interrupted,
                "interrupted by user (the call was cancelled on the MCP server)",
            )
        };
        // A restart may take up to `startup_timeout_sec`; Ctrl-C stops waiting for it.
        let caller = tokio::select! {
            caller = self.caller() => caller?,
            () = cancel.cancelled() => return Err(interrupted()),
        };
        let timeout = self.settings.tool_timeout;
        let stop = async {
            tokio::select! {
                () = cancel.cancelled() => Stop::Interrupted,
                () = tokio::time::sleep(timeout) => Stop::TimedOut,
            }
        };
        match caller.call(tool, args, stop).await {
            Called::Answer(Ok(json)) => Ok(content::render(&json)),
            Called::Answer(Err(RequestError::Server(message))) => {
                Err(ToolError::new(ToolErrorKind::McpError, message))
            }
            Called::Answer(Err(RequestError::Closed(message))) => Err(self.stopped(message).await),
            Called::Stopped(Stop::Interrupted) => Err(interrupted()),
            Called::Stopped(Stop::TimedOut) => Err(ToolError::new(
                ToolErrorKind::Timeout,
                format!(
                    "no answer from MCP server `{}` within {} s (tool_timeout_sec); the call \
                     was cancelled",
                    self.settings.name,
                    seconds(timeout)
                ),
            )),
        }
    }

    /// A caller for a live connection, restarting a stopped server once.
    async fn caller(&self) -> Result<Caller, ToolError> {
        let mut live = self.live.lock().await;
        let name = &self.settings.name;
        if self.state() == State::Ready {
            match &live.connection {
                Some(connection) if !connection.is_closed() => return Ok(connection.caller()),
                _ => {
                    drop(live);
                    self.stopped("the connection closed".to_string()).await;
                    live = self.live.lock().await;
                }
            }
        }
        match self.state() {
            State::Stopped(_) => {}
            State::Failed(reason) => {
                return Err(ToolError::new(
                    ToolErrorKind::Unavailable,
                    format!("MCP server `{name}` is not running: {reason}"),
                ));
            }
            State::Starting => {
                return Err(ToolError::new(
                    ToolErrorKind::Unavailable,
                    format!("MCP server `{name}` is still starting; try again in a moment"),
                ));
            }
            State::Disabled | State::Ready => {
                return Err(ToolError::new(
                    ToolErrorKind::Unavailable,
                    format!("MCP server `{name}` is not running"),
                ));
            }
        }
        match self.connect(&mut live).await {
            Ok(count) => {
                self.set_state(
                    State::Ready,
                    Some(Report {
                        warning: false,
                        message: format!("MCP server `{name}` restarted: {}", tools(count)),
                    }),
                );
                live.connection
                    .as_ref()
                    .map(Connection::caller)
                    .ok_or_else(|| ToolError::new(ToolErrorKind::Unavailable, "no connection"))
            }
            Err(reason) => {
                self.set_state(
                    State::Failed(reason.0.clone()),
                    Some(Report {
                        warning: true,
                        message: format!("MCP server `{name}` could not be restarted: {reason}"),
                    }),
                );
                Err(ToolError::new(
                    ToolErrorKind::Unavailable,
                    format!("MCP server `{name}` stopped and could not be restarted: {reason}"),
                ))
            }
        }
    }

    /// Records that the server went away (`message` says how the connection ended) and
    /// returns the error for the call that saw it.
    async fn stopped(&self, message: String) -> ToolError {
        let name = self.settings.name.clone();
        let mut live = self.live.lock().await;
        if let Some(connection) = live.connection.take() {
            connection.close(Duration::from_millis(100)).await;
        }
        let reason = self.with_process_facts(&mut live, message).await;
        self.set_state(
            State::Stopped(reason.clone()),
            Some(Report {
                warning: true,
                message: format!(
                    "MCP server `{name}` stopped: {reason}; it is restarted at the next call"
                ),
            }),
        );
        ToolError::new(
            ToolErrorKind::ServerStopped,
            format!(
                "MCP server `{name}` stopped during the call: {reason}. It is restarted at the \
                 next call to one of its tools."
            ),
        )
    }

    /// Closes the connection and stops the process (at session end).
    pub(crate) async fn shutdown(&self) {
        let mut live = self.live.lock().await;
        if let Some(connection) = live.connection.take() {
            connection.close(STOP_GRACE).await;
        }
        if let Some(mut process) = live.process.take() {
            process.stop(STOP_GRACE).await;
        }
    }
}

/// `1 tool`, `11 tools`.
fn tools(count: usize) -> String {
    format!("{count} tool{}", if count == 1 { "" } else { "s" })
}

/// `10` or `2.5`.
fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}")
    } else {
        format!("{secs}")
    }
}

impl Remote for Server {
    fn call<'a>(
        &'a self,
        name: &'a str,
        args: Args,
        cancel: &'a CancelToken,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Rendered, ToolError>> + 'a>>
    {
        Box::pin(Server::call(self, name, args, cancel))
    }
}
