//! What the agent sends: size of the first request and a byte-identical prefix between
//! requests (provider prompt caches depend on both).

use serde_json::Value;

use crate::support::sse::{text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

/// Small local models read the prompt at about 70 tokens/s: the first request (system prompt
/// and every tool schema, with a one-word task) stays at most 4,000 bytes.
#[test]
fn first_request_is_small() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["hi"]);
    assert_eq!(output.status.code(), Some(0));
    let request = &server.chat_requests()[0];
    let size = request.raw_body.len();
    assert!(size <= 4000, "first request is {size} bytes");
}

#[test]
fn request_prefix_is_stable_between_requests() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events("c1", "bash", r#"{"command":"echo one"}"#)),
        Reply::Sse(tool_events("c2", "bash", r#"{"command":"echo two"}"#)),
        Reply::Sse(text_events(&["done"])),
    ]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["go"]);
    assert_eq!(output.status.code(), Some(0));
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    for pair in requests.windows(2) {
        let (before, after) = (&pair[0].body, &pair[1].body);
        assert_eq!(before["tools"], after["tools"], "tool list changed");
        let old: &Vec<Value> = before["messages"].as_array().unwrap();
        let new: &Vec<Value> = after["messages"].as_array().unwrap();
        // Every message but the last (which carries the per-request reminder) is resent as is.
        for (i, message) in old.iter().enumerate().take(old.len() - 1) {
            assert_eq!(&new[i], message, "message {i} changed between requests");
        }
    }
}

/// The invariant every mocked request is checked against (the mock's `Drop`) rejects what it
/// must: an unanswered call (also at the end of a request), a result for no call, an empty
/// assistant message, arguments that are not a JSON object; and a mock that received such a
/// request fails the test that used it.
#[test]
fn the_mock_rejects_requests_that_break_the_tool_call_invariant() {
    use std::io::{Read, Write};

    use crate::support::sse::check_request_invariants;
    use serde_json::json;
    let call = |id: &str, args: &str| {
        json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "bash", "arguments": args}}]})
    };
    let result = |id: &str| json!({"role": "tool", "tool_call_id": id, "content": "ok"});
    let user = json!({"role": "user", "content": "go"});
    let good = json!({"messages": [user, call("c1", "{}"), result("c1")]});
    assert_eq!(check_request_invariants(&good), Ok(()));
    for (broken, why) in [
        (
            json!({"messages": [user, call("c1", "{}")]}),
            "not answered",
        ),
        (
            json!({"messages": [user, call("c1", "{}"), user]}),
            "not answered",
        ),
        (json!({"messages": [user, result("c9")]}), "unknown call"),
        (
            json!({"messages": [user, call("c1", "[1]"), result("c1")]}),
            "not an object",
        ),
        (
            json!({"messages": [user, {"role": "assistant", "content": ""}]}),
            "empty assistant",
        ),
    ] {
        let problem = check_request_invariants(&broken).expect_err(why);
        assert!(problem.contains(why), "{problem}");
    }

    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let body = json!({"messages": [user, call("c1", "{}")]}).to_string();
    let address = server.base_url();
    let address = address
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap();
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nhost: mock\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).unwrap();
    assert_eq!(server.chat_requests().len(), 1);
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(server)));
    let message = dropped.expect_err("the mock must fail a test whose request broke the invariant");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("not answered"), "{message}");
}
