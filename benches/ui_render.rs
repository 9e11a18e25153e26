//! Rendering speed of streamed assistant text (issue 8): can the terminal sink keep up with
//! 2,000 tokens/s, and how long does a chunk take from its arrival (`emit`) to its bytes being
//! written to the terminal's file descriptor?
//!
//! Run: `cargo bench --bench ui_render` (release build). Prints figures; no assertions.
//! The text is a realistic markdown answer (headings, lists, inline code, links, fenced Rust
//! and Python code with highlighting, a table) cut into tokens of 1 to 7 characters (about 4
//! on average, like real BPE tokens), rendered in colour at 100 columns into `/dev/null`.
#![allow(clippy::expect_used, reason = "a benchmark may stop at a broken setup")]

use std::fs::File;
use std::time::{Duration, Instant};

use agent::events::{AgentEvent, EventSink};
use agent::ui::style::{ColorDepth, Painter};
use agent::ui::terminal::{TerminalSink, Width};

const ANSWER: &str = r#"## What failed

The test `parser::tests::handles_empty_input` fails because **`parse`** returns `None` for an empty
string, while the caller expects `Some(vec![])`. See [the docs](https://doc.rust-lang.org/std/option/)
for `Option::unwrap_or_default`, which is _exactly_ what we need here.

1. Read `src/parser.rs` to find where the empty case is handled.
2. Change the early return:
   - keep the signature unchanged
   - return an empty vector instead of `None`
3. Run `cargo test` again.

```rust
pub fn parse(input: &str) -> Option<Vec<Token>> {
    if input.trim().is_empty() {
        return Some(Vec::new());
    }
    let mut tokens = Vec::with_capacity(input.len() / 4);
    for (i, word) in input.split_whitespace().enumerate() {
        tokens.push(Token::new(i, word)?);
    }
    Some(tokens)
}
```

> Note: the same pattern appears in `lexer.rs`, but there the `None` is intentional.

| file | change | tests |
|:-----|:------:|------:|
| `src/parser.rs` | 1 line | 14 pass |
| `src/lexer.rs` | none | 9 pass |

```python
def check(results):
    failed = [r for r in results if not r.ok]
    return len(failed) == 0, failed
```

All tests pass now; the fix is a one-line change with no effect on the public API.

"#;

/// Tokens of 1..=7 characters, deterministic.
fn tokenize(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut seed: u32 = 12345;
    let mut at = 0;
    while at < chars.len() {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let len = 1 + (seed >> 16) as usize % 7;
        let end = (at + len).min(chars.len());
        tokens.push(chars[at..end].iter().collect());
        at = end;
    }
    tokens
}

fn new_sink() -> TerminalSink {
    let devnull = File::create("/dev/null").expect("open /dev/null");
    TerminalSink::with_writers(
        (Box::new(devnull), Painter::color(ColorDepth::TrueColor)),
        None,
        Width::Fixed(100),
    )
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn main() {
    let corpus: String = ANSWER.repeat(40);
    let tokens = tokenize(&corpus);
    // Load the grammars first: in a session they load in the background at start-up.
    let started = Instant::now();
    agent::ui::highlight::CodeHighlighter::new("rust", Painter::color(ColorDepth::TrueColor))
        .line(&mut String::new(), "fn main() {}");
    println!(
        "grammar load (once per process, in the background): {:.1} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );

    // 1. Throughput: as fast as the renderer goes.
    let sink = new_sink();
    let started = Instant::now();
    for token in &tokens {
        sink.emit(AgentEvent::TextDelta {
            text: token.clone(),
        });
    }
    sink.emit(AgentEvent::MessageCompleted {
        text: String::new(),
        has_tool_calls: false,
    });
    let elapsed = started.elapsed();
    let rate = tokens.len() as f64 / elapsed.as_secs_f64();
    println!(
        "throughput: {} tokens ({} KiB) in {:.1} ms = {:.0} tokens/s ({:.0}x the 2,000 tokens/s target)",
        tokens.len(),
        corpus.len() / 1024,
        elapsed.as_secs_f64() * 1000.0,
        rate,
        rate / 2000.0
    );

    // 2. Latency at 2,000 tokens/s: one token every 0.5 ms, each timed from emit to written.
    let sink = new_sink();
    let interval = Duration::from_micros(500);
    let count = tokens.len().min(10_000);
    let mut latencies = Vec::with_capacity(count);
    let start = Instant::now();
    let mut behind = Duration::ZERO;
    for (i, token) in tokens.iter().take(count).enumerate() {
        let due = start + interval * i as u32;
        let now = Instant::now();
        if now < due {
            std::thread::sleep(due - now);
        } else {
            behind = behind.max(now - due);
        }
        let arrived = Instant::now();
        sink.emit(AgentEvent::TextDelta {
            text: token.clone(),
        });
        latencies.push(arrived.elapsed());
    }
    let total = start.elapsed();
    latencies.sort();
    println!(
        "latency at 2,000 tokens/s over {count} tokens: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        percentile(&latencies, 0.5).as_secs_f64() * 1e6,
        percentile(&latencies, 0.99).as_secs_f64() * 1e6,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e6
    );
    println!(
        "kept up: stream of {:.2} s rendered in {:.2} s; furthest behind schedule {:.2} ms",
        (interval * count as u32).as_secs_f64(),
        total.as_secs_f64(),
        behind.as_secs_f64() * 1000.0
    );
}
