//! Checks that the parser saw the same command bash will run.
//!
//! tree-sitter-bash treats some bytes as whitespace that bash treats as word characters
//! (`\r`, `\v`, `\f`, an escaped space between words), and a backslash-newline inside a word
//! joins two words for bash but splits them for the parser (`find . -de\⏎lete`). Either
//! difference could show us an allowed command where bash runs another one, so both make the
//! line `ask`.

use tree_sitter::Node;

/// A reason to distrust the parse, for control characters and in-word line continuations.
pub fn suspicious_characters(script: &str) -> Option<String> {
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
pub fn skipped_text(root: Node<'_>, script: &str) -> Option<String> {
    let mut ranges = Vec::new();
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.child_count() == 0 {
            ranges.push(node.byte_range());
        }
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                ranges.sort_by_key(|r| r.start);
                return first_gap(&ranges, script);
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
}

fn first_gap(ranges: &[std::ops::Range<usize>], script: &str) -> Option<String> {
    let mut pos = 0;
    for range in ranges
        .iter()
        .chain(std::iter::once(&(script.len()..script.len())))
    {
        if range.start > pos {
            let gap = script.get(pos..range.start).unwrap_or("?");
            let blank = gap.replace("\\\n", "");
            if !blank.chars().all(|c| matches!(c, ' ' | '\t' | '\n')) {
                return Some(format!(
                    "the checker's parser skipped `{}`; bash may read the command differently",
                    gap.trim()
                ));
            }
        }
        pos = pos.max(range.end);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skipped(script: &str) -> Option<String> {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .unwrap();
        let tree = parser.parse(script, None).unwrap();
        skipped_text(tree.root_node(), script)
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
    }
}
