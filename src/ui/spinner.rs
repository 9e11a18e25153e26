//! The "waiting" indicator: one line, redrawn in place, cleared before anything else prints.
//!
//! It lives only in colour mode on a terminal. The drawing thread and the event sink share
//! one lock around the screen, so a frame can never land in the middle of other output;
//! the sink clears the frame before it writes anything and the thread draws only while the
//! sink says it is waiting and the cursor is at the start of a line. The thread holds a weak
//! reference and ends when the sink is dropped.

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use super::style::Painter;
use super::{text, theme};

/// Braille frames, one per tick.
const FRAMES: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Time between frames.
pub(crate) const TICK: Duration = Duration::from_millis(80);
/// Waits shorter than this show no spinner at all (no flicker on fast answers).
pub(crate) const DELAY: Duration = Duration::from_millis(100);
/// Erases the current line and returns to its start.
pub(crate) const CLEAR: &str = "\r\x1b[2K";

/// What is being waited for, and since when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    pub label: &'static str,
    pub since: Instant,
    /// Characters received so far, for a reply that is being written but not shown yet.
    pub chars: Option<usize>,
}

/// One frame: `⠹ thinking 3s · Ctrl-C to interrupt`, or with a count of characters received
/// `⠹ writing 1.2k chars 3s · Ctrl-C to interrupt`, fitted to `width` (0 = any width).
pub fn frame(
    index: usize,
    waiting: &Waiting,
    elapsed: Duration,
    painter: Painter,
    width: usize,
) -> String {
    let spinner = FRAMES[index % FRAMES.len()];
    let count = waiting.chars.map_or(String::new(), |chars| {
        format!(" {} chars", text::compact_number(chars as u64))
    });
    let words = format!(
        "{}{count} {}s · Ctrl-C to interrupt",
        waiting.label,
        elapsed.as_secs()
    );
    let words = if width > 2 {
        text::truncate(&words, width - 3)
    } else {
        words
    };
    format!(
        "{} {}",
        painter.paint(theme::SPINNER, spinner),
        painter.paint(theme::SECONDARY, &words)
    )
}

/// The screen side of the spinner, implemented by the sink's locked state.
pub(crate) trait Canvas: Send + 'static {
    /// Draws frame `index` if the sink is waiting and the cursor is free.
    fn tick(&mut self, index: usize);
}

/// Starts the drawing thread for `canvas`; it ends when the last strong reference is gone.
pub(crate) fn spawn<C: Canvas>(canvas: &Arc<Mutex<C>>) {
    let weak: Weak<Mutex<C>> = Arc::downgrade(canvas);
    let spawned = std::thread::Builder::new()
        .name("spinner".into())
        .spawn(move || {
            let mut index = 0usize;
            loop {
                std::thread::sleep(TICK);
                let Some(canvas) = weak.upgrade() else {
                    return;
                };
                let mut canvas = match canvas.lock() {
                    Ok(canvas) => canvas,
                    Err(poisoned) => poisoned.into_inner(),
                };
                canvas.tick(index);
                index = index.wrapping_add(1);
            }
        });
    // Without a thread there is simply no spinner.
    drop(spawned);
}
