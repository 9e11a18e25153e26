//! `read_file` and `write_file` (SPEC §4.1).
//!
//! `read_file` returns `cat -n` style numbered lines from `offset` (1-based, default 1), at
//! most `limit` lines (default 2000), lines over 2000 characters cut; a note says how to read
//! on when lines remain. Binary files (NUL bytes, or mostly invalid UTF-8 / control bytes in
//! the first 8 KiB) are refused with a hint to use bash; directories are refused with a hint
//! to list them; an empty file is stated. What it saw is recorded in the [`FileTracker`].
//!
//! `write_file` creates or overwrites a file, creating parent directories, atomically (see
//! `atomic.rs`), keeping the old file's permissions. Decision (like Claude Code): it
//! refuses to overwrite a non-empty file the agent has not read or written in this session,
//! so a model cannot clobber a file it never saw; an empty file may be overwritten. Both
//! writing tools refuse a file changed on disk since the agent last read or wrote it
//! ("`<path>` changed on disk since last read; re-read it"), and read-only files. Content is
//! written exactly as given (no line-ending conversion). The checks live in
//! `guards.rs`.
//!
//! Paths: see [`super::paths`] (writes through a symlink leaving the workspace are refused).

use std::fs;
use std::io::{BufReader, Read};

use serde_json::json;

use super::ToolErrorKind;
use super::guards::{check_fresh, check_writable, not_found};
use super::paths::{self, Resolved};
use super::textfile::{self, Window};
use super::tracker::{HASH_LIMIT, Snapshot};
use super::{
    Access, Args, Tool, ToolContext, ToolDisplay, ToolError, ToolOutput, ToolSpec, Wrote, str_arg,
};

pub use super::tracker::FileTracker;

/// Lines `read_file` returns when the call gives no `limit` (§4.1).
pub(crate) const DEFAULT_LIMIT: usize = 2000;
/// Characters of the output budget kept free for notes.
const NOTE_ROOM: usize = 400;

fn usize_arg(args: &Args, key: &str, default: usize) -> usize {
    args.get(key)
        .and_then(serde_json::Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(default)
        .max(1)
}

pub(crate) struct ReadFileTool {
    spec: ToolSpec,
}

impl ReadFileTool {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: "read_file",
                description: "Read a text file as numbered lines (`N<tab>text`; the numbers \
                    are not part of the file). Use offset/limit for long files. A directory \
                    path lists its entries.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "offset": {"type": "integer", "minimum": 1, "description": "First line (1-based)"},
                        "limit": {"type": "integer", "minimum": 1, "description": "Max lines (default 2000)"}
                    },
                    "required": ["path"]
                }),
            },
        }
    }
}

impl Default for ReadFileTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for ReadFileTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Access, ToolError> {
        let r = paths::resolve(str_arg(args, "path"), ctx)?;
        Ok(Access::Read(r.real))
    }

    fn run(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let r = paths::resolve(str_arg(args, "path"), ctx)?;
        let budget = ctx.max_output_chars.saturating_sub(NOTE_ROOM).max(1000);
        if r.real.is_dir() {
            return super::listing::list(&r, budget).map(ToolOutput::text);
        }
        let Some(meta) = textfile::regular_file(&r)? else {
            return Err(not_found(
                &r,
                ctx.workspace,
                "check the path (read_file on a directory lists it)",
            ));
        };
        let window = Window {
            offset: usize_arg(args, "offset", 1),
            limit: usize_arg(args, "limit", DEFAULT_LIMIT),
            max_chars: budget,
            count_all: meta.len() <= HASH_LIMIT,
        };
        let rendered = if window.count_all {
            let bytes = fs::read(&r.real).map_err(|e| textfile::io_error("cannot read", &r, &e))?;
            refuse_binary(
                &r,
                &bytes[..bytes.len().min(textfile::SAMPLE_BYTES)],
                bytes.len(),
            )?;
            ctx.files
                .record(&r.real, Snapshot::of_bytes(&bytes, meta.modified().ok()));
            textfile::render(&bytes[..], window)
        } else {
            let mut file =
                fs::File::open(&r.real).map_err(|e| textfile::io_error("cannot open", &r, &e))?;
            let mut sample = Vec::with_capacity(textfile::SAMPLE_BYTES);
            let limit = textfile::SAMPLE_BYTES as u64;
            let read = file.by_ref().take(limit).read_to_end(&mut sample);
            read.map_err(|e| textfile::io_error("cannot read", &r, &e))?;
            refuse_binary(
                &r,
                &sample,
                usize::try_from(meta.len()).unwrap_or(usize::MAX),
            )?;
            ctx.files.record(&r.real, Snapshot::of_metadata(&meta));
            textfile::render(
                BufReader::new(std::io::Cursor::new(sample).chain(file)),
                window,
            )
        }
        .map_err(|e| textfile::io_error("cannot read", &r, &e))?;
        read_result(&r, &rendered, window).map(ToolOutput::text)
    }
}

fn refuse_binary(r: &Resolved, sample: &[u8], len: usize) -> Result<(), ToolError> {
    if !textfile::looks_binary(sample) {
        return Ok(());
    }
    Err(ToolError::new(
        ToolErrorKind::BinaryFile,
        format!(
            "`{}` looks like a binary file ({len} bytes); read_file shows text only, inspect it \
             with bash (`file {}`, `xxd {} | head`)",
            r.shown, r.shown, r.shown
        ),
    ))
}

/// The tool result for a rendered window: the lines plus notes on what was left out.
fn read_result(
    r: &Resolved,
    rendered: &textfile::Rendered,
    window: Window,
) -> Result<String, ToolError> {
    if rendered.total == Some(0) {
        return Ok(format!("[`{}` is empty]", r.shown));
    }
    if rendered.last == 0 {
        let total = rendered.total.unwrap_or(0);
        return Err(ToolError::new(
            ToolErrorKind::InvalidInput,
            format!(
                "`offset` {} is past the end of `{}` ({}); use an offset from 1 to {total}",
                window.offset,
                r.shown,
                lines(total)
            ),
        ));
    }
    let mut text = rendered.text.clone();
    let next = rendered.last + 1;
    let more = match rendered.total {
        Some(total) => rendered.last < total,
        None => true,
    };
    if more {
        let of = rendered
            .total
            .map_or_else(|| " (the file goes on)".to_string(), |t| format!(" of {t}"));
        let why = if rendered.budget_hit {
            "output limit reached; "
        } else {
            ""
        };
        text.push_str(&format!(
            "[{why}showing lines {}-{}{of}; continue with offset={next}]\n",
            window.offset, rendered.last
        ));
    }
    if rendered.invalid_utf8 {
        text.push_str(
            "[some lines hold bytes that are not UTF-8, shown as \u{FFFD}; edits keep those bytes]\n",
        );
    }
    Ok(text)
}

pub(crate) struct WriteFileTool {
    spec: ToolSpec,
}

impl WriteFileTool {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: "write_file",
                description: "Create or overwrite a file (parent directories are created). To \
                    change part of a file use str_replace; overwrite only files you have read.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "content": {"type": "string"}
                    },
                    "required": ["path", "content"]
                }),
            },
        }
    }
}

impl Default for WriteFileTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for WriteFileTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Access, ToolError> {
        let r = paths::resolve_for_write(str_arg(args, "path"), ctx)?;
        Ok(Access::Write(r.real))
    }

    fn run(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let r = paths::resolve_for_write(str_arg(args, "path"), ctx)?;
        let content = str_arg(args, "content");
        let before = match textfile::regular_file(&r)? {
            Some(meta) => {
                check_writable(&r, &meta)?;
                let bytes = textfile::load(&r, &meta)?;
                check_fresh(
                    ctx,
                    &r,
                    &Snapshot::of_bytes(&bytes, meta.modified().ok()),
                    true,
                )?;
                Some(bytes)
            }
            None => None,
        };
        if let Some(parent) = r.real.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| textfile::io_error("cannot create the directories for", &r, &e))?;
        }
        super::atomic::write(&r.real, content.as_bytes())
            .map_err(|e| textfile::io_error("cannot write", &r, &e))?;
        let modified = fs::metadata(&r.real).and_then(|m| m.modified()).ok();
        ctx.files
            .record(&r.real, Snapshot::of_bytes(content.as_bytes(), modified));
        let size = format!(
            "{}, {} bytes",
            lines(line_count(content.as_bytes())),
            content.len()
        );
        let text = match &before {
            None => format!("Created `{}` ({size}).", r.shown),
            Some(old) => format!(
                "Overwrote `{}` ({size}; it had {}).",
                r.shown,
                lines(line_count(old))
            ),
        };
        Ok(ToolOutput {
            text,
            display: Some(ToolDisplay::Diff {
                path: r.shown.clone(),
                before: before
                    .map_or_else(String::new, |b| String::from_utf8_lossy(&b).into_owned()),
                after: content.to_string(),
            }),
            exit_code: None,
            wrote: Some(Wrote {
                real: r.real.clone(),
                shown: r.shown.clone(),
            }),
        })
    }
}

/// `1 line`, `2 lines`.
pub(super) fn lines(n: usize) -> String {
    if n == 1 {
        "1 line".to_string()
    } else {
        format!("{n} lines")
    }
}

/// Lines in `bytes`: newlines, plus one for a last line without a newline.
pub(super) fn line_count(bytes: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', bytes).count();
    newlines + usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::fixture::Fixture;
    use crate::tools::tracker::Freshness;
    use pretty_assertions::assert_eq;
    use std::os::unix::fs::PermissionsExt;

    fn read(f: &Fixture, args: serde_json::Value) -> String {
        f.call(&ReadFileTool::new(), args).unwrap().text
    }

    /// A made-up directory in front of a file elsewhere in the workspace (issue 19 item 4).
    #[test]
    fn a_missing_path_names_the_file_of_that_name() {
        let f = Fixture::new();
        f.put("calc.py", "x\n");
        f.put("pkg/util.py", "x\n");
        f.put(".git/calc.py", "hidden\n");
        let tool = ReadFileTool::new();
        let e = f.fail(&tool, json!({"path": "tests/calc.py"}));
        assert_eq!(e.kind, ToolErrorKind::NotFound);
        assert_eq!(
            e.message,
            "no such file `tests/calc.py`; did you mean `calc.py`?"
        );
        let e = f.fail(&tool, json!({"path": "util.py"}));
        assert_eq!(
            e.message,
            "no such file `util.py`; did you mean `pkg/util.py`?"
        );
        let e = f.fail(&tool, json!({"path": "nothing.py"}));
        assert!(
            e.message.starts_with("`nothing.py` does not exist; "),
            "{e}"
        );
    }

    #[test]
    fn read_numbers_lines_and_pages() {
        let f = Fixture::new();
        f.put("a.txt", "one\r\ntwo\nthree\n");
        assert_eq!(
            read(&f, json!({"path": "a.txt"})),
            "     1\tone\n     2\ttwo\n     3\tthree\n"
        );
        assert_eq!(
            read(&f, json!({"path": "./a.txt", "offset": 2, "limit": 1})),
            "     2\ttwo\n[showing lines 2-2 of 3; continue with offset=3]\n"
        );
        let body: String = (1..=2500).map(|i| format!("{i}\n")).collect();
        f.put("long.txt", body);
        let out = read(&f, json!({"path": "long.txt"}));
        assert!(out.ends_with(
            "  2000\t2000\n[showing lines 1-2000 of 2500; continue with offset=2001]\n"
        ));
    }

    #[test]
    fn read_stops_at_the_output_budget() {
        let mut f = Fixture::new();
        f.max_output_chars = 2000;
        let body: String = (1..=500).map(|i| format!("line number {i}\n")).collect();
        f.put("long.txt", body);
        let out = read(&f, json!({"path": "long.txt"}));
        assert!(out.chars().count() <= 2000, "{}", out.len());
        assert!(
            out.contains("[output limit reached; showing lines 1-"),
            "{out}"
        );
        assert!(out.contains(" of 500; continue with offset="), "{out}");
    }

    #[test]
    fn read_refusals_and_notes() {
        let f = Fixture::new();
        let tool = ReadFileTool::new();
        f.put("empty.txt", "");
        assert_eq!(
            read(&f, json!({"path": "empty.txt"})),
            "[`empty.txt` is empty]"
        );
        f.put("img.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR");
        let e = f.fail(&tool, json!({"path": "img.png"}));
        assert_eq!(e.kind, ToolErrorKind::BinaryFile);
        assert!(
            e.message
                .contains("`img.png` looks like a binary file (16 bytes)"),
            "{e}"
        );
        std::fs::create_dir_all(f.ws.join("src")).unwrap();
        assert_eq!(
            f.ok(&tool, json!({"path": "src"})),
            "[`src/` is an empty directory]"
        );
        f.put("src/Main.rs", "x");
        std::fs::create_dir_all(f.ws.join("src/sub")).unwrap();
        std::os::unix::fs::symlink("Main.rs", f.ws.join("src/link")).unwrap();
        assert_eq!(
            f.ok(&tool, json!({"path": "src/"})),
            "`src/` (directory, 3 entries):\nMain.rs\nlink -> Main.rs\nsub/"
        );
        let e = f.fail(&tool, json!({"path": "src/main.rs"}));
        assert_eq!(e.kind, ToolErrorKind::NotFound);
        assert!(e.message.contains("did you mean `src/Main.rs`?"), "{e}");
        let e = f.fail(&tool, json!({"path": "src/Main.rs", "offset": 5}));
        assert_eq!(
            e.message,
            "`offset` 5 is past the end of `src/Main.rs` (1 line); use an offset from 1 to 1"
        );
        let _socket = std::os::unix::net::UnixListener::bind(f.ws.join("sock")).unwrap();
        assert_eq!(
            f.fail(&tool, json!({"path": "sock"})).kind,
            ToolErrorKind::NotRegularFile
        );
    }

    #[test]
    fn a_directory_listing_is_a_sorted_prefix_with_one_name_a_line() {
        use std::os::unix::ffi::OsStrExt;
        let f = Fixture::new();
        let tool = ReadFileTool::new();
        std::fs::create_dir_all(f.ws.join("big")).unwrap();
        let count = super::super::listing::MAX_ENTRIES + 500;
        for i in 0..count {
            std::fs::write(f.ws.join(format!("big/f{i:05}")), "").unwrap();
        }
        let out = f.ok(&tool, json!({"path": "big"}));
        let listed: Vec<&str> = out.lines().skip(1).filter(|l| l.starts_with('f')).collect();
        let expected: Vec<String> = (0..listed.len()).map(|i| format!("f{i:05}")).collect();
        assert!(listed.len() > 100, "{out}");
        assert_eq!(listed, expected, "a gap in the sorted listing");
        std::fs::create_dir_all(f.ws.join("odd")).unwrap();
        let odd = std::ffi::OsStr::from_bytes(b"\xff\x1b[31mred\nfake");
        std::fs::write(f.ws.join("odd").join(odd), "").unwrap();
        assert_eq!(
            f.ok(&tool, json!({"path": "odd"})),
            "`odd/` (directory, 1 entry):\n\u{fffd}\\u001b[31mred\\nfake"
        );
    }

    #[test]
    fn read_huge_files_with_bounded_memory() {
        let f = Fixture::new();
        let line = b"0123456789abcdef\n";
        let count = usize::try_from(HASH_LIMIT).unwrap() / line.len() + 10;
        let path = f.put("big.log", line.repeat(count));
        let out = read(&f, json!({"path": "big.log", "offset": 5, "limit": 2}));
        assert_eq!(
            out,
            "     5\t0123456789abcdef\n     6\t0123456789abcdef\n\
             [showing lines 5-6 (the file goes on); continue with offset=7]\n"
        );
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(
            f.files.check(&path, &Snapshot::of_metadata(&meta)),
            Freshness::Fresh
        );
    }

    #[test]
    fn read_records_what_it_saw() {
        let f = Fixture::new();
        let path = f.put("a.txt", "x\n");
        read(&f, json!({"path": "a.txt", "limit": 1}));
        let now = Snapshot::of_bytes(b"x\n", None);
        assert_eq!(f.files.check(&path, &now), Freshness::Fresh);
    }

    #[test]
    fn read_through_an_outside_symlink_is_rated_not_refused() {
        let f = Fixture::new();
        std::os::unix::fs::symlink(f.outside.join("lib.rs"), f.ws.join("vendored.rs")).unwrap();
        let access = f
            .access(&ReadFileTool::new(), json!({"path": "vendored.rs"}))
            .unwrap();
        assert_eq!(access, Access::Read(f.outside.join("lib.rs")));
    }

    #[test]
    fn write_creates_with_parents_and_shows_a_diff() {
        let f = Fixture::new();
        let out = f
            .call(
                &WriteFileTool::new(),
                json!({"path": "a/b/c.py", "content": "print('hi')\n"}),
            )
            .unwrap();
        assert_eq!(out.text, "Created `a/b/c.py` (1 line, 12 bytes).");
        assert_eq!(f.get("a/b/c.py"), b"print('hi')\n");
        assert_eq!(
            out.display,
            Some(ToolDisplay::Diff {
                path: "a/b/c.py".into(),
                before: String::new(),
                after: "print('hi')\n".into()
            })
        );
        // Written by the agent: overwriting needs no read.
        let out = f
            .call(
                &WriteFileTool::new(),
                json!({"path": "a/b/c.py", "content": "x"}),
            )
            .unwrap();
        assert_eq!(
            out.text,
            "Overwrote `a/b/c.py` (1 line, 1 bytes; it had 1 line)."
        );
    }

    #[test]
    fn write_refuses_unread_and_stale_files() {
        let f = Fixture::new();
        let tool = WriteFileTool::new();
        f.put("notes.md", "keep me\n");
        let e = f.fail(&tool, json!({"path": "notes.md", "content": "new"}));
        assert_eq!(e.kind, ToolErrorKind::NotRead);
        assert_eq!(f.get("notes.md"), b"keep me\n");
        read(&f, json!({"path": "notes.md"}));
        f.put("notes.md", "user edit\n");
        let e = f.fail(&tool, json!({"path": "notes.md", "content": "new"}));
        assert_eq!(
            e.to_string(),
            "stale file: notes.md changed on disk since last read; re-read it (read_file) and retry"
        );
        read(&f, json!({"path": "notes.md"}));
        f.call(&tool, json!({"path": "notes.md", "content": "new"}))
            .unwrap();
        assert_eq!(f.get("notes.md"), b"new");
        // An empty file has nothing to lose.
        f.put("empty", "");
        f.call(&tool, json!({"path": "empty", "content": "x"}))
            .unwrap();
    }

    #[test]
    fn write_keeps_permissions_and_respects_read_only() {
        let f = Fixture::new();
        let tool = WriteFileTool::new();
        let path = f.put("run.sh", "#!/bin/sh\n");
        std::fs::set_permissions(&path, fs::Permissions::from_mode(0o750)).unwrap();
        read(&f, json!({"path": "run.sh"}));
        f.call(
            &tool,
            json!({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}),
        )
        .unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o750
        );
        std::fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
        let e = f.fail(&tool, json!({"path": "run.sh", "content": "x"}));
        assert_eq!(e.kind, ToolErrorKind::ReadOnly);
        assert!(e.message.contains("(mode 444)"), "{e}");
    }

    #[test]
    fn write_access_is_the_resolved_path() {
        let f = Fixture::new();
        let tool = WriteFileTool::new();
        let access = f
            .access(&tool, json!({"path": "/tmp/x", "content": ""}))
            .unwrap();
        assert_eq!(access, Access::Write("/tmp/x".into()));
        std::fs::create_dir_all(f.ws.join("src")).unwrap();
        std::os::unix::fs::symlink("src", f.ws.join("alias")).unwrap();
        let access = f
            .access(&tool, json!({"path": "alias/a.rs", "content": ""}))
            .unwrap();
        assert_eq!(access, Access::Write(f.ws.join("src/a.rs")));
        std::os::unix::fs::symlink(&f.outside, f.ws.join("out")).unwrap();
        let e = f
            .access(&tool, json!({"path": "out/a.rs", "content": ""}))
            .unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::OutsideWorkspace);
    }
}
