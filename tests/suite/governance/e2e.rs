//! Done means (issue 5): `agent --role reviewer "review src/"` cannot edit or run anything,
//! and events.jsonl shows every tool call, verdict and cost afterwards.

use pretty_assertions::assert_eq;

use super::{
    calls_events, event_lines, of_type, offered_tools, small_usage, text_with_usage, tool_result,
};
use crate::support::env::texts;
use crate::support::sse::check_request_invariants;
use crate::support::{MockServer, Reply, TestEnv};

#[test]
fn reviewer_cannot_edit_or_run_and_the_log_shows_everything() {
    let server = MockServer::start(vec![
        Reply::Sse(calls_events(
            &[
                ("c1", "read_file", r#"{"path":"src/lib.rs"}"#),
                ("c2", "bash", r#"{"command":"touch hacked"}"#),
                (
                    "c3",
                    "write_file",
                    r#"{"path":"src/lib.rs","content":"gone"}"#,
                ),
                (
                    "c4",
                    "str_replace",
                    r#"{"path":"src/lib.rs","old_str":"fn","new_str":"gone"}"#,
                ),
            ],
            small_usage(),
        )),
        Reply::Sse(text_with_usage("src/ looks fine", small_usage())),
    ]);
    let env = TestEnv::with_server(&server);
    env.write("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
    env.config("[pricing.\"mock-model\"]\ninput_per_mtok = 1000.0\noutput_per_mtok = 2000.0\n");
    let output = env.run(&["--yes", "--role", "reviewer", "review src/"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "src/ looks fine\n");

    // Nothing was edited or run.
    assert_eq!(env.read("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n");
    assert!(!env.workspace.join("hacked").exists());

    // Only the allowed tools were offered; calls to the others got the exact answer.
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(
            offered_tools(&request.body),
            vec!["read_file", "write_todos", "task"]
        );
        check_request_invariants(&request.body).unwrap();
    }
    let body = &requests[1].body;
    for (id, tool) in [("c2", "bash"), ("c3", "write_file"), ("c4", "str_replace")] {
        assert_eq!(
            tool_result(body, id),
            format!("Blocked by policy: role reviewer does not allow {tool}")
        );
    }
    let last = requests[1].messages().last().cloned().unwrap();
    let reminder = last["content"].as_str().unwrap();
    assert!(reminder.contains("role: reviewer ("), "{reminder}");
    assert!(reminder.contains("Budget[reviewer]: tokens "), "{reminder}");

    // events.jsonl: every call, its verdict, and the cost of each model call.
    let lines = event_lines(&env);
    for line in &lines {
        assert_eq!(line["role"], "reviewer", "{line}");
        assert!(line["ts"].as_str().unwrap().ends_with('Z'), "{line}");
        assert!(!line["session"].as_str().unwrap().is_empty(), "{line}");
    }
    let calls: Vec<(String, String)> = of_type(&lines, "ToolCall")
        .iter()
        .map(|l| {
            (
                l["tool"].as_str().unwrap().into(),
                l["command"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("read_file".to_string(), "src/lib.rs".to_string()),
            ("bash".into(), "touch hacked".into()),
            ("write_file".into(), "src/lib.rs".into()),
            ("str_replace".into(), "src/lib.rs".into()),
        ]
    );
    let results = of_type(&lines, "ToolResult");
    let verdicts: Vec<&str> = results
        .iter()
        .map(|l| l["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts.len(), 4);
    assert_ne!(verdicts[0], "denied");
    assert_eq!(&verdicts[1..], &["denied", "denied", "denied"]);
    for result in &results {
        assert!(
            result["duration_ms"].is_u64() && result["output_chars"].is_u64(),
            "{result}"
        );
    }
    let violations = of_type(&lines, "PolicyViolation");
    assert_eq!(violations.len(), 3);
    assert_eq!(violations[0]["by"], "role");
    assert_eq!(violations[0]["tool"], "bash");
    assert_eq!(violations[0]["rule"], "role reviewer does not allow bash");
    assert_eq!(violations[0]["command"], "touch hacked");
    let usage = of_type(&lines, "ModelUsage");
    assert_eq!(usage.len(), 2);
    // 10 prompt tokens × $1000/Mtok + 5 completion tokens × $2000/Mtok = $0.02 per call.
    assert!(
        (usage[0]["cost_usd"].as_f64().unwrap() - 0.02).abs() < 1e-9,
        "{}",
        usage[0]
    );
    assert_eq!(usage[0]["cost_source"], "price");
    assert!((usage[1]["session_cost_usd"].as_f64().unwrap() - 0.04).abs() < 1e-9);
    // Order within the call: ToolCall, PolicyViolation, ToolResult.
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        vec![
            "ModelUsage",
            "ToolCall",
            "ToolResult",
            "ToolCall",
            "PolicyViolation",
            "ToolResult",
            "ToolCall",
            "PolicyViolation",
            "ToolResult",
            "ToolCall",
            "PolicyViolation",
            "ToolResult",
            "ModelUsage",
        ]
    );
}
