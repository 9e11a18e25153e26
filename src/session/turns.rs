//! The turns of a session, by number: turn `n` is the one started by the `n`-th message the
//! user typed (1-based, counted over the whole session file, so numbers are never reused),
//! and the live ones are those still in the conversation (a `/rewind` that cuts the
//! conversation ends the rest). Checkpoints name turns by these numbers.
//!
//! The user's messages of the live turns are the history's messages from the user (not from
//! the harness), in order, except that compaction may have folded the oldest ones into a
//! summary: the messages still there belong to the newest live turns.

use crate::model::{Message, Role};

/// Turn numbers of one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Turns {
    started: u64,
    live: Vec<u64>,
}

impl Turns {
    /// A new turn begins (its user message joins the history); returns its number.
    pub(crate) fn start(&mut self) -> u64 {
        self.started += 1;
        self.live.push(self.started);
        self.started
    }

    /// Turns still in the conversation, oldest first.
    #[cfg(test)]
    fn live(&self) -> &[u64] {
        &self.live
    }

    /// Ends `turn` and every later one (the conversation was cut back to before it).
    pub(crate) fn cut_from(&mut self, turn: u64) {
        self.live.retain(|&n| n < turn);
    }

    /// Where in `history` turn `turn`'s user message is: the length to cut the history to
    /// so the turn never happened. `None` when the turn is not live or its message was
    /// compacted away.
    pub(crate) fn start_of(&self, turn: u64, history: &[Message]) -> Option<usize> {
        let at = self.live.iter().position(|&n| n == turn)?;
        let starts: Vec<usize> = history
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == Role::User && !m.is_from_harness())
            .map(|(i, _)| i)
            .collect();
        let folded = self.live.len().checked_sub(starts.len())?;
        at.checked_sub(folded).and_then(|i| starts.get(i).copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_are_found_from_the_newest_even_after_compaction() {
        let mut turns = Turns::default();
        let mut history = Vec::new();
        for text in ["one", "two", "three"] {
            let n = turns.start();
            history.push(Message::user(format!("{text} {n}")));
            history.push(Message::assistant("ok"));
        }
        assert_eq!(turns.start_of(2, &history), Some(2));
        // Compaction folds turn 1 into a summary from the harness.
        history.splice(
            0..2,
            [Message::harness("summary"), Message::assistant("ok")],
        );
        assert_eq!(turns.start_of(1, &history), None);
        assert_eq!(turns.start_of(3, &history), Some(4));
        turns.cut_from(2);
        history.truncate(2);
        assert_eq!(turns.live(), &[1]);
        assert_eq!(turns.start(), 4);
        history.push(Message::user("four"));
        assert_eq!(turns.start_of(4, &history), Some(2));
        assert_eq!(turns.start_of(2, &history), None);
    }
}
