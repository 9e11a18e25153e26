//! Printing to stdout and stderr that never panics.
//!
//! `println!` and `eprintln!` panic when the stream is closed (`agent doctor | head -1`:
//! "failed printing to stdout: Broken pipe" and a backtrace). A reader that goes away is its
//! own choice, so these helpers write and ignore the error, like the event sinks do. The
//! crate denies `clippy::print_stdout` / `clippy::print_stderr` outside tests so new code
//! uses them ([`crate::outln`], [`crate::out`], [`crate::errln`]).

use std::io::Write;

/// Writes `text` to stdout and flushes; a closed or failing stdout is ignored.
pub(crate) fn stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Writes `text` to stderr; a closed or failing stderr is ignored.
pub(crate) fn stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// `print!` that never panics: formats, then [`stdout`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::ui::print::stdout(&format!($($arg)*))
    };
}

/// `println!` that never panics: formats with a newline, then [`stdout`].
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::ui::print::stdout(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that never panics: formats with a newline, then [`stderr`].
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::ui::print::stderr(&format!("{}\n", format_args!($($arg)*)))
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn macros_format_like_the_std_ones() {
        // Output goes to the test harness; this checks they expand and do not panic.
        crate::out!("{}", "");
        crate::outln!("{} {}", 1, "two");
        crate::errln!("x = {x}", x = 3);
    }
}
