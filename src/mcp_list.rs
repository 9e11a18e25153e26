//! `agent mcp list`: starts every configured MCP server (as a one-shot session would, waiting
//! for each to be ready or to fail), prints the servers with their state and tools, and stops
//! them. Exit status 0, or 2 for a configuration error.

use crate::cli::{McpCommand, RunArgs};
use crate::config::{Config, Environment};
use crate::exit::Exit;
use crate::mcp::McpServers;

/// Runs `agent mcp <command>`.
pub fn run(command: McpCommand, args: &RunArgs) -> Exit {
    let McpCommand::List = command;
    let config = match Config::load(args, Environment::capture()) {
        Ok(config) => config,
        Err(error) => {
            crate::run::fail(&error.to_string());
            return Exit::Usage;
        }
    };
    let settings = crate::mcp::settings::resolve(&config);
    for warning in &settings.warnings {
        crate::errln!("agent: warning: {warning}");
    }
    if settings.servers.is_empty() {
        crate::outln!(
            "no MCP servers configured; add [mcp_servers.NAME] to {}",
            config.user_file().display()
        );
        return Exit::Done;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            crate::run::fail(&format!("cannot start the async runtime: {error}"));
            return Exit::Failure;
        }
    };
    runtime.block_on(async {
        let servers = match McpServers::start(&settings) {
            Ok(Some(servers)) => servers,
            Ok(None) => return Exit::Done,
            Err(error) => {
                crate::run::fail(&error);
                return Exit::Failure;
            }
        };
        servers.wait_started().await;
        let _ = servers.take_reports();
        crate::out!("{}", servers.listing());
        servers.shutdown().await;
        Exit::Done
    })
}
