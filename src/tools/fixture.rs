//! A temporary workspace and tool context for the file tools' unit tests.

use std::path::PathBuf;

use serde_json::Value;

use super::FileTracker;
use super::ToolErrorKind;
use crate::cancel::CancelToken;
use crate::sandbox::ExecSettings;
use crate::tools::{Access, Tool, ToolContext, ToolError, ToolOutput, schema};

pub(crate) struct Fixture {
    _root: tempfile::TempDir,
    pub(crate) ws: PathBuf,
    pub(crate) outside: PathBuf,
    pub(crate) files: FileTracker,
    pub(crate) max_output_chars: usize,
    exec: ExecSettings,
    cancel: CancelToken,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let ws = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        Self {
            _root: root,
            ws,
            outside,
            files: FileTracker::default(),
            max_output_chars: 30_000,
            exec: ExecSettings::default(),
            cancel: CancelToken::new(),
        }
    }

    pub(crate) fn ctx(&self) -> ToolContext<'_> {
        ToolContext {
            workspace: &self.ws,
            cwd: &self.ws,
            files: &self.files,
            exec: &self.exec,
            cancel: &self.cancel,
            max_output_chars: self.max_output_chars,
            before_run: None,
        }
    }

    /// Writes `bytes` to `relative` in the workspace (behind the agent's back).
    pub(crate) fn put(&self, relative: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.ws.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    pub(crate) fn get(&self, relative: &str) -> Vec<u8> {
        std::fs::read(self.ws.join(relative)).unwrap()
    }

    /// Validates `args`, asks `access`, then runs: the dispatcher's path minus permissions.
    pub(crate) fn call(&self, tool: &dyn Tool, args: Value) -> Result<ToolOutput, ToolError> {
        let Value::Object(args) = args else {
            panic!("arguments must be an object")
        };
        let args = schema::validate(args, &tool.spec().parameters)
            .map_err(|m| ToolError::new(ToolErrorKind::InvalidInput, m.0))?;
        let ctx = self.ctx();
        tool.access(&args, &ctx)?;
        tool.run(&args, &ctx)
    }

    pub(crate) fn access(&self, tool: &dyn Tool, args: Value) -> Result<Access, ToolError> {
        let Value::Object(args) = args else {
            panic!("arguments must be an object")
        };
        tool.access(&args, &self.ctx())
    }

    /// The text of a call that must succeed.
    pub(crate) fn ok(&self, tool: &dyn Tool, args: Value) -> String {
        match self.call(tool, args) {
            Ok(out) => out.text,
            Err(e) => panic!("expected success, got {e}"),
        }
    }

    /// The error message of a call that must fail.
    pub(crate) fn fail(&self, tool: &dyn Tool, args: Value) -> ToolError {
        match self.call(tool, args) {
            Ok(out) => panic!("expected an error, got {:?}", out.text),
            Err(e) => e,
        }
    }
}
