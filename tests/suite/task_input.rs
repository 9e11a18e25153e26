//! A PROMPT plus piped stdin (`git diff | agent "review this change"`, as the README and
//! `--help` show): stdin goes to the model after the prompt; an inherited pipe nobody writes to
//! does not hang the run.

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::env::texts;
use crate::support::sse::text_events;
use crate::support::{MockServer, Reply, TestEnv};

fn first_user_text(server: &MockServer) -> String {
    let messages = server.chat_requests()[0].messages();
    messages[1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn piped_stdin_is_added_after_the_prompt() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["looks fine"]))]);
    let env = TestEnv::with_server(&server);
    let output = env
        .cmd()
        .arg("review this change")
        .write_stdin("diff --git a/x b/x\n+added line\n")
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "looks fine\n");
    assert!(
        first_user_text(&server).starts_with(
            "review this change\n\n<stdin>\ndiff --git a/x b/x\n+added line\n</stdin>"
        ),
        "{}",
        first_user_text(&server)
    );
}

#[test]
fn empty_stdin_with_a_prompt_is_just_the_prompt() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["hello"]);
    assert_eq!(output.status.code(), Some(0));
    let text = first_user_text(&server);
    assert!(text.starts_with("hello"), "{text}");
    assert!(!text.contains("<stdin>"), "{text}");
}

#[test]
fn a_silent_open_pipe_is_ignored_with_a_warning_not_waited_on() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let env = TestEnv::with_server(&server);
    let mut child = env
        .std_cmd()
        .arg("hello")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Hold the write end open and never write: an inherited pipe in CI or an editor.
    let _writer = child.stdin.take();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("agent waited on a silent stdin pipe");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("stdin is a pipe that sent nothing"),
        "{stderr}"
    );
    assert_eq!(first_user_text(&server).lines().next(), Some("hello"));
}

#[test]
fn invalid_utf8_on_stdin_with_a_prompt_is_a_usage_error() {
    let server = MockServer::start(vec![]);
    let env = TestEnv::with_server(&server);
    let output = env
        .cmd()
        .arg("what is this")
        .write_stdin(vec![0xff_u8, 0xfe, 0x00, 0x80])
        .output()
        .unwrap();
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot read stdin"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn oversized_stdin_is_a_usage_error_for_both_task_forms() {
    let server = MockServer::start(vec![]);
    let env = TestEnv::with_server(&server);
    let big = "x".repeat(4 * 1024 * 1024 + 1);
    // Two-byte characters: the cap falls inside one, which is still "too big".
    let accents = "é".repeat(3 * 1024 * 1024);
    for (args, big) in [
        (vec!["summarize this"], &big),
        (vec![], &big),
        (vec![], &accents),
    ] {
        let output = env
            .cmd()
            .args(&args)
            .write_stdin(big.clone())
            .output()
            .unwrap();
        let (_, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("more than 4 MiB"), "{stderr}");
    }
    assert!(server.chat_requests().is_empty());
}
