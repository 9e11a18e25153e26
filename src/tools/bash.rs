//! The `bash` tool (§4.1): runs a command line through [`crate::sandbox::exec`] and turns the
//! outcome into the text the model reads: the output (capped), then one bracketed note per
//! line for whatever the model must know: sandbox blocks, background processes stopped,
//! exit code, timeout, interruption, or that the command ran unsandboxed.

use std::time::Duration;

use serde_json::json;

use super::ToolErrorKind;
use super::{Access, Args, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
use crate::sandbox::diagnose;
use crate::sandbox::exec::{self, Background, Confinement, Ending, ExecError, ExecOutcome, Job};

/// Longest timeout a call may ask for, in seconds (§4.1).
pub(crate) const MAX_TIMEOUT_SECS: u64 = 600;

pub(crate) struct BashTool {
    spec: ToolSpec,
}

impl BashTool {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: "bash",
                description: "Run a shell command in the workspace and return its output \
                    (stdout and stderr). Non-interactive: stdin is empty, no terminal, no pager \
                    or editor. Runs in a sandbox: writes outside the workspace and /tmp, and \
                    network access, may be blocked. Background processes are stopped when \
                    the command ends.",
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

/// Characters of the cap kept free for the notes, so the result stays within the cap.
fn note_reserve(max_chars: usize) -> usize {
    (max_chars / 10).clamp(200, 1000)
}

/// A NUL byte cannot be passed to `bash -c`; refused before the user is asked to approve a
/// command that could never run.
fn refuse_nul(command: &str) -> Result<(), ToolError> {
    if command.contains('\0') {
        return Err(ToolError::new(
            ToolErrorKind::InvalidInput,
            "`command` holds a NUL byte, which no shell command can contain; remove it",
        ));
    }
    Ok(())
}

impl Tool for BashTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &Args, _: &ToolContext<'_>) -> Result<Access, ToolError> {
        let command = command(args);
        refuse_nul(command)?;
        Ok(Access::Command(command.to_string()))
    }

    fn run(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let command = command(args);
        if command.trim().is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::InvalidInput,
                "`command` is empty",
            ));
        }
        refuse_nul(command)?;
        let timeout = args
            .get("timeout")
            .and_then(serde_json::Value::as_u64)
            .map_or(ctx.exec.default_timeout, |secs| {
                Duration::from_secs(secs.clamp(1, MAX_TIMEOUT_SECS))
            });
        let job = Job {
            command,
            cwd: ctx.cwd,
            workspace: ctx.workspace,
            timeout,
            budget: ctx
                .max_output_chars
                .saturating_sub(note_reserve(ctx.max_output_chars)),
        };
        let outcome = exec::run(&job, ctx.exec, ctx.cancel).map_err(|error| match error {
            ExecError::Refused(_) => {
                ToolError::new(ToolErrorKind::SandboxRequired, error.to_string())
            }
            ExecError::Spawn(_) => {
                ToolError::new(ToolErrorKind::CannotStartShell, error.to_string())
            }
        })?;
        if let Some(line) = &outcome.sandbox_error {
            return Err(ToolError::new(
                ToolErrorKind::SandboxFailed,
                format!(
                    "{line}. Tell the user; commands cannot run until the sandbox works or they choose `--sandbox off`"
                ),
            ));
        }
        Ok(ToolOutput {
            exit_code: match outcome.ending {
                Ending::Exited(code) => Some(code),
                Ending::Interrupted | Ending::TimedOut(_) => None,
            },
            ..ToolOutput::text(render(&outcome, &job))
        })
    }
}

/// The result text: output, then notes.
fn render(outcome: &ExecOutcome, job: &Job<'_>) -> String {
    let mut text = outcome.output.text.clone();
    let mut notes = Vec::new();
    if let Confinement::Confined(policy) = &outcome.confinement {
        let failed = outcome.ending != Ending::Exited(0);
        notes.extend(diagnose::explain(&text, policy, job.cwd, failed));
    }
    match outcome.background {
        Background::None => {}
        Background::Stopped => notes.push(
            "[background processes still running when the shell exited were stopped; start and use a server within one command]"
                .to_string(),
        ),
        Background::LeftRunning => notes.push(
            "[a background process that left the command's process group still holds its output; it was left running]"
                .to_string(),
        ),
    }
    notes.extend(ending_notes(outcome));
    if let Confinement::Unsandboxed { reason } = &outcome.confinement {
        notes.push(format!(
            "[unsandboxed: {reason}; this command ran without confinement]"
        ));
    }
    for note in notes {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&note);
    }
    if text.is_empty() {
        text = "(no output)".to_string();
    }
    text
}

fn ending_notes(outcome: &ExecOutcome) -> Vec<String> {
    match outcome.ending {
        Ending::Exited(0) => Vec::new(),
        Ending::Exited(code) => vec![format!("[exit code {code}]")],
        Ending::Interrupted => vec!["[interrupted by user]".to_string()],
        Ending::TimedOut(after) => {
            let mut notes = vec![format!(
                "[timed out after {}s: the command and its process group were killed. Narrow it (fewer files, a smaller test selection), run it in steps, or pass a larger `timeout` (max {MAX_TIMEOUT_SECS})]",
                after.as_secs()
            )];
            let output = &outcome.output.text;
            if output.trim().is_empty() || !output.ends_with('\n') {
                notes.push(
                    "[it looked interactive (no output, or a prompt without a newline): stdin is empty and there is no terminal, so use non-interactive flags (-y, --yes, -m MESSAGE, --no-pager, --batch)]"
                        .to_string(),
                );
            }
            notes
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::sandbox::SandboxMode;
    use crate::sandbox::capture::Captured;
    use crate::sandbox::policy::Policy;
    use pretty_assertions::assert_eq;

    fn outcome(text: &str, ending: Ending, confinement: Confinement) -> ExecOutcome {
        ExecOutcome {
            output: Captured {
                text: text.to_string(),
                ..Captured::default()
            },
            ending,
            background: Background::None,
            confinement,
            sandbox_error: None,
        }
    }

    fn job() -> Job<'static> {
        Job {
            command: "x",
            cwd: Path::new("/w"),
            workspace: Path::new("/w"),
            timeout: Duration::from_secs(2),
            budget: 1000,
        }
    }

    #[test]
    fn notes_follow_the_output_one_per_line() {
        let mut result = outcome("partial", Ending::Exited(2), Confinement::Off);
        result.background = Background::Stopped;
        assert_eq!(
            render(&result, &job()),
            "partial\n[background processes still running when the shell exited were stopped; start and use a server within one command]\n[exit code 2]"
        );
        let quiet = outcome("", Ending::Exited(0), Confinement::Off);
        assert_eq!(render(&quiet, &job()), "(no output)");
        let interrupted = outcome("x\n", Ending::Interrupted, Confinement::Off);
        assert_eq!(render(&interrupted, &job()), "x\n[interrupted by user]");
    }

    #[test]
    fn unsandboxed_commands_say_so() {
        let reason = "this kernel has no Landlock support".to_string();
        let result = outcome(
            "hi\n",
            Ending::Exited(0),
            Confinement::Unsandboxed { reason },
        );
        assert_eq!(
            render(&result, &job()),
            "hi\n[unsandboxed: this kernel has no Landlock support; this command ran without confinement]"
        );
    }

    #[test]
    fn timeout_says_killed_after_n_seconds_and_flags_prompts() {
        let prompt = outcome(
            "Password: ",
            Ending::TimedOut(Duration::from_secs(2)),
            Confinement::Off,
        );
        let text = render(&prompt, &job());
        assert!(text.starts_with("Password: \n[timed out after 2s: the command and its process group were killed. Narrow it"), "{text}");
        assert!(
            text.ends_with("(-y, --yes, -m MESSAGE, --no-pager, --batch)]"),
            "{text}"
        );
        let busy = outcome(
            "compiling\n",
            Ending::TimedOut(Duration::from_secs(2)),
            Confinement::Off,
        );
        assert!(!render(&busy, &job()).contains("interactive"));
    }

    #[test]
    fn sandbox_blocks_are_explained_for_confined_commands_only() {
        let policy = Policy {
            mode: SandboxMode::ReadOnly,
            ..Policy::default()
        };
        let text = "curl: (6) Could not resolve host: example.com\n";
        let confined = outcome(text, Ending::Exited(6), Confinement::Confined(policy));
        assert!(render(&confined, &job()).contains("[network access is blocked by the sandbox"));
        let off = outcome(text, Ending::Exited(6), Confinement::Off);
        assert!(!render(&off, &job()).contains("sandbox"));
    }
}
