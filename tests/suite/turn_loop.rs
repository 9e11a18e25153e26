//! The inner loop end to end against the mock server.

use serde_json::json;

use crate::support::env::texts;
use crate::support::sse::{check_request_invariants, text_events, tool_events};
use crate::support::{MockServer, Reply, SMALL_MODEL, TestEnv};

#[test]
fn bash_tool_call_then_answer() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events(
            "call_1",
            "bash",
            r#"{"command":"echo hello-from-tool"}"#,
        )),
        Reply::Sse(text_events(&["all ", "done"])),
    ]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["run echo"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "all done\n");
    assert!(stderr.contains("● bash  echo hello-from-tool"), "{stderr}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        check_request_invariants(&request.body).unwrap();
    }
    let messages = requests[1].messages();
    let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool["tool_call_id"], "call_1");
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .starts_with("hello-from-tool\n")
    );
    assert_eq!(requests[0].body["stream"], json!(true));
    assert_eq!(
        requests[0].body["stream_options"]["include_usage"],
        json!(true)
    );
}

#[test]
fn max_turns_stops_with_exit_3() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events("c1", "bash", r#"{"command":"echo 1"}"#)),
        Reply::Sse(tool_events("c2", "bash", r#"{"command":"echo 2"}"#)),
    ]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["--max-turns", "2", "loop"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("stopped after 2 model calls"), "{stderr}");
}

#[test]
fn max_turns_zero_is_a_usage_error_and_calls_no_model() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["hi"]))]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["--max-turns", "0", "hello"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("--max-turns"), "{stderr}");
    assert!(server.chat_requests().is_empty());
}

#[test]
fn empty_reply_is_retried_once_with_a_nudge_then_ends() {
    let empty = vec![
        json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "delta": {"role": "assistant", "content": "", "tool_calls": []}}]}),
    ];
    let server = MockServer::start(vec![Reply::Sse(empty.clone()), Reply::Sse(empty)]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["hello"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("empty reply"), "{stderr}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2, "exactly one retry");
    let last = requests[1].messages().last().cloned().unwrap();
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("Your last reply was empty")
    );
    for request in &requests {
        check_request_invariants(&request.body).unwrap();
    }
}

#[test]
fn suggesting_a_command_after_an_edit_gets_one_run_it_yourself_nudge() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events(
            "w1",
            "write_file",
            r#"{"path":"hello.sh","content":"echo hello\n"}"#,
        )),
        Reply::Sse(text_events(&[
            "Created it. Run it with:\n```bash\nsh hello.sh\n```",
        ])),
        Reply::Sse(tool_events("b1", "bash", r#"{"command":"sh hello.sh"}"#)),
        Reply::Sse(text_events(&["It prints hello."])),
    ]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["create hello.sh and run it"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "It prints hello.\n");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    let nudge = requests[2].messages();
    let last = nudge.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(last.contains("Run `sh hello.sh` yourself now"), "{last}");
    for request in &requests {
        check_request_invariants(&request.body).unwrap();
    }
}

#[test]
fn a_bare_shell_block_right_after_the_run_request_is_run() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events(
            "w1",
            "write_file",
            r#"{"path":"hello.sh","content":"echo hello\n"}"#,
        )),
        Reply::Sse(text_events(&[
            "Created it. You can run:\n```sh\nsh hello.sh\n```",
        ])),
        Reply::Sse(text_events(&["```bash\nsh hello.sh\n```"])),
        Reply::Sse(text_events(&["It printed hello."])),
    ]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["--yes", "create hello.sh and run it"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "It printed hello.\n");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    let nudge = requests[2].messages().last().unwrap()["content"].clone();
    assert!(
        nudge
            .as_str()
            .unwrap()
            .contains("Run `sh hello.sh` yourself now")
    );
    let last = requests[3].messages();
    let call = &last[last.len() - 2]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "bash");
    let result = last.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(result.starts_with("hello\n"), "{result}");
    for request in &requests {
        check_request_invariants(&request.body).unwrap();
    }
}

#[test]
fn handing_the_fix_to_the_user_after_a_failed_command_gets_one_fix_it_nudge() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events("b1", "bash", r#"{"command":"sh missing.sh"}"#)),
        Reply::Sse(text_events(&[
            "It failed. Create the script first:\n```sh\necho hello\n```",
        ])),
        Reply::Sse(text_events(&["I could not fix it."])),
    ]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["--yes", "run missing.sh"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "I could not fix it.\n");
    assert!(stderr.contains("asking the model to do it"), "{stderr}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3, "one nudge, then the turn ends");
    let nudge = requests[2].messages().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        nudge.contains("The last command failed (exit code 2)"),
        "{nudge}"
    );
    for request in &requests {
        check_request_invariants(&request.body).unwrap();
    }
}

/// The 1.5B local model answered the run request with its answer again, word for word (a
/// python block; another time a tool result it made up): one last request names the file
/// and asks for a single bash call, and the model then makes it. A second repeat ends the
/// turn.
#[test]
fn repeating_the_answer_after_the_run_request_gets_one_concrete_request() {
    let answer = "To verify, run this script:\n```python\nprint('hello')\n```";
    let (server, output) = after_writing_hello_py(vec![
        Reply::Sse(text_events(&[answer])),
        Reply::Sse(text_events(&[answer])),
        Reply::Sse(tool_events(
            "b1",
            "bash",
            r#"{"command":"python3 hello.py"}"#,
        )),
        Reply::Sse(text_events(&["It prints hello."])),
    ]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "It prints hello.\n");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 5, "{stderr}");
    let last_user = |n: usize| {
        requests[n].messages().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        last_user(2).contains("Do not leave commands"),
        "{}",
        last_user(2)
    );
    let stuck = last_user(3);
    assert!(stuck.contains("You repeated your last answer"), "{stuck}");
    assert!(stuck.contains("runs or tests `hello.py`"), "{stuck}");
    for request in &requests {
        check_request_invariants(&request.body).unwrap();
    }

    let (server, output) = after_writing_hello_py(vec![
        Reply::Sse(text_events(&[answer])),
        Reply::Sse(text_events(&[answer])),
        Reply::Sse(text_events(&[answer])),
    ]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        server.chat_requests().len(),
        4,
        "two requests at most, then the turn ends"
    );

    // The repeat right after the request shows a shell block: that is taken as the call and
    // runs; the same answer after it ends the turn (it is not a sign of being stuck).
    let shown = "Run it:\n```bash\npython3 hello.py\n```";
    let (server, output) = after_writing_hello_py(vec![
        Reply::Sse(text_events(&[shown])),
        Reply::Sse(text_events(&[shown])),
        Reply::Sse(text_events(&[shown])),
    ]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("● bash  python3 hello.py"), "{stderr}");
    assert_eq!(server.chat_requests().len(), 4, "{stderr}");
}

/// Runs "Create hello.py that prints hello, then run it" (with `--yes`, a small model's
/// name) against a mock that first writes `hello.py`, then gives `then`.
fn after_writing_hello_py(then: Vec<Reply>) -> (MockServer, std::process::Output) {
    let mut replies = vec![Reply::Sse(tool_events(
        "w1",
        "write_file",
        r#"{"path":"hello.py","content":"print('hello')\n"}"#,
    ))];
    replies.extend(then);
    let server = MockServer::start(replies);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["--yes", "Create hello.py that prints hello, then run it"]);
    (server, output)
}

/// A reply that degenerates into a loop (the 1.5B model streamed the same blocks for ten
/// minutes) is stopped while it streams: the answer keeps one copy, with a warning, and the
/// session goes on. The mock would send its last piece only after a minute.
#[test]
fn a_reply_repeating_itself_is_stopped_while_streaming() {
    let unit =
        "The script prints a greeting when it runs, and nothing else.\nThis reads the file.\n\n";
    let chunk = |text: &str| {
        let event = serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]});
        (
            std::time::Duration::ZERO,
            format!("data: {event}\n\n").into_bytes(),
        )
    };
    let mut pieces = vec![chunk("Done.\n\n")];
    pieces.extend((0..200).map(|_| chunk(unit)));
    pieces.push((
        std::time::Duration::from_secs(60),
        b"data: [DONE]\n\n".to_vec(),
    ));
    let server = MockServer::start(vec![Reply::SseRaw(pieces)]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["--yes", "what does hello.py do?"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("the model kept repeating the same text; stopped its reply"),
        "{stderr}"
    );
    assert!(stdout.starts_with("Done.\n\n"), "{stdout}");
    assert_eq!(
        stdout.matches("This reads the file.").count(),
        1,
        "{stdout}"
    );
    assert_eq!(server.chat_requests().len(), 1);
}
