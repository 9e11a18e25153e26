//! Making control and invisible characters visible (approval prompts, `agent check`, the
//! `read_file` listing of a directory, §5.3). A leaf: it uses nothing of the crate.
//!
//! What the user approves must be what runs: zero-width characters, bidirectional overrides,
//! and spaces that are not ASCII spaces (a no-break space makes `rm\u00a0-rf` one word) are
//! shown as `\uXXXX`; newlines, tabs and carriage returns as `\n`, `\t`, `\r`.

/// `text` with control characters and invisible or direction-changing Unicode escaped as
/// `\u{...}`-style `\uXXXX` sequences (newlines and tabs as `\n`, `\t`), so what the user
/// approves is exactly what runs.
pub(crate) fn escape_invisible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if is_invisible(c) => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// Control characters, zero-width and formatting characters, bidi controls, characters that
/// render as nothing, and spaces other than U+0020.
pub(crate) fn is_invisible(c: char) -> bool {
    c.is_control()
        || matches!(
            u32::from(c),
            0x00A0
                | 0x00AD
                | 0x034F
                | 0x1680
                | 0x2000..=0x200A
                | 0x202F
                | 0x205F
                | 0x3000
                | 0x061C
                | 0x115F..=0x1160
                | 0x17B4..=0x17B5
                | 0x180B..=0x180F
                | 0x200B..=0x200F
                | 0x2028..=0x202E
                | 0x2060..=0x206F
                | 0x3164
                | 0xFE00..=0xFE0F
                | 0xFEFF
                | 0xFFA0
                | 0xFFF0..=0xFFFB
                | 0x1D173..=0x1D17A
                | 0xE0000..=0xE007F
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(escape_invisible("rm\u{200b} -rf"), "rm\\u200b -rf");
        assert_eq!(escape_invisible("a\nb\x1b[31m"), "a\\nb\\u001b[31m");
        assert_eq!(escape_invisible("ls -la é"), "ls -la é");
        assert_eq!(
            escape_invisible("rm\u{a0}-rf \u{202e}x"),
            "rm\\u00a0-rf \\u202ex"
        );
    }
}
