//! What the user sees: event rendering (text for terminals and pipes, JSON lines for
//! scripts), the line editor's helper, and the approval prompt.
//!
//! Rendering is pure where it can be ([`markdown`], [`diff`], [`lines`], [`table`]: inputs,
//! a [`style::Painter`] and a width in, a `String` out) and the sinks ([`terminal`], [`json`])
//! only decide what to render when and where to write it.

pub(crate) mod announce;
pub(crate) mod approval;
pub(crate) mod checkpoints;
pub mod diff;
pub mod highlight;
pub(crate) mod inline;
pub(crate) mod input;
pub mod json;
pub mod lines;
pub mod markdown;
pub(crate) mod notify;
pub(crate) mod print;
pub mod spinner;
pub mod style;
pub(crate) mod table;
pub mod terminal;
pub mod text;
pub mod theme;
pub(crate) mod wrap;
