//! Why a request did not fit the context window, in words the user can act on.
//!
//! After a context-length error the parts of the rejected request are measured (token
//! estimates, ≈ 4 bytes a token, see [`super::tokens`]): the system prompt with the AGENTS.md
//! instructions in it, the tool definitions and the per-request reminder (together the
//! *fixed* part), the user's message of this turn (the *task*), and the rest of the history
//! with its largest tool result. The fixed part and the task go out with every request of
//! the turn, so when they alone do not fit nothing done to the history can help: the larger
//! of the two is named, and nothing is dropped or summarized. Otherwise the history is what
//! has to shrink (compaction, then dropping the oldest turns), and the message names the
//! history or, when one tool result is most of it, that result.
//!
//! The user's message is never what gets dropped: the manager keeps it in the history and
//! the session file in every case (issue 13).

use std::fmt::Write as _;

use super::tokens::{BYTES_PER_TOKEN, estimate_message};
use crate::model::{Message, Role};

/// An AGENTS.md file in the system prompt: how it is shown, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InstructionSize {
    /// The path as the user knows it (relative to the workspace when inside it).
    pub(crate) shown: String,
    pub(crate) bytes: usize,
}

/// The measured parts of a rejected request, in estimated tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sizes {
    /// The context window in use (configured, or learned from the error).
    pub(crate) window: u64,
    /// The server stated its limit in the error.
    pub(crate) window_from_server: bool,
    /// The whole system prompt (instructions included).
    pub(crate) system_prompt: u64,
    /// Tool definitions and the reminder.
    pub(crate) tools: u64,
    /// The AGENTS.md files in the system prompt.
    pub(crate) instructions: Vec<InstructionSize>,
    /// The user's message of this turn; 0 when not known.
    pub(crate) task: u64,
    /// Every other message.
    pub(crate) history: u64,
    /// Messages in `history`.
    pub(crate) history_messages: usize,
    /// The largest tool result in `history`: tool name and tokens.
    pub(crate) largest_result: Option<(String, u64)>,
}

/// The part of the request to blame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Blame {
    /// The AGENTS.md instructions are most of a system prompt that alone does not fit.
    Instructions,
    /// The system prompt and tool definitions alone do not fit.
    SystemPrompt,
    /// The user's message of this turn does not fit next to the system prompt.
    Task,
    /// One tool result is most of the history.
    ToolResult { tool: String, tokens: u64 },
    /// The conversation so far.
    History,
}

impl Sizes {
    /// Measures `history` (with `task` the index of the user's message of this turn) against
    /// `window`; `system_prompt` and `tools` are token estimates of the fixed part.
    pub(crate) fn measure(
        history: &[Message],
        task: Option<usize>,
        system_prompt: u64,
        tools: u64,
        instructions: Vec<InstructionSize>,
    ) -> Self {
        let task = task.filter(|&i| history.get(i).is_some_and(|m| m.role == Role::User));
        let mut sizes = Self {
            window: 0,
            window_from_server: false,
            system_prompt,
            tools,
            instructions,
            task: task.map_or(0, |i| estimate_message(&history[i])),
            history: 0,
            history_messages: 0,
            largest_result: None,
        };
        for (i, message) in history.iter().enumerate() {
            if Some(i) == task {
                continue;
            }
            let tokens = estimate_message(message);
            sizes.history += tokens;
            sizes.history_messages += 1;
            if message.role == Role::Tool
                && sizes
                    .largest_result
                    .as_ref()
                    .is_none_or(|(_, t)| tokens > *t)
            {
                sizes.largest_result = Some((tool_name(history, message), tokens));
            }
        }
        sizes
    }

    /// System prompt, tools and reminder: sent with every request.
    pub(crate) fn fixed(&self) -> u64 {
        self.system_prompt + self.tools
    }

    /// Whether shrinking the history can make the request fit: the fixed part and the task
    /// fit the window on their own, and there is history to shrink.
    pub(crate) fn history_can_help(&self) -> bool {
        self.fixed() + self.task < self.window && self.history > 0
    }

    /// The instructions' share of the system prompt, in estimated tokens.
    fn instruction_tokens(&self) -> u64 {
        self.instructions
            .iter()
            .map(|file| (file.bytes as u64).div_ceil(BYTES_PER_TOKEN))
            .sum()
    }

    /// What to blame (see the module doc).
    pub(crate) fn blame(&self) -> Blame {
        if !self.history_can_help() {
            if self.task > self.fixed() {
                return Blame::Task;
            }
            return if self.instruction_tokens() * 2 >= self.system_prompt {
                Blame::Instructions
            } else {
                Blame::SystemPrompt
            };
        }
        match &self.largest_result {
            Some((tool, tokens)) if tokens * 2 >= self.history => Blame::ToolResult {
                tool: tool.clone(),
                tokens: *tokens,
            },
            _ => Blame::History,
        }
    }

    /// What takes the room, with sizes, and the fix that helps (lowercase clauses joined
    /// with `; `, for the end-of-turn error).
    pub(crate) fn explain(&self) -> String {
        let window = thousands(self.window);
        let fixed = thousands(self.fixed());
        let raise = if self.window_from_server {
            "use a model or server with a larger context window (llama-server `-c`, Ollama \
             `num_ctx`)"
        } else {
            "raise `context_window` under [context] in config.toml if the model allows more"
        };
        let room = if self.fixed() >= self.window {
            format!("more than the whole context window of {window} tokens")
        } else {
            format!(
                "which leaves {} of the context window's {window} tokens, too few for this turn",
                thousands(self.window - self.fixed())
            )
        };
        match self.blame() {
            Blame::Instructions => format!(
                "the AGENTS.md instructions ({}) are about {} tokens of a {}-token system \
                 prompt; with the tool definitions that is about {fixed} tokens, {room}; your \
                 message was not the problem and was kept; shorten AGENTS.md, or {raise}",
                self.instruction_files(),
                thousands(self.instruction_tokens()),
                thousands(self.system_prompt),
            ),
            Blame::SystemPrompt => format!(
                "the system prompt and tool definitions are about {fixed} tokens, {room}; your \
                 message was not the problem and was kept; {raise}"
            ),
            Blame::Task => format!(
                "your message is about {} tokens and the system prompt and tool definitions \
                 about {fixed}, together more than the context window of {window} tokens; your \
                 message was kept in the conversation; save the text to a file and name the \
                 file in a short message, or {raise}",
                thousands(self.task)
            ),
            Blame::ToolResult { tool, tokens } => format!(
                "a `{tool}` result of about {} tokens is most of the conversation ({} tokens \
                 in {} messages), which with the system prompt and tool definitions ({fixed} \
                 tokens) does not fit the context window of {window} tokens; lower \
                 `max_output_chars` under [context] in config.toml, or {raise}",
                thousands(tokens),
                thousands(self.history),
                self.history_messages
            ),
            Blame::History => format!(
                "the conversation so far is about {} tokens in {} messages, which with the \
                 system prompt and tool definitions ({fixed} tokens) does not fit the context \
                 window of {window} tokens; `/compact` or `/clear` makes room, or {raise}",
                thousands(self.history),
                self.history_messages
            ),
        }
    }

    /// `` `AGENTS.md` 28,000 bytes, `~/.agents/AGENTS.md` 120 bytes `` (largest first, at most 3).
    fn instruction_files(&self) -> String {
        let mut files: Vec<&InstructionSize> = self.instructions.iter().collect();
        files.sort_by_key(|file| std::cmp::Reverse(file.bytes));
        let mut out = String::new();
        for (i, file) in files.iter().take(3).enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let _ = write!(
                out,
                "`{}` {} bytes",
                file.shown,
                thousands(file.bytes as u64)
            );
        }
        if files.len() > 3 {
            let _ = write!(out, " and {} more", files.len() - 3);
        }
        out
    }
}

/// The tool whose call `result` answers, or `tool` when the call is not found.
fn tool_name(history: &[Message], result: &Message) -> String {
    history
        .iter()
        .flat_map(|m| &m.tool_calls)
        .find(|call| Some(&call.id) == result.tool_call_id.as_ref())
        .map_or_else(|| "tool".to_string(), |call| call.name.clone())
}

/// `7350` → `7,350`.
pub(crate) fn thousands(n: u64) -> String {
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

    fn agents_md(bytes: usize) -> Vec<InstructionSize> {
        vec![InstructionSize {
            shown: "AGENTS.md".into(),
            bytes,
        }]
    }

    fn sizes(history: &[Message], task: Option<usize>, system: u64, md: usize) -> Sizes {
        let mut sizes = Sizes::measure(history, task, system, 400, agents_md(md));
        sizes.window = 4096;
        sizes
    }

    fn bash_turn(output: &str) -> Vec<Message> {
        vec![
            Message::user("look at the log"),
            Message {
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "bash".into(),
                    arguments: "{}".into(),
                }],
                ..Message::assistant("")
            },
            Message::tool_result("c1", output),
            Message::assistant("it is long"),
        ]
    }

    #[test]
    fn the_part_that_does_not_fit_is_blamed() {
        let task = vec![Message::user("check the build")];
        // The report: a 28 KB AGENTS.md and a 4,096-token window.
        assert_eq!(
            sizes(&task, Some(0), 7_500, 28_000).blame(),
            Blame::Instructions
        );
        assert_eq!(
            sizes(&task, Some(0), 5_000, 400).blame(),
            Blame::SystemPrompt
        );
        let pasted = vec![Message::user("x".repeat(40_000))];
        assert_eq!(sizes(&pasted, Some(0), 1_000, 0).blame(), Blame::Task);
        let mut history = bash_turn(&"y".repeat(14_000));
        history.push(Message::user("and now?"));
        assert_eq!(
            sizes(&history, Some(4), 1_000, 0).blame(),
            Blame::ToolResult {
                tool: "bash".into(),
                tokens: 3_504
            }
        );
        let chat: Vec<Message> = (0..40)
            .map(|i| Message::user(format!("{i} {}", "z".repeat(400))))
            .collect();
        assert_eq!(sizes(&chat, Some(39), 1_000, 0).blame(), Blame::History);
    }

    #[test]
    fn the_message_names_sizes_and_the_fix() {
        let task = vec![Message::user("check the build")];
        let text = sizes(&task, Some(0), 7_350, 28_000).explain();
        assert_eq!(
            text,
            "the AGENTS.md instructions (`AGENTS.md` 28,000 bytes) are about 7,000 tokens of a \
             7,350-token system prompt; with the tool definitions that is about 7,750 tokens, \
             more than the whole context window of 4,096 tokens; your message was not the \
             problem and was kept; shorten AGENTS.md, or raise `context_window` under \
             [context] in config.toml if the model allows more"
        );
        let text = sizes(&task, Some(0), 3_500, 400).explain();
        assert!(
            text.starts_with(
                "the system prompt and tool definitions are about 3,900 tokens, which leaves \
                 196 of the context window's 4,096 tokens, too few for this turn;"
            ),
            "{text}"
        );
        let mut server = sizes(&[Message::user("x".repeat(40_000))], Some(0), 1_000, 0);
        server.window_from_server = true;
        assert!(
            server
                .explain()
                .starts_with("your message is about 10,004 tokens"),
            "{}",
            server.explain()
        );
        assert!(
            server
                .explain()
                .ends_with("llama-server `-c`, Ollama `num_ctx`)")
        );
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(
            [0, 999, 1_000, 28_672, 1_234_567].map(thousands),
            ["0", "999", "1,000", "28,672", "1,234,567"].map(String::from)
        );
    }
}
