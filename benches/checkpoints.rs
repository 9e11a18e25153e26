//! Checkpoint speed on a 10,000-file workspace (issue 16).
//!
//! Run: `cargo bench --bench checkpoints`. Prints medians of: the first snapshot (every
//! file hashed into a new shadow repository), a snapshot of the unchanged tree (the warm
//! index only stats files), a snapshot after one file changed, and whole one-shot turns
//! against an instant loopback mock in that workspace: a turn that changes nothing with
//! checkpoints on and off, and a turn whose one `bash` call changes a file (two warm
//! snapshots: before the call and after the turn).

#![allow(clippy::expect_used, clippy::unwrap_used, dead_code)]

#[path = "../tests/support/mock.rs"]
mod mock;
#[path = "../tests/support/sse.rs"]
#[allow(dead_code)]
mod sse;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agent::checkpoints::{Checkpoints, Setup};
use agent::config::CheckpointSettings;
use mock::{MockServer, Reply};

const FILES: usize = 10_000;

fn main() {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average: {} (figures grow with it on a shared machine)",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let work = tempfile::tempdir().expect("temp workspace");
    let ws = work.path().canonicalize().expect("canonical");
    let bytes = make_tree(&ws);
    println!(
        "workspace: {FILES} files in 1,000 directories, {:.1} MB, plus a .gitignore",
        bytes as f64 / 1e6
    );

    let mut firsts = Vec::new();
    for _ in 0..3 {
        let home = tempfile::tempdir().expect("temp home");
        let checkpoints = open(home.path(), &ws);
        let started = Instant::now();
        let snapshot = checkpoints.snapshot().expect("first snapshot");
        firsts.push(started.elapsed());
        assert_eq!(snapshot.files, FILES + 1);
    }
    let home = tempfile::tempdir().expect("temp home");
    let checkpoints = open(home.path(), &ws);
    checkpoints.snapshot().expect("first snapshot");
    let warm = median_of(30, || {
        let snapshot = checkpoints.snapshot().expect("snapshot");
        assert!(!snapshot.created, "unchanged tree made a commit");
    });
    let mut n = 0;
    let changed = median_of(15, || {
        n += 1;
        std::fs::write(ws.join("d07/s0/f7.txt"), format!("edit {n}\n")).expect("edit");
        let snapshot = checkpoints.snapshot().expect("snapshot");
        assert!(snapshot.created);
    });
    let walk = median_of(30, || {
        let walk = agent::checkpoints::walk::walk(&ws, 10_000_000, &|| false).expect("walk");
        assert_eq!(walk.files(), FILES + 1);
    });
    println!("snapshot (library call, median):");
    println!(
        "  first, new shadow repository  {:>8.1} ms",
        ms(median(&mut firsts))
    );
    println!("  warm, tree unchanged          {:>8.1} ms", ms(warm));
    println!("    of which the walk alone     {:>8.1} ms", ms(walk));
    println!("  warm, one file changed        {:>8.1} ms", ms(changed));

    let server = MockServer::start(Vec::new());
    let turn = |config: &str, replies: Vec<Reply>| {
        std::fs::write(home.path().join("config.toml"), config).expect("config");
        median_of(15, || {
            for reply in &replies {
                server.push(reply.clone());
            }
            run_turn(&server, home.path(), &ws);
        })
    };
    let answer = || Reply::Sse(sse::text_events(&["done"]));
    let read_only = || Reply::Sse(sse::tool_events("c1", "bash", r#"{"command":"ls d00"}"#));
    let change = || {
        Reply::Sse(sse::tool_events(
            "c1",
            "bash",
            r#"{"command":"date > d00/s0/stamp.txt"}"#,
        ))
    };
    let off = "[checkpoints]\nenabled = false\n";
    println!("one-shot turn against an instant mock (median of 15):");
    let plain_on = turn("", vec![answer()]);
    let plain_off = turn(off, vec![answer()]);
    println!(
        "  answer only        checkpoints on {:>7.1} ms   off {:>7.1} ms",
        ms(plain_on),
        ms(plain_off)
    );
    let ls_on = turn("", vec![read_only(), answer()]);
    let ls_off = turn(off, vec![read_only(), answer()]);
    println!(
        "  `ls` (read-only)   checkpoints on {:>7.1} ms   off {:>7.1} ms",
        ms(ls_on),
        ms(ls_off)
    );
    let change_on = turn("", vec![change(), answer()]);
    let change_off = turn(off, vec![change(), answer()]);
    println!(
        "  `date > file`      checkpoints on {:>7.1} ms   off {:>7.1} ms  (two warm snapshots)",
        ms(change_on),
        ms(change_off)
    );
}

fn open(home: &Path, ws: &Path) -> Checkpoints {
    let settings = CheckpointSettings {
        search_path: std::env::var("PATH").ok(),
        ..CheckpointSettings::default()
    };
    match Checkpoints::setup(settings, home, ws) {
        Setup::On(checkpoints) => *checkpoints,
        _ => panic!("git is needed for this benchmark"),
    }
}

/// 10,000 text files of 10 to 209 lines in 100 × 10 directories; returns their bytes.
fn make_tree(root: &Path) -> u64 {
    let mut total = 0;
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..FILES {
        let dir = root.join(format!("d{:02}/s{}", i % 100, (i / 100) % 10));
        std::fs::create_dir_all(&dir).expect("dir");
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let lines = 10 + (state % 200) as usize;
        let text: String = (0..lines).map(|l| format!("file {i} line {l}\n")).collect();
        total += text.len() as u64;
        std::fs::write(dir.join(format!("f{i}.txt")), &text).expect("file");
    }
    std::fs::write(root.join(".gitignore"), "*.log\ntarget/\n").expect("gitignore");
    std::fs::create_dir_all(root.join(".git")).expect("git dir");
    total
}

fn run_turn(server: &MockServer, home: &Path, ws: &Path) {
    let status = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(["--yes", "do it"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("AGENT_HOME", home)
        .env("BASE_URL", server.base_url())
        .env("MODEL", "mock")
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run agent");
    assert!(status.success(), "agent failed: {status}");
}

fn median_of(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    median(&mut times)
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
