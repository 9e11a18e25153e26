//! Cost (SPEC §9.3): from `usage.cost`, from configured or built-in prices (cached prompt
//! tokens priced apart), or unknown (shown, not enforced, one warning).

use std::sync::Arc;

use agent::agent::TurnOutcome;
use agent::cancel::CancelToken;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::{
    EmitTool, calls_events, event_lines, in_process_with, of_type, text_with_usage, tool_result,
};
use crate::support::env::texts;
use crate::support::{MockServer, Reply, TestEnv};

fn usage_with_cost(cost: f64) -> Value {
    json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, "cost": cost})
}

fn emit_with(id: &str, usage: Value) -> Reply {
    Reply::Sse(calls_events(&[(id, "emit", r#"{"text":"x"}"#)], usage))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_cost_is_counted_warned_and_enforced() {
    let server = MockServer::start(vec![
        emit_with("c1", usage_with_cost(0.5)),
        emit_with("c2", usage_with_cost(0.35)),
        emit_with("c3", usage_with_cost(0.2)),
    ]);
    let env = TestEnv::with_server(&server);
    env.config("[budget]\nmax_cost_usd = 1.0\n");
    let (mut agent, recorder) =
        in_process_with(&env, &server, &[], Some(Arc::new(EmitTool::new())));
    let outcome = agent.run_turn("spend", &CancelToken::new()).await;
    let exhausted = "budget exhausted for role coder: cost $1.05/$1.00 (105%); tool calls are \
                     blocked. To continue, switch role (/role NAME, or --role NAME) or raise the \
                     limit (max_cost_usd under [budget] in config.toml)";
    assert_eq!(
        outcome,
        TurnOutcome::BudgetExhausted {
            message: exhausted.to_string()
        }
    );
    let results: Vec<String> = agent
        .history()
        .iter()
        .filter(|m| m.role == agent::model::Role::Tool)
        .map(|m| m.text_content().to_string())
        .collect();
    assert_eq!(
        results,
        vec![
            "x".to_string(),
            "x\nBudget warning: cost $0.85/$1.00 (85%) for role coder; tool calls stop at 100%."
                .to_string(),
            format!("Blocked by policy: {exhausted}"),
        ]
    );
    let lines = event_lines(&env);
    let usage = of_type(&lines, "ModelUsage");
    let costs: Vec<(f64, &str)> = usage
        .iter()
        .map(|u| {
            (
                u["cost_usd"].as_f64().unwrap(),
                u["cost_source"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(costs, vec![(0.5, "usage"), (0.35, "usage"), (0.2, "usage")]);
    assert_eq!(of_type(&lines, "BudgetWarning")[0]["dimension"], "cost");
    assert_eq!(of_type(&lines, "BudgetExhausted")[0]["dimension"], "cost");
    let results = of_type(&lines, "ToolResult");
    let verdicts: Vec<&str> = results
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, vec!["allow", "allow", "budget"]);
    assert!(
        recorder
            .warnings()
            .contains(&"budget warning: cost at 85% of the limit of role coder".to_string()),
        "{:?}",
        recorder.warnings()
    );
}

#[test]
fn an_exhausted_cost_budget_exits_3_in_one_shot() {
    let server = MockServer::start(vec![
        Reply::Sse(calls_events(
            &[("c1", "bash", r#"{"command":"echo hi"}"#)],
            usage_with_cost(0.6),
        )),
        Reply::Sse(calls_events(
            &[("c2", "bash", r#"{"command":"echo again"}"#)],
            usage_with_cost(0.6),
        )),
    ]);
    let env = TestEnv::with_server(&server);
    env.config("[budget]\nmax_cost_usd = 1.0\n");
    let output = env.run(&["--yes", "spend"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "error: budget exhausted for role coder: cost $1.20/$1.00 (120%); tool calls are \
             blocked. To continue, switch role (/role NAME, or --role NAME) or raise the limit \
             (max_cost_usd under [budget] in config.toml)\n"
        ),
        "{stderr}"
    );
    let results = of_type(&event_lines(&env), "ToolResult");
    let verdicts: Vec<&str> = results
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        vec!["allow", "budget"],
        "the second call must not run"
    );
}

#[test]
fn configured_prices_price_cached_tokens_apart() {
    let usage = json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 4}});
    let server = MockServer::start(vec![
        Reply::Sse(calls_events(
            &[("c1", "bash", r#"{"command":"echo hi"}"#)],
            usage.clone(),
        )),
        Reply::Sse(text_with_usage("done", usage)),
    ]);
    let env = TestEnv::with_server(&server);
    env.config(
        "[pricing.\"mock-model\"]\ninput_per_mtok = 10000.0\noutput_per_mtok = 20000.0\n\
         cached_input_per_mtok = 1000.0\n",
    );
    let output = env.run(&["--yes", "price it"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    // 6 fresh × $0.01 + 4 cached × $0.001 + 5 out × $0.02 = $0.164 per call.
    let lines = event_lines(&env);
    let usage = of_type(&lines, "ModelUsage");
    assert_eq!(usage.len(), 2);
    for (i, u) in usage.iter().enumerate() {
        assert_eq!(u["cost_source"], "price");
        assert_eq!(u["cached_tokens"], 4);
        assert!(
            (u["cost_usd"].as_f64().unwrap() - 0.164).abs() < 1e-9,
            "{u}"
        );
        let total = 0.164 * (i + 1) as f64;
        assert!(
            (u["session_cost_usd"].as_f64().unwrap() - total).abs() < 1e-9,
            "{u}"
        );
    }
    let second = &server.chat_requests()[1].body;
    let reminder = second["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reminder.contains("| cost $0.16/$5.00 (3%) → OK"),
        "{reminder}"
    );
    assert!(tool_result(second, "c1").starts_with("hi\n"));
}

#[test]
fn the_builtin_table_prices_well_known_models() {
    let server = MockServer::start(vec![Reply::Sse(text_with_usage(
        "hi",
        json!({"prompt_tokens": 1_000_000, "completion_tokens": 1_000_000}),
    ))]);
    let mut env = TestEnv::with_server(&server);
    env.var("MODEL", "gpt-4o-mini");
    let output = env.run(&["hello"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let usage = of_type(&event_lines(&env), "ModelUsage");
    assert_eq!(usage[0]["cost_source"], "price");
    assert!(
        (usage[0]["cost_usd"].as_f64().unwrap() - 0.75).abs() < 1e-9,
        "{}",
        usage[0]
    );
}

#[test]
fn an_unknown_price_is_shown_not_enforced_and_warned_once() {
    let server = MockServer::start(vec![
        Reply::Sse(calls_events(
            &[("c1", "bash", r#"{"command":"echo hi"}"#)],
            super::small_usage(),
        )),
        Reply::Sse(text_with_usage("done", super::small_usage())),
    ]);
    let mut env = TestEnv::with_server(&server);
    // A hosted endpoint (a loopback one without a key is free: the price is known).
    env.var("API_KEY", "test-key");
    env.config("[budget]\nmax_cost_usd = 0.0\n");
    let output = env.run(&["--yes", "go"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "done\n");
    let warning = "warning: cost: unknown price for mock-model; the cost budget is not enforced \
                   (add [pricing.\"mock-model\"] to config.toml to enforce it)\n";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    let second = &server.chat_requests()[1].body;
    let reminder = second["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reminder.contains("| cost: unknown price for mock-model → OK"),
        "{reminder}"
    );
    let lines = event_lines(&env);
    assert_eq!(of_type(&lines, "PriceUnknown").len(), 1);
    for u in of_type(&lines, "ModelUsage") {
        assert_eq!(u["cost_usd"], Value::Null);
        assert_eq!(u["cost_source"], "unknown");
    }
}

/// A model served on this machine (loopback, no `API_KEY`: llama-server, Ollama) has no
/// price and costs nothing: no warning, and the cost budget counts zero.
#[test]
fn a_local_model_without_a_price_costs_nothing() {
    let server = MockServer::start(vec![Reply::Sse(text_with_usage(
        "done",
        super::small_usage(),
    ))]);
    let env = TestEnv::with_server(&server);
    env.config("[budget]\nmax_cost_usd = 0.0\n");
    let output = env.run(&["--yes", "go"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "done\n");
    assert!(!stderr.contains("unknown price"), "{stderr}");
    let lines = event_lines(&env);
    assert!(of_type(&lines, "PriceUnknown").is_empty());
    let usage = of_type(&lines, "ModelUsage");
    assert_eq!(usage[0]["cost_usd"], 0.0);
}
