//! Permission engine benchmarks (issue 3): prints p50/p99/max for
//! 1. one decision on a ~1 KB compound command (target: p99 < 200 µs), and
//! 2. loading a 100-rule config file and building the engine (target: < 1 ms).
//!
//! Run: `cargo bench --bench permissions` from the repository root (the
//! repository is used as the workspace, so path checks touch a real directory tree).
//! Each sample is timed twice: wall clock, and this thread's CPU time (which leaves out
//! time the scheduler gave to other processes on a shared machine).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent::config::FileConfig;
use agent::permissions::rules::from_specs;
use agent::permissions::{PathContext, PermissionEngine, RuleSource};

const COMMAND: &str = concat!(
    "cd src && git status --short && git diff --stat HEAD~3 -- permissions | tail -5; ",
    "git log --oneline -n 20 | grep -v Merge | head -10 && ",
    "grep -rn \"fn check_bash\" permissions tools | wc -l; ",
    "find . -name '*.rs' -not -path './target/*' -exec wc -l {} + | sort -n | tail -3; ",
    "for f in permissions/*.rs; do head -5 \"$f\"; done; ",
    "sed -n '1,40p' permissions/mod.rs | grep -n pub && cat ../Cargo.toml | head -30; ",
    "rg -n \"Decision::(Allow|Deny)\" permissions | cut -d: -f1 | sort | uniq -c | sort -rn; ",
    "ls -la permissions/shell && ls permissions/shell | xargs -n1 basename | wc -l; ",
    "echo \"$(git rev-parse --short HEAD)\" && git branch --show-current; ",
    "diff <(git show HEAD:Cargo.toml) ../Cargo.toml || true; ",
    "cat ../README.md 2>/dev/null | wc -c; test -f ../Cargo.lock && echo locked; ",
    "git show --stat HEAD | head -20; jq -r '.name' package.json 2>/dev/null || echo none; ",
    "du -sh . && wc -l permissions/shell/*.rs | tail -1; ",
    "git log --format='%h %s' -n 5 -- permissions/rate.rs | head -3 && pwd; ",
    "stat -c %s ../Cargo.lock && file ../Cargo.toml; date"
);

/// This thread's CPU time.
fn cpu_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes a timespec for a valid clock id.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `f` `n` times; returns (wall, cpu) samples.
fn measure(n: usize, mut f: impl FnMut()) -> (Vec<Duration>, Vec<Duration>) {
    let mut wall = Vec::with_capacity(n);
    let mut cpu = Vec::with_capacity(n);
    for _ in 0..n {
        let (start, start_cpu) = (Instant::now(), cpu_now());
        f();
        cpu.push(cpu_now() - start_cpu);
        wall.push(start.elapsed());
    }
    (wall, cpu)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{name}: n={} p50={:?} p99={:?} max={:?}",
        samples.len(),
        percentile(&samples, 0.50),
        percentile(&samples, 0.99),
        samples[samples.len() - 1]
    );
}

fn paths(workspace: &Path) -> PathContext {
    PathContext {
        workspace: workspace.to_path_buf(),
        cwd: workspace.to_path_buf(),
        home: std::env::var_os("HOME").map(PathBuf::from),
        agent_home: std::env::temp_dir().join("agent-bench-home"),
    }
}

fn hundred_rules() -> String {
    let mut text = String::from("# generated: 100 rules\n");
    for i in 0..100 {
        let (tool, pattern, action) = match i % 4 {
            0 => ("bash", format!("tool{i} --flag *"), "allow"),
            1 => ("bash", format!("danger{i} *"), "deny"),
            2 => ("write_file", format!("generated/{i}/**"), "ask"),
            _ => ("*", format!("~/.secret{i}/**"), "deny"),
        };
        text.push_str(&format!(
            "\n[[permissions.rules]]\ntool = \"{tool}\"\npattern = \"{pattern}\"\naction = \"{action}\"\n"
        ));
    }
    text
}

fn main() {
    let workspace = std::env::current_dir().unwrap().canonicalize().unwrap();
    println!("command: {} bytes", COMMAND.len());
    let typical = include_str!("../tests/data/typical-allow.toml");
    let config = FileConfig::parse(typical, Path::new("typical-allow.toml")).unwrap();
    let engine = PermissionEngine::new(
        from_specs(&config.permissions.rules, RuleSource::User),
        paths(&workspace),
    );
    let evaluation = engine.check_bash(COMMAND);
    println!(
        "verdict: {} ({} parts)",
        evaluation.decision,
        evaluation.parts.len()
    );
    for _ in 0..200 {
        engine.check_bash(COMMAND);
    }
    let (wall, cpu) = measure(5000, || {
        std::hint::black_box(engine.check_bash(std::hint::black_box(COMMAND)));
    });
    report("decision on the 1 KB command, wall", wall);
    report("decision on the 1 KB command, cpu ", cpu);
    let short = "git log --oneline | head -20 && grep -rn TODO src | wc -l";
    let (wall, cpu) = measure(5000, || {
        std::hint::black_box(engine.check_bash(std::hint::black_box(short)));
    });
    report("decision on a 60-byte command, wall ", wall);
    report("decision on a 60-byte command, cpu  ", cpu);
    let (wall, cpu) = measure(5000, || {
        std::hint::black_box(agent::permissions::shell::analyze(std::hint::black_box(
            COMMAND,
        )));
    });
    report("  of which shell analysis, wall   ", wall);
    report("  of which shell analysis, cpu    ", cpu);
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .unwrap();
    let (wall, cpu) = measure(5000, || {
        std::hint::black_box(parser.parse(std::hint::black_box(COMMAND), None));
    });
    report("  of which tree-sitter parse, wall", wall);
    report("  of which tree-sitter parse, cpu ", cpu);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    std::fs::write(&file, hundred_rules()).unwrap();
    let (wall, cpu) = measure(2000, || {
        let config = FileConfig::load(&file).unwrap();
        let rules = from_specs(&config.permissions.rules, RuleSource::User);
        assert_eq!(rules.len(), 100);
        std::hint::black_box(PermissionEngine::new(rules, paths(&workspace)));
    });
    report("load a 100-rule config + build engine, wall", wall);
    report("load a 100-rule config + build engine, cpu ", cpu);
}
