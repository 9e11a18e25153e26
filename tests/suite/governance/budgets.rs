//! Budget signals at their thresholds with the exact lines, exhaustion (blocked calls, the
//! turn ends, exit code 3, later turns refused), role switches keeping spending, and the
//! `compress` shell policy.

use agent::agent::TurnOutcome;
use agent::cancel::CancelToken;
use agent::model::Role;
use pretty_assertions::assert_eq;

use std::sync::Arc;

use super::{
    EmitTool, calls_events, event_lines, in_process, in_process_with, of_type, small_usage,
    text_with_usage, tool_result, without_exec_notes,
};
use crate::support::env::texts;
use crate::support::{MockServer, Reply, TestEnv};

fn bash(id: &str, command: &str) -> Reply {
    let args = serde_json::json!({ "command": command }).to_string();
    Reply::Sse(calls_events(&[(id, "bash", &args)], small_usage()))
}

#[test]
fn shell_calls_warn_from_the_threshold_and_exhaust_with_exit_3() {
    let server = MockServer::start(
        (1..=5)
            .map(|i| bash(&format!("c{i}"), &format!("echo {i}")))
            .collect(),
    );
    let env = TestEnv::with_server(&server);
    env.config("[budget]\nmax_shell_invocations = 5\nwarn_at = 0.6\n");
    let output = env.run(&["--yes", "count"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert_eq!(without_exec_notes(&stdout), "");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 5, "no model call after exhaustion");
    assert_eq!(tool_result(&requests[1].body, "c1"), "1\n");
    assert_eq!(tool_result(&requests[2].body, "c2"), "2\n");
    assert_eq!(
        tool_result(&requests[3].body, "c3"),
        "3\nBudget warning: shell 3/5 (60%) for role coder; tool calls stop at 100%."
    );
    assert_eq!(
        tool_result(&requests[4].body, "c4"),
        "4\nBudget warning: shell 4/5 (80%) for role coder; tool calls stop at 100%."
    );
    let exhausted = "budget exhausted for role coder: shell 5/5 (100%); tool calls are blocked. \
                     To continue, switch role (/role NAME, or --role NAME) or raise the limit \
                     (max_shell_invocations under [budget] in config.toml)";
    assert!(
        stderr.contains(&format!("error: {exhausted}\n")),
        "{stderr}"
    );
    let lines = event_lines(&env);
    let warnings = of_type(&lines, "BudgetWarning");
    assert_eq!(warnings.len(), 1, "once per crossing: {warnings:?}");
    assert_eq!(warnings[0]["dimension"], "shell");
    assert_eq!(warnings[0]["percent"], 60);
    let exhaustions = of_type(&lines, "BudgetExhausted");
    assert_eq!(exhaustions.len(), 1, "{exhaustions:?}");
    assert_eq!(exhaustions[0]["dimension"], "shell");
    assert_eq!(exhaustions[0]["used"], 5.0);
    assert_eq!(exhaustions[0]["limit"], 5.0);
    assert!(
        stderr.contains("warning: budget warning: shell calls at 60% of the limit of role coder"),
        "{stderr}"
    );
}

fn tool_messages(agent: &agent::agent::Agent) -> Vec<String> {
    agent
        .history()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| without_exec_notes(m.text_content()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exhaustion_blocks_the_batch_ends_the_turn_and_refuses_turns_until_the_role_changes() {
    let server = MockServer::start(vec![
        Reply::Sse(calls_events(
            &[
                ("c1", "bash", r#"{"command":"echo one"}"#),
                ("c2", "bash", r#"{"command":"echo two"}"#),
                ("c3", "read_file", r#"{"path":"x"}"#),
            ],
            small_usage(),
        )),
        Reply::Sse(text_with_usage("fine", small_usage())),
    ]);
    let env = TestEnv::with_server(&server);
    env.config("[budget]\nmax_shell_invocations = 1\n");
    let (mut agent, _) = in_process(&env, &server, &[]);
    let cancel = CancelToken::new();
    let exhausted = "budget exhausted for role coder: shell 1/1 (100%); tool calls are blocked. To \
                     continue, switch role (/role NAME, or --role NAME) or raise the limit \
                     (max_shell_invocations under [budget] in config.toml)";
    let outcome = agent.run_turn("go", &cancel).await;
    assert_eq!(
        outcome,
        TurnOutcome::BudgetExhausted {
            message: exhausted.to_string()
        }
    );
    assert_eq!(
        tool_messages(&agent),
        vec![
            format!("one\n{exhausted}"),
            format!("Blocked by policy: {exhausted}"),
            format!("Blocked by policy: {exhausted}"),
        ]
    );
    // A new turn is refused without calling the model.
    let again = agent.run_turn("more", &cancel).await;
    assert!(
        matches!(again, TurnOutcome::BudgetExhausted { .. }),
        "{again:?}"
    );
    assert_eq!(server.chat_requests().len(), 1);
    // `[budget] max_shell_invocations` replaces the limit of every role: switching keeps the
    // spending and the block.
    agent.set_role("debugger").unwrap();
    let line = agent.governor().budget_line();
    assert_eq!(
        line.split_once(" | ").map(|(_, rest)| rest),
        Some("shell 1/1 (100%) | cost: unknown price for mock-model → EXHAUSTED"),
        "[budget] max_shell_invocations applies to every role"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_role_keeps_spending() {
    let server = MockServer::start(vec![
        bash("c1", "echo one"),
        Reply::Sse(text_with_usage("done", small_usage())),
        Reply::Sse(text_with_usage("still here", small_usage())),
    ]);
    let env = TestEnv::with_server(&server);
    let (mut agent, _) = in_process(&env, &server, &["--role", "debugger"]);
    let cancel = CancelToken::new();
    let outcome = agent.run_turn("go", &cancel).await;
    assert_eq!(
        outcome,
        TurnOutcome::Done {
            text: "done".into()
        }
    );
    let before = agent.governor().spending();
    assert_eq!(before.shell_calls, 1);
    agent.set_role("reviewer").unwrap();
    assert_eq!(agent.governor().spending(), before);
    let tokens = before.tokens;
    assert_eq!(
        agent.governor().budget_line(),
        format!(
            "Budget[reviewer]: tokens {tokens}/150000 (0%) | shell 1/0 (0%) | cost: unknown \
             price for mock-model → OK"
        )
    );
    agent.set_role("coder").unwrap();
    assert_eq!(
        agent.governor().budget_line(),
        format!(
            "Budget[coder]: tokens {tokens}/200000 (0%) | shell 1/100 (1%) | cost: unknown price \
             for mock-model → OK"
        )
    );
    let outcome = agent.run_turn("next", &cancel).await;
    assert_eq!(
        outcome,
        TurnOutcome::Done {
            text: "still here".into()
        }
    );
    let lines = event_lines(&env);
    let changes: Vec<(String, String, String)> = of_type(&lines, "RoleChanged")
        .iter()
        .map(|l| {
            (
                l["from"].as_str().unwrap().into(),
                l["to"].as_str().unwrap().into(),
                l["role"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        vec![
            (
                "debugger".to_string(),
                "reviewer".to_string(),
                "reviewer".to_string()
            ),
            ("reviewer".into(), "coder".into(), "coder".into()),
        ]
    );
    assert!(
        of_type(&lines, "BudgetExhausted").is_empty(),
        "reviewer allows no shell calls at all: earlier ones do not exhaust it"
    );
    let unknown = agent.set_role("nope").err().map(|e| e.to_string());
    assert_eq!(
        unknown.as_deref(),
        Some("unknown role `nope`; available: admin, coder, debugger, ops, reviewer")
    );
}

fn emit(id: &str, text: &str) -> Reply {
    let args = serde_json::json!({ "text": text }).to_string();
    Reply::Sse(calls_events(&[(id, "emit", &args)], small_usage()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_output_tokens_warn_and_exhaust() {
    let zeros = |n| "0".repeat(n);
    let server = MockServer::start(vec![
        emit("c1", &zeros(316)),
        emit("c2", &zeros(4)),
        emit("c3", &zeros(80)),
    ]);
    let env = TestEnv::with_server(&server);
    env.config("[budget]\nmax_context_tokens = 100\n");
    let tool = Arc::new(EmitTool::new());
    let (mut agent, _) = in_process_with(&env, &server, &[], Some(tool));
    let outcome = agent.run_turn("print", &CancelToken::new()).await;
    assert!(
        matches!(outcome, TurnOutcome::BudgetExhausted { .. }),
        "{outcome:?}"
    );
    assert_eq!(
        tool_messages(&agent),
        vec![
            zeros(316),
            format!(
                "{}\nBudget warning: tokens 80/100 (80%) for role coder; tool calls stop at 100%.",
                zeros(4)
            ),
            format!(
                "{}\nbudget exhausted for role coder: tokens 100/100 (100%); tool calls are blocked. \
                 To continue, switch role (/role NAME, or --role NAME) or raise the limit \
                 (max_context_tokens under [budget] in config.toml)",
                zeros(80)
            ),
        ]
    );
    let lines = event_lines(&env);
    let signals: Vec<(String, String, u64)> = lines
        .iter()
        .filter(|l| l["type"] == "BudgetWarning" || l["type"] == "BudgetExhausted")
        .map(|l| {
            let kind = l["type"].as_str().unwrap().to_string();
            (
                kind,
                l["dimension"].as_str().unwrap().to_string(),
                l["percent"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        signals,
        vec![
            ("BudgetWarning".to_string(), "tokens".to_string(), 80),
            ("BudgetExhausted".into(), "tokens".into(), 100),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compress_policy_compresses_bash_output_and_notes_the_savings() {
    let noisy = "for i in 1 2 3 4 5 6; do echo same line; done; printf '\\n\\n\\n\\nend\\n'";
    let server = MockServer::start(vec![
        bash("c1", noisy),
        Reply::Sse(text_with_usage("ok", small_usage())),
    ]);
    let env = TestEnv::with_server(&server);
    let (mut agent, _) = in_process(&env, &server, &["--role", "ops"]);
    let outcome = agent.run_turn("look", &CancelToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Done { text: "ok".into() });
    let kept = "same line\n[previous line repeated 5 more times]\n\nend\n";
    let results = tool_messages(&agent);
    assert_eq!(results.len(), 1);
    let note = results[0]
        .strip_prefix(kept)
        .unwrap_or_else(|| panic!("{results:?}"));
    assert!(note.starts_with("[compressed shell output: "), "{note}");
    assert!(note.ends_with("% saved]"), "{note}");
    let saved = agent.governor().spending().compressed_chars_saved;
    // 5 repeated lines became one marker line (50 → 39 characters), 4 blank lines one.
    assert_eq!(saved, 15);
    assert_eq!(agent.governor().spending().shell_calls, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviewer_after_shell_calls_can_still_read() {
    let server = MockServer::start(vec![
        bash("c1", "echo one"),
        Reply::Sse(text_with_usage("done", small_usage())),
        Reply::Sse(calls_events(
            &[("r1", "read_file", r#"{"path":"notes.txt"}"#)],
            small_usage(),
        )),
        Reply::Sse(text_with_usage("read it", small_usage())),
    ]);
    let env = TestEnv::with_server(&server);
    env.write("notes.txt", "apple\n");
    let (mut agent, _) = in_process(&env, &server, &[]);
    let cancel = CancelToken::new();
    agent.run_turn("go", &cancel).await;
    agent.set_role("reviewer").unwrap();
    let outcome = agent.run_turn("review notes.txt", &cancel).await;
    assert_eq!(
        outcome,
        TurnOutcome::Done {
            text: "read it".into()
        }
    );
    let requests = server.chat_requests();
    assert_eq!(tool_result(&requests[3].body, "r1"), "     1\tapple\n");
}
