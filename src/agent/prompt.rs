//! The system prompt and the per-request reminder.
//!
//! The system prompt is short on purpose: a small local model reads it at about 70 tokens/s,
//! and the first request (prompt + tool schemas) must stay under 4,000 bytes. It is built
//! once per session and never changes, so the request prefix stays byte-identical.

use std::path::Path;

/// The system prompt for a session in `workspace`.
pub(crate) fn system_prompt(workspace: &Path, tools: &[&str]) -> String {
    format!(
        "You are agent, a coding assistant working in a terminal on the user's machine, in the \
         workspace {workspace}.\n\
         Do the work the user asks for yourself with your tools ({tools}) instead of telling \
         them what to do; when they ask you to show, tell or explain something, or not to \
         run it, answer without running it. Call tools through the tool-calling interface.\n\
         Guidelines:\n\
         - Look before you change: read files and list directories first.\n\
         - Edit with str_replace (exact, unique text); use write_file for new files.\n\
         - Shell commands are non-interactive and run without a terminal.\n\
         - After changing code, verify it: run it or run the tests, and fix what fails.\n\
         - If a tool call is denied, do not repeat it; find another way or ask the user.\n\
         - When done, answer briefly: what you changed and how you verified it.",
        workspace = workspace.display(),
        tools = tools.join(", "),
    )
}

/// The reminder appended to the last message of each request (never stored).
pub(crate) fn reminder(date: &str, workspace: &Path, extra: &[String]) -> String {
    let mut lines = vec![
        format!("date: {date}"),
        format!("workspace: {}", workspace.display()),
    ];
    if let Some(branch) = git_branch(workspace) {
        lines.push(format!("git branch: {branch}"));
    }
    lines.extend(extra.iter().cloned());
    format!(
        "<system-reminder>\n{}\n</system-reminder>",
        lines.join("\n")
    )
}

/// Reminder lines for the todo list: `todos:` and one line per item; none when empty.
pub(crate) fn todo_lines(todos: &[crate::tools::todos::Todo]) -> Vec<String> {
    if todos.is_empty() {
        return Vec::new();
    }
    vec![format!("todos:\n{}", crate::tools::todos::render(todos))]
}

/// The current branch from `.git/HEAD`, without running git.
pub(crate) fn git_branch(workspace: &Path) -> Option<String> {
    let head = std::fs::read_to_string(workspace.join(".git").join("HEAD")).ok()?;
    let head = head.trim();
    match head.strip_prefix("ref: refs/heads/") {
        Some(branch) => Some(branch.to_string()),
        None => Some(format!("detached at {}", head.get(..12).unwrap_or(head))),
    }
}
