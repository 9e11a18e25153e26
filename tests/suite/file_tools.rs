//! `read_file`, `write_file` and `str_replace` end to end: the mock model scripts the tool
//! calls, the real binary runs them, and the tests check the files on disk and the tool
//! results the model got back. The tool-execution cases in tests/data/tool-execution.jsonl
//! that concern the file tools run table-driven from that file.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::env::texts;
use crate::support::sse::{check_request_invariants, text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

/// A scripted tool call: (tool, arguments).
type Call = (&'static str, Value);

/// Replies for `calls`, one model turn each, then a final answer.
fn script(calls: &[Call]) -> Vec<Reply> {
    let mut replies: Vec<Reply> = calls
        .iter()
        .enumerate()
        .map(|(i, (tool, args))| {
            Reply::Sse(tool_events(&format!("call_{i}"), tool, &args.to_string()))
        })
        .collect();
    replies.push(Reply::Sse(text_events(&["done"])));
    replies
}

/// What one scripted run produced.
struct Run {
    env: TestEnv,
    server: MockServer,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The text of the tool message answering call `i` (seen by the request after it).
    fn result(&self, i: usize) -> String {
        let id = format!("call_{i}");
        self.server
            .chat_requests()
            .iter()
            .flat_map(|r| r.messages())
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id.as_str())
            .and_then(|m| m["content"].as_str().map(without_reminder))
            .unwrap_or_else(|| panic!("no tool message for {id}; stderr:\n{}", self.stderr))
    }

    fn assert_well_formed(&self) {
        assert_eq!(self.code, Some(0), "stderr:\n{}", self.stderr);
        assert_eq!(self.stdout, "done\n");
        for request in self.server.chat_requests() {
            check_request_invariants(&request.body).unwrap();
        }
    }
}

/// Runs a one-shot task in `env` with the tool calls scripted; `extra` are flags.
fn run_in(env: TestEnv, calls: &[Call], extra: &[&str]) -> Run {
    let server = MockServer::start(script(calls));
    let mut env = env;
    env.var("BASE_URL", &server.base_url());
    env.var("MODEL", "mock-model");
    let mut args: Vec<&str> = extra.to_vec();
    args.push("do the task");
    let output = env.run(&args);
    let (stdout, stderr) = texts(&output);
    Run {
        env,
        server,
        code: output.status.code(),
        stdout,
        stderr,
    }
}

/// A message text without the per-request reminder the agent appends to the last message.
pub(super) fn without_reminder(text: &str) -> String {
    match text.find("\n\n<system-reminder>") {
        Some(at) => text[..at].to_string(),
        None => text.to_string(),
    }
}

fn cases() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tool-execution.jsonl");
    std::fs::read_to_string(path)
        .expect("tests/data/tool-execution.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("case is JSON"))
        .collect()
}

/// Checks one case, given its JSON line.
type CaseCheck = fn(&Value);

/// The file-tool cases and how each is checked.
const CASES: &[(&str, CaseCheck)] = &[
    ("c-str-replace-multi-zero", case_multi_zero),
    ("c-crlf-file-edit", case_crlf),
    ("c-symlink-escape", case_symlink_escape),
    ("c-stale-file-edit", case_stale),
];

#[test]
fn tool_execution_cases_for_the_file_tools() {
    let cases = cases();
    for (id, check) in CASES {
        let case = cases
            .iter()
            .find(|c| c["id"] == *id)
            .unwrap_or_else(|| panic!("case {id} missing from tests/data/tool-execution.jsonl"));
        check(case);
    }
}

fn case_multi_zero(case: &Value) {
    let input = &case["input"];
    let path = input["file"]["path"].as_str().unwrap();
    let content = input["file"]["content"].as_str().unwrap();
    let env = TestEnv::new();
    env.write(path, content);
    let calls: Vec<Call> = input["edits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                "str_replace",
                json!({"path": path, "old_str": e["old_str"], "new_str": e["new_str"]}),
            )
        })
        .collect();
    let run = run_in(env, &calls, &[]);
    run.assert_well_formed();
    let first = run.result(0);
    assert!(
        first.contains("old_str matches 2 times (lines 1, 3)"),
        "{first}"
    );
    assert!(
        first.contains("add more context or set replace_all"),
        "{first}"
    );
    let second = run.result(1);
    assert!(
        second.starts_with("Error: str_replace failed - no match: "),
        "{second}"
    );
    assert!(second.contains("     1\tDEBUG = False"), "{second}");
    assert!(second.contains("whitespace"), "{second}");
    assert!(
        run.result(2)
            .starts_with("Edited `src/config.py` at line 2."),
        "{}",
        run.result(2)
    );
    // Edits 1 and 2 changed nothing; edit 3 wrote new_str literally.
    assert_eq!(
        run.env.read(path),
        "DEBUG = False\nX = cost('$1 and $&')\nDEBUG = False\n"
    );
}

fn case_crlf(case: &Value) {
    let input = &case["input"];
    let path = input["file"]["path"].as_str().unwrap();
    let bytes = hex(input["file"]["bytes_hex"].as_str().unwrap());
    let env = TestEnv::new();
    std::fs::write(env.workspace.join(path), &bytes).unwrap();
    let edit = &input["edit"];
    let call = (
        "str_replace",
        json!({"path": path, "old_str": edit["old_str"], "new_str": edit["new_str"]}),
    );
    let run = run_in(env, &[call], &[]);
    run.assert_well_formed();
    assert!(
        case["expected"]
            .as_str()
            .unwrap()
            .contains(r"'const a=1;\r\nconst b=3;\r\n'")
    );
    assert_eq!(
        std::fs::read(run.env.workspace.join(path)).unwrap(),
        b"const a=1;\r\nconst b=3;\r\n"
    );
}

fn case_symlink_escape(case: &Value) {
    let input = &case["input"];
    let env = TestEnv::new();
    let outside = env.outside();
    // The case's absolute targets are mapped into this test's own outside directory, so a
    // failure can never write to the real /tmp or /etc.
    let map = |target: &str| -> PathBuf {
        let relative = target
            .strip_prefix("/tmp/outside/")
            .map(str::to_string)
            .unwrap_or_else(|| format!("root{target}"));
        outside.join(relative)
    };
    std::fs::create_dir_all(outside.join("root/etc/cron.d")).unwrap();
    std::fs::write(outside.join("victim.txt"), "original").unwrap();
    for line in input["setup"].as_array().unwrap() {
        let words: Vec<&str> = line.as_str().unwrap().split_whitespace().collect();
        assert_eq!(&words[..2], ["ln", "-s"], "setup is `ln -s TARGET LINK`");
        symlink(map(words[2]), env.workspace.join(words[3])).unwrap();
    }
    env.write("inside/real.txt", "old");
    symlink("inside/real.txt", env.workspace.join("alias.txt")).unwrap();
    let mut calls: Vec<Call> = input["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                "write_file",
                json!({"path": w["path"], "content": w["content"]}),
            )
        })
        .collect();
    let writes = calls.len();
    calls.push(("read_file", json!({"path": "alias.txt"})));
    calls.push(("write_file", json!({"path": "alias.txt", "content": "new"})));
    // `--yes` turns every ask into allow: the refusal must not depend on the user.
    let run = run_in(env, &calls, &["--yes"]);
    run.assert_well_formed();
    for i in 0..writes {
        let result = run.result(i);
        assert!(
            result.contains("path resolves outside the workspace"),
            "write {i}: {result}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("victim.txt")).unwrap(),
        "original"
    );
    assert!(!outside.join("new.txt").exists());
    assert!(!outside.join("root/etc/cron.d/x").exists());
    assert!(
        run.result(writes + 1).starts_with("Overwrote `alias.txt`"),
        "{}",
        run.result(writes + 1)
    );
    assert_eq!(run.env.read("inside/real.txt"), "new");
    assert!(
        std::fs::symlink_metadata(run.env.workspace.join("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

fn case_stale(case: &Value) {
    let steps: Vec<&str> = case["input"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(steps[1].starts_with("external: "), "{steps:?}");
    let external = steps[1].trim_start_matches("external: ");
    let env = TestEnv::new();
    env.write("src/lib.rs", "fn a() {}\n");
    let edit = json!({"path": "src/lib.rs", "old_str": "fn a()", "new_str": "fn b()"});
    let calls: Vec<Call> = vec![
        ("read_file", json!({"path": "src/lib.rs"})),
        // bash plays the user's editor: the file tools do not see its writes.
        ("bash", json!({"command": external})),
        ("str_replace", edit.clone()),
        ("read_file", json!({"path": "src/lib.rs"})),
        ("str_replace", edit),
    ];
    let run = run_in(env, &calls, &["--yes"]);
    run.assert_well_formed();
    let refused = run.result(2);
    assert!(
        refused.contains("src/lib.rs changed on disk since last read; re-read it"),
        "{refused}"
    );
    assert!(
        run.result(3).contains("     2\t// user change"),
        "{}",
        run.result(3)
    );
    assert!(
        run.result(4).starts_with("Edited `src/lib.rs` at line 1."),
        "{}",
        run.result(4)
    );
    assert_eq!(run.env.read("src/lib.rs"), "fn b() {}\n// user change\n");
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn read_write_and_edit_a_new_file() {
    let calls: Vec<Call> = vec![
        (
            "write_file",
            json!({"path": "pkg/hello.py", "content": "print('helo')\n"}),
        ),
        ("read_file", json!({"path": "pkg/hello.py"})),
        (
            "str_replace",
            json!({"path": "pkg/hello.py", "old_str": "helo", "new_str": "hello"}),
        ),
        ("read_file", json!({"path": "pkg/missing.py"})),
    ];
    let run = run_in(TestEnv::new(), &calls, &[]);
    run.assert_well_formed();
    assert_eq!(run.result(0), "Created `pkg/hello.py` (1 line, 14 bytes).");
    assert_eq!(run.result(1), "     1\tprint('helo')\n");
    assert_eq!(
        run.result(2),
        "Edited `pkg/hello.py` at line 1. It now reads:\n     1\tprint('hello')\n"
    );
    assert_eq!(
        run.result(3),
        "Error: read_file failed - not found: `pkg/missing.py` does not exist; check the path (read_file on a directory lists it)"
    );
    assert_eq!(run.env.read("pkg/hello.py"), "print('hello')\n");
    assert!(
        run.stderr.contains("● write_file  pkg/hello.py"),
        "{}",
        run.stderr
    );
}

#[test]
fn overwriting_an_unread_file_is_refused() {
    let env = TestEnv::new();
    env.write("notes.md", "user notes\n");
    let calls: Vec<Call> = vec![
        (
            "write_file",
            json!({"path": "notes.md", "content": "clobbered"}),
        ),
        ("read_file", json!({"path": "notes.md"})),
        (
            "write_file",
            json!({"path": "notes.md", "content": "rewritten\n"}),
        ),
    ];
    let run = run_in(env, &calls, &[]);
    run.assert_well_formed();
    assert!(
        run.result(0)
            .starts_with("Error: write_file failed - not read: `notes.md` already exists"),
        "{}",
        run.result(0)
    );
    assert!(
        run.result(2).starts_with("Overwrote `notes.md`"),
        "{}",
        run.result(2)
    );
    assert_eq!(run.env.read("notes.md"), "rewritten\n");
}

/// Whether this process could ask on a terminal (then an ask would block, not decline).
fn has_tty() -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .is_ok()
}

#[test]
fn an_explicit_outside_path_needs_approval() {
    if has_tty() {
        eprintln!("skipped: a controlling terminal would be asked");
        return;
    }
    let env = TestEnv::new();
    let target = env.outside().join("direct.txt");
    let call: Call = (
        "write_file",
        json!({"path": target.to_str().unwrap(), "content": "x"}),
    );
    let run = run_in(env, std::slice::from_ref(&call), &[]);
    run.assert_well_formed();
    let denied = run.result(0);
    assert!(
        denied.starts_with("The user denied this tool call: approval was needed"),
        "{denied}"
    );
    assert!(denied.contains("outside the workspace"), "{denied}");
    assert!(!target.exists());
    let run = run_in(TestEnv::new(), &[call], &["--yes"]);
    run.assert_well_formed();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x");
}

#[test]
fn secrets_are_denied_even_through_a_symlink() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".ssh")).unwrap();
    std::fs::write(env.home.join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
    symlink(env.home.join(".ssh/id_rsa"), env.workspace.join("key.txt")).unwrap();
    let calls: Vec<Call> = vec![
        ("read_file", json!({"path": "~/.ssh/id_rsa"})),
        ("read_file", json!({"path": "key.txt"})),
    ];
    let run = run_in(env, &calls, &["--yes"]);
    run.assert_well_formed();
    for i in 0..2 {
        let result = run.result(i);
        assert!(result.starts_with("Blocked by policy:"), "{result}");
        assert!(!result.contains("PRIVATE KEY"), "{result}");
    }
}

#[test]
fn first_request_stays_small() {
    let run = run_in(TestEnv::new(), &[], &[]);
    run.assert_well_formed();
    let request = &run.server.chat_requests()[0].body;
    let system = request["messages"][0]["content"].as_str().unwrap().len();
    let tools = request["tools"].to_string().len();
    let names: Vec<&str> = request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        names.starts_with(&["bash", "read_file", "write_file", "str_replace"]),
        "{names:?}"
    );
    let each: Vec<String> = request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("{} {}", t["function"]["name"], t.to_string().len()))
        .collect();
    eprintln!(
        "first request: system prompt {system} + tool schemas {tools} = {} bytes (whole body {}; tools: {})",
        system + tools,
        request.to_string().len(),
        each.join(", ")
    );
    assert!(
        system + tools <= 4000,
        "system prompt {system} + tool schemas {tools} bytes > 4000"
    );
}

#[test]
fn a_write_path_with_control_characters_is_refused() {
    // It created a file named with a terminal escape sequence and a newline.
    let calls: Vec<Call> = vec![
        (
            "write_file",
            json!({"path": "\u{1b}]0;pwned\u{7}x.txt", "content": "hi"}),
        ),
        ("write_file", json!({"path": "a\nb.txt", "content": "hi"})),
    ];
    let run = run_in(TestEnv::new(), &calls, &[]);
    run.assert_well_formed();
    assert_eq!(
        run.result(0),
        "Error: write_file failed - invalid path: `\\u{1b}]0;pwned\\u{7}x.txt` holds the control character \\u{1b}; pass a plain file path"
    );
    assert_eq!(
        run.result(1),
        "Error: write_file failed - invalid path: `a\\nb.txt` holds the control character \\u{a}; pass a plain file path"
    );
    let names: Vec<String> = std::fs::read_dir(&run.env.workspace)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec![".git".to_string()]);
}
