//! The `bash` tool: runs a command line through [`crate::sandbox::exec`].

use std::time::Duration;

use serde_json::json;

use super::{Access, Args, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
use crate::sandbox::exec::{self, Ending};

/// Longest timeout a call may ask for, in seconds (§4.1).
pub const MAX_TIMEOUT_SECS: u64 = 600;

pub struct BashTool {
    spec: ToolSpec,
}

impl BashTool {
    pub fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: "bash",
                description: "Run a shell command in the workspace and return its output \
                    (stdout and stderr). Non-interactive: stdin is empty, no pager or editor.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "command": {"type": "string", "description": "The command line"},
                        "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_SECS,
                            "description": "Seconds before it is killed (default 60)"}
                    },
                    "required": ["command"]
                }),
            },
        }
    }
}

impl Default for BashTool {
    fn default() -> Self {
        Self::new()
    }
}

fn command(args: &Args) -> &str {
    args.get("command").and_then(|v| v.as_str()).unwrap_or("")
}

impl Tool for BashTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &Args, _: &ToolContext<'_>) -> Result<Access, ToolError> {
        Ok(Access::Command(command(args).to_string()))
    }

    fn run(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let command = command(args);
        if command.trim().is_empty() {
            return Err(ToolError::new("invalid input", "`command` is empty"));
        }
        let timeout = args
            .get("timeout")
            .and_then(serde_json::Value::as_u64)
            .map_or(ctx.exec.default_timeout, Duration::from_secs);
        let outcome = exec::run(
            command,
            ctx.cwd,
            timeout,
            ctx.exec,
            ctx.max_output_chars,
            ctx.cancel,
        )
        .map_err(|e| ToolError::new("cannot start shell", e.to_string()))?;
        let mut text = outcome.output;
        let note = match outcome.ending {
            Ending::Exited(0) => None,
            Ending::Exited(code) => Some(format!("exit code {code}")),
            Ending::TimedOut(after) => Some(format!(
                "timed out after {}s: the command was killed; narrow it, run it in smaller steps, or pass a larger `timeout` (max {MAX_TIMEOUT_SECS})",
                after.as_secs()
            )),
            Ending::Interrupted => Some("interrupted by user".to_string()),
        };
        if outcome.killed_background {
            push_line(
                &mut text,
                "[background processes still running when the shell exited were stopped]",
            );
        }
        if let Some(note) = note {
            push_line(&mut text, &format!("[{note}]"));
        }
        if text.is_empty() {
            text = "(no output)".to_string();
        }
        Ok(ToolOutput::text(text))
    }
}

fn push_line(text: &mut String, line: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
}
