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
