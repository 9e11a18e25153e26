//! Incremental word wrapping of styled text to the terminal width.
//!
//! Text arrives in pieces (streaming); the wrapper keeps the column, buffers the word being
//! built (which may span several styled pieces, as in `**bold**,`) and breaks the line before
//! a word that would not fit, starting continuation lines with a prefix (list indentation,
//! a quote bar). A word as wide as the whole line is written as soon as it is that wide and
//! left to the terminal to wrap.
//! Width 0 means no wrapping.

use super::style::{Painter, Style};
use super::text;

#[derive(Debug, Default)]
pub(crate) struct Wrapper {
    width: usize,
    col: usize,
    /// Written at the start of each continuation line (already painted) and its columns.
    continuation: String,
    continuation_width: usize,
    /// The word being built, painted, and its columns.
    word: String,
    word_width: usize,
    /// Whitespace was seen since the last word on this line.
    space: bool,
    /// A word was written on this line (leading whitespace is dropped).
    has_word: bool,
    /// The word being written is wider than the line and was partly written already.
    long_word: bool,
    in_line: bool,
}

impl Wrapper {
    /// Starts a line: `prefix` (painted, `prefix_width` columns) is written now, and
    /// `continuation` starts every line this one wraps onto.
    pub(crate) fn start(
        &mut self,
        out: &mut String,
        width: usize,
        prefix: &str,
        prefix_width: usize,
        continuation: (String, usize),
    ) {
        self.width = width;
        out.push_str(prefix);
        self.col = prefix_width;
        (self.continuation, self.continuation_width) = continuation;
        self.word.clear();
        self.word_width = 0;
        self.space = false;
        self.has_word = false;
        self.long_word = false;
        self.in_line = true;
    }

    /// A line is open (started and not ended).
    pub(crate) fn in_line(&self) -> bool {
        self.in_line
    }

    /// Adds text in `style`; whitespace separates words (and may become a line break).
    pub(crate) fn push(&mut self, out: &mut String, painter: Painter, piece: &str, style: Style) {
        let mut rest = piece;
        while !rest.is_empty() {
            let split = rest.find(char::is_whitespace).unwrap_or(rest.len());
            if split > 0 {
                let word = &rest[..split];
                painter.paint_into(&mut self.word, style, word);
                self.word_width += text::width(word);
                rest = &rest[split..];
                // A word as wide as the line is shown now (a long URL must not wait for its
                // end); the rest of it follows on the same line, left to the terminal.
                if self.width > 0 && self.word_width >= self.width {
                    self.flush_word(out);
                    self.long_word = true;
                }
            }
            let spaces = rest
                .find(|c: char| !c.is_whitespace())
                .unwrap_or(rest.len());
            if spaces > 0 {
                self.flush_word(out);
                self.long_word = false;
                if self.has_word {
                    self.space = true;
                }
                rest = &rest[spaces..];
            }
        }
    }

    /// Ends the line (writes the pending word and a newline).
    pub(crate) fn end(&mut self, out: &mut String) {
        self.flush_word(out);
        self.long_word = false;
        out.push('\n');
        self.col = 0;
        self.in_line = false;
        self.space = false;
        self.has_word = false;
    }

    fn flush_word(&mut self, out: &mut String) {
        if self.word.is_empty() {
            return;
        }
        let gap = usize::from(self.space);
        // The rest of a long word already started goes on with no break and no space.
        if self.long_word {
            self.space = false;
        }
        if !self.long_word
            && self.width > 0
            && self.has_word
            && self.col + gap + self.word_width > self.width
            && self.col > self.continuation_width
        {
            out.push('\n');
            out.push_str(&self.continuation);
            self.col = self.continuation_width;
        } else if self.space {
            out.push(' ');
            self.col += 1;
        }
        out.push_str(&self.word);
        self.col += self.word_width;
        self.word.clear();
        self.word_width = 0;
        self.space = false;
        self.has_word = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrap(width: usize, pieces: &[&str]) -> String {
        let mut wrapper = Wrapper::default();
        let mut out = String::new();
        wrapper.start(&mut out, width, "- ", 2, ("  ".into(), 2));
        for piece in pieces {
            wrapper.push(&mut out, Painter::PLAIN, piece, Style::default());
        }
        wrapper.end(&mut out);
        out
    }

    #[test]
    fn wraps_at_word_boundaries_with_continuation() {
        assert_eq!(
            wrap(12, &["one two three four five"]),
            "- one two\n  three four\n  five\n"
        );
    }

    #[test]
    fn pieces_join_into_words() {
        assert_eq!(
            wrap(0, &["  lead", "ing sp", "aces  ", " here"]),
            "- leading spaces here\n"
        );
        assert_eq!(wrap(9, &["abc ", "de", "fgh,"]), "- abc\n  defgh,\n");
    }

    #[test]
    fn long_word_is_cut_at_the_width() {
        assert_eq!(wrap(6, &["abcdefghij k"]), "- abcdefghij\n  k\n");
        assert_eq!(wrap(6, &["abc", "defgh", "ij k"]), "- abcdefghij\n  k\n");
    }
}
