//! MCP tools under the same rules as ours: `ask` by default (declined without a terminal
//! and without `--yes`), allowed or denied by `tool = "mcp__test__*"` rules, hidden by a role
//! that denies them, and every call in the event log and `--json`.

use std::os::unix::process::CommandExt;
use std::process::Stdio;

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::{marks, stdio_server};
use crate::suite::governance::{event_lines, of_type, offered_tools, tool_result};
use crate::support::env::texts;
use crate::support::sse::{text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

fn echo_then_done() -> Vec<Reply> {
    vec![
        Reply::Sse(tool_events("c1", "mcp__test__echo", r#"{"text":"hi"}"#)),
        Reply::Sse(text_events(&["done"])),
    ]
}

/// Runs `args` with no controlling terminal (its own session), so `ask` cannot be put to
/// anyone.
fn run_without_terminal(env: &TestEnv, args: &[&str]) -> std::process::Output {
    let mut command = env.std_cmd();
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid() is async-signal-safe and touches no memory.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    command.output().unwrap()
}

#[test]
fn mcp_tools_ask_so_without_yes_the_call_is_declined() {
    let server = MockServer::start(echo_then_done());
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    env.config(&stdio_server("test", &marks, &[], ""));
    let output = run_without_terminal(&env, &["go"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = tool_result(&server.chat_requests()[1].body, "c1");
    assert_eq!(
        result,
        "The user denied this tool call: approval was needed (`mcp__test__echo`: tools of MCP \
         servers ask unless a rule allows them) but no terminal was available to ask. Do not \
         retry it; use an allowed alternative or tell the user to rerun with --yes or add a \
         permission rule."
    );
    assert!(!marks.join("started-echo").exists());
}

#[test]
fn an_allow_rule_for_the_server_lets_it_run_and_a_deny_rule_blocks_it() {
    let server = MockServer::start(echo_then_done());
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    let rule =
        "[[permissions.rules]]\ntool = \"mcp__test__*\"\npattern = \"*\"\naction = \"allow\"\n";
    env.config(&format!("{rule}{}", stdio_server("test", &marks, &[], "")));
    let output = run_without_terminal(&env, &["go"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        tool_result(&server.chat_requests()[1].body, "c1"),
        "echo: hi"
    );

    let server = MockServer::start(echo_then_done());
    let env = TestEnv::with_server(&server);
    let marks = super::marks(&env);
    let rules = format!(
        "{rule}[[permissions.rules]]\ntool = \"mcp__test__echo\"\npattern = \"*\\\"hi\\\"*\"\naction = \"deny\"\n"
    );
    env.config(&format!("{rules}{}", stdio_server("test", &marks, &[], "")));
    let output = env.run(&["--yes", "go"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        tool_result(&server.chat_requests()[1].body, "c1"),
        "Blocked by policy: `mcp__test__echo`: matched a rule in your config (rule: deny \
         mcp__test__echo `*\"hi\"*` (user config))"
    );
    assert!(!marks.join("started-echo").exists());
}

#[test]
fn a_role_that_denies_mcp_tools_hides_them() {
    let server = MockServer::start(echo_then_done());
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    env.config(&stdio_server("test", &marks, &[], ""));
    std::fs::create_dir_all(env.agent_home.join("roles")).unwrap();
    std::fs::write(
        env.agent_home.join("roles/nomcp.toml"),
        "[role]\ndescription = \"no MCP\"\n[tools]\ndenied = [\"mcp__*\"]\n",
    )
    .unwrap();
    let output = env.run(&["--yes", "--role", "nomcp", "go"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let requests = server.chat_requests();
    let offered = offered_tools(&requests[0].body);
    assert!(offered.contains(&"bash".to_string()), "{offered:?}");
    assert!(
        !offered.iter().any(|t| t.starts_with("mcp__")),
        "{offered:?}"
    );
    assert_eq!(
        tool_result(&requests[1].body, "c1"),
        "Blocked by policy: role nomcp does not allow mcp__test__echo"
    );
    assert!(!marks.join("started-echo").exists());
}

#[test]
fn the_event_log_and_json_show_the_call() {
    let server = MockServer::start(echo_then_done());
    let env = TestEnv::with_server(&server);
    env.config(&stdio_server("test", &marks(&env), &[], ""));
    let output = env.run(&["--yes", "--json", "go"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let started = events.iter().find(|e| e["type"] == "tool.started").unwrap();
    assert_eq!(started["tool"], "mcp__test__echo");
    let finished = events
        .iter()
        .find(|e| e["type"] == "tool.finished")
        .unwrap();
    assert_eq!(
        (&finished["tool"], &finished["ok"], &finished["output"]),
        (
            &Value::from("mcp__test__echo"),
            &Value::from(true),
            &Value::from("echo: hi")
        )
    );
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "notice" && e["message"] == "MCP server `test` ready: 11 tools"),
        "{stdout}"
    );
    let lines = event_lines(&env);
    let calls = of_type(&lines, "ToolCall");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["tool"], "mcp__test__echo");
    let results = of_type(&lines, "ToolResult");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool"], "mcp__test__echo");
    assert_eq!(results[0]["verdict"], "approved");
}
