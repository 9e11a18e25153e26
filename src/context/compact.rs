//! Compaction (SPEC §7.3): older history turned into a handoff note by one model call; the
//! recent turns stay verbatim. The system prompt (with AGENTS.md and the skills listing) is
//! not part of the history, so it always survives unchanged.
//!
//! Shape after compaction: `[user: handoff note]`, then `[assistant: acknowledgement]` when
//! the next message is a user message (strict chat templates want roles to alternate), then
//! the kept tail. The tail always starts at a user or assistant message, never at a tool
//! result, so no call/result pair is split.
//!
//! The summary request comes in two forms. The *prefix* form is the normal request prefix
//! (system prompt, the older history, the same tools) plus one instruction, so a provider's
//! prompt cache serves almost all of it. The *transcript* form renders the older history as
//! bounded plain text with a short system prompt and no tools; it is used when the prefix
//! form would not fit (by estimate, or because the server said so), when it answered with
//! tool calls instead of text, and when recovering from a context-length error. If even that overflows, the oldest turns are dropped with a
//! note saying so ([`dropped`]).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::tokens::{estimate_messages, estimate_text, estimate_tools};
use crate::cancel::CancelToken;
use crate::events::{AgentEvent, EventSink};
use crate::model::{ChatRequest, Client, Message, ModelError, Role, StreamEvent, ToolSpec};

/// The instruction that asks for the handoff note.
pub const INSTRUCTION: &str = "Write a handoff note so that work can continue in a fresh \
context that only has this note and the latest messages. Do not call tools. Use these \
markdown sections: ## Goal (the user's request and constraints, exact wording where it \
matters), ## What happened, ## Files touched (paths and what changed), ## Current state \
(what works, what fails, last errors), ## Next steps. Keep exact paths, commands, names \
and error messages. At most 600 words.";

/// First line of the note stored in history.
pub const NOTE_HEADER: &str =
    "[Handoff note: the earlier part of this session was compacted to save context.]";

/// The assistant's reply to the note when a user message follows.
pub const ACK: &str = "Understood. I have the handoff note and will continue from it.";

/// System prompt of the transcript form.
const TRANSCRIPT_SYSTEM: &str =
    "You summarize a coding agent's session transcript into a handoff note.";
/// Longest text kept of one message in a transcript, in bytes.
const TRANSCRIPT_MESSAGE_BYTES: usize = 4_000;
/// Longest text kept of one tool result in a transcript, in bytes.
const TRANSCRIPT_RESULT_BYTES: usize = 1_500;

/// A recorded compaction: the history becomes `head` followed by the old history from
/// `kept_from` on. Stored in the session file so resume rebuilds the same history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    pub(crate) head: Vec<Message>,
    pub(crate) kept_from: usize,
}

impl Compaction {
    /// Applies this compaction to `history`.
    pub(crate) fn apply(&self, history: &mut Vec<Message>) {
        let tail = history.split_off(self.kept_from.min(history.len()));
        history.clear();
        history.extend(self.head.iter().cloned());
        history.extend(tail);
    }
}

/// Why no summary was made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CompactError {
    /// The summary request itself was too long; the caller drops turns instead.
    #[error("the summary request was too long for the context window: {0}")]
    Overflow(String),
    #[error("interrupted by user")]
    Interrupted,
    #[error("the summary request failed: {0}")]
    Model(ModelError),
    #[error("the model returned an empty summary")]
    Empty,
    #[error("nothing to compact yet")]
    Nothing,
}

/// The narrow view of a turn the context manager gets (instead of the loop itself): the
/// model to summarize with, the request frame (system prompt and tools) to estimate a
/// request and to keep the summary request's prefix cacheable, where to report, and the
/// cancel token.
pub(crate) struct ModelAccess<'a> {
    pub(crate) client: &'a Client,
    pub(crate) system_prompt: &'a str,
    /// The session's tools, offered in the prefix form so the request prefix is unchanged.
    pub(crate) tools: Vec<ToolSpec>,
    pub(crate) sink: &'a Arc<dyn EventSink>,
    pub(crate) cancel: &'a CancelToken,
}

/// The first index of the kept tail: the earliest user message (index ≥ 1, so whole turns
/// are kept) whose suffix fits `budget` tokens; when none fits and `mid_turn`, the earliest
/// assistant message that fits (the running turn's latest steps stay verbatim).
/// `history.len()` (empty tail) when nothing fits.
pub(crate) fn choose_tail(history: &[Message], budget: u64, mid_turn: bool) -> usize {
    let mut suffix = vec![0u64; history.len() + 1];
    for i in (0..history.len()).rev() {
        suffix[i] = suffix[i + 1] + super::tokens::estimate_message(&history[i]);
    }
    let fits = |i: usize| suffix[i] <= budget;
    let boundary = |role: Role| (1..history.len()).find(|&i| history[i].role == role && fits(i));
    let assistant =
        (1..history.len()).find(|&i| mid_turn && history[i].role != Role::Tool && fits(i));
    boundary(Role::User).or(assistant).unwrap_or(history.len())
}

/// The head for a summary: the note, plus the acknowledgement when `next_is_user`.
pub(crate) fn head(summary: &str, next_is_user: bool) -> Vec<Message> {
    let mut head = vec![Message::harness(format!(
        "{NOTE_HEADER}\n\n{}",
        summary.trim()
    ))];
    if next_is_user {
        head.push(Message::assistant(ACK));
    }
    head
}

/// A compaction that drops `history[..kept_from]` without a summary, saying so. `keep` is the
/// index of the user's message of the running turn: when it is among the dropped messages it
/// is kept verbatim, before the note, so the model (and a resumed session) still has it.
pub(crate) fn dropped(
    history: &[Message],
    kept_from: usize,
    idle: bool,
    keep: Option<usize>,
) -> Compaction {
    let kept = keep.filter(|&i| i < kept_from).and_then(|i| history.get(i));
    let note = format!(
        "[The earlier part of this session ({} messages) was dropped to fit the model's \
         context window; it could not be summarized. Ask the user if you need details from it.]",
        kept_from - usize::from(kept.is_some())
    );
    let next_is_user = history
        .get(kept_from)
        .map_or(idle, |m| m.role == Role::User);
    let mut head: Vec<Message> = kept.cloned().into_iter().collect();
    head.push(Message::harness(note));
    if next_is_user {
        head.push(Message::assistant(ACK));
    }
    Compaction { head, kept_from }
}

/// Asks the model for a handoff note about `older` (the history before the kept tail).
/// `prefix_budget` is the largest request (tokens) the prefix form may use; 0 forces the
/// transcript form, whose text is cut to `transcript_budget` tokens.
///
/// # Errors
/// [`CompactError`]: overflow, interruption, a failed or empty answer.
pub(crate) async fn summarize(
    access: &ModelAccess<'_>,
    older: &[Message],
    prefix_budget: u64,
    transcript_budget: u64,
    note_chars: usize,
) -> Result<String, CompactError> {
    if older.is_empty() {
        return Err(CompactError::Nothing);
    }
    let prefix_size = estimate_text(access.system_prompt)
        + estimate_tools(&access.tools)
        + estimate_messages(older)
        + estimate_text(INSTRUCTION);
    if prefix_size <= prefix_budget {
        let mut messages = Vec::with_capacity(older.len() + 2);
        messages.push(Message::system(access.system_prompt));
        messages.extend(older.iter().cloned());
        messages.push(Message::user(INSTRUCTION));
        let request = ChatRequest {
            messages,
            tools: access.tools.clone(),
        };
        match ask(access, &request, note_chars).await {
            Ok(summary) => return Ok(summary),
            Err(CompactError::Empty | CompactError::Overflow(_)) => {}
            Err(error) => return Err(error),
        }
    }
    let text = transcript(older, transcript_budget.saturating_mul(4) as usize);
    let request = ChatRequest {
        messages: vec![
            Message::system(TRANSCRIPT_SYSTEM),
            Message::user(format!(
                "<transcript>\n{text}\n</transcript>\n\n{INSTRUCTION}"
            )),
        ],
        tools: Vec::new(),
    };
    ask(access, &request, note_chars).await
}

/// One summary request; the answer's text (at most `note_chars` characters, see
/// [`cut_note`]), or `Empty` when it has none. A streamed answer that runs past the cap is
/// stopped there: a small model can ramble for thousands of tokens, and no request field
/// limits output on every server (`max_tokens` is refused by some, `max_completion_tokens`
/// unknown to others).
async fn ask(
    access: &ModelAccess<'_>,
    request: &ChatRequest,
    note_chars: usize,
) -> Result<String, CompactError> {
    let sink = Arc::clone(access.sink);
    let streamed = Arc::new(std::sync::Mutex::new(String::new()));
    let full = Arc::new(tokio::sync::Notify::new());
    let (buffer, cap_reached) = (Arc::clone(&streamed), Arc::clone(&full));
    let mut on_event = move |event: StreamEvent| {
        if let StreamEvent::Text(piece) = &event
            && let Ok(mut text) = buffer.lock()
            && text.len() <= note_chars
        {
            text.push_str(piece);
            if text.len() > note_chars {
                cap_reached.notify_one();
            }
        }
        if let StreamEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
        } = event
        {
            sink.emit(AgentEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason,
            });
        }
    };
    let result = tokio::select! {
        result = access.client.complete(request, &mut on_event) => result,
        () = access.cancel.cancelled() => return Err(CompactError::Interrupted),
        () = full.notified() => {
            let text = streamed.lock().map(|t| t.clone()).unwrap_or_default();
            return Ok(cut_note(text.trim(), note_chars));
        }
    };
    match result {
        Ok(completion) => {
            let text = completion.message.text_content().trim();
            if text.is_empty() {
                Err(CompactError::Empty)
            } else {
                Ok(cut_note(text, note_chars))
            }
        }
        Err(ModelError::ContextLengthExceeded { message }) => Err(CompactError::Overflow(message)),
        Err(error) => Err(CompactError::Model(error)),
    }
}

/// `note` cut to at most `max_chars` bytes at a line end (a character boundary when there
/// is no line end), with a line saying it was cut.
pub(crate) fn cut_note(note: &str, max_chars: usize) -> String {
    if note.len() <= max_chars {
        return note.to_string();
    }
    let mut end = max_chars;
    while !note.is_char_boundary(end) {
        end -= 1;
    }
    let end = note[..end].rfind('\n').filter(|at| *at > 0).unwrap_or(end);
    format!(
        "{}\n[handoff note cut at {max_chars} characters]",
        note[..end].trim_end()
    )
}

/// `messages` as plain text of at most about `budget_bytes`: the first user message is
/// always kept (it usually states the goal), then as many of the latest messages as fit,
/// with a line saying how many were left out between them.
pub(crate) fn transcript(messages: &[Message], budget_bytes: usize) -> String {
    let blocks: Vec<String> = messages.iter().map(render).collect();
    let first_user = messages.iter().position(|m| m.role == Role::User);
    let mut used = first_user.map_or(0, |i| blocks[i].len());
    let mut kept_from = blocks.len();
    for i in (0..blocks.len()).rev() {
        if Some(i) == first_user {
            kept_from = i;
            continue;
        }
        if used + blocks[i].len() > budget_bytes {
            break;
        }
        used += blocks[i].len();
        kept_from = i;
    }
    let mut out = String::with_capacity(used + 64);
    if let Some(i) = first_user.filter(|&i| i < kept_from) {
        out.push_str(&blocks[i]);
        let omitted = kept_from - i - 1;
        if omitted > 0 {
            out.push_str(&format!("[... {omitted} messages omitted ...]\n\n"));
        }
    } else if kept_from > 0 {
        out.push_str(&format!(
            "[... {kept_from} earlier messages omitted ...]\n\n"
        ));
    }
    for block in &blocks[kept_from..] {
        out.push_str(block);
    }
    out
}

fn render(message: &Message) -> String {
    let (label, limit) = match message.role {
        Role::System => ("system", TRANSCRIPT_MESSAGE_BYTES),
        Role::User => ("user", TRANSCRIPT_MESSAGE_BYTES),
        Role::Assistant => ("assistant", TRANSCRIPT_MESSAGE_BYTES),
        Role::Tool => ("tool result", TRANSCRIPT_RESULT_BYTES),
    };
    let mut out = format!("### {label}\n");
    let text = message.text_content().trim();
    if !text.is_empty() {
        out.push_str(&cut(text, limit));
        out.push('\n');
    }
    for call in &message.tool_calls {
        out.push_str(&format!("-> {} {}\n", call.name, cut(&call.arguments, 500)));
    }
    out.push('\n');
    out
}

/// `text` cut to at most `max` bytes on a character boundary, with a note of the cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} [... {} bytes cut]", &text[..end], text.len() - end)
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_long_note_is_cut_at_a_line_end() {
        assert_eq!(cut_note("short", 10), "short");
        assert_eq!(
            cut_note("## Goal\nfix it\n## Next\nmore text", 20),
            "## Goal\nfix it\n[handoff note cut at 20 characters]"
        );
        assert_eq!(
            cut_note("ééééé", 5),
            "éé\n[handoff note cut at 5 characters]"
        );
    }

    use super::*;
    use crate::model::ToolCall;
    use pretty_assertions::assert_eq;

    fn turn(n: usize, result_bytes: usize) -> Vec<Message> {
        let id = format!("c{n}");
        vec![
            Message::user(format!("task {n}")),
            Message {
                content: None,
                tool_calls: vec![ToolCall {
                    id: id.clone(),
                    name: "bash".into(),
                    arguments: "{}".into(),
                }],
                ..Message::assistant("")
            },
            Message::tool_result(id, "r".repeat(result_bytes)),
            Message::assistant(format!("done {n}")),
        ]
    }

    #[test]
    fn tail_starts_at_a_user_message_when_a_turn_fits() {
        let history: Vec<Message> = (0..4).flat_map(|n| turn(n, 400)).collect();
        // One turn is about 125 tokens; a budget of 300 keeps the last two turns.
        assert_eq!(choose_tail(&history, 300, true), 8);
        assert_eq!(history[8].role, Role::User);
    }

    #[test]
    fn tail_falls_back_to_an_assistant_boundary_never_a_tool_result() {
        let history: Vec<Message> = turn(0, 10).into_iter().chain(turn(1, 8000)).collect();
        // The last turn does not fit; its final assistant message does.
        assert_eq!(choose_tail(&history, 50, true), 7);
        assert_eq!(choose_tail(&history, 0, true), history.len());
        // Between turns the whole last turn is summarized rather than split.
        assert_eq!(choose_tail(&history, 50, false), history.len());
    }

    #[test]
    fn applying_keeps_the_tail_verbatim() {
        let history: Vec<Message> = (0..3).flat_map(|n| turn(n, 10)).collect();
        let compaction = Compaction {
            head: head("## Goal\nx", true),
            kept_from: 8,
        };
        let mut compacted = history.clone();
        compaction.apply(&mut compacted);
        assert_eq!(compacted.len(), 2 + 4);
        assert_eq!(compacted[0].role, Role::User);
        assert!(compacted[0].text_content().starts_with(NOTE_HEADER));
        assert_eq!(compacted[1], Message::assistant(ACK));
        assert_eq!(&compacted[2..], &history[8..]);
    }

    #[test]
    fn transcript_keeps_goal_and_latest_messages() {
        let history: Vec<Message> = (0..20).flat_map(|n| turn(n, 100)).collect();
        let text = transcript(&history, 1_000);
        assert!(text.starts_with("### user\ntask 0\n"), "{text}");
        assert!(text.contains("messages omitted"), "{text}");
        assert!(text.contains("done 19"), "{text}");
        assert!(text.len() < 1_200, "{}", text.len());
    }
}
