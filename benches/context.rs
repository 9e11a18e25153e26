//! Benchmarks for context management and sessions (BENCHMARKS.md, "Context and memory"),
//! against the loopback mock model of the tests.
//!
//! Run: `cargo bench --bench context` (both), or name one: `cargo bench --bench context --
//! pruning` or `-- resume`. Each prints its figures and fails (exits non-zero) when a target
//! is missed: pruned requests at most 35 % of the unpruned bytes with a prefix-cache share of
//! at least 80 %; finding and loading a 10,000-message session under 200 ms.

#![allow(clippy::expect_used, clippy::unwrap_used, dead_code)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use serde_json::Value;

use support::env::texts;
use support::mock::Recorded;
use support::sse::{check_request_invariants, text_events, tool_events};
use support::{MockServer, Reply, TestEnv};

fn main() {
    let chosen: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let benches: [(&str, fn()); 2] = [
        ("pruning", pruning_60_turns_of_20kb_results),
        ("resume", resume_10000_messages),
    ];
    for (name, bench) in benches {
        if chosen.is_empty() || chosen.iter().any(|c| name.contains(c.as_str())) {
            bench();
        }
    }
}

const TURNS: usize = 60;
const RESULT_BYTES: usize = 20 * 1024;

/// A realistic-looking 20 KB file (numbered log lines).
fn big_text() -> String {
    let mut text = String::new();
    let mut n = 0;
    while text.len() < RESULT_BYTES - 80 {
        n += 1;
        text.push_str(&format!(
            "{n:05} INFO  worker::sync  processed batch {n} in {} ms (ok)\n",
            n * 7 % 113
        ));
    }
    text
}

/// 60 user turns (one process each, `--resume` from the second on), each turn one `cat` of
/// a 20 KB file and a short answer. Returns every chat request.
fn scripted_session(config: &str) -> Vec<Recorded> {
    let server = MockServer::start(vec![]);
    for k in 0..TURNS {
        server.push(Reply::Sse(tool_events(
            &format!("call_{k}"),
            "bash",
            r#"{"command":"cat big.txt"}"#,
        )));
        server.push(Reply::Sse(text_events(&[&format!(
            "turn {k}: the log looks fine."
        )])));
    }
    let env = TestEnv::with_server(&server);
    // A budget large enough for 60 x 20 KB of tool output (the coder role allows 200,000).
    env.config(&format!(
        "{config}[budget]\nmax_context_tokens = 100000000\n"
    ));
    env.write("big.txt", &big_text());
    for k in 0..TURNS {
        let prompt = format!("turn {k}: check the log again");
        let args: Vec<&str> = if k == 0 {
            vec![prompt.as_str()]
        } else {
            vec!["--resume", prompt.as_str()]
        };
        let output = env.run(&args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "turn {k}: {}",
            texts(&output).1
        );
    }
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2 * TURNS);
    for request in &requests {
        check_request_invariants(&request.body).unwrap();
    }
    requests
}

/// The prompt as a model server sees it, in template order: tools, then messages.
fn prompt_text(request: &Recorded) -> Vec<u8> {
    let mut out = serde_json::to_vec(&request.body["tools"]).unwrap();
    out.extend(serde_json::to_vec(&request.body["messages"]).unwrap());
    out
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// (total body bytes, share of prompt bytes covered by the previous request's prefix).
fn figures(requests: &[Recorded]) -> (usize, f64) {
    let total: usize = requests.iter().map(|r| r.raw_body.len()).sum();
    let prompts: Vec<Vec<u8>> = requests.iter().map(prompt_text).collect();
    let mut cached = 0usize;
    for pair in prompts.windows(2) {
        cached += common_prefix(&pair[0], &pair[1]);
    }
    let all: usize = prompts.iter().map(Vec::len).sum();
    (total, cached as f64 / all as f64)
}

fn pruning_60_turns_of_20kb_results() {
    let started = Instant::now();
    let pruned = scripted_session("");
    let unpruned = scripted_session(
        "[context]\ncontext_window = 10000000\nprune_at = 1.0\ncompact_at = 1.0\n",
    );
    let (pruned_bytes, pruned_cache) = figures(&pruned);
    let (unpruned_bytes, unpruned_cache) = figures(&unpruned);
    let largest = |r: &[Recorded]| r.iter().map(|r| r.raw_body.len()).max().unwrap_or(0);
    let stubbed = pruned
        .last()
        .map(|r| {
            r.messages()
                .iter()
                .filter(|m| {
                    m["content"]
                        .as_str()
                        .is_some_and(|c| c.starts_with("[pruned to save context"))
                })
                .count()
        })
        .unwrap_or(0);
    println!(
        "60 turns, one 20 KB tool result each, {} requests per run",
        pruned.len()
    );
    println!(
        "bytes sent with pruning:    {pruned_bytes:>11}  (largest request {} bytes, {stubbed} stubs at the end)",
        largest(&pruned)
    );
    println!(
        "bytes sent without pruning: {unpruned_bytes:>11}  (largest request {} bytes)",
        largest(&unpruned)
    );
    println!(
        "ratio: {:.1}% of unpruned (target <= 35%)",
        100.0 * pruned_bytes as f64 / unpruned_bytes as f64
    );
    println!(
        "prefix-cache share with pruning: {:.1}% (target >= 80%); without: {:.1}%",
        100.0 * pruned_cache,
        100.0 * unpruned_cache
    );
    println!(
        "wall time for both runs: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(pruned_bytes as f64 <= 0.35 * unpruned_bytes as f64);
    assert!(pruned_cache >= 0.80);
}

/// A session file of `messages` messages: turns of user, tool call, 2 KB result, answer.
fn write_session(path: &std::path::Path, workspace: &std::path::Path, messages: usize) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let header = serde_json::json!({"type": "session", "id": "20261130-000000-beef",
        "workspace": workspace, "started": 1_796_000_000u64, "model": "m", "agent_version": "0"});
    writeln!(out, "{header}").unwrap();
    let result = big_text()[..2048].to_string();
    for i in 0..messages {
        let turn = i / 4;
        let message: Value = match i % 4 {
            0 => {
                serde_json::json!({"role": "user", "content": format!("turn {turn}: look at the log")})
            }
            1 => serde_json::json!({"role": "assistant", "tool_calls": [{"id": format!("c{turn}"),
                "name": "bash", "arguments": "{\"command\":\"cat big.txt\"}"}]}),
            2 => {
                serde_json::json!({"role": "tool", "content": result, "tool_call_id": format!("c{turn}")})
            }
            _ => {
                serde_json::json!({"role": "assistant", "content": format!("turn {turn}: the log looks fine.")})
            }
        };
        writeln!(
            out,
            "{}",
            serde_json::json!({"type": "message", "message": message})
        )
        .unwrap();
    }
}

fn resume_10000_messages() {
    let env = TestEnv::new();
    let dir = env.agent_home.join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("20261130-000000-beef.jsonl");
    write_session(&path, &env.workspace, 10_000);
    let size = std::fs::metadata(&path).unwrap().len();
    let mut best = f64::MAX;
    for _ in 0..5 {
        let started = Instant::now();
        let loaded = agent::session::load(&path).unwrap();
        best = best.min(started.elapsed().as_secs_f64());
        assert_eq!(loaded.messages, 10_000);
    }
    let mut best_find = f64::MAX;
    for _ in 0..5 {
        let started = Instant::now();
        let info = agent::session::find(&dir, None, &env.workspace).unwrap();
        let loaded = agent::session::load(&info.path).unwrap();
        best_find = best_find.min(started.elapsed().as_secs_f64());
        assert_eq!(loaded.history.len(), 10_000);
    }
    println!(
        "resume of a 10,000-message session ({:.1} MB): load {:.1} ms, find newest + load {:.1} ms (target < 200 ms)",
        size as f64 / 1e6,
        best * 1e3,
        best_find * 1e3
    );
    // End to end: `agent --resume` in a new process, until the model's answer is printed.
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let mut env2 = env;
    env2.var("BASE_URL", &server.base_url());
    env2.var("MODEL", "mock-model");
    env2.config("[context]\ncontext_window = 10000000\nprune_at = 1.0\ncompact_at = 1.0\n");
    let started = Instant::now();
    let output = env2.run(&["--resume", "go on"]);
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    println!(
        "`agent --resume \"go on\"` end to end (process start, resume, one {:.1} MB request to the mock): {:.1} ms",
        server.chat_requests()[0].raw_body.len() as f64 / 1e6,
        elapsed * 1e3
    );
    assert!(best_find < 0.2);
}
