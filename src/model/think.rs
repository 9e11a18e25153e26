//! Reasoning written into `content` as a leading `<think>…</think>` block.
//!
//! Servers without a reasoning parser (vLLM without `--reasoning-parser`, Ollama's and LM
//! Studio's older versions, llama.cpp with `--reasoning-format none`) stream the thinking of
//! DeepSeek-R1 distills, Qwen3 and QwQ inside `content`. [`ThinkSplitter`] moves such a block
//! to the reasoning side, so it is shown dimmed, never taken for the answer, and does not stop
//! a tool call written as text after it from being recognised. Only a block that opens the
//! content (after whitespace) counts; `<think>` anywhere else is ordinary text. Pieces may split
//! the tags anywhere; the result does not depend on how the text was chunked.

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing but whitespace or a prefix of `<think>` seen yet.
    #[default]
    Start,
    Inside,
    /// After `</think>`: leading whitespace of the answer is dropped.
    AfterThink,
    /// Plain content.
    Content,
}

/// Splits streamed content into (reasoning, content) pieces.
#[derive(Debug, Default, Clone)]
pub struct ThinkSplitter {
    state: State,
    pending: String,
}

/// The text a piece contributes to each side.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Split {
    pub reasoning: String,
    pub content: String,
}

impl ThinkSplitter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one piece of content.
    pub fn push(&mut self, text: &str) -> Split {
        let mut out = Split::default();
        if self.state == State::Content {
            out.content.push_str(text);
            return out;
        }
        self.pending.push_str(text);
        self.advance(&mut out);
        out
    }

    /// Ends the content: text held back as a possible tag is released. An unclosed block is
    /// reasoning (generation stopped while thinking).
    pub fn finish(&mut self) -> Split {
        let rest = std::mem::take(&mut self.pending);
        match self.state {
            State::Inside => Split {
                reasoning: rest,
                content: String::new(),
            },
            _ => Split {
                reasoning: String::new(),
                content: rest,
            },
        }
    }

    fn advance(&mut self, out: &mut Split) {
        loop {
            match self.state {
                State::Start => {
                    let trimmed = self.pending.trim_start();
                    if trimmed.is_empty() || (OPEN.starts_with(trimmed) && trimmed != OPEN) {
                        return;
                    }
                    if let Some(rest) = trimmed.strip_prefix(OPEN) {
                        self.pending = rest.to_string();
                        self.state = State::Inside;
                    } else {
                        out.content.push_str(&std::mem::take(&mut self.pending));
                        self.state = State::Content;
                        return;
                    }
                }
                State::Inside => {
                    if let Some(end) = self.pending.find(CLOSE) {
                        out.reasoning.push_str(&self.pending[..end]);
                        self.pending = self.pending[end + CLOSE.len()..].to_string();
                        self.state = State::AfterThink;
                    } else {
                        let keep = partial_suffix(&self.pending, CLOSE);
                        let cut = self.pending.len() - keep;
                        out.reasoning.push_str(&self.pending[..cut]);
                        self.pending.drain(..cut);
                        return;
                    }
                }
                State::AfterThink => {
                    let trimmed = self.pending.trim_start();
                    if trimmed.is_empty() {
                        self.pending.clear();
                        return;
                    }
                    out.content.push_str(trimmed);
                    self.pending.clear();
                    self.state = State::Content;
                    return;
                }
                State::Content => return,
            }
        }
    }
}

/// Length in bytes of the longest suffix of `text` that is a proper prefix of `tag` (ASCII).
fn partial_suffix(text: &str, tag: &str) -> usize {
    (1..tag.len())
        .rev()
        .find(|&n| text.as_bytes().ends_with(&tag.as_bytes()[..n]))
        .unwrap_or(0)
}

/// Splits a whole content string at once (non-streamed answers).
pub fn split_whole(content: &str) -> Split {
    let mut splitter = ThinkSplitter::new();
    let mut out = splitter.push(content);
    let rest = splitter.finish();
    out.reasoning.push_str(&rest.reasoning);
    out.content.push_str(&rest.content);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn split(reasoning: &str, content: &str) -> Split {
        Split {
            reasoning: reasoning.into(),
            content: content.into(),
        }
    }

    #[test]
    fn whole_strings() {
        let cases = [
            (
                "<think>\nplan\n</think>\n\nanswer",
                split("\nplan\n", "answer"),
            ),
            ("  <think>a</think>b", split("a", "b")),
            (
                "answer <think>x</think>",
                split("", "answer <think>x</think>"),
            ),
            ("<thinking>x", split("", "<thinking>x")),
            ("<think>cut off", split("cut off", "")),
            ("<thi", split("", "<thi")),
            ("", split("", "")),
            ("   ", split("", "   ")),
            ("<think></think>", split("", "")),
        ];
        for (input, expected) in cases {
            assert_eq!(split_whole(input), expected, "{input:?}");
        }
    }

    #[test]
    fn any_chunking_gives_the_same_split() {
        let input = "\n<think>I will call ls. <b></thin</think>\n<tool_call>{}</tool_call>";
        let expected = split_whole(input);
        let chars: Vec<(usize, char)> = input.char_indices().collect();
        for (a, _) in &chars {
            for (b, _) in chars.iter().filter(|(b, _)| b >= a) {
                let mut splitter = ThinkSplitter::new();
                let mut total = Split::default();
                for piece in [&input[..*a], &input[*a..*b], &input[*b..]] {
                    let part = splitter.push(piece);
                    total.reasoning.push_str(&part.reasoning);
                    total.content.push_str(&part.content);
                }
                let rest = splitter.finish();
                total.reasoning.push_str(&rest.reasoning);
                total.content.push_str(&rest.content);
                assert_eq!(total, expected, "split at {a},{b}");
            }
        }
    }
}
