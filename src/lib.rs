//! `agent`: a terminal coding agent for any OpenAI-compatible chat-completions endpoint.
//!
//! The model only produces text; this crate is everything else: the outer input loop
//! ([`repl`], [`oneshot`]) around the inner model↔tool loop ([`agent`]), the tool registry and
//! defensive dispatcher ([`tools`]), the allow / ask / deny rule engine ([`permissions`]), the
//! kernel sandbox for shell commands ([`sandbox`]), and the model client ([`model`]).
//!
//! The behaviour contract is SPEC.md (sections cited as §N in the docs).

// A closed stdout/stderr must not panic: print with `out!`/`outln!`/`errln!` (src/ui/print.rs).
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod agent;
pub mod cancel;
pub mod checkpoints;
pub mod cli;
pub mod config;
pub mod context;
pub mod doctor;
pub mod exit;
pub mod governance;
pub mod mcp;
pub mod mcp_list;
pub mod model;
pub mod oneshot;
pub mod permissions;
pub mod repl;
pub mod sandbox;
pub mod session;
pub mod task_input;
pub mod tools;
pub mod ui;
pub mod undo;

mod run;

pub use run::run;
