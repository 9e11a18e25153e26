//! The subcommands, at the edge: each reads the settings it needs, does its job, prints its
//! own output, and returns how the run ends ([`Exit`]) or an [`Error`] that knows its exit
//! code, which [`crate::run()`] prints. None of them starts a session.
//!
//! | subcommand | module | reads |
//! |---|---|---|
//! | `agent check CMD` | [`check`] | paths, permission rules |
//! | `agent doctor` | [`doctor`] | endpoint, `[provider]`, `[model]`, MCP servers |
//! | `agent mcp list` | [`mcp`] | MCP servers |
//! | `agent sessions` | [`sessions`] | paths |
//! | `agent trust` | [`trust`] | paths, the project's rules |
//! | `agent undo [--list]` | [`undo`] | paths, `[checkpoints]` |
//! | `agent completions SHELL` | [`completions`] | nothing |

pub(crate) mod check;
pub(crate) mod completions;
pub(crate) mod doctor;
pub(crate) mod mcp;
pub(crate) mod sessions;
pub(crate) mod trust;
pub(crate) mod undo;

use crate::cli::RunArgs;
use crate::config::{Environment, Sources};
use crate::exit::{Error, Exit};

/// The raw sources for `args` and the real process environment.
///
/// # Errors
/// [`Error::Config`] when a config file or the env file cannot be read or parsed.
pub(crate) fn sources(args: &RunArgs) -> Result<Sources, Error> {
    Ok(Sources::load(args.flags(), Environment::capture())?)
}

/// What every subcommand returns.
pub(crate) type Outcome = Result<Exit, Error>;
