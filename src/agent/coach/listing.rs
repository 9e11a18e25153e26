//! Whole-file listings (coach on): a small model asked to create or change a file often
//! answers with the file's complete text in a fenced block instead of calling `write_file`.
//! When the user's request asks for a file to be created or changed ([`Intent::asks_to_edit`])
//! and names the file, such a listing becomes a `write_file` call, which then goes through
//! the dispatcher like any call (diff, permission rules, the not-read and stale-file checks).
//!
//! A listing is a fenced block whose path is stated right before it (the path alone on the
//! line before the fence, as in Aider's whole-file format: `count.py`, `**count.py**`,
//! `` `count.py`: ``, `File: count.py`) or in a comment on its first line (`# count.py`,
//! `// src/main.rs`), which is then not part of the file. Never taken:
//! - for a request to show, tell or explain something, or one that says not to change
//!   anything;
//! - for a path the user's request does not name, or one outside the workspace;
//! - a listing with an elision (`...`, `# rest unchanged`), or, for a file that exists, one
//!   shorter than the file by more than [`MAX_LINES_DROPPED`] lines (a fragment, not the
//!   whole file);
//! - a shell block (`bash`, `sh`, ...) unless the path is a shell script.

use std::path::Path;

use super::intent::Intent;
use crate::model::ToolCall;

/// How many lines shorter than an existing file a listing may be and still count as the
/// whole file.
pub(crate) const MAX_LINES_DROPPED: usize = 2;

/// Info strings of blocks that hold commands rather than files.
const COMMAND_INFOS: &[&str] = &["bash", "sh", "shell", "console", "zsh", "shell-session"];

/// The `write_file` calls for the whole-file listings in `answer` (see the module doc), one
/// per path, in order; empty when none qualifies. Calls come back without ids.
pub(crate) fn listing_calls(
    answer: &str,
    request: &str,
    intent: &Intent,
    workspace: &Path,
) -> Vec<ToolCall> {
    if !intent.asks_to_edit || !intent.allows_edit_request() {
        return Vec::new();
    }
    let named = named_paths(request);
    let mut calls: Vec<ToolCall> = Vec::new();
    let lines: Vec<&str> = answer.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let Some(info) = lines[i].trim_start().strip_prefix("```") else {
            i += 1;
            continue;
        };
        let info = info.trim().to_ascii_lowercase();
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].trim_start().starts_with("```"))
            .unwrap_or(lines.len());
        let body = &lines[i + 1..end];
        let before = lines[..i].iter().rev().find(|l| !l.trim().is_empty());
        let labelled = before.and_then(|line| path_line(line)).map(|p| (p, body));
        let commented = body
            .first()
            .and_then(|first| path_comment(first))
            .map(|p| (p, &body[1..]));
        if let Some((path, content)) = labelled.or(commented)
            && let Some(path) = relative(&path, workspace)
            && named.iter().any(|n| same_file(n, &path))
            && !calls
                .iter()
                .any(|c| c.arguments.contains(&format!("\"{path}\"")))
            && (!COMMAND_INFOS.contains(&info.as_str()) || is_shell_script(&path))
            && is_whole(content, &workspace.join(&path))
        {
            let mut text = content.join("\n");
            text.push('\n');
            calls.push(ToolCall {
                id: String::new(),
                name: "write_file".into(),
                arguments: serde_json::json!({ "path": path, "content": text }).to_string(),
            });
        }
        i = end + 1;
    }
    calls
}

/// The path on a line that holds only a path (with `**`, backticks, `File:`, `#` or a
/// trailing `:` around it).
fn path_line(line: &str) -> Option<String> {
    let mut text = line.trim().trim_start_matches('#').trim();
    for prefix in ["File:", "file:", "Filename:", "filename:"] {
        text = text.strip_prefix(prefix).unwrap_or(text).trim();
    }
    let text = text
        .trim_end_matches(':')
        .trim_matches(|c| c == '*' || c == '`' || c == '"' || c == '\'')
        .trim_end_matches(':');
    looks_like_path(text).then(|| text.to_string())
}

/// The path in a first-line comment naming the file (`# count.py`, `// src/a.rs`,
/// `<!-- index.html -->`, `-- q.sql`).
fn path_comment(line: &str) -> Option<String> {
    let text = line.trim();
    let inner = ["#", "//", "--", "<!--", "/*", ";"]
        .iter()
        .find_map(|open| text.strip_prefix(open))?;
    let inner = inner.trim_end_matches("-->").trim_end_matches("*/").trim();
    path_line(inner)
}

/// One token of path characters with a file name that has an extension.
fn looks_like_path(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 200
        && !text.contains("://")
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
        && Path::new(text)
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains('.') && !n.starts_with('.') && !n.ends_with('.'))
}

/// `path` relative to `workspace` (an absolute path inside it is made relative); `None`
/// outside it or with `..`.
fn relative(path: &str, workspace: &Path) -> Option<String> {
    let path = Path::new(path);
    let relative = if path.is_absolute() {
        path.strip_prefix(workspace).ok()?
    } else {
        path.strip_prefix("./").unwrap_or(path)
    };
    let text = relative.to_str()?;
    (!text.is_empty() && !text.split('/').any(|part| part == "..")).then(|| text.to_string())
}

/// The path-like words of the user's request.
fn named_paths(request: &str) -> Vec<String> {
    request
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| {
                !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
            })
            .trim_end_matches('.')
            .to_string()
        })
        .filter(|w| looks_like_path(w))
        .collect()
}

/// `named` (from the request) and `path` (from the listing) are the same file: equal, or
/// equal once a leading `./` is dropped.
fn same_file(named: &str, path: &str) -> bool {
    named.strip_prefix("./").unwrap_or(named) == path
}

fn is_shell_script(path: &str) -> bool {
    [".sh", ".bash", ".zsh"]
        .iter()
        .any(|ext| path.ends_with(ext))
}

/// `content` has no elision and is not shorter than the file at `file` by more than
/// [`MAX_LINES_DROPPED`] lines (a file that does not exist takes any listing).
fn is_whole(content: &[&str], file: &Path) -> bool {
    if content.iter().all(|l| l.trim().is_empty()) {
        return false;
    }
    let elided = content.iter().any(|line| {
        let t = line
            .trim()
            .trim_start_matches(['#', '/', '-', '*', '<', '!', ' '])
            .trim()
            .to_ascii_lowercase();
        t.starts_with("...")
            || t.ends_with("...")
            || t.contains("rest of the")
            || t.contains("unchanged")
            || t.contains("existing code")
    });
    if elided {
        return false;
    }
    match std::fs::read_to_string(file) {
        Ok(existing) => content.len() + MAX_LINES_DROPPED >= existing.lines().count(),
        Err(_) => !file.exists(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const CREATE: &str = "Create count.py that prints how many lines words.txt has, then run it.";

    /// The reply of the baseline evaluation (new_script): a listing introduced by prose,
    /// labelled by a comment.
    const SHOWN: &str = "To create `count.py`, you can use the following code:\n\n```python\n# count.py\nwith open('words.txt') as f:\n    print(len(f.readlines()))\n```\n\nRun it:\n```bash\npython count.py\n```";

    fn calls(answer: &str, request: &str, workspace: &Path) -> Vec<(String, String)> {
        listing_calls(answer, request, &Intent::read(request), workspace)
            .into_iter()
            .map(|c| {
                let args: serde_json::Value =
                    serde_json::from_str(&c.arguments).unwrap_or_default();
                (
                    args["path"].as_str().unwrap_or("").to_string(),
                    args["content"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn a_listing_for_a_file_to_create_becomes_a_write() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            calls(SHOWN, CREATE, dir.path()),
            vec![(
                "count.py".to_string(),
                "with open('words.txt') as f:\n    print(len(f.readlines()))\n".to_string()
            )]
        );
        let aider = "count.py\n```\nprint(4)\n```";
        assert_eq!(calls(aider, CREATE, dir.path()).len(), 1);
        let bold = "**count.py**:\n\n```python\nprint(4)\n```";
        assert_eq!(calls(bold, CREATE, dir.path()).len(), 1);
        let absolute = format!(
            "{}/count.py\n```python\nprint(4)\n```",
            dir.path().display()
        );
        assert_eq!(calls(&absolute, CREATE, dir.path())[0].0, "count.py");
    }

    #[test]
    fn only_when_the_request_asks_to_create_or_change_that_file() {
        let dir = tempfile::tempdir().unwrap();
        for request in [
            "Show me what count.py would look like",
            "Explain how to write count.py",
            "What would count.py look like?",
            "Write count.py but don't change anything yet, just explain",
            "Tell me how to count lines in words.txt",
        ] {
            assert!(calls(SHOWN, request, dir.path()).is_empty(), "{request}");
        }
        // A path the request does not name, or outside the workspace.
        assert!(calls(SHOWN, "Create a script that counts lines", dir.path()).is_empty());
        let outside = "/etc/count.py\n```python\nprint(4)\n```";
        assert!(calls(outside, "Create /etc/count.py", dir.path()).is_empty());
        let up = "../count.py\n```python\nprint(4)\n```";
        assert!(calls(up, "Create ../count.py", dir.path()).is_empty());
    }

    #[test]
    fn fragments_and_commands_are_not_listings() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("calc.py"), "a\nb\nc\nd\ne\nf\ng\n").unwrap();
        let fix = "Fix the bug in calc.py";
        let fragment = "calc.py\n```python\ndef add(a, b):\n    return a + b\n```";
        assert!(calls(fragment, fix, dir.path()).is_empty());
        let whole = "calc.py\n```python\na\nb\nc\nd\ne\nF\n```";
        assert_eq!(calls(whole, fix, dir.path()).len(), 1, "one line dropped");
        let elided = "calc.py\n```python\na\n# ... rest unchanged\nb\nc\nd\ne\nf\ng\n```";
        assert!(calls(elided, fix, dir.path()).is_empty());
        let command = "count.py\n```bash\npython count.py\n```";
        assert!(calls(command, CREATE, dir.path()).is_empty());
        let script = "deploy.sh\n```bash\nrsync -a dist/ prod:\n```";
        assert_eq!(
            calls(script, "Write deploy.sh that syncs dist", dir.path()).len(),
            1
        );
        assert!(calls("```python\nprint(1)\n```", CREATE, dir.path()).is_empty());
        assert!(calls("count.py\n```python\n```", CREATE, dir.path()).is_empty());
    }
}
