//! Checkpoints end to end (issue 16): scripted sessions on the mock model change files with
//! `write_file`, `str_replace` and `bash` (`sed -i`, `mv`, `rm`, `find -delete`,
//! `python3 -c`, `chmod`), then `agent undo` or `/undo` / `/rewind` at the REPL put them
//! back; the workspace must be byte for byte and mode for mode as before, and the user's
//! `.git` (index, refs, config, everything) must not have changed at all.
//!
//! Each test compares whole trees ([`tree`]): every file's bytes and permission bits, every
//! link's target, every directory, nested repositories' `.git` included.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::pty::{Pty, WAIT, strip};
use crate::support::env::texts;
use crate::support::sse::{text_completion, tool_completion};
use crate::support::{MockServer, Reply, TestEnv};

/// A file system entry as the tests compare it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Dir,
    File { bytes: Vec<u8>, mode: u32 },
    Link(Vec<u8>),
}

/// Everything under `root` (`.git` directories included), by path bytes.
fn tree(root: &Path) -> BTreeMap<Vec<u8>, Node> {
    fn visit(root: &Path, dir: &Path, out: &mut BTreeMap<Vec<u8>, Node>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .as_os_str()
                .as_bytes()
                .to_vec();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, Node::Link(target.as_os_str().as_bytes().to_vec()));
            } else if meta.is_dir() {
                out.insert(rel, Node::Dir);
                visit(root, &path, out);
            } else if meta.is_file() {
                out.insert(
                    rel,
                    Node::File {
                        bytes: std::fs::read(&path).unwrap(),
                        mode: meta.permissions().mode() & 0o7777,
                    },
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    visit(root, root, &mut out);
    out
}

/// Paths that differ between two trees, for a readable failure.
fn differences(a: &BTreeMap<Vec<u8>, Node>, b: &BTreeMap<Vec<u8>, Node>) -> Vec<String> {
    let mut keys: Vec<&Vec<u8>> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            let show = |n: Option<&Node>| match n {
                None => "absent".to_string(),
                Some(Node::Dir) => "dir".to_string(),
                Some(Node::Link(t)) => format!("link to {}", String::from_utf8_lossy(t)),
                Some(Node::File { bytes, mode }) => format!(
                    "file {:o} {:?}",
                    mode,
                    String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
                ),
            };
            format!(
                "{}: {} vs {}",
                String::from_utf8_lossy(k),
                show(a.get(k)),
                show(b.get(k))
            )
        })
        .collect()
}

fn assert_same_tree(before: &BTreeMap<Vec<u8>, Node>, after: &BTreeMap<Vec<u8>, Node>) {
    let diff = differences(before, after);
    assert!(
        diff.is_empty(),
        "the trees differ:\n  {}",
        diff.join("\n  ")
    );
}

/// Runs the user's git in `dir`, hermetically and without optional index writes.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .env("GIT_ALLOW_PROTOCOL", "file")
        .output()
        .expect("run git");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Makes the workspace a real repository with `files` committed (TestEnv's `.git` is a
/// stand-in).
fn init_repo(root: &Path) {
    let _ = std::fs::remove_dir_all(root.join(".git"));
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "start"]);
}

fn put(root: &Path, path: &str, bytes: &[u8], mode: u32) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(&full, bytes).unwrap();
    std::fs::set_permissions(&full, PermissionsExt::from_mode(mode)).unwrap();
}

/// The `--yes` one-shot environment: the mock serves `replies`; `rm` is allowed so the
/// scripts can delete files.
fn env_for(server: &MockServer) -> TestEnv {
    let env = TestEnv::with_server(server);
    env.config("[[permissions.rules]]\ntool = \"bash\"\npattern = \"rm *\"\naction = \"allow\"\n");
    env
}

fn bash(id: &str, command: &str) -> (String, String, String) {
    (
        id.to_string(),
        "bash".to_string(),
        json!({ "command": command }).to_string(),
    )
}

fn call(id: &str, tool: &str, args: Value) -> (String, String, String) {
    (id.to_string(), tool.to_string(), args.to_string())
}

/// One model reply with these tool calls.
fn calls(list: &[(String, String, String)]) -> Reply {
    let refs: Vec<(&str, &str, &str)> = list
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    Reply::Json(tool_completion(&refs))
}

fn done() -> Reply {
    Reply::Json(text_completion("done"))
}

/// The files the main scenario starts with.
fn starting_files(root: &Path) {
    put(root, "src/lib.rs", b"pub fn old() {}\n", 0o644);
    put(root, "notes.txt", b"hello\r\nworld\r\n", 0o644);
    put(root, "old_name.txt", b"rename me\n", 0o644);
    put(root, "doomed.txt", b"find deletes me\n", 0o644);
    put(root, "gone.txt", b"rm deletes me\n", 0o644);
    put(root, "bin.dat", &[0xff, 0x00, 0xfe, 0x80, b'\n'], 0o644);
    put(root, "script.sh", b"#!/bin/sh\necho hi\n", 0o644);
    put(root, "private.txt", b"mine\n", 0o640);
    put(root, "line\nbreak.txt", b"newline in the name\n", 0o644);
    symlink("/etc", root.join("link_out")).unwrap();
    symlink("loop", root.join("loop")).unwrap();
    put(root, ".gitignore", b"*.log\n", 0o644);
}

/// Creates, edits, renames and deletes files with every tool (one turn, two replies).
fn edit_everything() -> Vec<Reply> {
    vec![
        calls(&[
            call("c1", "read_file", json!({"path": "src/lib.rs"})),
            call(
                "c2",
                "str_replace",
                json!({"path": "src/lib.rs", "old_str": "fn old()", "new_str": "fn new()"}),
            ),
            call(
                "c3",
                "write_file",
                json!({"path": "new/dir/created.txt", "content": "created\n"}),
            ),
        ]),
        calls(&[
            bash("c4", "sed -i 's/hello/goodbye/' notes.txt"),
            bash("c5", "mv old_name.txt new_name.txt"),
            bash("c6", "find . -name doomed.txt -delete"),
            bash("c7", "rm gone.txt link_out"),
            bash(
                "c8",
                "python3 -c \"open('py_made.txt','w').write('from python\\n'); \
                 open('bin.dat','wb').write(bytes(range(256))); \
                 open(b'odd\\nname\\xff','wb').write(b'x')\"",
            ),
            bash("c9", "chmod +x script.sh && chmod 600 private.txt"),
            bash("c10", "ln -s notes.txt new_link"),
        ]),
        done(),
    ]
}

#[test]
fn agent_undo_puts_back_every_change_of_a_turn_and_leaves_git_alone() {
    let server = MockServer::start(edit_everything());
    let env = env_for(&server);
    let ws = env.workspace.clone();
    starting_files(&ws);
    put(&ws, "build.log", b"ignored\n", 0o644);
    init_repo(&ws);
    // Uncommitted work of the user's: a modified file, a staged new file, an untracked one.
    put(&ws, "private.txt", b"mine, edited\n", 0o640);
    put(&ws, "staged.txt", b"staged\n", 0o644);
    git(&ws, &["add", "staged.txt"]);
    put(&ws, "untracked.txt", b"untracked\n", 0o644);
    let before = tree(&ws);
    let status_before = git(&ws, &["status", "--porcelain", "--ignored"]);
    assert!(
        status_before.contains(" M private.txt") && status_before.contains("A  staged.txt"),
        "{status_before}"
    );

    let output = env.run(&["--yes", "change everything"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "done\n");
    // Everything happened.
    assert_eq!(env.read("src/lib.rs"), "pub fn new() {}\n");
    assert_eq!(
        std::fs::read(ws.join("notes.txt")).unwrap(),
        b"goodbye\r\nworld\r\n"
    );
    assert!(ws.join("new_name.txt").exists() && !ws.join("old_name.txt").exists());
    assert!(!ws.join("doomed.txt").exists() && !ws.join("gone.txt").exists());
    assert!(
        ws.join(std::ffi::OsStr::from_bytes(b"odd\nname\xff"))
            .exists()
    );
    assert!(ws.join("new/dir/created.txt").exists());
    let mode = |p: &str| std::fs::metadata(ws.join(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode("script.sh"), mode("private.txt")), (0o755, 0o600));

    let list = env.run(&["undo", "--list"]);
    let (listing, _) = texts(&list);
    assert!(
        listing.contains("turn 1  \"change everything\""),
        "{listing}"
    );

    let undo = env.run(&["undo", "--yes"]);
    let (out, err) = texts(&undo);
    assert_eq!(undo.status.code(), Some(0), "{out}\n{err}");
    for line in [
        "restore   src/lib.rs  (+1 -1)",
        "remove    new/dir/created.txt  (created by the turn)",
        "recreate  old_name.txt  (deleted by the turn)",
        "mode      private.txt  (0600 → 0640)",
        "mode      script.sh  (0755 → 0644)",
        "remove    odd\\nname\u{fffd}  (created by the turn)",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
    assert_same_tree(&before, &tree(&ws));
    assert_eq!(
        git(&ws, &["status", "--porcelain", "--ignored"]),
        status_before
    );

    // The turn counts as undone: a second undo has nothing left.
    let again = env.run(&["undo", "--yes"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        texts(&again).1.contains("nothing to undo"),
        "{:?}",
        texts(&again)
    );
}

#[test]
fn undo_at_the_repl_after_a_bash_edit() {
    let server = MockServer::start(vec![
        calls(&[bash(
            "c1",
            "sed -i 's/one/ONE/' a.txt && python3 -c \"open('b.txt','w').write('new')\"",
        )]),
        done(),
    ]);
    let env = TestEnv::with_server(&server);
    put(&env.workspace, "a.txt", b"one\ntwo\n", 0o644);
    init_repo(&env.workspace);
    let before = tree(&env.workspace);
    let mut pty = Pty::start_in(env, &server, &[], &[("NO_COLOR", "1")]);
    pty.expect("›", WAIT);
    pty.send("edit a.txt\r");
    pty.expect("allow?", WAIT);
    pty.send("y");
    pty.expect("done", WAIT);
    pty.expect("›", WAIT);
    assert_eq!(pty.env.read("a.txt"), "ONE\ntwo\n");
    // Declining changes nothing.
    pty.send("/undo\r");
    pty.expect("restore these files? [y/N]", WAIT);
    pty.send("n\r");
    pty.expect("nothing changed", WAIT);
    pty.expect("›", WAIT);
    assert_eq!(pty.env.read("a.txt"), "ONE\ntwo\n");
    pty.send("/undo\r");
    let summary = pty.expect("restore these files? [y/N]", WAIT);
    assert!(summary.contains("restore   a.txt  (+1 -1)"), "{summary}");
    assert!(
        summary.contains("remove    b.txt  (created by the turn)"),
        "{summary}"
    );
    pty.send("y\r");
    pty.expect("restored 2 files", WAIT);
    pty.expect("›", WAIT);
    assert_same_tree(&before, &tree(&pty.env.workspace));
    pty.send("/undo\r");
    pty.expect("nothing to undo", WAIT);
    pty.send("/checkpoints\r");
    pty.expect("with snapshots (1 undone)", WAIT);
    pty.expect("›", WAIT);
    pty.ctrl('d');
    assert_eq!(pty.exit_code(), 0, "{}", strip(&pty.log));
}

/// The user text of every chat message of `request`.
fn user_texts(request: &crate::support::mock::Recorded) -> Vec<String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn rewind_across_three_turns_restores_files_and_cuts_the_conversation() {
    let edit = |id: &str, file: &str, text: &str| {
        calls(&[bash(
            id,
            &format!("python3 -c \"open('{file}','w').write('{text}')\""),
        )])
    };
    let server = MockServer::start(vec![
        edit("c1", "a.txt", "turn one"),
        done(),
        edit("c2", "b.txt", "turn two"),
        done(),
        edit("c3", "a.txt", "turn three"),
        done(),
        Reply::Json(text_completion("after the rewind")),
        Reply::Json(text_completion("resumed")),
    ]);
    let env = TestEnv::with_server(&server);
    env.config(
        "[[permissions.rules]]\ntool = \"bash\"\npattern = \"python3 *\"\naction = \"allow\"\n",
    );
    put(&env.workspace, "a.txt", b"start", 0o644);
    let mut pty = Pty::start_in(env, &server, &[], &[("NO_COLOR", "1")]);
    let mut after_first = BTreeMap::new();
    for (i, request) in ["first request", "second request", "third request"]
        .iter()
        .enumerate()
    {
        pty.expect("›", WAIT);
        pty.send(&format!("{request}\r"));
        pty.expect("done", WAIT);
        if i == 0 {
            pty.expect("›", WAIT);
            after_first = tree(&pty.env.workspace);
            pty.send("\r");
        }
    }
    pty.expect("›", WAIT);
    pty.send("/rewind\r");
    let list = pty.expect("rewind to before which? [1-3, Enter to cancel]", WAIT);
    assert!(
        list.contains("turn 2  \"second request\"  1 file: b.txt"),
        "{list}"
    );
    pty.send("2\r");
    let summary = pty.expect("restore these files? [y/N]", WAIT);
    assert!(summary.contains("restore   a.txt"), "{summary}");
    assert!(summary.contains("remove    b.txt"), "{summary}");
    pty.send("y\r");
    pty.expect("also cut the conversation back to before turn 2", WAIT);
    pty.send("y\r");
    pty.expect("the conversation now ends before turn 2", WAIT);
    pty.expect("›", WAIT);
    assert_same_tree(&after_first, &tree(&pty.env.workspace));
    pty.send("what now?\r");
    pty.expect("after the rewind", WAIT);
    pty.expect("›", WAIT);
    pty.ctrl('d');
    assert_eq!(pty.exit_code(), 0, "{}", strip(&pty.log));

    let requests = server.chat_requests();
    let last = user_texts(&requests[requests.len() - 1]);
    assert!(last[0].starts_with("first request"), "{last:?}");
    assert!(
        last.iter()
            .all(|t| !t.contains("second request") && !t.contains("third"))
    );
    assert!(last[last.len() - 1].starts_with("what now?"), "{last:?}");

    // The session file resumes into the same conversation.
    let resumed = pty.env.run(&["--resume", "and now?"]);
    assert_eq!(resumed.status.code(), Some(0), "{:?}", texts(&resumed));
    let requests = server.chat_requests();
    let texts_now = user_texts(&requests[requests.len() - 1]);
    assert_eq!(texts_now.len(), 3, "{texts_now:?}");
    assert!(texts_now[0].starts_with("first request"));
    assert!(texts_now[1].starts_with("what now?"));
    assert!(texts_now[2].starts_with("and now?"));
}

#[test]
fn a_file_changed_by_hand_since_the_turn_is_a_conflict_left_alone() {
    let server = MockServer::start(vec![
        calls(&[bash("c1", "sed -i s/a/A/ a.txt && sed -i s/b/B/ b.txt")]),
        done(),
        calls(&[bash("c2", "sed -i s/c/C/ c.txt")]),
        done(),
    ]);
    let env = env_for(&server);
    let ws = env.workspace.clone();
    put(&ws, "a.txt", b"a\n", 0o644);
    put(&ws, "b.txt", b"b\n", 0o644);
    put(&ws, "c.txt", b"c\n", 0o644);
    let output = env.run(&["--yes", "edit a and b"]);
    assert_eq!(output.status.code(), Some(0), "{:?}", texts(&output));
    std::fs::write(ws.join("b.txt"), "my own edit\n").unwrap();

    // Without a terminal and without --yes nothing happens.
    let refused = env.run(&["undo"]);
    assert_eq!(refused.status.code(), Some(2), "{:?}", texts(&refused));
    assert_eq!(env.read("a.txt"), "A\n");

    let undo = env.run(&["undo", "--yes"]);
    let (out, err) = texts(&undo);
    assert_eq!(undo.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("changed since the turn by you"), "{out}");
    assert!(
        out.contains("restored 1 file; left 1 file changed since the turn as it is"),
        "{out}"
    );
    assert_eq!(env.read("a.txt"), "a\n");
    assert_eq!(env.read("b.txt"), "my own edit\n");

    // --force overwrites what changed by hand.
    let output = env.run(&["--yes", "edit c"]);
    assert_eq!(output.status.code(), Some(0), "{:?}", texts(&output));
    std::fs::write(ws.join("c.txt"), "mine\n").unwrap();
    let forced = env.run(&["undo", "--yes", "--force"]);
    assert_eq!(forced.status.code(), Some(0), "{:?}", texts(&forced));
    assert_eq!(env.read("c.txt"), "c\n");
    // Nothing is lost: the overwritten text is in the snapshot taken before the restore.
    let ledger = std::fs::read_to_string(ledger_path(&env)).unwrap();
    assert_eq!(
        ledger.matches("\"type\":\"restore\"").count(),
        2,
        "{ledger}"
    );
}

fn ledger_path(env: &TestEnv) -> PathBuf {
    let dir = env.agent_home.join("checkpoints");
    let entry = std::fs::read_dir(&dir).unwrap().flatten().next().unwrap();
    entry.path().join("ledger.jsonl")
}

#[test]
fn a_workspace_that_is_not_a_repository_honours_its_gitignore() {
    let server = MockServer::start(vec![
        calls(&[bash(
            "c1",
            "sed -i s/x/y/ kept.txt && sed -i s/x/y/ ignored.txt && mkdir -p made/deep && \
             python3 -c \"open('made/deep/f','w').write('f')\"",
        )]),
        done(),
    ]);
    let env = env_for(&server);
    let ws = env.workspace.clone();
    std::fs::remove_dir_all(ws.join(".git")).unwrap();
    put(&ws, ".gitignore", b"ignored.txt\n", 0o644);
    put(&ws, "kept.txt", b"x\n", 0o644);
    put(&ws, "ignored.txt", b"x\n", 0o644);
    let output = env.run(&["--yes", "edit"]);
    assert_eq!(output.status.code(), Some(0), "{:?}", texts(&output));
    let undo = env.run(&["undo", "--yes"]);
    assert_eq!(undo.status.code(), Some(0), "{:?}", texts(&undo));
    assert_eq!(env.read("kept.txt"), "x\n");
    // Ignored files are not captured, so they stay as the turn left them.
    assert_eq!(env.read("ignored.txt"), "y\n");
    // Directories the turn created are gone with their files.
    assert!(!ws.join("made").exists());
    assert!(
        !ws.join(".git").exists(),
        "no repository is created in the workspace"
    );
}

#[test]
fn nested_repositories_and_submodules_are_snapshot_file_by_file() {
    let server = MockServer::start(vec![
        calls(&[bash(
            "c1",
            "sed -i s/v1/v2/ vendor/lib/x.txt && python3 -c \"open('vendor/lib/new.txt','w').write('n')\" \
             && sed -i s/s1/s2/ sub/file.txt",
        )]),
        done(),
    ]);
    let env = env_for(&server);
    let ws = env.workspace.clone();
    // A submodule from a repository outside the workspace.
    let source = env.outside().join("source");
    put(&source, "file.txt", b"s1\n", 0o644);
    init_repo(&source);
    put(&ws, "top.txt", b"top\n", 0o644);
    init_repo(&ws);
    git(
        &ws,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            source.to_str().unwrap(),
            "sub",
        ],
    );
    git(&ws, &["commit", "-q", "-m", "submodule"]);
    // A nested repository (not a submodule) with its own commit.
    put(&ws, "vendor/lib/x.txt", b"v1\n", 0o644);
    init_repo(&ws.join("vendor/lib"));
    assert!(ws.join("sub/.git").is_file());
    let before = tree(&ws);

    let output = env.run(&["--yes", "edit nested files"]);
    assert_eq!(output.status.code(), Some(0), "{:?}", texts(&output));
    assert_eq!(env.read("vendor/lib/x.txt"), "v2\n");
    let undo = env.run(&["undo", "--yes"]);
    let (out, err) = texts(&undo);
    assert_eq!(undo.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("restore   vendor/lib/x.txt"), "{out}");
    assert!(out.contains("restore   sub/file.txt"), "{out}");
    assert_same_tree(&before, &tree(&ws));
}

#[test]
fn hostile_repository_settings_run_nothing_and_change_no_bytes() {
    let server = MockServer::start(vec![
        calls(&[bash("c1", "sed -i s/one/two/ data.txt")]),
        done(),
    ]);
    let env = env_for(&server);
    let ws = env.workspace.clone();
    put(&ws, "data.txt", b"one\r\nline two\n", 0o644);
    init_repo(&ws);
    let marker = env.outside().join("PWNED");
    let touch = format!("sh -c 'touch {}'", marker.display());
    // Written after the commit, so the test's own git never meets them.
    std::fs::write(
        ws.join(".git/config"),
        format!(
            "[core]\n\tfsmonitor = {touch}\n\thooksPath = hooks\n[filter \"evil\"]\n\tclean = {touch}\n\tsmudge = {touch}\n\trequired = true\n"
        ),
    )
    .unwrap();
    put(
        &ws,
        ".gitattributes",
        b"* filter=evil\n*.txt text eol=crlf ident\n",
        0o644,
    );
    put(
        &ws,
        "hooks/post-index-change",
        format!("#!/bin/sh\n{touch}\n").as_bytes(),
        0o755,
    );
    let before = tree(&ws);
    let output = env.run(&["--yes", "edit"]);
    assert_eq!(output.status.code(), Some(0), "{:?}", texts(&output));
    let undo = env.run(&["undo", "--yes"]);
    assert_eq!(undo.status.code(), Some(0), "{:?}", texts(&undo));
    assert_same_tree(&before, &tree(&ws));
    assert!(!marker.exists(), "a hook or filter from the repository ran");
}

#[test]
fn bad_inputs_never_crash_and_say_what_was_not_captured() {
    let server = MockServer::start(vec![
        calls(&[bash(
            "c1",
            "sed -i s/a/b/ small.txt && rm out && python3 -c \"open(b'n\\xe9\\nx','wb').write(b'2')\"",
        )]),
        done(),
    ]);
    let env = env_for(&server);
    let ws = env.workspace.clone();
    put(&ws, "small.txt", b"a\n", 0o644);
    std::fs::write(ws.join(std::ffi::OsStr::from_bytes(b"n\xe9\nx")), b"1").unwrap();
    // A 3 GB file (sparse: nothing is written) is over the 10 MB cap.
    std::fs::File::create(ws.join("huge.bin"))
        .unwrap()
        .set_len(3_000_000_000)
        .unwrap();
    symlink("loop", ws.join("loop")).unwrap();
    symlink("/", ws.join("out")).unwrap();
    let fifo = std::ffi::CString::new(ws.join("pipe").as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid path string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    // A process that keeps writing while the snapshots run.
    let writing = ws.join("growing.txt");
    std::fs::write(&writing, "").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(&writing)
                .unwrap();
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let _ = file.write_all(b"more\n");
                std::thread::yield_now();
            }
        })
    };
    let output = env.run(&["--yes", "edit"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("not captured: `huge.bin` (3 GB) is over the 10 MB cap"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`pipe` is a socket, FIFO or device"),
        "{stderr}"
    );
    let undo = env.run(&["undo", "--yes"]);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    writer.join().unwrap();
    let (out, err) = texts(&undo);
    assert_eq!(undo.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("`huge.bin` (3 GB) is over the 10 MB cap"),
        "{out}"
    );
    assert_eq!(env.read("small.txt"), "a\n");
    assert_eq!(std::fs::read_link(ws.join("out")).unwrap(), Path::new("/"));
    assert_eq!(
        std::fs::read(ws.join(std::ffi::OsStr::from_bytes(b"n\xe9\nx"))).unwrap(),
        b"1"
    );
    assert_eq!(
        std::fs::metadata(ws.join("huge.bin")).unwrap().len(),
        3_000_000_000
    );
    assert!(std::fs::read_link(ws.join("loop")).is_ok());
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!(
            "skipped the unreadable-file case here: running as root, every file is readable \
             (an_unreadable_file_is_named_and_left_alone runs the agent as nobody for it)"
        );
    }
}

/// Whether this machine lets a test make its own user and mount namespace (for tiny tmpfs
/// file systems that fill up).
fn private_mounts_work() -> bool {
    Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// A full disk, both ways, on tiny tmpfs file systems in a private mount namespace: a
/// restore into a full workspace fails file by file with the reason, leaving each file as
/// it was (never half written), and succeeds once there is room; a snapshot into a full
/// checkpoint directory is a warning saying what was not captured, and the turn goes on.
#[test]
fn a_full_disk_fails_cleanly_and_never_leaves_a_file_half_restored() {
    if !private_mounts_work() {
        eprintln!(
            "skipped a_full_disk_fails_cleanly...: `unshare --user --mount` is not available, \
             so no small file system can be mounted"
        );
        return;
    }
    let server = MockServer::start(vec![
        calls(&[bash(
            "c1",
            "python3 -c \"open('data.bin','wb').write(b'')\" && sed -i s/a/b/ small.txt",
        )]),
        done(),
        calls(&[bash("c2", "sed -i s/a/b/ small.txt")]),
        done(),
    ]);
    let env = env_for(&server);
    let root = env.root().to_path_buf();
    let stage = root.join("stage");
    put(&stage, "data.bin", &random_bytes(200_000, 7), 0o644);
    put(&stage, "small.txt", b"a\n", 0o644);
    let full_home = root.join("full-home");
    std::fs::create_dir_all(full_home.join("checkpoints")).unwrap();
    let big = root.join("big-ws");
    put(&big, "small.txt", b"a\n", 0o644);
    for i in 0..8 {
        put(
            &big,
            &format!("data{i}.bin"),
            &random_bytes(100_000, i + 11),
            0o644,
        );
    }
    let script = r#"
        mount -t tmpfs -o size=512k tmpfs "$WS" || { echo mount_failed; exit 0; }
        cp -a "$STAGE/." "$WS/"
        "$AGENT" -C "$WS" --yes "empty the data" >/dev/null 2>"$OUT/turn.err"; echo "turn=$?"
        dd if=/dev/zero of="$WS/filler" bs=4k 2>/dev/null
        "$AGENT" undo -C "$WS" --yes >"$OUT/undo1.out" 2>&1; echo "undo1=$?"
        echo "size=$(stat -c %s "$WS/data.bin")"
        ls -a "$WS" | grep -c agent-restore | sed 's/^/temps=/'
        rm -f "$WS/filler"
        "$AGENT" undo -C "$WS" --yes >"$OUT/undo2.out" 2>&1; echo "undo2=$?"
        cmp -s "$WS/data.bin" "$STAGE/data.bin" && echo data_restored
        mount -t tmpfs -o size=96k tmpfs "$FULL_HOME/checkpoints" || exit 0
        AGENT_HOME="$FULL_HOME" "$AGENT" -C "$BIG" --yes "edit" >/dev/null 2>"$OUT/full.err"
        echo "full_turn=$?"
        cat "$BIG/small.txt"
    "#;
    let output = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", script])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("AGENT_HOME", &env.agent_home)
        .env("BASE_URL", server.base_url())
        .env("MODEL", "mock-model")
        .env("NO_COLOR", "1")
        .env("AGENT", env!("CARGO_BIN_EXE_agent"))
        .env("WS", &env.workspace)
        .env("STAGE", &stage)
        .env("OUT", &root)
        .env("FULL_HOME", &full_home)
        .env("BIG", &big)
        .output()
        .expect("run unshare");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap_or_default();
    if stdout.contains("mount_failed") {
        eprintln!("skipped a_full_disk_fails_cleanly...: tmpfs cannot be mounted here");
        return;
    }
    let context = format!(
        "{stdout}\n--- turn\n{}\n--- undo1\n{}\n--- undo2\n{}\n--- full\n{}",
        read("turn.err"),
        read("undo1.out"),
        read("undo2.out"),
        read("full.err")
    );
    assert!(stdout.contains("turn=0"), "{context}");
    // The first restore fails for want of room, says so, and leaves data.bin as it was.
    assert!(stdout.contains("undo1=1"), "{context}");
    assert!(
        read("undo1.out").contains("could not restore `data.bin`: No space left on device"),
        "{context}"
    );
    assert!(stdout.contains("size=0"), "{context}");
    assert!(
        stdout.contains("temps=0"),
        "no temporary file may be left: {context}"
    );
    // With room again, the turn is still undoable and comes back whole.
    assert!(stdout.contains("undo2=0"), "{context}");
    assert!(stdout.contains("data_restored"), "{context}");
    // A snapshot that cannot be written: a warning, and the turn goes on.
    assert!(stdout.contains("full_turn=0"), "{context}");
    assert!(stdout.trim_end().ends_with('b'), "the edit ran: {context}");
    let full = read("full.err");
    assert!(
        full.contains("checkpoint failed, so this turn's changes cannot be undone")
            || full.contains("not captured"),
        "{context}"
    );
    assert!(full.contains("No space left on device"), "{context}");
}

#[test]
fn a_subagents_edits_are_in_the_turns_checkpoint() {
    let task = json!({"description": "fix the file", "prompt": "replace x with y in f.txt"});
    let server = MockServer::start(vec![
        calls(&[call("p1", "task", task)]),
        calls(&[bash("k1", "sed -i s/x/y/ f.txt")]),
        Reply::Json(text_completion("replaced")),
        done(),
    ]);
    let env = env_for(&server);
    put(&env.workspace, "f.txt", b"x\n", 0o644);
    let output = env.run(&["--yes", "delegate it"]);
    assert_eq!(output.status.code(), Some(0), "{:?}", texts(&output));
    assert_eq!(env.read("f.txt"), "y\n");
    let undo = env.run(&["undo", "--yes"]);
    assert_eq!(undo.status.code(), Some(0), "{:?}", texts(&undo));
    assert_eq!(env.read("f.txt"), "x\n");
}

#[test]
fn snapshots_reach_json_the_event_log_and_the_session_file_and_a_turn_without_changes_takes_none() {
    let server = MockServer::start(vec![
        calls(&[bash("c1", "ls && cat f.txt && git status")]),
        done(),
        calls(&[bash("c2", "sed -i s/x/y/ f.txt")]),
        done(),
    ]);
    let env = env_for(&server);
    put(&env.workspace, "f.txt", b"x\n", 0o644);
    init_repo(&env.workspace);
    // Read-only commands: no snapshot and no turn in the ledger (the session may have
    // started building the shadow index in the background; that records nothing).
    let output = env.run(&["--json", "--yes", "look around"]);
    assert_eq!(output.status.code(), Some(0), "{:?}", texts(&output));
    assert!(
        !texts(&output).0.contains("checkpoint."),
        "{}",
        texts(&output).0
    );
    let dir = env.agent_home.join("checkpoints");
    if dir.exists() {
        assert!(!ledger_path(&env).exists());
    }

    let output = env.run(&["--json", "--yes", "edit"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let saved: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "checkpoint.saved")
        .collect();
    assert_eq!(saved.len(), 1, "{stdout}");
    assert_eq!(saved[0]["turn"], 1);
    assert_eq!(saved[0]["files"], 1);
    let snapshot = saved[0]["snapshot"].as_str().unwrap().to_string();
    assert_eq!(snapshot.len(), 40, "{snapshot}");
    let events = std::fs::read_to_string(env.agent_home.join("events.jsonl")).unwrap();
    assert!(
        events.contains(&format!(
            "\"type\":\"CheckpointSaved\",\"turn\":1,\"snapshot\":\"{snapshot}\""
        )),
        "{events}"
    );
    let sessions: Vec<PathBuf> = std::fs::read_dir(env.agent_home.join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    let records: String = sessions
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        records.contains(&format!(
            "{{\"type\":\"checkpoint\",\"turn\":1,\"snapshot\":\"{snapshot}\",\"files\":1}}"
        )),
        "{records}"
    );
    let undo = env.run(&["undo", "--yes"]);
    assert_eq!(undo.status.code(), Some(0), "{:?}", texts(&undo));
    let events = std::fs::read_to_string(env.agent_home.join("events.jsonl")).unwrap();
    assert!(
        events.contains("\"type\":\"CheckpointRestored\""),
        "{events}"
    );
}

#[test]
fn retention_keeps_the_newest_turns_only() {
    let mut replies = Vec::new();
    for i in 0..4 {
        replies.push(calls(&[bash(
            &format!("c{i}"),
            &format!("sed -i s/{i}/{}/ f.txt", i + 1),
        )]));
        replies.push(done());
    }
    let server = MockServer::start(replies);
    let env = env_for(&server);
    env.config(
        "[checkpoints]\nkeep = 2\n[[permissions.rules]]\ntool = \"bash\"\npattern = \"rm *\"\naction = \"allow\"\n",
    );
    put(&env.workspace, "f.txt", b"0\n", 0o644);
    for _ in 0..4 {
        let output = env.run(&["--yes", "bump"]);
        assert_eq!(output.status.code(), Some(0), "{:?}", texts(&output));
    }
    let list = env.run(&["undo", "--list"]);
    let (listing, _) = texts(&list);
    assert_eq!(listing.lines().count(), 2, "{listing}");
    // The two kept turns can still be undone, one after the other.
    for expected in ["3\n", "2\n"] {
        let undo = env.run(&["undo", "--yes"]);
        assert_eq!(undo.status.code(), Some(0), "{:?}", texts(&undo));
        assert_eq!(env.read("f.txt"), expected);
    }
    let undo = env.run(&["undo", "--yes"]);
    assert_eq!(undo.status.code(), Some(1), "{:?}", texts(&undo));
}

#[test]
fn without_git_checkpoints_are_off_with_one_warning() {
    let server = MockServer::start(vec![done()]);
    let env = TestEnv::with_server(&server);
    let output = env
        .cmd()
        .env("PATH", "/nonexistent")
        .args(["say hi"])
        .write_stdin("")
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "done\n");
    assert_eq!(
        stderr
            .matches("checkpoints are off: `git` was not found on PATH")
            .count(),
        1,
        "{stderr}"
    );
    let undo = env
        .cmd()
        .env("PATH", "/nonexistent")
        .args(["undo"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(undo.status.code(), Some(1), "{:?}", texts(&undo));
}

/// The namespace sandbox (issue 15) and checkpoints compose: the command runs in its own
/// PID and mount namespaces (the kernel says so: its namespace links differ from the test's)
/// with the repository's `.git` config read-only, while the agent, outside the sandbox,
/// snapshots the workspace into the shadow repository under `$AGENT_HOME`; `agent undo` then
/// puts back what the confined command changed, and the user's `.git` is as it was.
#[test]
fn a_bash_edit_inside_the_namespace_sandbox_is_undone() {
    if !crate::support::kernel::namespaces() {
        return;
    }
    let server = MockServer::start(vec![
        calls(&[bash(
            "c1",
            "sed -i 's/one/ONE/' a.txt && mv b.txt c.txt && chmod +x run.sh \
             && readlink /proc/self/ns/pid /proc/self/ns/mnt \
             && { printf '[x]\\n' >> .git/config && echo config-written || echo config-refused; }",
        )]),
        done(),
    ]);
    let env = env_for(&server);
    let ws = env.workspace.clone();
    put(&ws, "a.txt", b"one\ntwo\n", 0o644);
    put(&ws, "b.txt", b"moved\n", 0o644);
    put(&ws, "run.sh", b"#!/bin/sh\n", 0o644);
    init_repo(&ws);
    let before = tree(&ws);
    let git_config = std::fs::read(ws.join(".git/config")).unwrap();
    let status_before = git(&ws, &["status", "--porcelain", "--ignored"]);
    let refs_before = git(&ws, &["show-ref"]);

    let output = env.run(&["--yes", "edit a.txt"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(", namespaces)"), "{stderr}");
    assert_eq!(env.read("a.txt"), "ONE\ntwo\n");
    assert!(ws.join("c.txt").exists() && !ws.join("b.txt").exists());
    let result = super::bash_tool::tool_results(&server).join("\n");
    for link in ["pid", "mnt"] {
        let ours = std::fs::read_link(format!("/proc/self/ns/{link}")).unwrap();
        assert!(result.contains(&format!("{link}:[")), "{result}");
        assert!(
            !result.contains(&ours.display().to_string()),
            "the command shared the test's {link} namespace: {result}"
        );
    }
    assert!(result.contains("config-refused"), "{result}");
    assert_eq!(std::fs::read(ws.join(".git/config")).unwrap(), git_config);

    let undo = env.run(&["undo", "--yes"]);
    let (out, err) = texts(&undo);
    assert_eq!(undo.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("restore   a.txt  (+1 -1)"), "{out}");
    assert!(
        out.contains("recreate  b.txt  (deleted by the turn)"),
        "{out}"
    );
    assert!(
        out.contains("remove    c.txt  (created by the turn)"),
        "{out}"
    );
    assert!(out.contains("mode      run.sh  (0755 → 0644)"), "{out}");
    assert_same_tree(&before, &tree(&ws));
    assert_eq!(
        git(&ws, &["status", "--porcelain", "--ignored"]),
        status_before
    );
    assert_eq!(git(&ws, &["show-ref"]), refs_before);
    assert_eq!(std::fs::read(ws.join(".git/config")).unwrap(), git_config);
}

/// An unreadable file, as real users meet it (the tests otherwise run as root, who can read
/// everything): the agent runs as `nobody` (uid 65534) through `setpriv` in a workspace it
/// owns, except one root-owned file of mode 0600. The snapshot says that file was not
/// captured and why, the turn goes on, and the undo puts back the rest and leaves that file
/// as it is.
#[test]
fn an_unreadable_file_is_named_and_left_alone() {
    const NOBODY: u32 = 65_534;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!(
            "SKIPPED: an_unreadable_file_is_named_and_left_alone: needs root to run the agent \
             as nobody (as a user, the unit tests' files are readable)"
        );
        return;
    }
    let Some(setpriv) = ["/usr/bin/setpriv", "/bin/setpriv"]
        .iter()
        .map(Path::new)
        .find(|p| p.is_file())
    else {
        crate::support::kernel::skip("`setpriv` (util-linux), to run the agent as nobody");
        return;
    };
    let server = MockServer::start(vec![
        calls(&[bash("c1", "sed -i s/a/b/ small.txt")]),
        done(),
    ]);
    let env = env_for(&server);
    let ws = env.workspace.clone();
    put(&ws, "small.txt", b"a\n", 0o644);
    put(&ws, "secret.txt", b"root's\n", 0o600);
    let owner = format!("{NOBODY}:{NOBODY}");
    let chown = Command::new("chown")
        .args(["-R", &owner])
        .arg(env.root())
        .status()
        .unwrap();
    assert!(chown.success());
    std::os::unix::fs::chown(ws.join("secret.txt"), Some(0), Some(0)).unwrap();
    let as_nobody = |args: &[&str]| {
        let agent = env.std_cmd();
        let mut cmd = Command::new(setpriv);
        cmd.args([
            format!("--reuid={NOBODY}"),
            format!("--regid={NOBODY}"),
            "--clear-groups".to_string(),
        ])
        .arg(agent.get_program())
        .args(args)
        .env_clear()
        .current_dir(&ws)
        .stdin(std::process::Stdio::null());
        for (key, value) in agent.get_envs() {
            if let Some(value) = value {
                cmd.env(key, value);
            }
        }
        cmd.output().unwrap()
    };
    let note = "`secret.txt` cannot be read: permission denied";

    let output = as_nobody(&["--yes", "edit"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stderr.contains(note), "{stderr}");
    assert_eq!(env.read("small.txt"), "b\n");

    let undo = as_nobody(&["undo", "--yes"]);
    let (out, err) = texts(&undo);
    assert_eq!(undo.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("restore   small.txt  (+1 -1)"), "{out}");
    assert!(out.contains(note), "{out}");
    assert_eq!(env.read("small.txt"), "a\n");
    assert_eq!(std::fs::read(ws.join("secret.txt")).unwrap(), b"root's\n");
}
