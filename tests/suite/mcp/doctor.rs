//! `agent doctor` reports each configured MCP server: ready with its tools, failed with the
//! reason, or disabled.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::{marks, stdio_server};
use crate::support::env::texts;
use crate::support::sse::{text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

#[test]
fn doctor_reports_each_configured_server() {
    let server = MockServer::start(vec![
        Reply::Sse(text_events(&["ok"])),
        Reply::Sse(tool_events("call_1", "echo", r#"{"text":"ping"}"#)),
    ]);
    server.on_get(
        "/models",
        Reply::Json(json!({"object": "list", "data": [{"id": "mock-model", "object": "model"}]})),
    );
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    let mut config = stdio_server("test", &marks, &[], "");
    config.push_str(&stdio_server("broken", &marks, &["--fail-start"], ""));
    config.push_str(&stdio_server("off", &marks, &[], "enabled = false"));
    env.config(&config);
    let output = env.cmd().arg("doctor").output().unwrap();
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    let mcp: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("mcp server"))
        .collect();
    assert_eq!(mcp.len(), 3, "{stdout}");
    assert!(
        mcp[0].starts_with(
            "FAIL  mcp server `broken`: the server exited (exit code 3); stderr: boom: cannot \
             open the database at /nowhere/db.sqlite (stdio `"
        ),
        "{stdout}"
    );
    assert_eq!(mcp[1], "warn  mcp server `off`: disabled (enabled = false)");
    assert!(
        mcp[2].starts_with("ok    mcp server `test`: ready, 11 tool(s) (stdio `"),
        "{stdout}"
    );
    assert!(stdout.ends_with("1 check failed\n"), "{stdout}");
}
