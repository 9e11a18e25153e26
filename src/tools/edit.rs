//! `str_replace` (SPEC §4.1): exact, unique, encoding-preserving edits.
//!
//! `old_str` must occur exactly once (or, with `replace_all`, at least once). No match is an
//! error showing where the model probably meant (the same text with other whitespace, else
//! the most similar lines, numbered) with a hint about whitespace and indentation; several
//! matches are an error naming their lines (case c-str-replace-multi-zero). Matching and
//! splicing work on bytes with CRLF normalized (`matching.rs`): CRLF, the final newline
//! and non-UTF-8 bytes outside the edit are preserved, and `new_str` is inserted literally.
//!
//! An `old_str` that differs from one place in the file only in indentation (spaces sent for
//! tabs, 4-space for 2-space, a block at another depth) is applied there with `new_str`
//! re-indented like the file (`indent.rs`, case c-tab-indent-edit); when that is ambiguous
//! the error says how the file indents and shows the lines with tabs made visible (`→`).
//!
//! Decisions: a file the agent never read may be edited (the exact match of `old_str` already
//! proves the model knows the text it replaces), but a file changed on disk since the agent
//! last read or wrote it is refused (case c-stale-file-edit). Files over 16 MiB, read-only
//! files and writes through a symlink leaving the workspace are refused. The write is atomic
//! and keeps the file's permissions.

use serde_json::json;

use super::ToolErrorKind;
use super::guards::{check_fresh, check_writable, not_found};
use super::indent::{self, Kind, Outcome};
use super::matching::{self, Closest, Text};
use super::paths::{self, Resolved};
use super::str_arg;
use super::textfile;
use super::tracker::Snapshot;
use super::{Access, Args, Tool, ToolContext, ToolDisplay, ToolError, ToolOutput, ToolSpec, Wrote};

/// Match lines listed in a "matches N times" error.
const MAX_LISTED_LINES: usize = 20;
/// Lines of context shown around an edit.
const CONTEXT_LINES: usize = 3;
/// Lines of the edited region shown in the result.
const MAX_SNIPPET_LINES: usize = 30;

pub(crate) struct StrReplaceTool {
    spec: ToolSpec,
}

impl StrReplaceTool {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: "str_replace",
                description: "Edit a file: replace old_str with new_str. old_str must match \
                    the file exactly (whitespace and indentation included) and only once, \
                    unless replace_all. Read the file first.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "old_str": {"type": "string"},
                        "new_str": {"type": "string"},
                        "replace_all": {"type": "boolean", "description": "Replace every match"}
                    },
                    "required": ["path", "old_str", "new_str"]
                }),
            },
        }
    }
}

impl Default for StrReplaceTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for StrReplaceTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Access, ToolError> {
        let r = paths::resolve_for_write(str_arg(args, "path"), ctx)?;
        Ok(Access::Write(r.real))
    }

    fn run(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let old_lf = Text::to_lf(str_arg(args, "old_str"));
        let new_lf = Text::to_lf(str_arg(args, "new_str"));
        let replace_all = args
            .get("replace_all")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        check_strings(&old_lf, &new_lf)?;
        let r = paths::resolve_for_write(str_arg(args, "path"), ctx)?;
        let Some(meta) = textfile::regular_file(&r)? else {
            return Err(not_found(
                &r,
                ctx.workspace,
                "create a new file with write_file",
            ));
        };
        check_writable(&r, &meta)?;
        let bytes = textfile::load(&r, &meta)?;
        check_fresh(
            ctx,
            &r,
            &Snapshot::of_bytes(&bytes, meta.modified().ok()),
            false,
        )?;
        let text = Text::new(&bytes);
        let starts = text.find(&old_lf);
        if starts.is_empty() {
            return match indent::find(text.norm(), &old_lf, &new_lf) {
                Outcome::Edit {
                    start,
                    len,
                    new,
                    lines,
                } => {
                    let updated = text.splice(&[start], len, &text.with_ending(&new));
                    let mut output = write_edit(ctx, &r, &bytes, updated, &[lines.0], &new)?;
                    output.text.push_str(&reindented_note(&text, &old_lf));
                    Ok(output)
                }
                Outcome::Several(ranges) => Err(indent_error(
                    &r,
                    &text,
                    &format!(
                        "it matches {} places only if indentation is ignored; add \
                         neighbouring lines to old_str so it matches one place",
                        ranges.len()
                    ),
                    &ranges,
                )),
                Outcome::Unconvertible { lines, reason } => Err(indent_error(
                    &r,
                    &text,
                    &format!(
                        "it matches lines {}-{} only if indentation is ignored, but {reason}",
                        lines.0, lines.1
                    ),
                    &[lines],
                )),
                Outcome::Nothing => Err(no_match(&r, &text, &old_lf)),
            };
        }
        let lines = text.lines_of(&starts);
        if starts.len() > 1 && !replace_all {
            return Err(ToolError::new(
                ToolErrorKind::MultipleMatches,
                format!(
                    "old_str matches {} times (lines {}); add more context or set replace_all",
                    starts.len(),
                    list_lines(&lines)
                ),
            ));
        }
        let updated = text.splice(&starts, old_lf.len(), &text.with_ending(&new_lf));
        write_edit(ctx, &r, &bytes, updated, &lines, &new_lf)
    }
}

/// Writes the edited file atomically, records it as seen, and describes the edit.
fn write_edit(
    ctx: &ToolContext<'_>,
    r: &Resolved,
    before: &[u8],
    updated: Vec<u8>,
    lines: &[usize],
    new_lf: &str,
) -> Result<ToolOutput, ToolError> {
    super::atomic::write(&r.real, &updated)
        .map_err(|e| textfile::io_error("cannot write", r, &e))?;
    let modified = std::fs::metadata(&r.real).and_then(|m| m.modified()).ok();
    ctx.files
        .record(&r.real, Snapshot::of_bytes(&updated, modified));
    Ok(ToolOutput {
        text: summary(r, &updated, lines, new_lf),
        display: Some(ToolDisplay::Diff {
            path: r.shown.clone(),
            before: String::from_utf8_lossy(before).into_owned(),
            after: String::from_utf8_lossy(&updated).into_owned(),
        }),
        exit_code: None,
        wrote: Some(Wrote {
            real: r.real.clone(),
            shown: r.shown.clone(),
        }),
    })
}

/// The kind of indentation `old_lf`'s lines use, if any line is indented.
fn old_kind(old_lf: &str) -> Option<Kind> {
    indent::file_kind(old_lf.as_bytes())
}

/// How the file indents, for errors: `the file indents with tabs (→ marks a tab)`.
fn how_it_indents(text: &Text<'_>) -> String {
    match indent::file_kind(text.norm()) {
        Some(Kind::Tab) => "the file indents with tabs (→ in the lines shown is a tab; send a \
                            tab character, \\t in JSON, not spaces and not →)"
            .to_string(),
        Some(Kind::Space) => "the file indents with spaces, not tabs".to_string(),
        None => "the file has no indented lines".to_string(),
    }
}

/// The note added to a result when `old_str` matched only ignoring indentation.
fn reindented_note(text: &Text<'_>, old_lf: &str) -> String {
    let file = indent::file_kind(text.norm());
    match (old_kind(old_lf), file) {
        (Some(sent), Some(file)) if sent != file => format!(
            "\nold_str was indented with {} but the file indents with {}: it was matched \
             ignoring indentation and new_str was indented with {} like the file; send the \
             file's indentation next time.",
            sent.plural(),
            file.plural(),
            file.plural()
        ),
        _ => "\nold_str was indented differently from the file: it was matched ignoring \
              indentation and new_str was re-indented to fit the file."
            .to_string(),
    }
}

/// The error for an `old_str` that matches only ignoring indentation and cannot be applied.
fn indent_error(r: &Resolved, text: &Text<'_>, what: &str, ranges: &[(usize, usize)]) -> ToolError {
    let tabs = indent::file_kind(text.norm()) == Some(Kind::Tab);
    let mut message = format!(
        "old_str was not found in `{}` as written; {what}; {}:\n",
        r.shown,
        how_it_indents(text)
    );
    for (a, b) in ranges.iter().take(3) {
        message.push_str(&text.excerpt_marked(*a, *b, matching::MAX_REGION_LINES, tabs));
    }
    message.push_str(
        "copy old_str from these lines with their exact indentation (without the line \
         numbers), and indent new_str the same way",
    );
    ToolError::new(ToolErrorKind::NoMatch, message)
}

/// Refuses an empty `old_str` and a no-op edit.
fn check_strings(old_lf: &str, new_lf: &str) -> Result<(), ToolError> {
    if old_lf.is_empty() {
        return Err(ToolError::new(
            ToolErrorKind::InvalidEdit,
            "`old_str` is empty; to create or overwrite a whole file use write_file, to insert \
             text put a neighbouring line in old_str and repeat it in new_str",
        ));
    }
    if old_lf == new_lf {
        return Err(ToolError::new(
            ToolErrorKind::InvalidEdit,
            "`old_str` and `new_str` are the same, so nothing would change; put the new text \
             in new_str",
        ));
    }
    Ok(())
}

fn list_lines(lines: &[usize]) -> String {
    let mut listed: Vec<String> = lines
        .iter()
        .take(MAX_LISTED_LINES)
        .map(usize::to_string)
        .collect();
    if lines.len() > MAX_LISTED_LINES {
        listed.push("...".to_string());
    }
    listed.join(", ")
}

/// The error for an `old_str` that matches nothing, showing the closest region. When its
/// indentation is of another kind than the file's, the error says how the file indents and
/// shows tabs as `→`.
fn no_match(r: &Resolved, text: &Text<'_>, old_lf: &str) -> ToolError {
    let file = indent::file_kind(text.norm());
    let other_kind = old_kind(old_lf).is_some_and(|sent| Some(sent) != file);
    let tabs = other_kind && file == Some(Kind::Tab);
    let excerpt = |a: usize, b: usize| text.excerpt_marked(a, b, matching::MAX_REGION_LINES, tabs);
    let mut message = match text.closest(old_lf) {
        Closest::Whitespace(ranges) => {
            let at: Vec<String> = ranges
                .iter()
                .map(|(a, b)| {
                    if a == b {
                        a.to_string()
                    } else {
                        format!("{a}-{b}")
                    }
                })
                .collect();
            let mut m = format!(
                "old_str was not found in `{}`; it matches line(s) {} only if whitespace is \
                 ignored:\n",
                r.shown,
                at.join(", ")
            );
            for (a, b) in ranges.iter().take(3) {
                m.push_str(&excerpt(*a, *b));
            }
            m.push_str(
                "old_str must match exactly, including spaces, tabs and indentation; copy it \
                 from the lines above (without the line numbers)",
            );
            m
        }
        Closest::Similar(a, b) => format!(
            "old_str was not found in `{}`; the closest text is at lines {a}-{b}:\n{}\
             check whitespace and indentation, or re-read the file; old_str must match exactly",
            r.shown,
            excerpt(a, b)
        ),
        Closest::NotSearched => format!(
            "old_str was not found in `{}`; re-read the part you mean to change (read_file \
             with offset and limit) and copy old_str from it exactly, whitespace and \
             indentation included",
            r.shown
        ),
        Closest::Nothing => format!(
            "old_str was not found in `{}` and no similar text is there; re-read the file \
             (read_file) and copy old_str from it exactly, whitespace and indentation included",
            r.shown
        ),
    };
    if other_kind {
        message.push_str(&format!("\n{}", how_it_indents(text)));
    }
    if has_line_numbers(old_lf) {
        message.push_str(
            "\nold_str seems to start its lines with line numbers from read_file; they are not \
             part of the file, leave them out",
        );
    }
    ToolError::new(ToolErrorKind::NoMatch, message)
}

/// Whether most lines of `old_lf` start like `read_file` output (`   12\t`).
fn has_line_numbers(old_lf: &str) -> bool {
    let lines: Vec<&str> = old_lf.lines().filter(|l| !l.trim().is_empty()).collect();
    let numbered = lines
        .iter()
        .filter(|l| {
            let rest = l.trim_start();
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            digits > 0 && rest[digits..].starts_with(['\t', '→'])
        })
        .count();
    numbered > 0 && numbered * 2 >= lines.len()
}

/// The result text: what changed, and for a single edit the region as it now reads.
fn summary(r: &Resolved, updated: &[u8], lines: &[usize], new_lf: &str) -> String {
    if lines.len() > 1 {
        return format!(
            "Replaced {} occurrences in `{}` (lines {}).",
            lines.len(),
            r.shown,
            list_lines(lines)
        );
    }
    let first = lines.first().copied().unwrap_or(1);
    let new_lines = new_lf.split('\n').count();
    let after = Text::new(updated);
    let from = first.saturating_sub(CONTEXT_LINES).max(1);
    let to = first + new_lines - 1 + CONTEXT_LINES;
    format!(
        "Edited `{}` at line {first}. It now reads:\n{}",
        r.shown,
        after.excerpt(from, to, MAX_SNIPPET_LINES)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::files::ReadFileTool;
    use crate::tools::fixture::Fixture;
    use pretty_assertions::assert_eq;
    use serde_json::Value;

    fn edit(f: &Fixture, args: Value) -> Result<ToolOutput, ToolError> {
        f.call(&StrReplaceTool::new(), args)
    }

    #[test]
    fn a_file_over_the_hash_limit_is_too_large_to_edit() {
        let f = Fixture::new();
        let line = b"0123456789abcdef\n";
        let count = usize::try_from(crate::tools::tracker::HASH_LIMIT).unwrap() / line.len() + 10;
        f.put("big.log", line.repeat(count));
        f.ok(
            &ReadFileTool::new(),
            json!({"path": "big.log", "offset": 5, "limit": 2}),
        );
        let e = f.fail(
            &StrReplaceTool::new(),
            json!({"path": "big.log", "old_str": "0", "new_str": "1"}),
        );
        assert_eq!(e.kind, ToolErrorKind::TooLarge);
    }

    #[test]
    fn unique_match_is_replaced_and_shown() {
        let f = Fixture::new();
        f.put(
            "m.py",
            "import os\n\ndef f():\n    return 1\n\nprint(f())\n",
        );
        let out = edit(
            &f,
            json!({"path": "m.py", "old_str": "    return 1", "new_str": "    return 2"}),
        )
        .unwrap();
        assert_eq!(
            out.text,
            "Edited `m.py` at line 4. It now reads:\n     1\timport os\n     2\t\n     3\tdef f():\n     4\t    return 2\n     5\t\n     6\tprint(f())\n"
        );
        assert_eq!(
            f.get("m.py"),
            b"import os\n\ndef f():\n    return 2\n\nprint(f())\n"
        );
        let Some(ToolDisplay::Diff {
            path,
            before,
            after,
        }) = out.display
        else {
            panic!("no diff")
        };
        assert_eq!(
            (
                path.as_str(),
                before.contains("return 1"),
                after.contains("return 2")
            ),
            ("m.py", true, true)
        );
    }

    #[test]
    fn several_matches_need_context_or_replace_all() {
        let f = Fixture::new();
        f.put("c.py", "DEBUG = False\nX = 1\nDEBUG = False\n");
        let e = edit(
            &f,
            json!({"path": "c.py", "old_str": "DEBUG = False", "new_str": "DEBUG = True"}),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "multiple matches: old_str matches 2 times (lines 1, 3); add more context or set replace_all"
        );
        assert_eq!(f.get("c.py"), b"DEBUG = False\nX = 1\nDEBUG = False\n");
        let out = edit(&f, json!({"path": "c.py", "old_str": "DEBUG = False", "new_str": "DEBUG = True", "replace_all": true})).unwrap();
        assert_eq!(out.text, "Replaced 2 occurrences in `c.py` (lines 1, 3).");
        assert_eq!(f.get("c.py"), b"DEBUG = True\nX = 1\nDEBUG = True\n");
    }

    #[test]
    fn no_match_shows_the_closest_region() {
        let f = Fixture::new();
        f.put("c.py", "DEBUG = False\nX = 1\n");
        let e = edit(
            &f,
            json!({"path": "c.py", "old_str": "DEBUG=False", "new_str": "DEBUG = True"}),
        )
        .unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::NoMatch);
        assert_eq!(
            e.message,
            "old_str was not found in `c.py`; it matches line(s) 1 only if whitespace is ignored:\n     1\tDEBUG = False\nold_str must match exactly, including spaces, tabs and indentation; copy it from the lines above (without the line numbers)"
        );
        f.put("s.rs", "fn main() {\n    let total = compute(1, 2);\n}\n");
        let e = edit(&f, json!({"path": "s.rs", "old_str": "     2\t    let totl = compute(1, 2);", "new_str": "x"})).unwrap_err();
        assert!(e.message.starts_with("old_str was not found in `s.rs`; the closest text is at lines 2-2:\n     2\t    let total = compute(1, 2);\ncheck whitespace"), "{e}");
        assert!(
            e.message
                .ends_with("they are not part of the file, leave them out"),
            "{e}"
        );
        let e = edit(
            &f,
            json!({"path": "s.rs", "old_str": "zzz qqq", "new_str": "x"}),
        )
        .unwrap_err();
        assert!(
            e.message
                .contains("no similar text is there; re-read the file"),
            "{e}"
        );
    }

    #[test]
    fn bad_requests() {
        let f = Fixture::new();
        f.put("a.txt", "a\n");
        let e = edit(&f, json!({"path": "a.txt", "old_str": "", "new_str": "x"})).unwrap_err();
        assert!(
            e.message.starts_with(
                "`old_str` is empty; to create or overwrite a whole file use write_file"
            ),
            "{e}"
        );
        let e = edit(&f, json!({"path": "a.txt", "old_str": "a", "new_str": "a"})).unwrap_err();
        assert!(
            e.message
                .starts_with("`old_str` and `new_str` are the same"),
            "{e}"
        );
        let e = edit(&f, json!({"path": "b.txt", "old_str": "a", "new_str": "b"})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not found: `b.txt` does not exist; create a new file with write_file"
        );
        // The file name exists elsewhere in the workspace (issue 19 item 4).
        let e = edit(
            &f,
            json!({"path": "src/a.txt", "old_str": "a", "new_str": "b"}),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "not found: no such file `src/a.txt`; did you mean `a.txt`?"
        );
        let e = edit(&f, json!({"path": ".", "old_str": "a", "new_str": "b"})).unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::IsDirectory);
    }

    #[test]
    fn literal_crlf_and_non_utf8() {
        let f = Fixture::new();
        f.put("x.py", "X = 1\n");
        edit(
            &f,
            json!({"path": "x.py", "old_str": "X = 1", "new_str": "X = cost('$1 and $&')"}),
        )
        .unwrap();
        assert_eq!(f.get("x.py"), b"X = cost('$1 and $&')\n");
        f.put("app.ts", b"const a=1;\r\nconst b=2;\r\n");
        edit(&f, json!({"path": "app.ts", "old_str": "const a=1;\nconst b=2;", "new_str": "const a=1;\nconst b=3;"})).unwrap();
        assert_eq!(f.get("app.ts"), b"const a=1;\r\nconst b=3;\r\n");
        f.put("latin1.txt", b"caf\xe9\nname = old\n\xff\n");
        edit(
            &f,
            json!({"path": "latin1.txt", "old_str": "name = old", "new_str": "name = n\u{e9}w"}),
        )
        .unwrap();
        assert_eq!(f.get("latin1.txt"), b"caf\xe9\nname = n\xc3\xa9w\n\xff\n");
    }

    #[test]
    fn stale_files_are_refused_until_re_read() {
        let f = Fixture::new();
        f.put("src/lib.rs", "fn a() {}\n");
        f.call(&ReadFileTool::new(), json!({"path": "src/lib.rs"}))
            .unwrap();
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(f.ws.join("src/lib.rs"))
            .unwrap();
        std::io::Write::write_all(&mut file, b"// user change\n").unwrap();
        let args = json!({"path": "src/lib.rs", "old_str": "fn a()", "new_str": "fn b()"});
        let e = edit(&f, args.clone()).unwrap_err();
        assert_eq!(
            e.message,
            "src/lib.rs changed on disk since last read; re-read it (read_file) and retry"
        );
        assert_eq!(f.get("src/lib.rs"), b"fn a() {}\n// user change\n");
        f.call(&ReadFileTool::new(), json!({"path": "src/lib.rs"}))
            .unwrap();
        edit(&f, args).unwrap();
        assert_eq!(f.get("src/lib.rs"), b"fn b() {}\n// user change\n");
        // The agent's own edit is what it last saw: a second edit needs no re-read.
        edit(
            &f,
            json!({"path": "src/lib.rs", "old_str": "fn b()", "new_str": "fn c()"}),
        )
        .unwrap();
    }

    const GO: &str = "package main\n\nfunc main() {\n\tif true {\n\t\tprintln(\"a\")\n\t}\n}\n";

    /// Case c-tab-indent-edit: spaces sent for a gofmt'd file.
    #[test]
    fn spaces_for_tabs_are_applied_keeping_the_tabs() {
        let f = Fixture::new();
        f.put("main.go", GO);
        let out = edit(
            &f,
            json!({"path": "main.go", "old_str": "    if true {\n        println(\"a\")",
                "new_str": "    if true {\n        println(\"b\")"}),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(f.get("main.go")).unwrap(),
            GO.replace("println(\"a\")", "println(\"b\")")
        );
        assert!(
            out.text.starts_with("Edited `main.go` at line 4."),
            "{}",
            out.text
        );
        assert!(
            out.text.ends_with(
                "old_str was indented with spaces but the file indents with tabs: it was \
                 matched ignoring indentation and new_str was indented with tabs like the \
                 file; send the file's indentation next time."
            ),
            "{}",
            out.text
        );
        // The same kind of edit on a CRLF file keeps CRLF and tabs.
        f.put("win.go", GO.replace('\n', "\r\n"));
        edit(
            &f,
            json!({"path": "win.go", "old_str": "    if true {\r\n        println(\"a\")\r\n    }",
                "new_str": "    if false {\n        println(\"a\")\n    }"}),
        )
        .unwrap();
        assert_eq!(
            f.get("win.go"),
            GO.replace("true", "false")
                .replace('\n', "\r\n")
                .into_bytes()
        );
    }

    #[test]
    fn tabs_for_spaces_and_other_widths_are_applied() {
        let f = Fixture::new();
        let py = "def f():\n    if x:\n        return 1\n    return 2\n";
        f.put("f.py", py);
        let out = edit(
            &f,
            json!({"path": "f.py", "old_str": "\tif x:\n\t\treturn 1", "new_str": "\tif x:\n\t\tlog()\n\t\treturn 1"}),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(f.get("f.py")).unwrap(),
            py.replace("        return 1", "        log()\n        return 1")
        );
        assert!(
            out.text
                .contains("indented with tabs but the file indents with spaces")
        );
        let js = "if (x) {\n  go();\n}\n";
        f.put("a.js", js);
        let out = edit(
            &f,
            json!({"path": "a.js", "old_str": "if (x) {\n    go();\n}", "new_str": "if (x) {\n    go(1);\n    go(2);\n}"}),
        )
        .unwrap();
        assert_eq!(f.get("a.js"), b"if (x) {\n  go(1);\n  go(2);\n}\n");
        assert!(
            out.text
                .ends_with("new_str was re-indented to fit the file."),
            "{}",
            out.text
        );
    }

    #[test]
    fn ambiguous_indentation_is_refused_showing_the_tabs() {
        let f = Fixture::new();
        let twice = "a {\n\tb()\n}\nc {\n\tb()\n}\n";
        f.put("t.go", twice);
        let e = edit(
            &f,
            json!({"path": "t.go", "old_str": "    b()\n}", "new_str": "    d()\n}"}),
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "old_str was not found in `t.go` as written; it matches 2 places only if \
             indentation is ignored; add neighbouring lines to old_str so it matches one place; \
             the file indents with tabs (→ in the lines shown is a tab; send a tab character, \
             \\t in JSON, not spaces and not →):\n     2\t→b()\n     3\t}\n     5\t→b()\n     6\t}\n\
             copy old_str from these lines with their exact indentation (without the line \
             numbers), and indent new_str the same way"
        );
        assert_eq!(f.get("t.go"), twice.as_bytes());
        let e = edit(
            &f,
            json!({"path": "t.go", "old_str": "a {\n    b()", "new_str": "a {\n      b(1)"}),
        )
        .unwrap_err();
        assert!(
            e.message.contains(
                "it matches lines 1-2 only if indentation is ignored, but line 2 of new_str is \
                 indented by 6 characters, which is no whole number of the file's tabs"
            ),
            "{e}"
        );
        assert_eq!(f.get("t.go"), twice.as_bytes());
        // No place even ignoring indentation: the closest lines, tabs shown.
        let e = edit(
            &f,
            json!({"path": "t.go", "old_str": "c {\n    b(1)", "new_str": "x"}),
        )
        .unwrap_err();
        assert!(e.message.contains("     5\t→b()"), "{e}");
        assert!(e.message.ends_with("not spaces and not →)"), "{e}");
    }

    #[test]
    fn line_number_hint() {
        assert!(has_line_numbers("    12\tfn a() {\n    13\t}"));
        assert!(has_line_numbers("12→x"));
        assert!(!has_line_numbers("let x = 1;\n2 + 2"));
    }

    #[test]
    fn lists_are_bounded() {
        let many: Vec<usize> = (1..=30).collect();
        assert!(list_lines(&many).ends_with("20, ..."));
        assert_eq!(list_lines(&[1, 3]), "1, 3");
    }
}
