//! The repeated-call guard (SPEC §3.5), for every model: the same tool call with the same
//! arguments giving the same result several times in a row is pointed out to the model once;
//! if the model makes the same call again, it is not run and the turn stops.
//!
//! Models of every size fall into this (users of other agents report 20–50 identical calls
//! in a row); without a guard it runs until `--max-turns` or a budget stops it. The limit is
//! `[model] max_identical_calls` (default [`DEFAULT_LIMIT`]; 0 turns the guard off). The
//! streak is per turn; a different call, or a different result, starts it again.

use crate::model::ToolCall;

/// Watches the calls of one turn.
#[derive(Debug)]
pub(crate) struct RepeatGuard {
    limit: Option<u32>,
    /// Name and arguments of the last call, and its result.
    last: Option<(String, String, String)>,
    /// How many times in a row `last` was made with the same result.
    streak: u32,
    /// The streak was pointed out to the model.
    told: bool,
}

/// What the guard says about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Run it.
    Go,
    /// Do not run it: the model was told and made the same call again. The turn stops with
    /// `message`; the call is answered with `result`.
    Stop { message: String, result: String },
}

impl RepeatGuard {
    /// A guard that speaks up after `limit` identical calls (`None` or 0: never).
    pub(crate) fn new(limit: Option<u32>) -> Self {
        Self {
            limit: limit.filter(|l| *l > 0),
            last: None,
            streak: 0,
            told: false,
        }
    }

    /// Before `call` runs.
    pub(crate) fn before(&self, call: &ToolCall) -> Verdict {
        let repeats = self.told
            && self
                .last
                .as_ref()
                .is_some_and(|(name, args, _)| *name == call.name && *args == call.arguments);
        if !repeats {
            return Verdict::Go;
        }
        let times = self.streak + 1;
        Verdict::Stop {
            message: format!(
                "stopped: the model made the same `{}` call {times} times in a row with the \
                 same result, after being told; give it a different instruction to go on",
                call.name
            ),
            result: format!(
                "Not run: this is the same call as the last {} (same arguments, same result \
                 each time). The turn was stopped.",
                self.streak
            ),
        }
    }

    /// After `call` ran with `result`: a note to append to the result when this completes a
    /// streak of `limit` identical calls with identical results.
    pub(crate) fn after(&mut self, call: &ToolCall, result: &str) -> Option<String> {
        let limit = self.limit?;
        let same = self.last.as_ref().is_some_and(|(name, args, previous)| {
            *name == call.name && *args == call.arguments && previous == result
        });
        if same {
            self.streak += 1;
        } else {
            self.last = Some((
                call.name.clone(),
                call.arguments.clone(),
                result.to_string(),
            ));
            self.streak = 1;
            self.told = false;
        }
        if self.streak < limit || self.told {
            return None;
        }
        self.told = true;
        Some(format!(
            "[Note: this is the {} identical `{}` call in a row, and the result has not \
             changed. Repeating it will not change it: use the result, try something \
             different, or give your final answer. The same call again will stop the turn.]",
            ordinal(self.streak),
            call.name
        ))
    }
}

fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(command: &str) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: "bash".into(),
            arguments: serde_json::json!({ "command": command }).to_string(),
        }
    }

    #[test]
    fn the_third_identical_call_is_pointed_out_and_the_fourth_stops() {
        let mut guard = RepeatGuard::new(Some(3));
        let status = call("git status");
        for _ in 0..2 {
            assert_eq!(guard.before(&status), Verdict::Go);
            assert_eq!(guard.after(&status, "clean"), None);
        }
        assert_eq!(guard.before(&status), Verdict::Go);
        let note = guard.after(&status, "clean").unwrap_or_default();
        assert!(note.contains("3rd identical `bash` call"), "{note}");
        assert!(matches!(guard.before(&status), Verdict::Stop { .. }));
        assert_eq!(guard.before(&call("git diff")), Verdict::Go);
    }

    #[test]
    fn a_changed_result_or_call_starts_again() {
        let mut guard = RepeatGuard::new(Some(3));
        let status = call("git status");
        assert_eq!(guard.after(&status, "a"), None);
        assert_eq!(guard.after(&status, "a"), None);
        assert_eq!(guard.after(&status, "b"), None, "the result changed");
        assert_eq!(guard.after(&status, "b"), None);
        assert_eq!(guard.after(&call("ls"), "b"), None);
        assert_eq!(guard.after(&status, "b"), None);
        assert_eq!(guard.before(&status), Verdict::Go);
        assert!(RepeatGuard::new(None).after(&status, "b").is_none());
        let mut off = RepeatGuard::new(Some(0));
        for _ in 0..10 {
            assert_eq!(off.after(&status, "b"), None);
        }
        assert_eq!(off.before(&status), Verdict::Go);
        assert_eq!(ordinal(22), "22nd");
        assert_eq!(ordinal(12), "12th");
    }
}
