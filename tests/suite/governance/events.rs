//! The policy event log (SPEC §9.4): a line of each type with its fields, and two processes
//! appending to the same file without tearing a line.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use agent::agent::TurnOutcome;
use agent::cancel::CancelToken;
use agent::governance::events::{EventRecord, PolicyEvent, timestamp};
use agent::governance::log::EventLog;
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::{calls_events, event_lines, in_process, of_type, small_usage, text_with_usage};
use crate::support::{MockServer, Reply, TestEnv};

fn keys(line: &Value) -> BTreeSet<String> {
    line.as_object().unwrap().keys().cloned().collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    let mut all = vec!["ts", "session", "role", "type"];
    all.extend_from_slice(names);
    all.into_iter().map(str::to_string).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_type_is_logged_with_its_fields() {
    let server = MockServer::start(vec![
        Reply::Sse(calls_events(
            &[("c1", "bash", r#"{"command":"echo a"}"#)],
            small_usage(),
        )),
        Reply::Sse(text_with_usage("ok", small_usage())),
        Reply::Sse(calls_events(
            &[
                ("c2", "bash", r#"{"command":"rm -rf build"}"#),
                ("c3", "bash", r#"{"command":"echo b"}"#),
                ("c4", "bash", r#"{"command":"echo c"}"#),
            ],
            small_usage(),
        )),
    ]);
    let env = TestEnv::with_server(&server);
    env.config("[budget]\nmax_shell_invocations = 2\nwarn_at = 0.5\n");
    let (mut agent, _) = in_process(&env, &server, &["--role", "reviewer"]);
    let cancel = CancelToken::new();
    assert_eq!(
        agent.run_turn("one", &cancel).await,
        TurnOutcome::Done { text: "ok".into() }
    );
    agent.set_role("coder").unwrap();
    let outcome = agent.run_turn("two", &cancel).await;
    assert!(
        matches!(outcome, TurnOutcome::BudgetExhausted { .. }),
        "{outcome:?}"
    );

    let lines = event_lines(&env);
    let session = agent.governor().session_id();
    for line in &lines {
        assert_eq!(line["session"], session.as_str(), "{line}");
    }
    let first = |kind: &str| {
        of_type(&lines, kind)
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("no {kind} in {lines:#?}"))
    };
    let tool_call = first("ToolCall");
    assert_eq!(keys(&tool_call), set(&["call_id", "tool", "command"]));
    assert_eq!(
        (tool_call["role"].as_str(), tool_call["command"].as_str()),
        (Some("reviewer"), Some("echo a"))
    );
    let result = first("ToolResult");
    assert_eq!(
        keys(&result),
        set(&[
            "call_id",
            "tool",
            "verdict",
            "ok",
            "duration_ms",
            "output_chars",
            "output_tokens"
        ])
    );
    assert_eq!(result["verdict"], "denied");
    assert_eq!(result["ok"], false);
    let violations = of_type(&lines, "PolicyViolation");
    assert_eq!(
        keys(&violations[0]),
        set(&["tool", "by", "rule", "command"])
    );
    let summary: Vec<(&str, &str, &str)> = violations
        .iter()
        .map(|v| {
            (
                v["by"].as_str().unwrap(),
                v["tool"].as_str().unwrap(),
                v["command"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![("role", "bash", "echo a"), ("rule", "bash", "rm -rf build")]
    );
    assert!(
        violations[1]["rule"].as_str().unwrap().contains("rm *"),
        "the rule that matched: {}",
        violations[1]
    );
    let changed = first("RoleChanged");
    assert_eq!(keys(&changed), set(&["from", "to"]));
    assert_eq!(
        (changed["from"].as_str(), changed["to"].as_str()),
        (Some("reviewer"), Some("coder"))
    );
    let warning = first("BudgetWarning");
    assert_eq!(
        keys(&warning),
        set(&["dimension", "used", "limit", "percent"])
    );
    assert_eq!(
        (warning["dimension"].as_str(), warning["percent"].as_u64()),
        (Some("shell"), Some(50))
    );
    let exhausted = first("BudgetExhausted");
    assert_eq!(
        keys(&exhausted),
        set(&["dimension", "used", "limit", "percent"])
    );
    assert_eq!(exhausted["dimension"], "shell");
    let usage = first("ModelUsage");
    assert_eq!(
        keys(&usage),
        set(&[
            "model",
            "prompt_tokens",
            "completion_tokens",
            "cached_tokens",
            "cost_usd",
            "cost_source",
            "session_cost_usd",
            "signal"
        ])
    );
    assert_eq!(keys(&first("PriceUnknown")), set(&["model"]));
    let results = of_type(&lines, "ToolResult");
    let verdicts: Vec<&str> = results
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, vec!["denied", "denied", "allow", "allow"]);
}

const CHILD_LOG: &str = "AGENT_TEST_EVENT_LOG";
const CHILD_TAG: &str = "AGENT_TEST_EVENT_TAG";
const PER_PROCESS: usize = 1000;

/// Run only as a child of `two_processes_never_tear_a_line`: appends 1,000 events of
/// different sizes (up to ~16 KB, past the size of a pipe buffer or a page) to the log.
#[test]
#[ignore = "child process of two_processes_never_tear_a_line"]
fn event_log_child() {
    let (Ok(path), Ok(tag)) = (std::env::var(CHILD_LOG), std::env::var(CHILD_TAG)) else {
        return;
    };
    let log = EventLog::open(Path::new(&path), None).unwrap();
    for i in 0..PER_PROCESS {
        let record = EventRecord {
            ts: timestamp(),
            session: tag.clone(),
            role: "coder".into(),
            event: PolicyEvent::ToolCall {
                call_id: i.to_string(),
                tool: "bash".into(),
                command: tag.repeat(1 + (i * 37) % 16_000),
            },
        };
        log.append(&record).unwrap();
    }
}

#[test]
fn two_processes_never_tear_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let exe = std::env::current_exe().unwrap();
    let spawn = |tag: &str| {
        Command::new(&exe)
            .args([
                "--exact",
                "suite::governance::events::event_log_child",
                "--ignored",
                "--test-threads=1",
                "--quiet",
            ])
            .env(CHILD_LOG, &path)
            .env(CHILD_TAG, tag)
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut children = [spawn("a"), spawn("b")];
    for child in &mut children {
        assert!(child.wait().unwrap().success());
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'));
    let mut next = [0usize, 0usize];
    for line in text.lines() {
        let value: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("torn line ({e}): {}", &line[..line.len().min(200)]));
        let tag = value["session"].as_str().unwrap();
        let index: usize = value["call_id"].as_str().unwrap().parse().unwrap();
        let who = usize::from(tag == "b");
        assert_eq!(index, next[who], "lines of one process stay in order");
        assert_eq!(
            value["command"].as_str().unwrap(),
            tag.repeat(1 + (index * 37) % 16_000)
        );
        next[who] += 1;
    }
    assert_eq!(next, [PER_PROCESS, PER_PROCESS]);
}
