//! Reading a session file back (SPEC §8.3): replay the records in order, skip what cannot
//! be read, and repair the history so the provider accepts it.
//!
//! Repair: a tool call without a result (the agent was killed while the tool ran) gets the
//! result [`INTERRUPTED_RESULT`] right after the results its message did get; a tool result
//! that answers no call is dropped, and so is a system message (the system prompt is added
//! to each request, never stored; one in the middle of a history makes servers with strict
//! chat templates reject every request). Repair is idempotent and runs on every load, so the
//! file itself is never rewritten.

use std::path::Path;

use super::SessionError;
use super::record::{Header, Record};
use crate::model::{Message, Role};
use crate::tools::todos::Todo;

/// The result given to a call that never finished.
pub(crate) const INTERRUPTED_RESULT: &str = "interrupted: the agent stopped before this tool call \
finished, so its result was lost; its effects are unknown, check before repeating it";

/// A session as loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub(crate) header: Header,
    /// The history as the model last saw it (pruned and compacted), repaired.
    pub history: Vec<Message>,
    pub(crate) todos: Vec<Todo>,
    /// The last governance state recorded, if any.
    pub(crate) governance: Option<serde_json::Value>,
    /// Message records in the file.
    pub messages: usize,
    /// Calls answered with [`INTERRUPTED_RESULT`] by the repair.
    pub(crate) interrupted: usize,
    /// What was skipped, for the user.
    pub(crate) warnings: Vec<String>,
    /// The session's turns (checkpoints name them by number).
    pub(crate) turns: super::turns::Turns,
}

/// Loads the session file at `path`.
///
/// # Errors
/// [`SessionError::Io`] when the file cannot be read.
pub fn load(path: &Path) -> Result<Loaded, SessionError> {
    let bytes = std::fs::read(path).map_err(|e| SessionError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let mut loaded = Loaded {
        header: fallback_header(path),
        history: Vec::new(),
        todos: Vec::new(),
        governance: None,
        messages: 0,
        interrupted: 0,
        warnings: Vec::new(),
        turns: super::turns::Turns::default(),
    };
    let mut corrupt = 0;
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len().saturating_sub(1);
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(record) => apply(&mut loaded, record),
            Err(_) if i == last && !text.ends_with('\n') => {
                loaded.warnings.push(format!(
                    "skipped a truncated last line in `{}` (the agent was stopped while writing it)",
                    path.display()
                ));
            }
            Err(_) if serde_json::from_str::<serde_json::Value>(line).is_ok() => {}
            Err(_) => corrupt += 1,
        }
    }
    if corrupt > 0 {
        loaded.warnings.push(format!(
            "skipped {corrupt} unreadable lines in `{}`",
            path.display()
        ));
    }
    loaded.interrupted = repair(&mut loaded.history);
    Ok(loaded)
}

fn apply(loaded: &mut Loaded, record: Record) {
    match record {
        Record::Session(header) => loaded.header = header,
        Record::Message { message } => {
            loaded.messages += 1;
            if message.role == Role::User && !message.is_from_harness() {
                loaded.turns.start();
            }
            loaded.history.push(message);
        }
        Record::Todos { todos } => loaded.todos = todos,
        Record::Governance { state } => loaded.governance = Some(state),
        Record::Pruned { stubs } => {
            crate::context::prune::apply(&mut loaded.history, &stubs);
        }
        Record::Compacted(compaction) => compaction.apply(&mut loaded.history),
        Record::Rewound { turn, keep } => {
            loaded.history.truncate(keep);
            loaded.turns.cut_from(turn);
        }
        Record::Checkpoint { .. } | Record::Restored { .. } => {}
    }
}

fn fallback_header(path: &Path) -> Header {
    Header {
        id: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        workspace: Default::default(),
        started: 0,
        model: String::new(),
        agent_version: String::new(),
    }
}

/// Makes `history` valid for the provider: every call answered once, right after its
/// message; orphan results and system messages dropped. Returns how many calls were answered as interrupted.
pub(crate) fn repair(history: &mut Vec<Message>) -> usize {
    let mut out: Vec<Message> = Vec::with_capacity(history.len() + 1);
    let mut open: Vec<String> = Vec::new();
    let mut interrupted = 0;
    let close = |open: &mut Vec<String>, out: &mut Vec<Message>, interrupted: &mut usize| {
        for id in open.drain(..) {
            out.push(Message::tool_result(id, INTERRUPTED_RESULT));
            *interrupted += 1;
        }
    };
    for message in history.drain(..) {
        if message.role == Role::System {
            continue;
        }
        if message.role == Role::Tool {
            let id = message.tool_call_id.as_deref().unwrap_or("");
            if let Some(at) = open.iter().position(|o| o == id) {
                open.remove(at);
                out.push(message);
            }
            continue;
        }
        close(&mut open, &mut out, &mut interrupted);
        if message.role == Role::Assistant {
            open = message.tool_calls.iter().map(|c| c.id.clone()).collect();
        }
        out.push(message);
    }
    close(&mut open, &mut out, &mut interrupted);
    *history = out;
    interrupted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;
    use pretty_assertions::assert_eq;

    fn calls(ids: &[&str]) -> Message {
        Message {
            content: None,
            tool_calls: ids
                .iter()
                .map(|id| ToolCall {
                    id: (*id).into(),
                    name: "bash".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            ..Message::assistant("")
        }
    }

    #[test]
    fn unanswered_calls_get_interrupted_results_in_place() {
        let mut history = vec![
            Message::user("go"),
            calls(&["a", "b"]),
            Message::tool_result("a", "ok"),
            Message::tool_result("zz", "orphan"),
            Message::user("next"),
            calls(&["c"]),
        ];
        assert_eq!(repair(&mut history), 2);
        assert_eq!(
            history,
            vec![
                Message::user("go"),
                calls(&["a", "b"]),
                Message::tool_result("a", "ok"),
                Message::tool_result("b", INTERRUPTED_RESULT),
                Message::user("next"),
                calls(&["c"]),
                Message::tool_result("c", INTERRUPTED_RESULT),
            ]
        );
        let again = history.clone();
        assert_eq!(repair(&mut history), 0);
        assert_eq!(history, again);
    }

    #[test]
    fn a_stored_system_message_is_dropped() {
        // It was replayed after the real system prompt, mid-history.
        let mut history = vec![
            Message::system("stray"),
            Message::user("go"),
            Message::assistant("ok"),
        ];
        assert_eq!(repair(&mut history), 0);
        assert_eq!(history, vec![Message::user("go"), Message::assistant("ok")]);
    }

    #[test]
    fn torn_last_line_and_corrupt_lines_are_skipped() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("s.jsonl");
        let message = |text: &str| {
            serde_json::to_string(&Record::Message {
                message: Message::user(text),
            })
            .unwrap_or_default()
        };
        std::fs::write(
            &path,
            format!(
                "{}\nnot json\n{}\n{{\"type\":\"message\",\"mess",
                message("a"),
                message("b")
            ),
        )?;
        let loaded = load(&path)?;
        assert_eq!(loaded.history, vec![Message::user("a"), Message::user("b")]);
        assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
        assert!(loaded.warnings[0].contains("truncated last line"));
        assert!(loaded.warnings[1].contains("skipped 1 unreadable lines"));
        Ok(())
    }
}
