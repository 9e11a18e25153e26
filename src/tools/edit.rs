//! `str_replace`: exact, unique, encoding-preserving edits.

use serde_json::json;

use super::{Access, Args, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

pub struct StrReplaceTool {
    spec: ToolSpec,
}

impl StrReplaceTool {
    pub fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: "str_replace",
                description: "Replace an exact, unique string in a file.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "old_str": {"type": "string"},
                        "new_str": {"type": "string"},
                        "replace_all": {"type": "boolean"}
                    },
                    "required": ["path", "old_str", "new_str"]
                }),
            },
        }
    }
}

impl Tool for StrReplaceTool {
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
