//! Sandbox and capture benchmarks (BENCHMARKS.md). Ignored by default; run them optimized:
//! `cargo test --release --test all -- --ignored --nocapture --test-threads 1 sandbox_bench`
//! (or scripts/bench-sandbox.sh). Each prints one figure per line.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use agent::cancel::CancelToken;
use agent::sandbox::exec::{self, Job};
use agent::sandbox::{ExecSettings, NamespaceStatus, SandboxMode};

use super::sandbox::{Place, landlock, settings};
use crate::support::kernel::namespaces;
use crate::support::sse::{text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

const GIB: u64 = 1 << 30;
/// Prints exactly 1 GiB of readable text from one process (64-byte lines, 1 MiB writes), so
/// the producer is not a pipeline competing with the capture for the CPU.
const ONE_GB_OF_TEXT: &str = "python3 -c \"import sys; b = (b'a line of build output, padded to sixty-four bytes in total ...' + b'\\n') * 16384; w = sys.stdout.buffer.write; [w(b) for _ in range(1024)]\"";

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// CPU time (user + system) of this process (`RUSAGE_SELF`) or of its waited-for children.
fn cpu_time(who: i32) -> Duration {
    // SAFETY: a zeroed rusage is a valid value; getrusage fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut usage) };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// Median wall time of one `true` call, and the children's mean CPU time per call.
fn time_true(place: &Place, mode: SandboxMode, runs: usize) -> (Duration, Duration) {
    time_with(place, &settings(mode, false), runs)
}

/// [`time_true`] with given settings.
fn time_with(place: &Place, settings: &ExecSettings, runs: usize) -> (Duration, Duration) {
    let cpu_before = cpu_time(libc::RUSAGE_CHILDREN);
    let samples = (0..runs)
        .map(|_| {
            let started = Instant::now();
            let outcome = place.run(settings, "true");
            assert_eq!(outcome.ending, exec::Ending::Exited(0));
            started.elapsed()
        })
        .collect();
    let cpu = cpu_time(libc::RUSAGE_CHILDREN).saturating_sub(cpu_before);
    (median(samples), cpu / u32::try_from(runs).unwrap())
}

#[test]
#[ignore = "benchmark"]
fn sandbox_bench_startup_overhead() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    let runs = 300;
    // Warm up the page cache and the helper binary.
    time_true(&place, SandboxMode::WorkspaceWrite, 20);
    println!();
    let (off, off_cpu) = time_true(&place, SandboxMode::Off, runs);
    let (confined, confined_cpu) = time_true(&place, SandboxMode::WorkspaceWrite, runs);
    let (read_only, read_only_cpu) = time_true(&place, SandboxMode::ReadOnly, runs);
    println!("bash `true` x{runs}: off median {off:?}, children CPU {off_cpu:?} per call");
    println!(
        "bash `true` x{runs}: workspace-write median {confined:?}, children CPU {confined_cpu:?} per call"
    );
    println!(
        "bash `true` x{runs}: read-only median {read_only:?}, children CPU {read_only_cpu:?} per call"
    );
    println!(
        "sandbox start-up overhead per call: wall {:?}, CPU {:?}",
        confined.saturating_sub(off),
        confined_cpu.saturating_sub(off_cpu)
    );
    if !namespaces() {
        return;
    }
    // Issue 15: Landlock alone (the fallback), namespaces with nothing to mount, and
    // namespaces with what a session usually mounts (8 secret locations of a home, a
    // repository's hooks and config, .agents, three pins).
    let mut landlock_only = settings(SandboxMode::WorkspaceWrite, false);
    landlock_only.namespaces = NamespaceStatus::Unavailable {
        reason: "benchmark".into(),
    };
    let bare = settings(SandboxMode::WorkspaceWrite, false);
    let typical = typical_mounts(&place, bare.clone());
    let (lo, lo_cpu) = time_with(&place, &landlock_only, runs);
    let (ns, ns_cpu) = time_with(&place, &bare, runs);
    let (full, full_cpu) = time_with(&place, &typical, runs);
    for (name, wall, cpu) in [
        ("Landlock only", lo, lo_cpu),
        ("namespaces, no mounts", ns, ns_cpu),
        ("namespaces, typical mounts", full, full_cpu),
    ] {
        println!(
            "bash `true` x{runs}: {name} median {wall:?}, children CPU {cpu:?} per call; over off: wall {:?}, CPU {:?}; over Landlock only: wall {:?}",
            wall.saturating_sub(off),
            cpu.saturating_sub(off_cpu),
            wall.saturating_sub(lo)
        );
    }
}

/// `settings` hiding eight secret locations of a fake home and protecting a repository.
fn typical_mounts(place: &Place, mut settings: ExecSettings) -> ExecSettings {
    let home = place.outside.join("home");
    for dir in [".ssh", ".gnupg", ".aws", ".kube", ".config/gh"] {
        std::fs::create_dir_all(home.join(dir)).unwrap();
        settings.hidden.push(home.join(dir));
    }
    for file in [".netrc", ".git-credentials", ".npmrc"] {
        std::fs::write(home.join(file), "x").unwrap();
        settings.hidden.push(home.join(file));
    }
    let git = place.ws.join(".git");
    std::fs::create_dir_all(git.join("hooks")).unwrap();
    std::fs::create_dir_all(place.ws.join(".agents")).unwrap();
    std::fs::write(git.join("config"), "").unwrap();
    settings.read_only = vec![
        git.join("hooks"),
        git.join("config"),
        place.ws.join(".agents"),
    ];
    settings.pinned = vec![place.ws.clone(), git];
    settings
}

#[test]
#[ignore = "benchmark"]
fn sandbox_bench_capture_throughput() {
    let place = Place::new();
    println!();
    for mode in [SandboxMode::Off, SandboxMode::WorkspaceWrite] {
        if mode != SandboxMode::Off && !landlock() {
            continue;
        }
        let job = Job {
            command: ONE_GB_OF_TEXT,
            cwd: &place.ws,
            workspace: &place.ws,
            timeout: Duration::from_secs(300),
            budget: 29_000,
        };
        let started = Instant::now();
        let cpu_before = cpu_time(libc::RUSAGE_SELF);
        let outcome = exec::run(&job, &settings(mode, false), &CancelToken::new()).unwrap();
        let cpu = cpu_time(libc::RUSAGE_SELF).saturating_sub(cpu_before);
        let elapsed = started.elapsed();
        assert_eq!(outcome.output.bytes, GIB);
        assert_eq!(outcome.output.lines, GIB / 64);
        let rate = GIB as f64 / elapsed.as_secs_f64() / 1e6;
        let cpu_rate = GIB as f64 / cpu.as_secs_f64() / 1e6;
        println!(
            "capture of 1 GiB ({}): {elapsed:?} wall = {rate:.0} MB/s; capture CPU {cpu:?} = {cpu_rate:.0} MB/s per core",
            mode.name()
        );
    }
}

/// Peak RSS of the real `agent` binary while a bash call prints 1 GiB: a one-shot session
/// against the mock model, measured with wait4(2) (the figure is the maximum over the agent
/// and the children it waited for, so an upper bound for the agent itself).
#[test]
#[ignore = "benchmark"]
fn sandbox_bench_peak_rss_one_gib() {
    let args = serde_json::json!({ "command": ONE_GB_OF_TEXT, "timeout": 300 }).to_string();
    let server = MockServer::start(vec![
        Reply::Sse(tool_events("call_1", "bash", &args)),
        Reply::Sse(text_events(&["done"])),
    ]);
    let env = TestEnv::with_server(&server);
    let mut command = std::process::Command::new(PathBuf::from(env!("CARGO_BIN_EXE_agent")));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("AGENT_HOME", &env.agent_home)
        .env("BASE_URL", server.base_url())
        .env("MODEL", "mock-model")
        .args(["--yes", "print a lot"])
        .current_dir(&env.workspace)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let started = Instant::now();
    #[expect(
        clippy::zombie_processes,
        reason = "reaped below with wait4 for its rusage"
    )]
    let child = command.spawn().unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    // The agent's own high-water mark, sampled until it exits (VmHWM only grows).
    let sampler = std::thread::spawn(move || {
        let mut peak_kb = 0u64;
        while let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) else {
                break;
            };
            let kb = line.split_whitespace().nth(1).and_then(|v| v.parse().ok());
            peak_kb = peak_kb.max(kb.unwrap_or(0));
            std::thread::sleep(Duration::from_millis(5));
        }
        peak_kb
    });
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    assert_eq!(status, 0, "agent failed");
    let result = server.chat_requests()[1].messages();
    let tool = result.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("1073741824 bytes")
    );
    let agent_peak_kb = sampler.join().unwrap();
    println!(
        "agent one-shot with a bash call printing 1 GiB: {:?}; agent VmHWM {} MB; wait4 ru_maxrss (agent or any child) {} MB",
        started.elapsed(),
        agent_peak_kb / 1024,
        usage.ru_maxrss / 1024
    );
}

/// Session-start costs of issue 15: the namespace probe and the walk for repositories (over
/// this repository: its `target/` is skipped), median of 50 runs each.
#[test]
#[ignore = "benchmark"]
fn sandbox_bench_session_start() {
    use agent::sandbox::protect::{ScanInput, scan};
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let time = |f: &dyn Fn()| {
        median(
            (0..50)
                .map(|_| {
                    let started = Instant::now();
                    f();
                    started.elapsed()
                })
                .collect(),
        )
    };
    let probe = time(&|| {
        agent::sandbox::probe_namespaces();
    });
    let walk = time(&|| {
        scan(&ScanInput {
            workspace: &root,
            home: None,
            global_configs: Vec::new(),
            extra_read_only: &[],
            create_missing: false,
            create_agents: false,
        });
    });
    println!();
    println!(
        "session start: namespace probe median {probe:?}; repository walk of this checkout median {walk:?}"
    );
}
