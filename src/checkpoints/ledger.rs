//! The ledger of one workspace's shadow repository (`ledger.jsonl`): one JSON object a line,
//! appended under the store's lock, telling which snapshots belong to which turn and what
//! was restored. Turns of every session in the workspace are here, so `agent undo` finds
//! the last one whichever session made it.
//!
//! ```text
//! {"type":"turn","session":"20261201-101500-1a2b","turn":3,"time":1796112900,"request":"fix the test","before":"<commit>"}
//! {"type":"turn_end","session":"20261201-101500-1a2b","turn":3,"time":1796112960,"after":"<commit>","files":["src/a.rs"]}
//! {"type":"restore","time":1796113000,"turns":[{"session":"…","turn":3}],"target":"<commit>","safety":"<commit>","restored":["src/a.rs"],"kept":[],"failed":[]}
//! ```
//!
//! A turn whose `turn_end` is missing ended without its after-snapshot (the agent was
//! killed). Lines that cannot be read are skipped.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::paths::RelPath;

/// Characters of the user's request kept for listings.
const REQUEST_CHARS: usize = 300;

/// A turn, by session and number within it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct TurnKey {
    pub(crate) session: String,
    pub(crate) turn: u64,
}

/// One ledger line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Line {
    /// A turn is about to make its first change; `before` is the workspace before it.
    Turn {
        #[serde(flatten)]
        key: TurnKey,
        /// Seconds since the Unix epoch.
        time: u64,
        /// The user's request (its first 300 characters).
        request: String,
        before: String,
    },
    /// The turn ended; `after` is the workspace then; `files` what differs from `before`.
    TurnEnd {
        #[serde(flatten)]
        key: TurnKey,
        time: u64,
        after: String,
        files: Vec<RelPath>,
    },
    /// Files were restored to `target` (`/undo`, `/rewind`, `agent undo`); `safety` is the
    /// workspace just before, so nothing a restore overwrote is lost.
    Restore {
        time: u64,
        turns: Vec<TurnKey>,
        target: String,
        safety: String,
        restored: Vec<RelPath>,
        /// Files changed by hand since the turn, left as they were.
        kept: Vec<RelPath>,
        /// Files that could not be restored (the turns stay undoable then).
        failed: Vec<RelPath>,
    },
}

impl Line {
    /// A `turn` line; the request is cut to its first 300 characters.
    pub(crate) fn turn(key: TurnKey, time: u64, request: &str, before: &str) -> Self {
        Line::Turn {
            key,
            time,
            request: request.chars().take(REQUEST_CHARS).collect(),
            before: before.to_string(),
        }
    }

    /// The snapshots this line needs kept.
    pub(crate) fn commits(&self) -> Vec<&str> {
        match self {
            Line::Turn { before, .. } => vec![before],
            Line::TurnEnd { after, .. } => vec![after],
            Line::Restore { target, safety, .. } => vec![target, safety],
        }
    }
}

/// A turn that changed the workspace, as the ledger tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TurnEntry {
    pub(crate) key: TurnKey,
    /// When its first change was about to happen (Unix seconds).
    pub(crate) time: u64,
    pub(crate) request: String,
    pub(crate) before: String,
    /// `None` when the turn never ended properly.
    pub(crate) after: Option<String>,
    /// Files that differ between `before` and `after`.
    pub(crate) files: Vec<RelPath>,
    /// Restored by an undo or rewind that completed.
    pub(crate) undone: bool,
}

/// The ledger file.
#[derive(Debug, Clone)]
pub(crate) struct Ledger {
    path: PathBuf,
}

impl Ledger {
    pub(crate) fn new(dir: &Path) -> Self {
        Self {
            path: dir.join("ledger.jsonl"),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `line` (call with the store's lock held).
    ///
    /// # Errors
    /// The I/O error when the file cannot be written.
    pub(crate) fn append(&self, line: &Line) -> std::io::Result<()> {
        let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
        text.push('\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        file.write_all(text.as_bytes())
    }

    /// Every line that can be read, in order.
    pub(crate) fn lines(&self) -> Vec<Line> {
        let Ok(text) = std::fs::read(&self.path) else {
            return Vec::new();
        };
        String::from_utf8_lossy(&text)
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Replaces the file with `lines` (pruning).
    ///
    /// # Errors
    /// The I/O error when the file cannot be written.
    pub(crate) fn rewrite(&self, lines: &[Line]) -> std::io::Result<()> {
        let mut text = String::new();
        for line in lines {
            text.push_str(&serde_json::to_string(line).map_err(std::io::Error::other)?);
            text.push('\n');
        }
        super::shadow::write_atomic(&self.path, text.as_bytes())
    }

    /// The turns, oldest first.
    pub(crate) fn turns(&self) -> Vec<TurnEntry> {
        fold(&self.lines())
    }
}

/// Folds ledger lines into turns, oldest first.
pub(crate) fn fold(lines: &[Line]) -> Vec<TurnEntry> {
    let mut turns: Vec<TurnEntry> = Vec::new();
    let mut at: HashMap<TurnKey, usize> = HashMap::new();
    for line in lines {
        match line {
            Line::Turn {
                key,
                time,
                request,
                before,
            } => {
                at.insert(key.clone(), turns.len());
                turns.push(TurnEntry {
                    key: key.clone(),
                    time: *time,
                    request: request.clone(),
                    before: before.clone(),
                    after: None,
                    files: Vec::new(),
                    undone: false,
                });
            }
            Line::TurnEnd {
                key, after, files, ..
            } => {
                if let Some(turn) = at.get(key).and_then(|&i| turns.get_mut(i)) {
                    turn.after = Some(after.clone());
                    turn.files = files.clone();
                }
            }
            Line::Restore {
                turns: keys,
                failed,
                ..
            } if failed.is_empty() => {
                for key in keys {
                    if let Some(turn) = at.get(key).and_then(|&i| turns.get_mut(i)) {
                        turn.undone = true;
                    }
                }
            }
            Line::Restore { .. } => {}
        }
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(turn: u64) -> TurnKey {
        TurnKey {
            session: "s".into(),
            turn,
        }
    }

    #[test]
    fn lines_fold_into_turns_and_a_complete_restore_undoes_them() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::new(dir.path());
        let lines = vec![
            Line::turn(key(1), 10, &"x".repeat(400), "b1"),
            Line::TurnEnd {
                key: key(1),
                time: 11,
                after: "a1".into(),
                files: vec![RelPath(b"f".to_vec())],
            },
            Line::turn(key(2), 20, "two", "b2"),
            Line::Restore {
                time: 30,
                turns: vec![key(1)],
                target: "b1".into(),
                safety: "c".into(),
                restored: vec![],
                kept: vec![],
                failed: vec![RelPath(b"g".to_vec())],
            },
        ];
        for line in &lines {
            ledger.append(line).unwrap();
        }
        std::fs::OpenOptions::new()
            .append(true)
            .open(ledger.path())
            .unwrap()
            .write_all(b"{torn\n")
            .unwrap();
        assert_eq!(ledger.lines(), lines);
        let turns = ledger.turns();
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].request.chars().count(), 300);
        assert_eq!(turns[0].after.as_deref(), Some("a1"));
        assert!(
            !turns[0].undone,
            "a restore with failures leaves the turn undoable"
        );
        assert_eq!(turns[1].after, None);
        ledger
            .append(&Line::Restore {
                time: 40,
                turns: vec![key(1)],
                target: "b1".into(),
                safety: "c2".into(),
                restored: vec![],
                kept: vec![],
                failed: vec![],
            })
            .unwrap();
        assert!(ledger.turns()[0].undone);
    }
}
