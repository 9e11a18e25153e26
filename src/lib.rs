//! `agent`: a terminal coding agent for any OpenAI-compatible chat-completions endpoint.
//!
//! The model only produces text; this crate is everything else: the outer input loop
//! ([`repl`], [`oneshot`]) around the inner model↔tool loop ([`agent`]), the tool registry and
//! defensive dispatcher ([`tools`]), the allow / ask / deny rule engine ([`permissions`]), the
//! kernel sandbox for shell commands ([`sandbox`]), the workspace checkpoints behind `/undo`
//! ([`checkpoints`]), and the model client ([`model`]).
//!
//! The behaviour contract is SPEC.md (sections cited as §N in the docs).

// A closed stdout/stderr must not panic: print with `out!`/`outln!`/`errln!` (src/ui/print.rs).
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod agent;
pub mod cancel;
pub mod checkpoints;
pub mod cli;
mod clock;
mod commands;
pub mod config;
pub mod context;
pub mod events;
mod exit;
pub mod governance;
mod mcp;
pub mod model;
mod oneshot;
pub mod permissions;
mod repl;
pub mod sandbox;
pub mod session;
mod task_input;
pub mod tools;
pub mod ui;
mod visible;

mod run;

pub use run::run;
