//! Throughput of the model stream path (BENCHMARKS.md, "Model endpoint: stream parsing"):
//! `SseParser` + `Accumulator` over a 200 KB `write_file` call streamed in 4-character
//! argument fragments and over 20,000 text deltas (the bytes fed 1,400 at a time, as network
//! reads), and the holdback gate over the same call written as text, 4 characters a piece.
//!
//! Run: `cargo bench --bench stream`.

use std::time::Instant;

use agent::model::accumulate::Accumulator;
use agent::model::holdback::Holdback;
use agent::model::sse::SseParser;
use serde_json::{Value, json};

/// Events as a server sends them: `data: <json>` blocks, then `data: [DONE]`.
fn render(events: &[Value]) -> Vec<u8> {
    let mut out = String::new();
    for event in events {
        out.push_str(&format!("data: {event}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    out.into_bytes()
}

fn main() {
    // A 200 KB write_file call streamed in 4-character fragments, then 20,000 text deltas.
    let content: String = "fn main() { println!(\"hello\"); }\n".repeat(6_000);
    let arguments = json!({"path": "src/main.rs", "content": content}).to_string();
    let mut events: Vec<Value> = arguments
        .chars()
        .collect::<Vec<_>>()
        .chunks(4)
        .enumerate()
        .map(|(i, piece)| {
            let mut fragment =
                json!({"index": 0, "function": {"arguments": piece.iter().collect::<String>()}});
            if i == 0 {
                fragment["id"] = json!("call_1");
                fragment["function"]["name"] = json!("write_file");
            }
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]})
        })
        .collect();
    let call_chunks = events.len();
    let calls_bytes = render(&events);
    events.clear();
    for i in 0..20_000 {
        events.push(json!({"choices": [{"index": 0, "delta": {"content": format!("word{i} ")}}]}));
    }
    events.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    let text_bytes = render(&events);
    for (label, bytes, chunks) in [
        ("tool call", &calls_bytes, call_chunks),
        ("text", &text_bytes, 20_001),
    ] {
        let started = Instant::now();
        let rounds = 5;
        for _ in 0..rounds {
            let mut parser = SseParser::new();
            let mut accumulator = Accumulator::new();
            for piece in bytes.chunks(1400) {
                for event in parser.push(piece) {
                    accumulator.apply(&event);
                }
            }
            assert!(accumulator.finish().is_some());
        }
        let per_round = started.elapsed() / rounds;
        let mb = bytes.len() as f64 / 1e6;
        println!(
            "{label}: {mb:.1} MB, {chunks} chunks in {:.1} ms = {:.0} MB/s, {:.2} µs per chunk",
            per_round.as_secs_f64() * 1e3,
            mb / per_round.as_secs_f64(),
            per_round.as_secs_f64() * 1e6 / chunks as f64
        );
    }
    // The holdback gate on a 200 KB text-written call arriving 4 characters at a time.
    let call = format!("{{\"name\": \"write_file\", \"arguments\": {arguments}}}");
    let pieces: Vec<String> = call
        .chars()
        .collect::<Vec<_>>()
        .chunks(4)
        .map(|c| c.iter().collect())
        .collect();
    let started = Instant::now();
    let mut gate = Holdback::new(true);
    for piece in &pieces {
        assert!(gate.push(piece).is_none());
    }
    println!(
        "holdback: {} KB call in {} pieces held in {:.2} ms",
        call.len() / 1024,
        pieces.len(),
        started.elapsed().as_secs_f64() * 1e3
    );
}
