//! Stops a reply that has degenerated into a loop (a coach help: on only when the coach is): small local models sometimes repeat the
//! same paragraph until the context window is full (the 1.5B model here streamed the same
//! four blocks for ten minutes), and nothing in the protocol ends that, since bytes keep
//! arriving and no request field limits output on every server.
//!
//! Rule: the streamed text ends in at least [`MIN_COPIES`] back-to-back copies of one unit
//! of at most [`MAX_PERIOD`] bytes, spanning at least [`MIN_SPAN`] bytes. Real answers do
//! not repeat 4 KB verbatim; a table of identical rows or a long separator line that long
//! is stopped too, with a warning saying why. The kept text is everything before the loop
//! plus one copy of its unit.
//!
//! Cost: one check per [`CHECK_EVERY`] bytes streamed, each at most [`MAX_PERIOD`] needle
//! comparisons plus a backward scan per candidate period (at most [`MAX_CANDIDATES`]).

/// Shortest repeated span that stops a reply, in bytes.
pub(crate) const MIN_SPAN: usize = 4096;
/// Fewest back-to-back copies of the unit.
pub(crate) const MIN_COPIES: usize = 3;
/// Longest repeated unit looked for, in bytes.
pub(crate) const MAX_PERIOD: usize = 2048;
/// Bytes streamed between two checks.
const CHECK_EVERY: usize = 256;
/// Length of the tail searched for earlier in the text to find candidate periods.
const NEEDLE: usize = 16;
/// Candidate periods tried per check, shortest first (bounds a check on text such as a
/// long run of one character, where the tail occurs at every offset).
const MAX_CANDIDATES: usize = 64;

/// Watches one streamed reply.
#[derive(Debug, Default)]
pub(crate) struct RepetitionGuard {
    text: String,
    next_check: usize,
}

impl RepetitionGuard {
    /// Adds streamed text; `true` once the reply has become a loop (see the module doc).
    pub(crate) fn push(&mut self, delta: &str) -> bool {
        self.text.push_str(delta);
        if self.text.len() < self.next_check.max(MIN_SPAN) {
            return false;
        }
        self.next_check = self.text.len() + CHECK_EVERY;
        loop_start(self.text.as_bytes()).is_some()
    }

    /// The text to keep: all of it, or up to the end of the loop's first copy, finishing
    /// that copy's line (the periodic stretch can start mid-word, where the text before the
    /// loop happens to end like the unit).
    pub(crate) fn kept(&self) -> &str {
        let bytes = self.text.as_bytes();
        let Some((start, period)) = loop_start(bytes) else {
            return &self.text;
        };
        let cut = (start + period).min(bytes.len());
        if bytes[..cut].ends_with(b"\n") {
            return &self.text[..cut];
        }
        let mut end = bytes[cut..]
            .iter()
            .take(period)
            .position(|&b| b == b'\n')
            .map_or(cut, |at| cut + at + 1);
        while !self.text.is_char_boundary(end) {
            end += 1;
        }
        &self.text[..end]
    }

    /// Bytes streamed so far.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.text.len()
    }
}

/// Where the loop at the end of `text` starts, and its period, when there is one.
fn loop_start(text: &[u8]) -> Option<(usize, usize)> {
    let n = text.len();
    if n < MIN_SPAN {
        return None;
    }
    let needle = &text[n - NEEDLE..];
    let lowest = n.saturating_sub(MAX_PERIOD + NEEDLE);
    // Candidate periods: distances back to earlier occurrences of the tail.
    let candidates = (lowest + NEEDLE..n)
        .rev()
        .filter(|&end| &text[end - NEEDLE..end] == needle)
        .take(MAX_CANDIDATES);
    for end in candidates {
        let period = n - end;
        // How far back `text[i] == text[i + period]` holds, from the end.
        let mut start = n - period;
        while start > 0 && text[start - 1] == text[start - 1 + period] {
            start -= 1;
        }
        let span = n - start;
        if span >= MIN_SPAN && span / period >= MIN_COPIES {
            return Some((start, period));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(guard: &mut RepetitionGuard, text: &str) -> Option<usize> {
        let chars: Vec<char> = text.chars().collect();
        chars
            .chunks(7)
            .map(|c| c.iter().collect::<String>())
            .position(|chunk| guard.push(&chunk))
    }

    #[test]
    fn a_looping_reply_is_stopped_and_cut_to_one_copy() {
        let unit = "To verify, run:\n```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"python3 hello.py\"}}\n```\nThis prints «hello».\n\n";
        let text = format!("Intro.\n{}", unit.repeat(200));
        let mut guard = RepetitionGuard::default();
        assert!(feed(&mut guard, &text).is_some());
        assert!(guard.len() < MIN_SPAN + 2 * MAX_PERIOD, "{}", guard.len());
        let kept = guard.kept();
        assert!(kept.starts_with("Intro.\n"), "{kept}");
        assert!(kept.len() < "Intro.\n".len() + 2 * unit.len(), "{kept}");
        assert_eq!(kept.matches("python3 hello.py").count(), 1, "{kept}");
        assert!(kept.trim_end().ends_with("«hello»."), "{kept}");
        // The text before the loop ends like the unit does: the cut still ends a line.
        let unit = "The script prints a greeting.\nThis reads the file.\n\n";
        let mut guard = RepetitionGuard::default();
        assert!(feed(&mut guard, &format!("Done.\n\n{}", unit.repeat(100))).is_some());
        assert_eq!(guard.kept(), format!("Done.\n\n{}", unit.trim_end()) + "\n");
    }

    #[test]
    fn long_varied_text_and_short_repeats_are_left_alone() {
        let varied: String = (0..2000)
            .map(|i| format!("line {i}: value {}\n", i * 7919 % 1000))
            .collect();
        let mut guard = RepetitionGuard::default();
        assert_eq!(feed(&mut guard, &varied), None);
        assert_eq!(guard.kept(), varied);
        // Two copies of a long block are not a loop; neither is 3 KB of a separator.
        let block: String = (0..150).map(|i| format!("fn f{i}() {{}}\n")).collect();
        let mut guard = RepetitionGuard::default();
        assert_eq!(feed(&mut guard, &block.repeat(2)), None);
        let mut guard = RepetitionGuard::default();
        assert_eq!(feed(&mut guard, &"=".repeat(3000)), None);
    }

    #[test]
    fn a_unit_longer_than_the_period_limit_is_not_looked_for() {
        let unit: String = (0..300).map(|i| format!("{i:>8}")).collect();
        assert!(unit.len() > MAX_PERIOD);
        let mut guard = RepetitionGuard::default();
        assert_eq!(feed(&mut guard, &unit.repeat(4)), None);
    }
}
