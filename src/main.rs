//! The `agent` binary: parse arguments, run, map the outcome to an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    agent::run(std::env::args_os().collect())
}
