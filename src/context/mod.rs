//! Context and memory (SPEC §7.2, §7.3, §8.1, §8.2): keeping long sessions inside the model's
//! context window, and what the model is told about the project.
//!
//! - [`tokens`]: the token estimate and the per-model context-window table.
//! - [`prune`]: old tool results replaced by stubs, in rare large steps.
//! - [`compact`]: older history summarized into a handoff note.
//! - [`manager`]: decides, before each request, whether to prune or compact, and recovers
//!   from context-length errors.
//! - [`overflow`]: which part of a rejected request did not fit, and the fix to suggest.
//! - [`instructions`]: AGENTS.md files and the skills listing for the system prompt.
//! - [`skills`]: skill discovery (`SKILL.md` with frontmatter).
//! - [`commands`]: custom slash commands (`.agents/commands/*.md`, and skills as `/name`).

pub mod commands;
pub mod compact;
pub(crate) mod instructions;
pub(crate) mod manager;
pub(crate) mod memory;
pub(crate) mod overflow;
pub mod prune;
pub(crate) mod skill_tool;
pub mod skills;
pub(crate) mod tokens;

pub use manager::{ContextManager, HistoryEdit};
pub use memory::Memory;

pub use crate::config::context::{
    ContextSettings, DEFAULT_COMPACT_AT, DEFAULT_KEEP_RECENT, DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_PRUNE_AT, DEFAULT_WINDOW, MIN_MAX_OUTPUT_CHARS,
};

/// Why a text file the context reads (an AGENTS.md, a SKILL.md) is not used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unusable {
    /// It cannot be read (a symlink loop, no permission): the system's message.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A directory, a FIFO that would block, a device.
    #[error("it is not a regular file")]
    NotAFile,
    #[error("it is binary, not text")]
    Binary,
    /// Over the limit in bytes.
    #[error("it is {size} bytes, over the {limit}-byte limit")]
    TooLarge { size: u64, limit: u64 },
}
