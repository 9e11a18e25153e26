//! The inner loop end to end against the mock server.

use serde_json::json;

use crate::support::env::texts;
use crate::support::sse::{check_request_invariants, text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

#[test]
fn bash_tool_call_then_answer() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events("call_1", "bash", r#"{"command":"echo hello-from-tool"}"#)),
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
    assert!(tool["content"].as_str().unwrap().starts_with("hello-from-tool\n"));
    assert_eq!(requests[0].body["stream"], json!(true));
    assert_eq!(requests[0].body["stream_options"]["include_usage"], json!(true));
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
