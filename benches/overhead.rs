//! Agent overhead per one-shot task, against an instant loopback mock model.
//!
//! Run: `cargo bench --bench overhead`. Prints, for a one-shot task with three `bash` tool
//! calls: wall time (median, p90), the agent's own overhead (wall time minus the time the
//! three shell commands take on their own), peak RSS, and `agent --version` start-up time.

#![allow(clippy::expect_used, clippy::unwrap_used, dead_code)]

#[path = "../tests/support/mock.rs"]
mod mock;
#[path = "../tests/support/sse.rs"]
#[allow(dead_code)]
mod sse;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mock::{MockServer, Reply};

const RUNS: usize = 30;

fn main() {
    let bin = env!("CARGO_BIN_EXE_agent");
    let home = tempfile::tempdir().expect("temp home");
    let work = tempfile::tempdir().expect("temp workspace");
    std::fs::create_dir_all(work.path().join(".git")).expect("git dir");
    let server = MockServer::start(Vec::new());

    let mut walls = Vec::new();
    for _ in 0..RUNS {
        for i in 0..3 {
            server.push(Reply::Sse(sse::tool_events(
                &format!("c{i}"),
                "bash",
                r#"{"command":"true"}"#,
            )));
        }
        server.push(Reply::Sse(sse::text_events(&["done"])));
        let started = Instant::now();
        let status = Command::new(bin)
            .args(["--yes", "run true three times"])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("AGENT_HOME", home.path())
            .env("BASE_URL", server.base_url())
            .env("MODEL", "mock")
            .current_dir(work.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run agent");
        walls.push(started.elapsed());
        assert!(status.success(), "agent failed: {status}");
    }
    let tools = shell_baseline(3);
    let peak_rss_kib = peak_child_rss_kib();
    let version = median_of(100, || {
        Command::new(bin)
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .expect("agent --version");
    });
    walls.sort();
    let median = walls[RUNS / 2];
    let p90 = walls[RUNS * 9 / 10];
    println!("one-shot task, 3 bash tool calls, instant mock ({RUNS} runs)");
    println!(
        "  wall time            median {:>7.2} ms   p90 {:>7.2} ms",
        ms(median),
        ms(p90)
    );
    println!(
        "  3 x `bash -c true`   median {:>7.2} ms (run directly, the floor)",
        ms(tools)
    );
    println!(
        "  agent overhead       median {:>7.2} ms",
        ms(median.saturating_sub(tools))
    );
    println!(
        "  peak RSS             {:>7.1} MiB",
        peak_rss_kib as f64 / 1024.0
    );
    println!(
        "agent --version        median {:>7.2} ms (100 runs)",
        ms(version)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median_of(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

/// Median time of `count` sequential `bash -c true` runs.
fn shell_baseline(count: usize) -> Duration {
    median_of(30, || {
        for _ in 0..count {
            Command::new("bash")
                .args(["-c", "true"])
                .status()
                .expect("bash");
        }
    })
}

fn peak_child_rss_kib() -> i64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_CHILDREN with a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &raw mut usage) };
    usage.ru_maxrss
}
