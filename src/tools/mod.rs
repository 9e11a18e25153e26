//! Tools the model can call, and the defensive dispatcher in front of them (SPEC §4).
//!
//! A [`Tool`] declares its schema ([`ToolSpec`]), says what it will touch ([`Access`]) so the
//! permission engine can rate it before anything runs, and runs synchronously (the inner loop
//! calls it from a blocking context; long-running tools poll [`ToolContext::cancel`]).
//! Failures are [`ToolError`]s that become the tool result text; they never end the session.

mod atomic;
pub mod bash;
pub mod dispatch;
pub mod edit;
pub mod files;
mod guards;
mod indent;
mod listing;
mod matching;
pub mod paths;
pub mod registry;
pub mod schema;
pub mod skills;
pub(crate) mod textfile;
pub mod todos;
pub mod tracker;

use std::path::{Path, PathBuf};

pub use dispatch::{DispatchOutcome, Dispatcher};
pub use files::FileTracker;
pub use registry::Registry;

use crate::cancel::CancelToken;
pub use crate::model::ToolSpec;
use crate::sandbox::ExecSettings;

/// Arguments after validation against the tool's schema.
pub type Args = serde_json::Map<String, serde_json::Value>;

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
    pub text: String,
    /// Extra for the screen (not sent to the model).
    pub display: Option<ToolDisplay>,
    /// The exit code of a command that ran to its end (`bash`).
    pub exit_code: Option<i32>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            display: None,
            exit_code: None,
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
    /// A short category (`not found`, `stale file`, `no match`, `io error`, ...).
    pub kind: String,
    /// What went wrong and what to do about it.
    pub message: String,
}

impl ToolError {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            message: message.into(),
        }
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
    fn validate(&self, args: Args) -> Result<Args, String> {
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
