//! MCP servers over streamable HTTP on loopback: listing with a bearer token and headers,
//! calling, argument errors, `isError`, a timeout cancelled on the server, and a server that
//! goes away mid-call.

use std::process::Stdio;
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::{HttpServer, marks, wait_for};
use crate::suite::governance::tool_result;
use crate::support::env::texts;
use crate::support::sse::{text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

fn http_table(url: &str, extra: &str) -> String {
    format!("[mcp_servers.web]\nurl = {url:?}\n{extra}\n")
}

#[test]
fn tools_of_an_http_server_are_listed_and_called_with_its_headers() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events(
            "c1",
            "mcp__web__echo",
            r#"{"text":"over http"}"#,
        )),
        Reply::Sse(tool_events("c2", "mcp__web__lookup", r#"{"code":"no"}"#)),
        Reply::Sse(tool_events("c3", "mcp__web__fail", "{}")),
        Reply::Sse(text_events(&["done"])),
    ]);
    let mut env = TestEnv::with_server(&server);
    env.var("WEB_TOKEN", "s3cret");
    let marks = marks(&env);
    let http = HttpServer::start(&marks);
    env.config(&http_table(
        &http.url,
        "bearer_token_env_var = \"WEB_TOKEN\"\nhttp_headers = { X-Team = \"core\" }",
    ));

    let list = env.cmd().args(["mcp", "list"]).output().unwrap();
    let (stdout, _) = texts(&list);
    assert!(
        stdout.contains(&format!("  web  ready     http {}\n", http.url)),
        "{stdout}"
    );
    assert!(stdout.contains("mcp__web__echo"), "{stdout}");

    let output = env.run(&["--yes", "go"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let requests = server.chat_requests();
    assert_eq!(tool_result(&requests[1].body, "c1"), "echo: over http");
    assert_eq!(
        tool_result(&requests[2].body, "c2"),
        "Error: wrong arguments for mcp__web__lookup (field `code`: \"no\" does not match \
         \"^[A-Z]{3}$\")."
    );
    assert_eq!(
        tool_result(&requests[3].body, "c3"),
        "Error: mcp__web__fail failed - tool error: the thing failed"
    );
    let headers = std::fs::read_to_string(marks.join("headers")).unwrap();
    assert_eq!(headers, "Bearer s3cret core\n");
}

#[test]
fn a_missing_token_variable_fails_that_server_only() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let env = TestEnv::with_server(&server);
    env.config(&http_table(
        "http://127.0.0.1:9/mcp",
        "bearer_token_env_var = \"NOT_SET\"",
    ));
    let output = env.run(&["hi"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "ok\n");
    assert!(
        stderr.contains(
            "MCP server `web` failed to start: the variable `NOT_SET` (bearer_token_env_var) \
             is not set"
        ),
        "{stderr}"
    );
}

#[test]
fn a_call_past_tool_timeout_is_cancelled_on_the_http_server() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events("c1", "mcp__web__slow", r#"{"seconds": 30}"#)),
        Reply::Hang,
    ]);
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    let http = HttpServer::start(&marks);
    env.config(&http_table(&http.url, "tool_timeout_sec = 1"));
    let mut agent = env
        .std_cmd()
        .args(["--yes", "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&marks.join("cancel-reason"), Duration::from_secs(30));
    let _ = agent.kill();
    let _ = agent.wait();
    assert_eq!(
        std::fs::read_to_string(marks.join("cancel-reason")).unwrap(),
        "timed out"
    );
}

#[test]
fn an_http_server_that_goes_away_mid_call_gives_an_error_result() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events("c1", "mcp__web__crash", "{}")),
        Reply::Sse(tool_events("c2", "mcp__web__echo", r#"{"text":"x"}"#)),
        Reply::Sse(text_events(&["done"])),
    ]);
    let env = TestEnv::with_server(&server);
    let http = HttpServer::start(&marks(&env));
    env.config(&http_table(&http.url, ""));
    let output = env.run(&["--yes", "go"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let requests = server.chat_requests();
    let first = tool_result(&requests[1].body, "c1");
    assert!(
        first.starts_with(
            "Error: mcp__web__crash failed - server stopped: MCP server `web` stopped during \
             the call: "
        ),
        "{first}"
    );
    let second = tool_result(&requests[2].body, "c2");
    assert!(
        second.starts_with(
            "Error: mcp__web__echo failed - unavailable: MCP server `web` stopped and could \
             not be restarted: cannot connect to "
        ),
        "{second}"
    );
}
