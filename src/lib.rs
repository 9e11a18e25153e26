//! `agent`: a terminal coding agent for any OpenAI-compatible chat-completions endpoint.
//!
//! The model only produces text; this crate is everything else. The behaviour contract is
//! SPEC.md (sections cited as §N in the docs).
//!
//! # Layers
//!
//! Dependencies run one way, top to bottom: a module may use its own layer and the layers
//! below it, never one above, and no two top-level modules form a cycle (nor do the files
//! inside a module). `tests/suite/architecture.rs` reads every `crate::`/`super::` path under
//! `src/` and fails `cargo test` (and so CI) when a cycle or an upward import appears; it
//! also enforces the "nevers": the loop (`agent`) knows no terminal (nothing of `cli`, `ui`,
//! `exit`, `repl`, `oneshot`), `permissions`, `tools`, `sandbox` and `model` import nothing of
//! `cli`, `ui` or `exit`, and only the face uses the terminal and command-line crates
//! (`crossterm`, `rustyline`, `clap`).
//!
//! | layer | modules | owns |
//! |---|---|---|
//! | face | `run`, `commands`, `cli`, `repl`, `oneshot`, [`ui`], `task_input`, `exit` | arguments ([`cli`]), assembling a session and printing the one error line ([`run()`]), subcommands (`check`, `trust`, `doctor`, `sessions`, `mcp`, `completions`, each returning an error that knows its exit code), the REPL and one-shot outer loops, rendering and the approval prompt, exit codes |
//! | agent loop | [`agent`] | one session's state ([`agent::Agent`]) and the inner model↔tool loop ([`agent::turn::run`]); prompts, the coach for small models, subagents |
//! | context, governance, session, checkpoints, MCP | [`context`], [`governance`], [`session`], `checkpoints`, `mcp` | pruning, compaction and the context window (through a narrow `ModelAccess` in `context/compact.rs`, not the loop); roles, budgets and the event log (the [`governance::Governor`], which the loop sees only as a [`tools::Policy`]); the session file and resume; snapshots of the workspace in a shadow git repository before a turn's first change, behind `/undo` and `/rewind`; MCP servers as a tool source |
//! | events | [`events`] | [`events::AgentEvent`], everything the face is told, and [`events::EventSink`], the one way it is told |
//! | tools | [`tools`] | the [`tools::Tool`] trait, the registry, the file and shell tools, the defensive dispatcher and the [`tools::Policy`] seam |
//! | permissions, sandbox, model | [`permissions`], [`sandbox`], [`model`] | the allow / ask / deny rule engine over parsed shell commands and paths; Landlock, seccomp and namespaces around each shell command and its bounded capture; the HTTP client, SSE parsing and the wire format |
//! | config | [`config`] | the only reader of flags, environment, env file, user and project config and the trust list; it resolves them once into [`config::Settings`], whose typed parts (endpoint, provider, permissions, sandbox, context, governance, loop, MCP, UI) each other module receives |
//! | leaves | [`cancel`], `clock`, `visible` | the cancellation flag and the `INTERRUPTED` result text, calendar dates, making invisible characters visible |
//!
//! # The life of a tool call
//!
//! 1. **Asked for.** [`agent::turn::run`] builds the request (`build_request`: system
//!    prompt, history, the registry's tool schemas) and calls the model
//!    ([`model::Client::complete`]).
//! 2. **Parsed.** The reply streams through [`model::sse::SseParser`] into
//!    [`model::accumulate::Accumulator`], which folds the tool-call fragments into whole
//!    [`model::types::ToolCall`]s; a call a weak model wrote as text is recognised by
//!    [`model::text_calls::extract`] (in `Client::completion`). Back in the loop, arguments
//!    are repaired where they can be (`model::types::sanitize_arguments`), the assistant
//!    message is appended to the history, and `dispatch_all` takes the calls in order.
//! 3. **Checked.** [`tools::Dispatcher::dispatch`] parses the arguments as a JSON
//!    object and checks them against the tool's schema (`Tool::validate`); an unknown tool
//!    or bad arguments become an error result, never a crash.
//! 4. **Permitted.** The governance policy first ([`tools::Policy::check`]: may this role
//!    use this tool, is the budget left), then the rule engine (`Dispatcher::authorize`): the
//!    tool says what it will touch ([`tools::Access`]), and
//!    [`permissions::PermissionEngine::check_bash`] parses a command with tree-sitter-bash
//!    ([`permissions::shell`]) and rates every command it would run, or `check_file` rates a
//!    resolved path. `deny` answers "Blocked by policy"; `ask` goes to the
//!    [`permissions::approval::Approver`] (the terminal prompt in [`ui`], or `--yes`).
//! 5. **Sandboxed and run.** The tool runs (`Tool::run`, under `catch_unwind`). For `bash`,
//!    `tools/bash.rs` hands a [`sandbox::exec::Job`] to [`sandbox::exec::run`], which starts
//!    `agent __sandbox … -- bash -c CMD` (`sandbox/helper.rs`): the helper enters namespaces
//!    and mounts (`sandbox/namespaces.rs`), supervises the command as their init
//!    (`sandbox/supervise.rs`), applies Landlock and seccomp (`sandbox/linux.rs`,
//!    `sandbox/seccomp.rs`) and execs the shell; `exec::run` captures head and tail of the
//!    output within the budget, with a timeout and Ctrl-C ([`cancel`]).
//! 6. **Answered.** The output, capped to the context budget, is the call's
//!    [`tools::DispatchOutcome`]; the policy settles spending
//!    ([`tools::Policy::after_tool`]), and `dispatch_all` appends exactly one tool result
//!    ([`model::types::Message::tool_result`]) per call, also for calls skipped after
//!    Ctrl-C or an exhausted budget. The session file records it ([`session`]), the face
//!    shows it (an [`events::AgentEvent`]), and the loop asks the model again.
//!
//! Start reading at [`run()`] (from arguments to a session), then [`agent::turn::run`].

// These docs are for the crate's developers and link to its private items (most are
// `pub(crate)`): read them with `cargo doc --no-deps --document-private-items`. Broken links
// still warn.
#![allow(rustdoc::private_intra_doc_links)]
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
