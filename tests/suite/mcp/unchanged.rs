//! Nothing changes for users with no MCP servers: the first request is byte for byte what it
//! was before the MCP client existed (the snapshot was recorded from the build before it).

use crate::support::sse::text_events;
use crate::support::{MockServer, Reply, TestEnv};

/// The first request body with the parts that vary between runs (the temp workspace path and
/// today's date) replaced by placeholders.
fn first_request(env: &TestEnv, server: &MockServer) -> String {
    let output = env.run(&["hi"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let request = &server.chat_requests()[0];
    let body = String::from_utf8(request.raw_body.clone()).expect("utf-8 body");
    let workspace = env.workspace.display().to_string();
    let body = body.replace(&workspace, "<WORKSPACE>");
    let at = body.find("date: ").expect("reminder date") + "date: ".len();
    format!("{}<DATE>{}", &body[..at], &body[at + 10..])
}

#[test]
fn first_request_without_servers_is_unchanged() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let env = TestEnv::with_server(&server);
    insta::assert_snapshot!(first_request(&env, &server));
}
