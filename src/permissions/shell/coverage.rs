//! Checks that the parser saw the same command bash will run.
//!
//! tree-sitter-bash treats some bytes as whitespace that bash treats as word characters
//! (`\r`, `\v`, `\f`, an escaped space between words), and a backslash-newline inside a word
//! joins two words for bash but splits them for the parser (`find . -de\⏎lete`). Either
//! difference could show us an allowed command where bash runs another one, so both make the
//! line `ask`.
//!
//! The grammar may also skip bytes: its `extras` (whitespace, `\`-newline, and `\` before a
//! space or tab) and some hidden tokens (`ls | - a=` parses as `ls | a=`, dropping the `-`).
//! So every byte outside the tokens of the tree must be blank or a line continuation, or the
//! line is `ask`. Error recovery may skip bytes too, but a tree with errors is `ask` anyway.
//!
//! Heredocs: tree-sitter-bash misreads a body whose first line starts with a backslash
//! (`cat <<'EOF' | bash⏎\rm x⏎EOF` becomes `bash` with arguments `\rm x` and an empty body).
//! Bash never parses a heredoc body as syntax, so [`misparsed_heredocs`] finds bodies that
//! other nodes reach into, and the caller parses again with those bodies masked; the walk then
//! reads the real body text from the original line.
//!
//! A newline directly followed by a backslash is swallowed into the next word
//! (`ls⏎\rm -rf x` parses as `ls` with arguments `⏎\rm -rf x`). [`swallowed_newlines`] finds
//! such words; when the backslash only quotes a plain character, the caller parses again with
//! that backslash replaced by `x` (same offsets, same word boundaries) and reads the words
//! from the original line; otherwise the line is `ask`.
//!
//! `!` before a compound command (`! { a; }`, `! if a; then b; fi`, `! case ...`) is read as a
//! command named `{`/`if`/`case`, and `! f() { ...; }` is a parse error. Negation does not
//! change which commands run, so [`misparsed_negations`] finds those `!` (all of them when the
//! tree has errors) and the caller parses again with them blanked.

use std::ops::Range;

use tree_sitter::Node;

use super::Unclear;

/// A reason to distrust the parse, for control characters and in-word line continuations.
pub(crate) fn suspicious_characters(script: &str) -> Option<String> {
    if let Some(c) = script
        .chars()
        .find(|c| c.is_control() && *c != '\n' && *c != '\t')
    {
        return Some(format!(
            "the command contains the control character U+{:04X}, which bash and the checker \
             could read differently",
            u32::from(c)
        ));
    }
    let bytes = script.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b != b'\n' || i == 0 || bytes[i - 1] != b'\\' {
            continue;
        }
        let run = bytes[..i].iter().rev().take_while(|c| **c == b'\\').count();
        let before = i.checked_sub(run + 1).map(|j| bytes[j]);
        let after = bytes.get(i + 1).copied();
        let joins = |c: Option<u8>| c.is_some_and(|c| !matches!(c, b' ' | b'\t' | b'\n'));
        if run % 2 == 1 && joins(before) && joins(after) {
            return Some(
                "a backslash-newline inside a word joins it with the next line; write the \
                 command on one line"
                    .to_string(),
            );
        }
    }
    None
}

/// A reason to distrust the parse when bytes other than blanks and line continuations are
/// not covered by any token of the tree.
pub(crate) fn skipped_text(root: Node<'_>, script: &str) -> Option<String> {
    let mut ranges = Vec::new();
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        if node.child_count() == 0 {
            ranges.push(node.byte_range());
        }
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                break 'walk;
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
    if !ranges.is_sorted_by_key(|r| r.start) {
        ranges.sort_by_key(|r| r.start);
    }
    let mut pos = 0;
    for range in ranges
        .iter()
        .chain(std::iter::once(&(script.len()..script.len())))
    {
        if range.start > pos {
            let gap = script.get(pos..range.start).unwrap_or("?");
            if !is_blank(gap) {
                return Some(format!(
                    "the checker's parser skipped `{}`; bash may read the command differently",
                    gap.trim().escape_default()
                ));
            }
        }
        pos = pos.max(range.end);
    }
    None
}

/// Spaces, tabs, newlines and backslash-newline continuations only.
fn is_blank(gap: &str) -> bool {
    let mut bytes = gap.bytes().peekable();
    while let Some(b) = bytes.next() {
        match b {
            b' ' | b'\t' | b'\n' => {}
            b'\\' if bytes.peek() == Some(&b'\n') => {
                bytes.next();
            }
            _ => return false,
        }
    }
    true
}

/// Body regions of heredocs whose operator line's nodes reach into the body (see the module
/// doc), as byte ranges of `script`.
pub(crate) fn misparsed_heredocs(root: Node<'_>, script: &str) -> Vec<Range<usize>> {
    let mut regions = Vec::new();
    if !script.contains("<<") {
        return regions;
    }
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        if node.kind() == "heredoc_redirect"
            && let Some(region) = misparsed_body(node, script)
        {
            regions.push(region);
        }
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                break 'walk;
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
    regions
}

fn misparsed_body(heredoc: Node<'_>, script: &str) -> Option<Range<usize>> {
    let mut cursor = heredoc.walk();
    let kids: Vec<Node<'_>> = heredoc.children(&mut cursor).collect();
    let start = kids.iter().find(|k| k.kind() == "heredoc_start")?;
    let end = kids.iter().find(|k| k.kind() == "heredoc_end")?;
    let line_end = script.get(start.end_byte()..)?.find('\n')? + start.end_byte();
    let body = (line_end + 1)..end.start_byte();
    let intrudes = kids
        .iter()
        .any(|k| !matches!(k.kind(), "heredoc_body" | "heredoc_end") && k.end_byte() > body.start);
    (intrudes && body.start <= body.end).then_some(body)
}

/// Offsets of backslashes to replace so the parser stops swallowing the newline before them,
/// or why the line cannot be repaired.
pub(crate) fn swallowed_newlines(root: Node<'_>, script: &str) -> Result<Vec<usize>, Unclear> {
    let mut offsets = Vec::new();
    if !script.contains("\n\\") {
        return Ok(offsets);
    }
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        if node.kind() == "word" && node.child_count() == 0 {
            let text = script.get(node.byte_range()).unwrap_or("");
            if let Some(at) = text.find('\n') {
                let rest = &text[at..];
                let newlines = rest.len() - rest.trim_start_matches('\n').len();
                let slash = node.start_byte() + at + newlines;
                let bytes = script.as_bytes();
                let plain = bytes
                    .get(slash + 1)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b"_./-".contains(b));
                if bytes.get(slash) != Some(&b'\\') || !plain {
                    return Err(format!(
                        "the parser joined lines in `{}`; write each command on its own line without a leading backslash",
                        text.escape_default()
                    ).into());
                }
                offsets.push(slash);
            }
        }
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                break 'walk;
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
    Ok(offsets)
}

/// Words bash reads as syntax at the start of a command.
const KEYWORDS: &[&str] = &[
    "{", "if", "then", "elif", "else", "fi", "case", "esac", "for", "select", "while", "until",
    "do", "done", "function", "[[", "!",
];

/// Offsets of `!` tokens whose negated command the grammar misread as a command named by a
/// keyword; with `all`, of every negation (used when the tree has errors: `! f() { ...; }`
/// is valid bash the grammar cannot parse).
pub(crate) fn misparsed_negations(root: Node<'_>, script: &str, all: bool) -> Vec<usize> {
    let mut offsets = Vec::new();
    if !script.contains('!') {
        return offsets;
    }
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        if node.kind() == "negated_command" {
            let name = node
                .named_child(0)
                .filter(|c| c.kind() == "command")
                .and_then(|c| c.child_by_field_name("name"))
                .and_then(|n| script.get(n.byte_range()));
            if (all || name.is_some_and(|n| KEYWORDS.contains(&n)))
                && let Some(bang) = node.child(0).filter(|b| b.kind() == "!")
            {
                offsets.push(bang.start_byte());
            }
        }
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                break 'walk;
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
    offsets
}

/// `script` with the bytes at `offsets` replaced by a space.
pub(crate) fn blank_at(script: &str, offsets: &[usize]) -> String {
    let mut bytes = script.as_bytes().to_vec();
    for at in offsets {
        if let Some(byte) = bytes.get_mut(*at) {
            *byte = b' ';
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `script` with the bytes at `offsets` replaced by `x`.
pub(crate) fn unescape_at(script: &str, offsets: &[usize]) -> String {
    let mut bytes = script.as_bytes().to_vec();
    for at in offsets {
        if let Some(byte) = bytes.get_mut(*at) {
            *byte = b'x';
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `script` with every character of `regions` except newlines replaced by `x`, so byte
/// offsets stay the same and the parser sees inert body text.
pub(crate) fn mask(script: &str, regions: &[Range<usize>]) -> String {
    let mut bytes = script.as_bytes().to_vec();
    for region in regions {
        for byte in bytes.get_mut(region.clone()).into_iter().flatten() {
            if *byte != b'\n' {
                *byte = b'x';
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(script: &str) -> tree_sitter::Tree {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .unwrap();
        parser.parse(script, None).unwrap()
    }

    fn skipped(script: &str) -> Option<String> {
        skipped_text(tree(script).root_node(), script)
    }

    #[test]
    fn characters() {
        assert!(suspicious_characters("cat\rx").is_some());
        assert!(suspicious_characters("cat\x0bx").is_some());
        assert!(suspicious_characters("ls\0").is_some());
        assert!(suspicious_characters("find . -de\\\nlete").is_some());
        assert!(suspicious_characters("ls -la \\\n  src").is_none());
        assert!(suspicious_characters("echo a\\\\\nls").is_none());
        assert!(suspicious_characters("ls\tsrc\n").is_none());
    }

    #[test]
    fn gaps() {
        assert_eq!(skipped("ls -la src | wc -l"), None);
        assert_eq!(skipped("cat <<'EOF' | bash\nrm -rf build\nEOF"), None);
        assert_eq!(skipped("ls \\\n  -la # note"), None);
        assert!(skipped("ls \\ rm").is_some());
        assert!(skipped("ls | - a=").is_some());
    }

    #[test]
    fn heredoc_bodies_starting_with_a_backslash() {
        let script = "cat <<'EOF' | bash\n\\rm -rf build\nEOF";
        let regions = misparsed_heredocs(tree(script).root_node(), script);
        assert_eq!(regions, vec![19..33]);
        let masked = mask(script, &regions);
        assert_eq!(masked, "cat <<'EOF' | bash\nxxxxxxxxxxxxx\nEOF");
        assert_eq!(
            misparsed_heredocs(tree(&masked).root_node(), &masked),
            Vec::<Range<usize>>::new()
        );
        let fine = "cat <<'EOF' | bash\nls\n\\rm x\nEOF";
        assert_eq!(
            misparsed_heredocs(tree(fine).root_node(), fine),
            Vec::<Range<usize>>::new()
        );
    }

    #[test]
    fn newlines_swallowed_before_a_backslash() {
        let script = "ls\n\\rm -rf build";
        assert_eq!(
            swallowed_newlines(tree(script).root_node(), script),
            Ok(vec![3])
        );
        let fixed = unescape_at(script, &[3]);
        assert_eq!(fixed, "ls\nxrm -rf build");
        assert_eq!(
            swallowed_newlines(tree(&fixed).root_node(), &fixed),
            Ok(vec![])
        );
        let odd = "ls\n\\;x";
        assert!(swallowed_newlines(tree(odd).root_node(), odd).is_err());
    }
}
