//! MCP servers over stdio: listing, calling, argument errors, `isError`, a crash and the
//! restart, slow starts, timeouts, Ctrl-C, huge output, names and media.

use std::process::Stdio;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::{marks, stdio_server, wait_for};
use crate::suite::governance::{offered_tools, tool_result};
use crate::support::env::texts;
use crate::support::sse::{check_request_invariants, text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

/// One model reply per call (`id` `c1`, `c2`, ...), then `done`.
fn script(calls: &[(&str, Value)]) -> Vec<Reply> {
    let mut replies: Vec<Reply> = calls
        .iter()
        .enumerate()
        .map(|(i, (tool, args))| {
            Reply::Sse(tool_events(&format!("c{}", i + 1), tool, &args.to_string()))
        })
        .collect();
    replies.push(Reply::Sse(text_events(&["done"])));
    replies
}

/// Runs a one-shot task with `--yes` against the test server (configured with `args` and
/// `extra`) while the model makes `calls`; returns the results in order, and stderr.
fn results(args: &[&str], extra: &str, calls: &[(&str, Value)]) -> (Vec<String>, String) {
    let server = MockServer::start(script(calls));
    let env = TestEnv::with_server(&server);
    env.config(&stdio_server("test", &marks(&env), args, extra));
    let output = env.run(&["--yes", "go"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), calls.len() + 1, "{stderr}");
    for request in &requests {
        check_request_invariants(&request.body).unwrap();
    }
    let results = (1..=calls.len())
        .map(|i| tool_result(&requests[i].body, &format!("c{i}")))
        .collect();
    (results, stderr)
}

#[test]
fn agent_mcp_list_shows_servers_their_state_and_tools() {
    let env = TestEnv::new();
    let marks = marks(&env);
    let mut config = stdio_server("test", &marks, &[], "");
    config.push_str(&stdio_server("broken", &marks, &["--fail-start"], ""));
    config.push_str(&stdio_server("off", &marks, &[], "enabled = false"));
    env.config(&config);
    let output = env.cmd().args(["mcp", "list"]).output().unwrap();
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "MCP servers:");
    assert!(
        lines[1].starts_with("  broken  failed    stdio `"),
        "{stdout}"
    );
    assert_eq!(
        lines[2],
        "      the server exited (exit code 3); stderr: boom: cannot open the database at \
         /nowhere/db.sqlite"
    );
    assert!(
        lines[3].starts_with("  off     disabled  stdio `"),
        "{stdout}"
    );
    assert!(
        lines[4].starts_with("  test    ready     stdio `"),
        "{stdout}"
    );
    let echo = lines
        .iter()
        .find(|l| l.contains("mcp__test__echo"))
        .unwrap();
    assert!(echo.ends_with("  Echo the given text back."), "{echo}");
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("      mcp__test__"))
            .count(),
        11,
        "{stdout}"
    );
}

#[test]
fn the_model_calls_an_mcp_tool_and_gets_its_result() {
    let server = MockServer::start(script(&[("mcp__test__echo", json!({"text": "hi"}))]));
    let env = TestEnv::with_server(&server);
    env.config(&stdio_server("test", &marks(&env), &[], ""));
    let output = env.run(&["--yes", "say hi through the server"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "done\n");
    assert!(
        stderr.contains("MCP server `test` ready: 11 tools"),
        "{stderr}"
    );
    let requests = server.chat_requests();
    let tools = &requests[0].body["tools"];
    let echo = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__test__echo")
        .expect("echo offered in the first request");
    assert_eq!(
        echo["function"],
        json!({
            "name": "mcp__test__echo",
            "description": "Echo the given text back.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                "required": ["text"]}
        })
    );
    assert_eq!(tool_result(&requests[1].body, "c1"), "echo: hi");
}

#[test]
fn arguments_are_coerced_then_validated_against_the_schema() {
    let (results, _) = results(
        &[],
        "",
        &[
            ("mcp__test__add", json!({"a": "2", "b": 3})),
            ("mcp__test__lookup", json!({"code": "abc"})),
            ("mcp__test__lookup", json!({"code": "ABC", "extra": true})),
            ("mcp__test__echo", json!({})),
            ("mcp__test__lookup", json!({"code": "ABC"})),
        ],
    );
    assert_eq!(
        results,
        vec![
            "5".to_string(),
            "Error: wrong arguments for mcp__test__lookup (field `code`: \"abc\" does not \
             match \"^[A-Z]{3}$\")."
                .into(),
            "Error: wrong arguments for mcp__test__lookup (Additional properties are not \
             allowed ('extra' was unexpected))."
                .into(),
            "Error: wrong arguments for mcp__test__echo (\"text\" is a required property).".into(),
            "ABC is a fine code".into(),
        ]
    );
}

#[test]
fn a_schema_error_never_reaches_the_server() {
    let server = MockServer::start(script(&[("mcp__test__lookup", json!({"code": 7}))]));
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    env.config(&stdio_server("test", &marks, &[], ""));
    let output = env.run(&["--yes", "go"]);
    assert_eq!(output.status.code(), Some(0));
    let result = tool_result(&server.chat_requests()[1].body, "c1");
    assert!(
        result.starts_with("Error: wrong arguments for mcp__test__lookup ("),
        "{result}"
    );
    assert!(!marks.join("started-lookup").exists());
}

#[test]
fn is_error_results_are_tool_errors_and_media_become_notes() {
    let (results, _) = results(
        &[],
        "",
        &[
            ("mcp__test__fail", json!({})),
            ("mcp__test__media", json!({})),
        ],
    );
    assert_eq!(
        results,
        vec![
            "Error: mcp__test__fail failed - tool error: the thing failed".to_string(),
            "[image: image/png, 12 bytes]\nand a picture".into(),
        ]
    );
}

#[test]
fn a_server_that_dies_mid_call_gives_an_error_and_restarts_at_the_next_call() {
    let server = MockServer::start(script(&[
        ("mcp__test__crash", json!({})),
        ("mcp__test__echo", json!({"text": "again"})),
    ]));
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    env.config(&stdio_server("test", &marks, &[], ""));
    let output = env.run(&["--yes", "go"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let requests = server.chat_requests();
    assert_eq!(
        tool_result(&requests[1].body, "c1"),
        "Error: mcp__test__crash failed - server stopped: MCP server `test` stopped during \
         the call: the server exited (exit code 1); stderr: crashing now, as asked. It is \
         restarted at the next call to one of its tools."
    );
    assert_eq!(tool_result(&requests[2].body, "c2"), "echo: again");
    let starts = std::fs::read_to_string(marks.join("starts")).unwrap();
    assert_eq!(starts.lines().count(), 2, "started, then restarted once");
    assert!(
        stderr.contains("MCP server `test` restarted: 11 tools"),
        "{stderr}"
    );
}

#[test]
fn one_shot_waits_for_a_slow_server() {
    let (results, _) = results(
        &["--slow-start", "1"],
        "",
        &[("mcp__test__echo", json!({"text": "late"}))],
    );
    assert_eq!(results, vec!["echo: late".to_string()]);
}

#[test]
fn a_server_past_its_startup_timeout_fails_with_one_line_and_the_session_goes_on() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let env = TestEnv::with_server(&server);
    env.config(&stdio_server(
        "test",
        &marks(&env),
        &["--slow-start", "30"],
        "startup_timeout_sec = 0.5",
    ));
    let output = env.run(&["hi"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "ok\n");
    let failures: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("MCP server `test`"))
        .collect();
    assert_eq!(failures.len(), 1, "{stderr}");
    assert!(
        failures[0].ends_with(
            "MCP server `test` failed to start: no answer within 0.5 s (startup_timeout_sec)"
        ),
        "{stderr}"
    );
    let tools = offered_tools(&server.chat_requests()[0].body);
    assert!(!tools.iter().any(|t| t.starts_with("mcp__")), "{tools:?}");
}

#[test]
fn huge_output_is_capped_like_any_tool_result() {
    let (results, _) = results(&[], "", &[("mcp__test__huge", json!({"bytes": 200_000}))]);
    let result = &results[0];
    assert!(result.chars().count() < 31_000, "{}", result.len());
    assert!(
        result.contains("\n[... 170000 characters omitted ...]\n"),
        "{}",
        &result[..100]
    );
}

#[test]
fn names_invalid_for_openai_are_made_valid_and_still_reach_the_tool() {
    let server = MockServer::start(script(&[("mcp__test__weird_name_with_spaces", json!({}))]));
    let env = TestEnv::with_server(&server);
    env.config(&stdio_server("test", &marks(&env), &[], ""));
    let output = env.run(&["--yes", "go"]);
    assert_eq!(output.status.code(), Some(0));
    let requests = server.chat_requests();
    let names = offered_tools(&requests[0].body);
    assert!(
        names.iter().all(|n| n.len() <= 64
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')),
        "{names:?}"
    );
    assert!(
        names
            .iter()
            .any(|n| n.len() == 64 && n.starts_with("mcp__test__a_tool_whose"))
    );
    assert_eq!(
        tool_result(&requests[1].body, "c1"),
        "called weird.name/with spaces"
    );
}

#[test]
fn a_call_past_tool_timeout_is_cancelled_on_the_server() {
    // The model's answer after the timeout never comes: the agent is still running while
    // the test looks for the server's mark.
    let server = MockServer::start(vec![
        Reply::Sse(tool_events("c1", "mcp__test__slow", r#"{"seconds": 30}"#)),
        Reply::Hang,
    ]);
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    env.config(&stdio_server("test", &marks, &[], "tool_timeout_sec = 1"));
    let mut agent = env
        .std_cmd()
        .args(["--yes", "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&marks.join("cancel-reason"), Duration::from_secs(30));
    assert_eq!(
        std::fs::read_to_string(marks.join("cancel-reason")).unwrap(),
        "timed out"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while server.chat_requests().len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = agent.kill();
    let _ = agent.wait();
    assert_eq!(
        tool_result(&server.chat_requests()[1].body, "c1"),
        "Error: mcp__test__slow failed - timeout: no answer from MCP server `test` within 1 s \
         (tool_timeout_sec); the call was cancelled"
    );
}

/// One-shot: the call ends as interrupted and the run exits 130 (that the server is told is
/// checked at the REPL, `super::repl`, where the agent lives on after Ctrl-C).
#[test]
fn ctrl_c_interrupts_a_running_call() {
    let server = MockServer::start(vec![Reply::Sse(tool_events(
        "c1",
        "mcp__test__slow",
        r#"{"seconds": 30}"#,
    ))]);
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    env.config(&stdio_server("test", &marks, &[], ""));
    let agent = env
        .std_cmd()
        .args(["--yes", "--json", "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&marks.join("started-slow"), Duration::from_secs(30));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(agent.id() as i32, libc::SIGINT) };
    let output = agent.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let finished: Value = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "tool.finished")
        .expect("tool.finished");
    assert_eq!(finished["ok"], false);
    assert_eq!(
        finished["output"],
        "Error: mcp__test__slow failed - interrupted: interrupted by user (the call was \
         cancelled on the MCP server)"
    );
}
