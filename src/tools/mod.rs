//! Tools the model can call, and the defensive dispatcher in front of them (SPEC §4).
//!
//! A [`Tool`] declares its schema ([`ToolSpec`]), says what it will touch ([`Access`]) so the
//! permission engine can rate it before anything runs, and runs synchronously (the inner loop
//! calls it from a blocking context; long-running tools poll [`ToolContext::cancel`]).
//! Failures are [`ToolError`]s that become the tool result text; they never end the session.

mod atomic;
pub(crate) mod bash;
pub(crate) mod dispatch;
pub(crate) mod edit;
pub(crate) mod files;
#[cfg(test)]
mod fixture;
mod guards;
mod indent;
mod listing;
mod matching;
pub(crate) mod paths;
pub(crate) mod policy;
pub mod registry;
pub(crate) mod schema;
pub(crate) mod textfile;
pub(crate) mod todos;
pub(crate) mod tracker;

use std::path::{Path, PathBuf};

pub use dispatch::{DispatchOutcome, Dispatcher, Toolbox};
pub use files::FileTracker;
pub use policy::{HookGate, NoPolicy, Policy, PolicyBlock};
pub use registry::Registry;

use crate::cancel::CancelToken;
pub use crate::model::ToolSpec;
use crate::sandbox::ExecSettings;

/// Arguments after validation against the tool's schema.
pub type Args = serde_json::Map<String, serde_json::Value>;

/// The string argument `key` (validated by the schema; empty when absent).
fn str_arg<'a>(args: &'a Args, key: &str) -> &'a str {
    args.get(key).and_then(|v| v.as_str()).unwrap_or("")
}

/// What a call will touch, rated by the permission engine before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Touches nothing outside the agent (todos, skills).
    None,
    /// Runs this shell command line.
    Command(String),
    /// Reads this resolved path.
    Read(PathBuf),
    /// Creates or changes this resolved path.
    Write(PathBuf),
    /// Does something the agent cannot inspect (a tool of an MCP server), described by this
    /// text: the arguments as compact JSON. Rated by the rules naming the tool; `ask` when
    /// none matches.
    Opaque(String),
}

/// Everything a tool may use while it runs.
pub struct ToolContext<'a> {
    /// Workspace root, canonical.
    pub workspace: &'a Path,
    /// Working directory for relative paths and commands, canonical.
    pub cwd: &'a Path,
    /// What the agent last read or wrote, for stale-file refusal.
    pub files: &'a FileTracker,
    /// How shell commands are run (sandbox, environment, caps).
    pub exec: &'a ExecSettings,
    /// Set when the user interrupts; long-running tools stop promptly.
    pub cancel: &'a CancelToken,
    /// Cap on the result text, in characters (§7.1).
    pub max_output_chars: usize,
    /// Told before each call runs, after its permission check (checkpoints, issue 16).
    pub before_run: Option<&'a dyn BeforeRun>,
}

/// Told about a tool call that is about to run: its permission check passed (or it needs
/// none), nothing has happened yet. The checkpoints implement it to snapshot the workspace
/// before a turn's first change; `evaluation` is the permission verdict (`None` for a call
/// with [`Access::None`]).
pub trait BeforeRun: Send + Sync {
    /// `cancel` is the turn's: long work here stops when the user interrupts.
    fn before_run(
        &self,
        tool: &str,
        access: &Access,
        evaluation: Option<&crate::permissions::Evaluation>,
        cancel: &CancelToken,
    );
}

/// A successful result.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolOutput {
    /// The text the model receives.
    pub(crate) text: String,
    /// Extra for the screen (not sent to the model).
    pub(crate) display: Option<ToolDisplay>,
    /// The exit code of a command that ran to its end (`bash`).
    pub(crate) exit_code: Option<i32>,
    /// The file a file tool wrote (`write_file`, `str_replace`).
    pub(crate) wrote: Option<Wrote>,
}

/// A file a tool call wrote, as the tool resolved it: the key of its entry in the
/// [`FileTracker`], so what runs after the call (a `PostToolUse` hook) can be compared with
/// what the tool left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrote {
    /// The resolved path ([`paths::Resolved::real`]).
    pub(crate) real: std::path::PathBuf,
    /// The path as the model gave it, for messages.
    pub(crate) shown: String,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            display: None,
            exit_code: None,
            wrote: None,
        }
    }
}

/// Rich output for the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolDisplay {
    /// A file edit: the file's text before and after (lossy UTF-8).
    Diff {
        path: String,
        before: String,
        after: String,
    },
}

/// A tool failure, reported to the model as `Error: <tool> failed - <kind>: <message>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct ToolError {
    pub(crate) kind: ToolErrorKind,
    /// What went wrong and what to do about it.
    pub(crate) message: String,
}

impl ToolError {
    pub(crate) fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// What kind of failure a [`ToolError`] is. Its name starts the result text, so the model
/// (and a reader of the session) sees the category before the details.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolErrorKind {
    /// An argument the tool cannot use (an empty `prompt`, a bad `offset`).
    InvalidInput,
    /// A path that is empty, malformed or names something no tool may touch.
    InvalidPath,
    /// A `str_replace` that would not change anything or cannot be applied.
    InvalidEdit,
    /// A todo list that breaks the `write_todos` rules.
    InvalidTodos,
    /// The file, directory or skill does not exist.
    NotFound,
    /// A file edited before it was read.
    NotRead,
    /// A file changed on disk since it was last read.
    StaleFile,
    /// A file without write permission.
    ReadOnly,
    /// A path that leaves the workspace through a symlink.
    OutsideWorkspace,
    /// A file tool given a directory where it needs a file.
    IsDirectory,
    /// A device, socket or pipe.
    NotRegularFile,
    /// A file that is not text.
    BinaryFile,
    /// A file over the size the tool handles.
    TooLarge,
    /// `old_str` is not in the file.
    NoMatch,
    /// `old_str` is in the file more than once.
    MultipleMatches,
    /// Reading or writing failed.
    Io,
    /// The shell could not be started.
    CannotStartShell,
    /// The sandbox is required and the command cannot be confined.
    SandboxRequired,
    /// The sandbox could not be applied; the command did not run.
    SandboxFailed,
    /// A subagent ended without an answer.
    Subagent,
    /// The user interrupted.
    Interrupted,
    /// A budget ran out.
    Budget,
    /// The same call with the same result, again.
    Repeating,
    /// The tool cannot work here (no async runtime, no parent for a subagent, an MCP server
    /// that is not ready).
    Unavailable,
    /// An MCP server answered the call with a protocol error.
    McpError,
    /// An MCP server stopped during the call.
    ServerStopped,
    /// An MCP tool call took longer than the server's `tool_timeout_sec`.
    Timeout,
    /// An MCP tool reported that it failed (`isError`).
    ToolFailed,
}

impl ToolErrorKind {
    /// The category as the model reads it (`not found`, `stale file`, ...).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::InvalidInput => "invalid input",
            Self::InvalidPath => "invalid path",
            Self::InvalidEdit => "invalid edit",
            Self::InvalidTodos => "invalid todos",
            Self::NotFound => "not found",
            Self::NotRead => "not read",
            Self::StaleFile => "stale file",
            Self::ReadOnly => "read-only",
            Self::OutsideWorkspace => "outside workspace",
            Self::IsDirectory => "is a directory",
            Self::NotRegularFile => "not a regular file",
            Self::BinaryFile => "binary file",
            Self::TooLarge => "too large",
            Self::NoMatch => "no match",
            Self::MultipleMatches => "multiple matches",
            Self::Io => "io error",
            Self::CannotStartShell => "cannot start shell",
            Self::SandboxRequired => "sandbox required",
            Self::SandboxFailed => "sandbox failed",
            Self::Subagent => "subagent",
            Self::Interrupted => "interrupted",
            Self::Budget => "budget",
            Self::Repeating => "repeating",
            Self::Unavailable => "unavailable",
            Self::McpError => "MCP error",
            Self::ServerStopped => "server stopped",
            Self::Timeout => "timeout",
            Self::ToolFailed => "tool error",
        }
    }
}

impl std::fmt::Display for ToolErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// Name, description and argument schema, as offered to the model.
    fn spec(&self) -> &ToolSpec;

    /// Checks the arguments against the tool's schema (§4.2 step 3), applying the lenient
    /// coercions; the default is our schema subset ([`schema::validate`]).
    ///
    /// # Errors
    /// Which field is wrong and what was expected, for `Error: wrong arguments for ...`.
    fn validate(&self, args: Args) -> Result<Args, schema::SchemaError> {
        schema::validate(args, &self.spec().parameters)
    }

    /// What the call will touch. Called after schema validation, before permissions.
    ///
    /// # Errors
    /// A [`ToolError`] when the arguments name something the tool refuses outright (a path
    /// that resolves outside the workspace through a symlink); nothing runs then.
    fn access(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Access, ToolError>;

    /// Runs the call. Blocking; may take as long as the tool's own timeout.
    ///
    /// # Errors
    /// A [`ToolError`] describing the failure for the model.
    fn run(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError>;
}
