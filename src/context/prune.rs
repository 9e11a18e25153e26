//! Pruning (SPEC §7.2): old tool results replaced by a stub that says what was removed and
//! how to get it back.
//!
//! Invariants: a pruned tool message keeps its role and `tool_call_id`, so every call still
//! has exactly one result (pairs are never broken); only the content changes. The most
//! recent `keep_recent` tool results, results shorter than [`MIN_PRUNE_BYTES`], results that
//! are already stubs, and `task` results (a subagent's distilled answer, expensive to get
//! again) are never pruned. A plan covers every eligible result at once, so pruning happens
//! in rare large steps and the request prefix stays byte-identical between steps (provider
//! prompt caches keep being reused). Stubs are addressed by history index and call id, which
//! makes a recorded plan replayable on resume.

use serde::{Deserialize, Serialize};

use super::tokens::estimate_text;
use crate::model::{Message, Role, types::parse_arguments};

/// Results shorter than this (bytes) are left alone: a stub would save almost nothing.
pub(crate) const MIN_PRUNE_BYTES: usize = 512;
/// Every stub starts with this, which also marks a result as already pruned.
pub const STUB_PREFIX: &str = "[pruned to save context: ";
/// Tools whose results are never pruned.
const NEVER_PRUNED: &[&str] = &["task"];
/// Longest call summary quoted in a stub, in characters.
const SUMMARY_CHARS: usize = 160;

/// One replaced tool result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stub {
    /// Index of the tool message in the history the plan was made for.
    pub(crate) index: usize,
    /// Its `tool_call_id` (checked before replacing, so a stale plan changes nothing).
    pub(crate) id: String,
    /// The replacement text.
    pub(crate) text: String,
}

/// What a prune would do.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct PrunePlan {
    pub(crate) stubs: Vec<Stub>,
    /// Estimated tokens saved.
    pub(crate) saved_tokens: u64,
}

/// Plans stubs for every eligible tool result except the last `keep_recent` results.
pub(crate) fn plan(history: &[Message], keep_recent: usize) -> PrunePlan {
    let results: Vec<usize> = history
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::Tool)
        .map(|(i, _)| i)
        .collect();
    let older = results.len().saturating_sub(keep_recent);
    let mut out = PrunePlan::default();
    for &index in &results[..older] {
        let message = &history[index];
        let content = message.text_content();
        if content.len() < MIN_PRUNE_BYTES || content.starts_with(STUB_PREFIX) {
            continue;
        }
        let id = message.tool_call_id.clone().unwrap_or_default();
        let (tool, arguments) = find_call(history, index, &id);
        if NEVER_PRUNED.contains(&tool.as_str()) {
            continue;
        }
        let text = stub_text(&tool, &arguments, content.chars().count());
        out.saved_tokens += estimate_text(content).saturating_sub(estimate_text(&text));
        out.stubs.push(Stub { index, id, text });
    }
    out
}

/// Replaces the planned results. A stub whose index no longer holds a tool message with
/// that id is skipped. Returns how many were replaced.
pub(crate) fn apply(history: &mut [Message], stubs: &[Stub]) -> usize {
    let mut replaced = 0;
    for stub in stubs {
        let Some(message) = history.get_mut(stub.index) else {
            continue;
        };
        if message.role == Role::Tool && message.tool_call_id.as_deref() == Some(&stub.id) {
            message.content = Some(stub.text.clone());
            replaced += 1;
        }
    }
    replaced
}

/// The tool name and arguments of the call answered by the tool message at `index`: the
/// nearest earlier assistant message holding a call with that id.
fn find_call(history: &[Message], index: usize, id: &str) -> (String, String) {
    history[..index]
        .iter()
        .rev()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| m.tool_calls.iter())
        .find(|call| call.id == id)
        .map(|call| (call.name.clone(), call.arguments.clone()))
        .unwrap_or_default()
}

/// The stub for a result of `tool` called with `arguments`, `chars` characters long.
pub(crate) fn stub_text(tool: &str, arguments: &str, chars: usize) -> String {
    let args = parse_arguments(arguments).unwrap_or_default();
    let field = |key: &str| {
        args.get(key)
            .and_then(|v| v.as_str())
            .map(|s| shorten(s, SUMMARY_CHARS))
    };
    let size = format!("{} characters", group_digits(chars));
    let (what, how) = match (tool, field("command"), field("path"), field("name")) {
        ("bash", Some(command), _, _) => (
            format!("the output of bash `{command}` ({size})"),
            "run the command again if you need it",
        ),
        ("read_file", _, Some(path), _) => (
            format!("the content of `{path}` read earlier ({size})"),
            "read the file again if you need it",
        ),
        ("read_skill", _, _, Some(name)) => (
            format!("the skill `{name}` ({size})"),
            "call read_skill again if you need it",
        ),
        (_, _, Some(path), _) => (
            format!("the result of {tool} on `{path}` ({size})"),
            "repeat the call if you need it",
        ),
        _ => (
            format!(
                "the result of {} ({size})",
                if tool.is_empty() { "a tool call" } else { tool }
            ),
            "repeat the call if you need it",
        ),
    };
    format!("{STUB_PREFIX}{what} was removed; {how}]")
}

fn shorten(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut out: String = one_line.chars().take(max).collect();
    out.push('…');
    out
}

/// `20480` → `20,480`.
pub(crate) fn group_digits(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;
    use pretty_assertions::assert_eq;

    fn call(id: &str, name: &str, args: &str) -> Message {
        Message {
            content: None,
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: args.into(),
            }],
            ..Message::assistant("")
        }
    }

    fn session() -> Vec<Message> {
        let big = "x".repeat(2000);
        vec![
            Message::user("go"),
            call("a", "bash", r#"{"command":"cargo test"}"#),
            Message::tool_result("a", big.clone()),
            call("b", "read_file", r#"{"path":"src/lib.rs"}"#),
            Message::tool_result("b", big.clone()),
            call("c", "bash", r#"{"command":"ls"}"#),
            Message::tool_result("c", "short"),
            call("d", "task", r#"{"description":"x","prompt":"y"}"#),
            Message::tool_result("d", big.clone()),
            call("e", "bash", r#"{"command":"cat big"}"#),
            Message::tool_result("e", big),
        ]
    }

    #[test]
    fn stubs_old_large_results_and_keeps_pairs() {
        let mut history = session();
        let plan = plan(&history, 1);
        let indices: Vec<usize> = plan.stubs.iter().map(|s| s.index).collect();
        assert_eq!(indices, vec![2, 4]);
        assert_eq!(
            plan.stubs[0].text,
            "[pruned to save context: the output of bash `cargo test` (2,000 characters) was \
             removed; run the command again if you need it]"
        );
        assert_eq!(
            plan.stubs[1].text,
            "[pruned to save context: the content of `src/lib.rs` read earlier (2,000 \
             characters) was removed; read the file again if you need it]"
        );
        assert!(plan.saved_tokens > 900);
        assert_eq!(apply(&mut history, &plan.stubs), 2);
        let roles: Vec<Role> = history.iter().map(|m| m.role).collect();
        assert_eq!(roles, session().iter().map(|m| m.role).collect::<Vec<_>>());
        assert_eq!(history[2].tool_call_id.as_deref(), Some("a"));
        // A second plan finds nothing new: stubs are not pruned again.
        assert_eq!(super::plan(&history, 1).stubs, vec![]);
    }

    #[test]
    fn keeps_recent_results_and_skips_stale_stubs() {
        let history = session();
        assert_eq!(plan(&history, 5).stubs, vec![]);
        let mut changed = session();
        let stale = Stub {
            index: 2,
            id: "zz".into(),
            text: "x".into(),
        };
        assert_eq!(apply(&mut changed, &[stale]), 0);
        assert_eq!(changed, history);
    }

    #[test]
    fn digits_are_grouped() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1_234_567), "1,234,567");
    }
}
