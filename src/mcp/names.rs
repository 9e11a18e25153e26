//! The names MCP tools are offered under: `mcp__<server>__<tool>` (the form Claude Code
//! uses), made valid for OpenAI-compatible endpoints.
//!
//! OpenAI's function names must match `^[a-zA-Z0-9_-]{1,64}$` (other providers are
//! similar or looser). A name is kept as it is when it fits; otherwise every other
//! character becomes `_`, and a name that is still too long, or that an earlier tool of the
//! same server already took, is cut to 55 characters and ends with `_` and 8 hex digits of
//! a hash of the full original name. The hash is FNV-1a (stable across runs and builds), so
//! the same server gives the same names every time and the tool list stays byte-identical.

use std::collections::HashSet;

/// The longest tool name OpenAI-compatible endpoints accept.
pub(crate) const MAX_NAME: usize = 64;
/// What every MCP tool name starts with.
pub(crate) const PREFIX: &str = "mcp__";

/// The offered names for `tools` (the server's own names, in its order), one per tool, all
/// different and valid.
pub(crate) fn offered_names(server: &str, tools: &[&str]) -> Vec<String> {
    let mut taken: HashSet<String> = HashSet::new();
    tools
        .iter()
        .map(|tool| {
            let full = format!("{PREFIX}{server}__{tool}");
            let clean: String = full
                .chars()
                .map(|c| if valid_char(c) { c } else { '_' })
                .collect();
            let mut name = if clean.len() > MAX_NAME || taken.contains(&clean) {
                hashed(&clean, &full, 0)
            } else {
                clean.clone()
            };
            let mut salt = 1;
            while taken.contains(&name) {
                name = hashed(&clean, &full, salt);
                salt += 1;
            }
            taken.insert(name.clone());
            name
        })
        .collect()
}

/// Whether `name` is a valid function name for OpenAI-compatible endpoints.
#[cfg(test)]
pub(crate) fn is_valid(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME && name.chars().all(valid_char)
}

fn valid_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// `clean` cut to 55 characters (all ASCII), `_`, and the hash of `full` (salted when two
/// hashes meet).
fn hashed(clean: &str, full: &str, salt: u32) -> String {
    let head = &clean[..clean.len().min(MAX_NAME - 9)];
    let mut hash = fnv1a(full.as_bytes());
    if salt > 0 {
        hash = fnv1a(&[hash.to_le_bytes().as_slice(), &salt.to_le_bytes()].concat());
    }
    format!("{head}_{:08x}", hash & 0xffff_ffff)
}

/// 64-bit FNV-1a.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn valid_names_are_kept() {
        assert_eq!(
            offered_names("github", &["create_issue", "list-prs"]),
            vec!["mcp__github__create_issue", "mcp__github__list-prs"]
        );
    }

    #[test]
    fn invalid_characters_become_underscores() {
        assert_eq!(
            offered_names("fs", &["read.file", "ünïcode tool"]),
            vec!["mcp__fs__read_file", "mcp__fs___n_code_tool"]
        );
    }

    #[test]
    fn long_names_are_cut_with_a_stable_hash() {
        let long = "a_tool_name_that_goes_on_and_on_far_beyond_what_openai_accepts";
        let names = offered_names("server", &[long]);
        assert_eq!(names[0].len(), MAX_NAME);
        assert!(
            names[0].starts_with("mcp__server__a_tool_name"),
            "{names:?}"
        );
        assert_eq!(names, offered_names("server", &[long]), "stable");
        assert!(is_valid(&names[0]));
    }

    #[test]
    fn collisions_get_distinct_names() {
        let names = offered_names("s", &["a.b", "a_b", "a b", "a.b"]);
        assert_eq!(names[0], "mcp__s__a_b");
        let unique: HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), 4, "{names:?}");
        assert!(names.iter().all(|n| is_valid(n)), "{names:?}");
    }

    #[test]
    fn validity() {
        assert!(is_valid("mcp__a__b-c_9"));
        assert!(!is_valid(""));
        assert!(!is_valid("a.b"));
        assert!(!is_valid(&"x".repeat(65)));
    }
}
