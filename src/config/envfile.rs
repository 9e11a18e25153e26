//! The env file `$AGENT_HOME/env` (SPEC §2.1).
//!
//! Format: `KEY=VALUE` lines; blank lines and `#` comments are skipped; an optional `export `
//! prefix is accepted; values may be wrapped in single quotes (taken literally) or double
//! quotes (`\"`, `\\`, `\n`, `\t` escapes); an unquoted value ends at ` #` (an inline comment)
//! and is trimmed. `$` is never expanded. A UTF-8 byte-order mark (Windows editors write one)
//! is skipped. Values are returned, never put into the process
//! environment, so they cannot leak into child processes.

use std::collections::BTreeMap;
use std::path::Path;

use super::BadValue;
use super::ConfigError;

/// Parses env-file text. `path` is only used in error messages.
///
/// # Errors
/// [`ConfigError::EnvFile`] naming the file and 1-based line for a line without `=`, an
/// invalid key, or an unterminated quote.
pub(crate) fn parse(text: &str, path: &Path) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut values = BTreeMap::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let error = |message: String| ConfigError::EnvFile {
            path: path.to_path_buf(),
            line: index + 1,
            message,
        };
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let Some((key, value)) = line.split_once('=') else {
            return Err(error(format!("expected KEY=VALUE, found `{line}`")));
        };
        let key = key.trim();
        if !is_valid_key(key) {
            return Err(error(format!("invalid variable name `{key}`")));
        }
        let value = parse_value(value.trim()).map_err(|bad| error(bad.0))?;
        values.insert(key.to_string(), value);
    }
    Ok(values)
}

fn is_valid_key(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn parse_value(value: &str) -> Result<String, BadValue> {
    if let Some(rest) = value.strip_prefix('\'') {
        let end = rest
            .find('\'')
            .ok_or_else(|| BadValue::from("unterminated single quote"))?;
        return Ok(rest[..end].to_string());
    }
    if let Some(rest) = value.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = rest.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return Ok(out),
                '\\' => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(other) => out.push(other),
                    None => break,
                },
                other => out.push(other),
            }
        }
        return Err("unterminated double quote".into());
    }
    let unquoted = match value.find(" #") {
        Some(at) => &value[..at],
        None => value,
    };
    Ok(unquoted.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn parse_ok(text: &str) -> Vec<(String, String)> {
        parse(text, Path::new("env"))
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .collect()
    }

    #[test]
    fn accepts_comments_export_and_quotes() {
        let text = "# endpoint\n\nexport BASE_URL=http://x/v1\nAPI_KEY='sk-$abc # not a comment'\n\
                    MODEL=\"qwen \\\"coder\\\"\"\nEMPTY=\nTRAIL=value # comment\n";
        let expected = vec![
            ("API_KEY".to_string(), "sk-$abc # not a comment".to_string()),
            ("BASE_URL".to_string(), "http://x/v1".to_string()),
            ("EMPTY".to_string(), String::new()),
            ("MODEL".to_string(), "qwen \"coder\"".to_string()),
            ("TRAIL".to_string(), "value".to_string()),
        ];
        assert_eq!(parse_ok(text), expected);
    }

    #[test]
    fn crlf_lines_are_accepted() {
        assert_eq!(
            parse_ok("A=1\r\nB=2\r\n"),
            vec![("A".into(), "1".into()), ("B".into(), "2".into())]
        );
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        // It made the first key `\u{feff}BASE_URL`: an invalid name shown as `BASE_URL`.
        assert_eq!(
            parse_ok("\u{feff}BASE_URL=http://x/v1\r\nMODEL=m\r\n"),
            vec![
                ("BASE_URL".into(), "http://x/v1".into()),
                ("MODEL".into(), "m".into())
            ]
        );
    }

    #[test]
    fn errors_name_the_line() {
        let err = parse("A=1\nnot a pair\n", Path::new("/h/env")).map(|_| ());
        let message = err.map_err(|e| e.to_string()).err().unwrap_or_default();
        assert_eq!(message, "/h/env:2: expected KEY=VALUE, found `not a pair`");
        assert!(parse("1X=2", Path::new("env")).is_err());
        assert!(parse("A='open", Path::new("env")).is_err());
    }
}
