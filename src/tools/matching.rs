//! Finding `old_str` in a file for `str_replace`, on bytes, with line endings normalized.
//!
//! The file is viewed with every CRLF turned into LF (a model writes `\n` whatever the file
//! uses); matches are searched in that view and mapped back to the original bytes, and the
//! replacement is written with the file's dominant line ending, so a CRLF file stays CRLF with
//! no mixed endings (case c-crlf-file-edit). Everything outside the matched ranges is copied
//! byte for byte: invalid UTF-8, a BOM, lone `\r` and the final newline survive an edit.
//! `new_str` is inserted literally (no `$1` or `$&` expansion: nothing here is a regex).
//!
//! When nothing matches, [`Text::closest`] finds what the model probably meant: the same
//! text with other whitespace, or else the most similar lines (character-bigram similarity).

use std::borrow::Cow;

use memchr::memmem;

/// A file's dominant line ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Lf,
    Crlf,
}

/// Files with more lines than this get no similarity search (it would cost too much time).
const MAX_FUZZY_LINES: usize = 100_000;
/// Lines shown of a close region.
pub(crate) const MAX_REGION_LINES: usize = 12;
/// Characters shown of one line of a close region.
const MAX_REGION_LINE_CHARS: usize = 200;
/// Similarity below which a region is not worth showing.
const MIN_SIMILARITY: f64 = 0.5;

/// A file's bytes with their LF-normalized view.
pub(crate) struct Text<'a> {
    bytes: &'a [u8],
    /// `bytes` with every CRLF as LF.
    norm: Cow<'a, [u8]>,
    /// Indices in `norm` of the `\n`s that were `\r\n` in `bytes`, ascending.
    dropped: Vec<usize>,
    pub(crate) ending: Ending,
}

/// What the model probably meant when `old_str` matched nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Closest {
    /// The same text with other whitespace, at these (first, last) line ranges.
    Whitespace(Vec<(usize, usize)>),
    /// The most similar lines.
    Similar(usize, usize),
    /// Nothing similar.
    Nothing,
    /// The file has too many lines to search for similar text.
    NotSearched,
}

impl<'a> Text<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        let lf_total = memchr::memchr_iter(b'\n', bytes).count();
        let crlf = memmem::find_iter(bytes, b"\r\n").count();
        if crlf == 0 {
            return Self {
                bytes,
                norm: Cow::Borrowed(bytes),
                dropped: Vec::new(),
                ending: Ending::Lf,
            };
        }
        let mut norm = Vec::with_capacity(bytes.len());
        let mut dropped = Vec::with_capacity(crlf);
        let mut rest = bytes;
        while let Some(at) = memmem::find(rest, b"\r\n") {
            norm.extend_from_slice(&rest[..at]);
            dropped.push(norm.len());
            norm.push(b'\n');
            rest = &rest[at + 2..];
        }
        norm.extend_from_slice(rest);
        let ending = if crlf >= lf_total - crlf {
            Ending::Crlf
        } else {
            Ending::Lf
        };
        Self {
            bytes,
            norm: Cow::Owned(norm),
            dropped,
            ending,
        }
    }

    /// `s` with CRLF as LF, as searched in the normalized view.
    pub(crate) fn to_lf(s: &str) -> String {
        s.replace("\r\n", "\n")
    }

    /// `s_lf` (LF endings) as bytes with this file's dominant ending.
    pub(crate) fn with_ending(&self, s_lf: &str) -> Vec<u8> {
        match self.ending {
            Ending::Lf => s_lf.as_bytes().to_vec(),
            Ending::Crlf => s_lf.replace('\n', "\r\n").into_bytes(),
        }
    }

    /// The LF-normalized view of the file.
    pub(crate) fn norm(&self) -> &[u8] {
        &self.norm
    }

    /// Start indices (in the normalized view) of the non-overlapping matches of `needle`.
    pub(crate) fn find(&self, needle: &str) -> Vec<usize> {
        memmem::find_iter(&self.norm, needle.as_bytes()).collect()
    }

    /// The 1-based line of each normalized index in `starts` (ascending).
    pub(crate) fn lines_of(&self, starts: &[usize]) -> Vec<usize> {
        let mut line = 1;
        let mut from = 0;
        starts
            .iter()
            .map(|&at| {
                line += memchr::memchr_iter(b'\n', &self.norm[from..at]).count();
                from = at;
                line
            })
            .collect()
    }

    /// The file with the `len` normalized bytes at each of `starts` replaced by `new`; a
    /// final newline the file had is kept.
    pub(crate) fn splice(&self, starts: &[usize], len: usize, new: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bytes.len() + starts.len() * new.len());
        let mut pos = 0;
        for &start in starts {
            let (a, b) = (self.original(start), self.original(start + len));
            out.extend_from_slice(&self.bytes[pos..a]);
            out.extend_from_slice(new);
            pos = b;
        }
        out.extend_from_slice(&self.bytes[pos..]);
        if self.bytes.ends_with(b"\n") && !out.is_empty() && !out.ends_with(b"\n") {
            let eol: &[u8] = if self.bytes.ends_with(b"\r\n") {
                b"\r\n"
            } else {
                b"\n"
            };
            out.extend_from_slice(eol);
        }
        out
    }

    /// The index in the original bytes of normalized index `at`.
    fn original(&self, at: usize) -> usize {
        at + self.dropped.partition_point(|&d| d < at)
    }

    /// The normalized view as text, one entry per line (lossy UTF-8).
    pub(crate) fn lines(&self) -> Vec<String> {
        let norm = self.norm.strip_suffix(b"\n").unwrap_or(&self.norm);
        String::from_utf8_lossy(norm)
            .split('\n')
            .map(str::to_string)
            .collect()
    }

    /// Lines `first..=last` (1-based), numbered like `read_file`, at most `max_lines` of
    /// them, each cut at 200 characters.
    pub(crate) fn excerpt(&self, first: usize, last: usize, max_lines: usize) -> String {
        self.excerpt_marked(first, last, max_lines, false)
    }

    /// Like [`Text::excerpt`]; with `tabs_visible` every tab in a line is shown as `→`, so
    /// a model that reads tabs as spaces can tell them apart.
    pub(crate) fn excerpt_marked(
        &self,
        first: usize,
        last: usize,
        max_lines: usize,
        tabs_visible: bool,
    ) -> String {
        let first = first.max(1);
        let count = last.saturating_add(1).saturating_sub(first).min(max_lines);
        let body = self.norm.strip_suffix(b"\n").unwrap_or(&self.norm);
        let mut out = String::new();
        if self.norm.is_empty() {
            return out;
        }
        for (i, line) in body
            .split(|b| *b == b'\n')
            .skip(first - 1)
            .take(count)
            .enumerate()
        {
            let line = String::from_utf8_lossy(line);
            let line = line.strip_suffix('\r').unwrap_or(&line);
            let shown: String = line
                .chars()
                .take(MAX_REGION_LINE_CHARS)
                .map(|c| if tabs_visible && c == '\t' { '→' } else { c })
                .collect();
            let cut = if line.chars().nth(MAX_REGION_LINE_CHARS).is_some() {
                " [...]"
            } else {
                ""
            };
            out.push_str(&format!("{:>6}\t{shown}{cut}\n", first + i));
        }
        out
    }

    /// Where `old_lf` (LF endings) probably belongs, when it matched nothing.
    pub(crate) fn closest(&self, old_lf: &str) -> Closest {
        let ranges = self.whitespace_matches(old_lf);
        if !ranges.is_empty() {
            return Closest::Whitespace(ranges);
        }
        if memchr::memchr_iter(b'\n', &self.norm).count() > MAX_FUZZY_LINES {
            return Closest::NotSearched;
        }
        let lines = self.lines();
        similar_region(&lines, old_lf).map_or(Closest::Nothing, |(a, b)| Closest::Similar(a, b))
    }

    /// Line ranges where `old_lf` matches when all whitespace is ignored (at most 5).
    fn whitespace_matches(&self, old_lf: &str) -> Vec<(usize, usize)> {
        let key: Vec<u8> = old_lf
            .bytes()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        if key.is_empty() {
            return Vec::new();
        }
        let mut stripped = Vec::with_capacity(self.norm.len());
        // Index in `stripped` where each line (1-based: entry i is line i + 1) starts.
        let mut line_starts = vec![0];
        for &b in self.norm.iter() {
            if b == b'\n' {
                line_starts.push(stripped.len());
            } else if !b.is_ascii_whitespace() {
                stripped.push(b);
            }
        }
        let line_at = |i: usize| line_starts.partition_point(|&s| s <= i);
        memmem::find_iter(&stripped, &key)
            .take(5)
            .map(|at| (line_at(at), line_at(at + key.len() - 1)))
            .collect()
    }
}

/// The (first, last) lines, 1-based, most similar to `old_lf`, if similar enough. The
/// longest line of `old_lf` is the anchor: the three file lines closest to it are tried as
/// its position, and the window whose lines best match `old_lf`'s lines wins.
fn similar_region(lines: &[String], old_lf: &str) -> Option<(usize, usize)> {
    let old: Vec<&str> = old_lf.split('\n').map(str::trim).collect();
    let (anchor_at, anchor) = old.iter().enumerate().max_by_key(|(_, l)| l.len())?;
    let anchor = bigrams(anchor);
    let mut scored: Vec<(f64, usize)> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| (dice(&bigrams(line.trim()), &anchor), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut best: Option<(f64, usize)> = None;
    for &(_, at) in scored.iter().take(3) {
        let start = at.saturating_sub(anchor_at);
        let window: Vec<f64> = old
            .iter()
            .zip(lines.iter().skip(start))
            .map(|(o, f)| dice(&bigrams(f.trim()), &bigrams(o)))
            .collect();
        let score = window.iter().sum::<f64>() / old.len() as f64;
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, start));
        }
    }
    let (score, start) = best?;
    (score >= MIN_SIMILARITY).then(|| (start + 1, (start + old.len()).min(lines.len())))
}

/// The sorted character bigrams of `s` (a one-character string is its own bigram).
fn bigrams(s: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = s.chars().collect();
    let mut pairs: Vec<(char, char)> = match chars.as_slice() {
        [] => Vec::new(),
        [only] => vec![(*only, '\0')],
        _ => chars.windows(2).map(|w| (w[0], w[1])).collect(),
    };
    pairs.sort_unstable();
    pairs
}

/// Sørensen–Dice coefficient of two sorted bigram lists (1.0 for two empty lists).
fn dice(a: &[(char, char)], b: &[(char, char)]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (2 * common) as f64 / (a.len() + b.len()) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn edit(file: &[u8], old: &str, new: &str) -> Vec<u8> {
        let text = Text::new(file);
        let old = Text::to_lf(old);
        let starts = text.find(&old);
        assert_eq!(starts.len(), 1, "one match");
        text.splice(&starts, old.len(), &text.with_ending(&Text::to_lf(new)))
    }

    #[test]
    fn crlf_files_stay_crlf() {
        let out = edit(
            b"const a=1;\r\nconst b=2;\r\n",
            "const a=1;\nconst b=2;",
            "const a=1;\nconst b=3;",
        );
        assert_eq!(out, b"const a=1;\r\nconst b=3;\r\n");
        // A model that sends CRLF itself gets the same result.
        let out = edit(b"a\r\nb\r\n", "a\r\nb", "x\r\ny\nz");
        assert_eq!(out, b"x\r\ny\r\nz\r\n");
        // The edit starts at a line break.
        let out = edit(b"a\r\nb\r\nc\r\n", "\nb\n", "\nB\n");
        assert_eq!(out, b"a\r\nB\r\nc\r\n");
    }

    #[test]
    fn bytes_outside_the_edit_survive() {
        let out = edit(
            b"\xEF\xBB\xBFcaf\xE9 = 1\nx = 2\n\xff\xfe\n",
            "x = 2",
            "x = '$1 $&'",
        );
        assert_eq!(out, b"\xEF\xBB\xBFcaf\xE9 = 1\nx = '$1 $&'\n\xff\xfe\n");
    }

    #[test]
    fn final_newline_kept_or_not_added() {
        assert_eq!(edit(b"a\nb\n", "b\n", "c"), b"a\nc\n");
        assert_eq!(edit(b"a\r\nb\r\n", "b\n", "c"), b"a\r\nc\r\n");
        assert_eq!(edit(b"a\nb", "b", "c"), b"a\nc");
        assert_eq!(edit(b"a\n", "a\n", ""), b"");
    }

    #[test]
    fn mixed_endings_use_the_dominant_one() {
        let text = Text::new(b"a\r\nb\r\nc\nd\r\n");
        assert_eq!(text.ending, Ending::Crlf);
        assert_eq!(Text::new(b"a\nb\nc\r\n").ending, Ending::Lf);
    }

    #[test]
    fn line_numbers_of_matches() {
        let text = Text::new(b"DEBUG = False\r\nX = 1\r\nDEBUG = False\r\n");
        let starts = text.find("DEBUG = False");
        assert_eq!(text.lines_of(&starts), vec![1, 3]);
    }

    #[test]
    fn closest_region() {
        let file = b"DEBUG = False\nX = 1\nDEBUG = False\n";
        let text = Text::new(file);
        assert_eq!(
            text.closest("DEBUG=False"),
            Closest::Whitespace(vec![(1, 1), (3, 3)])
        );
        let file = b"fn main() {\n    let total = compute(1, 2);\n    println!(\"{total}\");\n}\n";
        let text = Text::new(file);
        assert_eq!(
            text.closest("let totl = compute(1, 3);\nprintln!(\"{totl}\");"),
            Closest::Similar(2, 3)
        );
        assert_eq!(text.closest("something else entirely"), Closest::Nothing);
        assert_eq!(
            text.excerpt(2, 3, MAX_REGION_LINES),
            "     2\t    let total = compute(1, 2);\n     3\t    println!(\"{total}\");\n"
        );
    }
}
