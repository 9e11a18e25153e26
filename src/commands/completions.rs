//! `agent completions SHELL`: the shell completion script, generated from the `clap`
//! definition in [`crate::cli`].

use std::io::Write;

use super::Outcome;
use crate::cli::Cli;
use crate::exit::Exit;

/// Writes the completion script for `shell` to stdout (a closed pipe is not an error).
///
/// # Errors
/// None; the signature is every subcommand's.
pub(crate) fn run(shell: clap_complete::Shell) -> Outcome {
    let mut command = <Cli as clap::CommandFactory>::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "agent", &mut script);
    let _ = std::io::stdout().write_all(&script);
    Ok(Exit::Done)
}
