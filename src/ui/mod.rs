//! What the user sees: event rendering (text for terminals and pipes, JSON lines for
//! scripts), the line editor's helper, and the approval prompt.
//!
//! Rendering is pure where it can be ([`markdown`], [`diff`], [`lines`], [`table`]: inputs,
//! a [`style::Painter`] and a width in, a `String` out) and the sinks ([`terminal`], [`json`])
//! only decide what to render when and where to write it.

pub mod announce;
pub mod approval;
pub mod checkpoints;
pub mod diff;
pub mod highlight;
pub mod inline;
pub mod input;
pub mod json;
pub mod lines;
pub mod markdown;
pub mod print;
pub mod spinner;
pub mod style;
pub mod table;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod visible;
pub mod wrap;
