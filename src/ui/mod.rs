//! What the user sees: event rendering and the approval prompt.

pub mod approval;
pub mod terminal;
pub mod visible;
