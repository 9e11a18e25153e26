//! `agent mcp list`: starts every configured MCP server (as a one-shot session would, waiting
//! for each to be ready or to fail), prints the servers with their state and tools, and stops
//! them. Exit status 0, or 2 for a configuration error.

use super::Outcome;
use crate::cli::{McpCommand, RunArgs};
use crate::config::McpSettings;
use crate::exit::{Error, Exit};
use crate::mcp::McpServers;

/// Runs `agent mcp <command>`.
///
/// # Errors
/// [`Error::Config`] when the configuration cannot be read, [`Error::Failed`] when the
/// async runtime or the servers' starter cannot start.
pub(crate) fn run(command: McpCommand, args: &RunArgs) -> Outcome {
    let McpCommand::List = command;
    let sources = super::sources(args)?;
    let settings = McpSettings::resolve(&sources);
    for warning in &settings.warnings {
        crate::errln!("agent: warning: {warning}");
    }
    if settings.servers.is_empty() {
        crate::outln!(
            "no MCP servers configured; add [mcp_servers.NAME] to {}",
            sources.paths.user_file().display()
        );
        return Ok(Exit::Done);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|error| Error::Failed(format!("cannot start the async runtime: {error}")))?;
    runtime.block_on(async {
        let Some(servers) =
            McpServers::start(&settings).map_err(|e| Error::Failed(e.to_string()))?
        else {
            return Ok(Exit::Done);
        };
        servers.wait_started().await;
        let _ = servers.take_reports();
        crate::out!("{}", servers.listing());
        servers.shutdown().await;
        Ok(Exit::Done)
    })
}
