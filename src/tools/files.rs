//! `read_file` and `write_file`, path resolution, and the stale-file tracker.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::json;

use super::{Access, Args, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

/// What the agent last saw of each file it read or wrote.
#[derive(Debug, Default)]
pub struct FileTracker {
    seen: Mutex<HashMap<PathBuf, u64>>,
}

pub struct ReadFileTool {
    spec: ToolSpec,
}

impl ReadFileTool {
    pub fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: "read_file",
                description: "Read a text file; returns numbered lines.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "offset": {"type": "integer", "minimum": 1},
                        "limit": {"type": "integer", "minimum": 1}
                    },
                    "required": ["path"]
                }),
            },
        }
    }
}

impl Tool for ReadFileTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &Args, _: &ToolContext<'_>) -> Result<Access, ToolError> {
        Err(ToolError::new("unavailable", "not implemented yet"))
    }

    fn run(&self, _: &Args, _: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        Err(ToolError::new("unavailable", "not implemented yet"))
    }
}

pub struct WriteFileTool {
    spec: ToolSpec,
}

impl WriteFileTool {
    pub fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: "write_file",
                description: "Create or overwrite a file with the given content.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "content": {"type": "string"}
                    },
                    "required": ["path", "content"]
                }),
            },
        }
    }
}

impl Tool for WriteFileTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &Args, _: &ToolContext<'_>) -> Result<Access, ToolError> {
        Err(ToolError::new("unavailable", "not implemented yet"))
    }

    fn run(&self, _: &Args, _: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        Err(ToolError::new("unavailable", "not implemented yet"))
    }
}
