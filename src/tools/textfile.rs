//! Looking at files for the file tools: what a path is (missing, directory, regular file),
//! loading a file whole for an edit, telling text from binary, and rendering a window of
//! lines for `read_file` with bounded memory.
//!
//! Rendering is `cat -n` style (`{number:>6}\t{line}`), with `\r` of CRLF endings and a
//! UTF-8 BOM hidden. At most [`MAX_LINE_CHARS`] characters of a line are kept (a 1 GB line
//! costs 8 KB), and rendering stops when the output reaches the character budget, so memory
//! stays bounded whatever the file.

use std::fs::{self, Metadata};
use std::io::{self, BufRead};

use super::ToolError;
use super::ToolErrorKind;
use super::paths::Resolved;
use super::tracker::HASH_LIMIT;

/// Characters of one line shown before it is cut (§4.1).
pub(crate) const MAX_LINE_CHARS: usize = 2000;
/// Bytes kept of a line: enough for [`MAX_LINE_CHARS`] characters of up to 4 bytes.
const LINE_BYTES: usize = MAX_LINE_CHARS * 4 + 4;
/// Bytes from the start of a file examined to tell binary from text.
pub(crate) const SAMPLE_BYTES: usize = 8192;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The metadata of the regular file at `r.real`; `None` when nothing is there.
///
/// # Errors
/// `is a directory` (with a hint to list it), `not a regular file` (FIFO, device, socket:
/// reading one could block forever), `io error`.
pub(crate) fn regular_file(r: &Resolved) -> Result<Option<Metadata>, ToolError> {
    let meta = match fs::metadata(&r.real) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error("cannot open", r, &e)),
    };
    if meta.is_dir() {
        return Err(ToolError::new(
            ToolErrorKind::IsDirectory,
            format!(
                "`{}` is a directory; read_file on it lists its entries",
                r.shown
            ),
        ));
    }
    if !meta.is_file() {
        return Err(ToolError::new(
            ToolErrorKind::NotRegularFile,
            format!(
                "`{}` is not a regular file (a device, FIFO or socket); the file tools read and \
                 write regular files only",
                r.shown
            ),
        ));
    }
    Ok(Some(meta))
}

/// The whole content of the file at `r.real`, for an edit.
///
/// # Errors
/// `too large` over [`HASH_LIMIT`] bytes; `io error`.
pub(crate) fn load(r: &Resolved, meta: &Metadata) -> Result<Vec<u8>, ToolError> {
    if meta.len() > HASH_LIMIT {
        return Err(ToolError::new(
            ToolErrorKind::TooLarge,
            format!(
                "`{}` is {} bytes; the file tools edit files up to {} MiB, use bash for this one",
                r.shown,
                meta.len(),
                HASH_LIMIT / (1024 * 1024)
            ),
        ));
    }
    fs::read(&r.real).map_err(|e| io_error("cannot read", r, &e))
}

/// `<doing> `<path>`: <error>` as an `io error`.
pub(crate) fn io_error(doing: &str, r: &Resolved, error: &io::Error) -> ToolError {
    ToolError::new(ToolErrorKind::Io, format!("{doing} `{}`: {error}", r.shown))
}

/// Whether `sample` (the start of a file) looks binary: a NUL byte, or more than 10% of the
/// bytes are invalid UTF-8 or control characters other than tab, newlines, form feed and
/// escape. A Latin-1 text with a few accented letters still counts as text.
pub(crate) fn looks_binary(sample: &[u8]) -> bool {
    if sample.contains(&0) {
        return true;
    }
    let controls = sample
        .iter()
        .filter(|b| b.is_ascii_control() && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b))
        .count();
    let mut invalid = 0;
    let mut rest = sample;
    while let Err(error) = std::str::from_utf8(rest) {
        let Some(len) = error.error_len() else {
            break; // a character cut by the end of the sample
        };
        invalid += len;
        rest = &rest[error.valid_up_to() + len..];
    }
    (controls + invalid) * 10 > sample.len()
}

/// Which lines to render.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    /// First line, 1-based.
    pub(crate) offset: usize,
    /// Lines at most.
    pub(crate) limit: usize,
    /// Characters of output at most (lines after the budget are not rendered).
    pub(crate) max_chars: usize,
    /// Read to the end to count every line (otherwise stop after the window).
    pub(crate) count_all: bool,
}

/// A rendered window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// Numbered lines, each ending in `\n`.
    pub(crate) text: String,
    /// Last line rendered (0 when none).
    pub(crate) last: usize,
    /// Lines in the file, when it was read to the end.
    pub(crate) total: Option<usize>,
    /// Rendering stopped at the character budget.
    pub(crate) budget_hit: bool,
    /// A rendered line held bytes that are not UTF-8.
    pub(crate) invalid_utf8: bool,
}

/// Renders `window` of the lines read from `reader`.
///
/// # Errors
/// The reader's I/O error.
pub(crate) fn render(mut reader: impl BufRead, window: Window) -> io::Result<Rendered> {
    let end = window.offset.saturating_add(window.limit);
    let mut out = Rendered::default();
    let mut chars = 0;
    let mut number = 1;
    let mut line: Vec<u8> = Vec::new();
    let mut line_len = 0usize;
    let mut started = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let wanted = number >= window.offset && number < end && !out.budget_hit;
        if !wanted && number >= window.offset && !window.count_all {
            out.total = None;
            return Ok(out);
        }
        let newline = memchr::memchr(b'\n', buf);
        let piece = &buf[..newline.unwrap_or(buf.len())];
        if wanted {
            let room = LINE_BYTES.saturating_sub(line.len());
            line.extend_from_slice(&piece[..piece.len().min(room)]);
        }
        line_len += piece.len();
        started = true;
        let consumed = piece.len() + usize::from(newline.is_some());
        reader.consume(consumed);
        if newline.is_some() {
            if wanted {
                chars += push_line(&mut out, number, &line, line_len);
                out.budget_hit = chars >= window.max_chars;
            }
            number += 1;
            line.clear();
            line_len = 0;
            started = false;
        }
    }
    if started {
        if number >= window.offset && number < end && !out.budget_hit {
            push_line(&mut out, number, &line, line_len);
        }
        number += 1;
    }
    out.total = Some(number - 1);
    Ok(out)
}

/// Appends line `number` (its first bytes `kept`, `len` bytes in all); returns the
/// characters added.
fn push_line(out: &mut Rendered, number: usize, kept: &[u8], len: usize) -> usize {
    let mut bytes = kept;
    if number == 1 {
        bytes = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    }
    if len == kept.len() {
        bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    }
    if let Err(error) = std::str::from_utf8(bytes) {
        out.invalid_utf8 |= error.error_len().is_some() || len == kept.len();
    }
    let text = String::from_utf8_lossy(bytes);
    let count = text.chars().count();
    let before = out.text.len();
    out.text.push_str(&format!("{number:>6}\t"));
    if count > MAX_LINE_CHARS {
        out.text.extend(text.chars().take(MAX_LINE_CHARS));
        if len > kept.len() {
            out.text.push_str(&format!(
                " [... line cut at {MAX_LINE_CHARS} characters; {len} bytes in all]"
            ));
        } else {
            out.text.push_str(&format!(
                " [... line cut at {MAX_LINE_CHARS} of {count} characters]"
            ));
        }
    } else {
        out.text.push_str(&text);
    }
    out.text.push('\n');
    out.last = number;
    out.text[before..].chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn window(offset: usize, limit: usize) -> Window {
        Window {
            offset,
            limit,
            max_chars: 30_000,
            count_all: true,
        }
    }

    fn render_str(text: &[u8], w: Window) -> Rendered {
        render(text, w).unwrap()
    }

    #[test]
    fn numbers_lines_and_counts_them() {
        let r = render_str(b"a\r\nb\n\nlast", window(1, 2000));
        assert_eq!(r.text, "     1\ta\n     2\tb\n     3\t\n     4\tlast\n");
        assert_eq!(
            (r.last, r.total, r.budget_hit, r.invalid_utf8),
            (4, Some(4), false, false)
        );
        let r = render_str(b"1\n2\n3\n4\n5\n", window(2, 2));
        assert_eq!(r.text, "     2\t2\n     3\t3\n");
        assert_eq!((r.last, r.total), (3, Some(5)));
        assert_eq!(
            render_str(b"", window(1, 10)),
            Rendered {
                total: Some(0),
                ..Rendered::default()
            }
        );
        assert_eq!(render_str(b"\n", window(1, 10)).total, Some(1));
    }

    #[test]
    fn stops_after_the_window_when_not_counting() {
        let w = Window {
            count_all: false,
            ..window(1, 2)
        };
        let r = render_str(b"1\n2\n3\n", w);
        assert_eq!((r.last, r.total), (2, None));
    }

    #[test]
    fn long_lines_are_cut() {
        let long = "é".repeat(2500);
        let r = render_str(long.as_bytes(), window(1, 10));
        assert!(
            r.text
                .ends_with(" [... line cut at 2000 of 2500 characters]\n"),
            "{}",
            &r.text[r.text.len() - 80..]
        );
        let huge = vec![b'x'; 100_000];
        let r = render_str(&huge, window(1, 10));
        assert!(r.text.ends_with("; 100000 bytes in all]\n"));
        assert_eq!(r.text.chars().filter(|c| *c == 'x').count(), 2000);
    }

    #[test]
    fn budget_and_bom_and_invalid_bytes() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let w = Window {
            max_chars: 50,
            ..window(1, 2000)
        };
        let r = render_str(text.as_bytes(), w);
        assert_eq!((r.last, r.total, r.budget_hit), (4, Some(100), true));
        let r = render_str(b"\xEF\xBB\xBFfirst\ncaf\xE9\n", window(1, 10));
        assert_eq!(r.text, "     1\tfirst\n     2\tcaf\u{FFFD}\n");
        assert!(r.invalid_utf8);
    }

    #[test]
    fn binary_heuristics() {
        assert!(looks_binary(b"PK\x03\x04\x00\x00"));
        assert!(looks_binary(&[
            0x89, b'P', b'N', b'G', 0xff, 0xfe, 0x80, 0x81, 0x90
        ]));
        assert!(!looks_binary("plain text, naïve café\n".as_bytes()));
        assert!(!looks_binary(
            b"Latin-1 caf\xE9 with enough ordinary text around it\n"
        ));
        assert!(!looks_binary(b"\x1b[31mred\x1b[0m\tcol\r\n"));
        assert!(!looks_binary(&"é".as_bytes()[..1]));
        assert!(!looks_binary(b""));
    }
}
