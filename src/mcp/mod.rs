//! The MCP client (issue 17): tools from Model Context Protocol servers, over stdio and
//! streamable HTTP, offered to the model as `mcp__<server>__<tool>`.
//!
//! - `[mcp_servers.NAME]` (Codex's keys) → what to start is resolved in
//!   [`crate::config::mcp`] (project servers only in a trusted workspace).
//! - [`McpServers`]: starts every enabled server in parallel in the background and is the
//!   registry's [`ToolSource`]: a server's tools join from the first request after it is
//!   ready. A one-shot run waits ([`McpServers::wait_started`]) so its first request has
//!   them; the REPL does not wait.
//! - [`server`]: one server's life (failed starts, restarts after a crash, timeouts,
//!   cancellation); [`process`] and [`guard`]: stdio servers never outlive the agent.
//! - [`tool`], [`schema`], [`content`], [`names`]: what the dispatcher, the permission rules
//!   and the model see.
//! - [`connection`]: the only file that uses the `rmcp` crate.
//!
//! With no `[mcp_servers]` nothing here runs: no thread, no task, no change to any request.

pub(crate) mod connection;
pub(crate) mod content;
pub(crate) mod guard;
pub(crate) mod names;
pub(crate) mod process;
pub(crate) mod schema;
pub(crate) mod server;
pub(crate) mod tool;

use std::sync::Arc;

pub(crate) use crate::config::mcp::McpSettings;
pub(crate) use server::{Report, State};

use crate::tools::Tool;
use crate::tools::registry::ToolSource;
use server::Server;

/// Why an MCP server could not be started, reached or used, in a few words (the server
/// closed the pipe, a header is not valid, no answer in time); shown as the server's state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct McpError(pub(crate) String);

impl From<String> for McpError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for McpError {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

/// Characters of a tool description shown in listings.
const LISTED_DESCRIPTION: usize = 70;

/// A server at a glance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    pub(crate) name: String,
    pub(crate) state: State,
    /// [`crate::config::mcp::Transport::describe`].
    pub(crate) transport: String,
    /// Tools offered.
    pub(crate) tools: usize,
}

/// The configured servers of a session.
pub(crate) struct McpServers {
    servers: Vec<Arc<Server>>,
    /// How many servers are still starting.
    starting: tokio::sync::watch::Receiver<usize>,
    /// The start-up tasks, stopped by [`McpServers::shutdown`] (the session may end while a
    /// server is still starting).
    starts: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl McpServers {
    /// Starts every enabled server of `settings` in the background, in parallel; `None`
    /// when no server is configured (then nothing at all is started). Must be called inside
    /// a Tokio runtime.
    ///
    /// # Errors
    /// When the thread that starts stdio servers cannot be created.
    pub(crate) fn start(settings: &McpSettings) -> Result<Option<Arc<Self>>, McpError> {
        if settings.servers.is_empty() {
            return Ok(None);
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|e| e.to_string())?;
        let spawner = Arc::new(
            process::Spawner::new(runtime).map_err(|e| format!("cannot start MCP servers: {e}"))?,
        );
        let interner = Arc::new(tool::Interner::default());
        let servers: Vec<Arc<Server>> = settings
            .servers
            .iter()
            .map(|s| Server::new(s.clone(), Arc::clone(&spawner), Arc::clone(&interner)))
            .collect();
        let enabled: Vec<Arc<Server>> = servers
            .iter()
            .filter(|s| s.settings.enabled)
            .cloned()
            .collect();
        let (left, starting) = tokio::sync::watch::channel(enabled.len());
        let left = Arc::new(left);
        let starts = enabled
            .into_iter()
            .map(|server| {
                let left = Arc::clone(&left);
                tokio::spawn(async move {
                    server.start().await;
                    left.send_modify(|n| *n = n.saturating_sub(1));
                })
            })
            .collect();
        Ok(Some(Arc::new(Self {
            servers,
            starting,
            starts: std::sync::Mutex::new(starts),
        })))
    }

    /// Waits until every enabled server is ready or has failed (each within its
    /// `startup_timeout_sec`).
    pub(crate) async fn wait_started(&self) {
        let mut starting = self.starting.clone();
        let _ = starting.wait_for(|n| *n == 0).await;
    }

    /// Names of the servers still starting.
    pub(crate) fn starting_names(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter(|s| s.state() == State::Starting)
            .map(|s| s.settings.name.clone())
            .collect()
    }

    /// What happened since the last call (ready, failed, stopped, restarted), oldest first
    /// per server.
    pub(crate) fn take_reports(&self) -> Vec<Report> {
        self.servers.iter().flat_map(|s| s.take_reports()).collect()
    }

    /// One summary per server, in name order (for `agent doctor`).
    pub(crate) fn summaries(&self) -> Vec<Summary> {
        self.servers
            .iter()
            .map(|s| Summary {
                name: s.settings.name.clone(),
                state: s.state(),
                transport: s.settings.transport.describe(),
                tools: s.tool_lines().len(),
            })
            .collect()
    }

    /// Servers, their state and their tools, for `/mcp` and `agent mcp list`.
    pub(crate) fn listing(&self) -> String {
        let width = self
            .servers
            .iter()
            .map(|s| s.settings.name.len())
            .max()
            .unwrap_or(0);
        let mut text = String::from("MCP servers:\n");
        for server in &self.servers {
            let state = server.state();
            text.push_str(&format!(
                "  {:<width$}  {:<8}  {}\n",
                server.settings.name,
                state.word(),
                server.settings.transport.describe()
            ));
            match &state {
                State::Failed(reason) | State::Stopped(reason) => {
                    text.push_str(&format!("      {reason}\n"));
                }
                _ => {}
            }
            if matches!(state, State::Ready | State::Stopped(_)) {
                let lines = server.tool_lines();
                if lines.is_empty() {
                    text.push_str("      (no tools)\n");
                }
                let name_width = lines.iter().map(|l| l.offered.len()).max().unwrap_or(0);
                for line in lines {
                    text.push_str(&format!(
                        "      {:<name_width$}  {}\n",
                        line.offered,
                        first_line(&line.description)
                    ));
                }
            }
        }
        text
    }

    /// Stops every server: one still starting stops starting; then stdin is closed, and
    /// SIGTERM and SIGKILL go to what is left; HTTP sessions are ended.
    pub(crate) async fn shutdown(&self) {
        let starts = match self.starts.lock() {
            Ok(mut starts) => std::mem::take(&mut *starts),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        for start in starts {
            start.abort();
            let _ = start.await;
        }
        let stops = self.servers.iter().map(|s| s.shutdown());
        futures_util::future::join_all(stops).await;
    }
}

impl ToolSource for McpServers {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.servers.iter().flat_map(|s| s.tools()).collect()
    }
}

/// The first line of `text`, cut to [`LISTED_DESCRIPTION`] characters.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(LISTED_DESCRIPTION) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}
