//! The lines of a session file: one JSON object per line, tagged by `type`.
//!
//! ```text
//! {"type":"session","id":"20261130-142501-1a2b","workspace":"/src/app","started":1796048701,...}
//! {"type":"message","message":{"role":"user","content":"fix the test"}}
//! {"type":"todos","todos":[{"content":"run tests","status":"in_progress"}]}
//! {"type":"pruned","stubs":[{"index":2,"id":"call_1","text":"[pruned to save context: ...]"}]}
//! {"type":"compacted","head":[...],"kept_from":14}
//! {"type":"governance","state":{...}}
//! {"type":"checkpoint","turn":3,"snapshot":"<commit>","files":120}
//! {"type":"restored","turns":[3],"snapshot":"<commit>","files":["src/a.rs"]}
//! {"type":"rewound","turn":3,"keep":14}
//! ```
//!
//! Messages are stored in full as they happen; `pruned`, `compacted` and `rewound` record how the
//! in-memory history was changed since, so replaying the file in order rebuilds exactly the
//! history the model last saw. Unknown `type`s are skipped on load (newer versions may add
//! some).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::context::compact::Compaction;
use crate::context::prune::Stub;
use crate::model::Message;
use crate::tools::todos::Todo;

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Header {
    pub(crate) id: String,
    /// Workspace root the session ran in.
    pub(crate) workspace: PathBuf,
    /// Start time, seconds since the Unix epoch.
    pub(crate) started: u64,
    #[serde(default)]
    pub(crate) model: String,
    /// Version of `agent` that started the session.
    #[serde(default)]
    pub(crate) agent_version: String,
}

/// One line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Record {
    Session(Header),
    /// A message added to the history, in full.
    Message {
        message: Message,
    },
    /// The todo list after a change.
    Todos {
        todos: Vec<Todo>,
    },
    /// Tool results replaced by stubs in the in-memory history.
    Pruned {
        stubs: Vec<Stub>,
    },
    /// The in-memory history compacted.
    Compacted(Compaction),
    /// Opaque governance state (role, budget spending); the latest one wins on resume.
    Governance {
        state: serde_json::Value,
    },
    /// The workspace was saved before turn `turn`'s first change (checkpoints).
    Checkpoint {
        turn: u64,
        /// The commit in the workspace's shadow repository.
        snapshot: String,
        files: usize,
    },
    /// Files were restored to `snapshot` (`/undo`, `/rewind`), undoing `turns`.
    Restored {
        turns: Vec<u64>,
        snapshot: String,
        files: Vec<String>,
    },
    /// The conversation was cut back to before turn `turn` (`/rewind`): the history keeps
    /// its first `keep` messages, and that turn and every later one are over.
    Rewound {
        turn: u64,
        keep: usize,
    },
}

/// The prefix every serialized message record starts with (used to count them cheaply).
pub(crate) const MESSAGE_PREFIX: &str = r#"{"type":"message","#;
/// The prefix of a serialized user message record.
pub(crate) const USER_MESSAGE_PREFIX: &str = r#"{"type":"message","message":{"role":"user""#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_lines_have_the_counted_prefixes() {
        let line = serde_json::to_string(&Record::Message {
            message: Message::user("hi"),
        })
        .unwrap_or_default();
        assert!(line.starts_with(USER_MESSAGE_PREFIX), "{line}");
        assert!(line.starts_with(MESSAGE_PREFIX), "{line}");
    }
}
