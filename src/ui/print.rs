//! Printing to stdout and stderr that never panics.
//!
//! `println!` and `eprintln!` panic when the stream is closed (`agent doctor | head -1`:
//! "failed printing to stdout: Broken pipe" and a backtrace). A reader that goes away is its
//! own choice, so these helpers write and ignore the error, like the event sinks do. The
//! crate denies `clippy::print_stdout` / `clippy::print_stderr` outside tests so new code
//! uses them ([`crate::outln`], [`crate::out`], [`crate::errln`]).

use std::fmt;
use std::io::Write;

/// Writes `text` to stdout and flushes; a closed or failing stdout is ignored.
pub(crate) fn stdout(text: &str) {
    write_ignoring_errors(&mut std::io::stdout().lock(), text);
}

/// Writes `text` to stderr; a closed or failing stderr is ignored.
pub(crate) fn stderr(text: &str) {
    write_ignoring_errors(&mut std::io::stderr().lock(), text);
}

/// `args` formatted, then a newline (what `println!` writes).
pub(crate) fn line(args: fmt::Arguments<'_>) -> String {
    format!("{args}\n")
}

/// Writes `text` to `out` and flushes it; errors (a closed pipe) are dropped.
fn write_ignoring_errors(out: &mut impl Write, text: &str) {
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
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
        $crate::ui::print::stdout(&$crate::ui::print::line(format_args!($($arg)*)))
    };
}

/// `eprintln!` that never panics: formats with a newline, then [`stderr`].
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::ui::print::stderr(&$crate::ui::print::line(format_args!($($arg)*)))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream whose reader went away: every write fails with a broken pipe.
    #[derive(Default)]
    struct Closed {
        attempts: usize,
    }

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            self.attempts += 1;
            Err(std::io::ErrorKind::BrokenPipe.into())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            self.attempts += 1;
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn macros_format_like_the_std_ones() {
        assert_eq!(line(format_args!("{} {}", 1, "two")), "1 two\n");
        assert_eq!(line(format_args!("x = {x}", x = 3)), "x = 3\n");
        // The macros expand and write to the test harness's streams without panicking.
        crate::out!("{}", "");
        crate::outln!("{} {}", 1, "two");
        crate::errln!("x = {x}", x = 3);
    }

    #[test]
    fn a_closed_stream_is_written_to_once_and_ignored() {
        let mut open = Vec::new();
        write_ignoring_errors(&mut open, "a\nb");
        assert_eq!(open, b"a\nb");
        let mut closed = Closed::default();
        write_ignoring_errors(&mut closed, "lost");
        assert_eq!(
            closed.attempts, 2,
            "one write and one flush, no retries, no panic"
        );
    }
}
