//! The sandbox and process execution at the library level (`agent::sandbox::exec::run` with the
//! built `agent` binary as the helper): confinement routes, read-only mode, network, process
//! trees, capture. Directories live outside `/tmp` (see `support::outside`), because `/tmp` is
//! writable inside the sandbox and would hide an escape.
//!
//! Tests that need Landlock or namespaces report `SKIPPED: <reason>` on stderr and return
//! early where the kernel lacks them (see `support::kernel`).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent::cancel::CancelToken;
use agent::sandbox::exec::{self, Background, Confinement, Ending, ExecOutcome, Job};
use agent::sandbox::{ExecSettings, SandboxMode};
use tempfile::TempDir;

/// A workspace and a directory beside it, outside every writable root.
pub(super) struct Place {
    _root: TempDir,
    pub ws: PathBuf,
    pub outside: PathBuf,
}

impl Place {
    pub(super) fn new() -> Self {
        let root = crate::support::outside::outside_dir();
        let base = root.path().canonicalize().unwrap();
        let ws = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim"), "original\n").unwrap();
        Self {
            _root: root,
            ws,
            outside,
        }
    }

    pub(super) fn run(&self, settings: &ExecSettings, command: &str) -> ExecOutcome {
        self.run_with(
            settings,
            command,
            Duration::from_secs(30),
            &CancelToken::new(),
        )
    }

    pub(super) fn run_with(
        &self,
        settings: &ExecSettings,
        command: &str,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> ExecOutcome {
        let job = Job {
            command,
            cwd: &self.ws,
            workspace: &self.ws,
            timeout,
            budget: 29_000,
        };
        let outcome = exec::run(&job, settings, cancel).unwrap();
        assert_eq!(
            outcome.sandbox_error, None,
            "the helper failed: {outcome:?}"
        );
        outcome
    }

    /// Every file under the outside directory with its content.
    pub(super) fn outside_files(&self) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = std::fs::read_dir(&self.outside)
            .unwrap()
            .flatten()
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let content = std::fs::read_to_string(e.path()).unwrap_or_default();
                (name, content)
            })
            .collect();
        files.sort();
        files
    }
}

pub(super) fn settings(mode: SandboxMode, network: bool) -> ExecSettings {
    ExecSettings {
        mode,
        network,
        helper: PathBuf::from(env!("CARGO_BIN_EXE_agent")),
        ..ExecSettings::default()
    }
}

pub(crate) use crate::support::kernel::landlock;

fn exit_code(outcome: &ExecOutcome) -> i32 {
    match outcome.ending {
        Ending::Exited(code) => code,
        ref other => panic!("not exited: {other:?}"),
    }
}

#[test]
fn writes_outside_the_workspace_fail_by_every_route() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    let out = place.outside.display().to_string();
    std::os::unix::fs::symlink(&place.outside, place.ws.join("dirlink")).unwrap();
    std::os::unix::fs::symlink(place.outside.join("victim"), place.ws.join("filelink")).unwrap();
    std::os::unix::fs::symlink(place.outside.join("new"), place.ws.join("dangling")).unwrap();
    std::fs::write(place.ws.join("moveme"), "m").unwrap();
    let settings = settings(SandboxMode::WorkspaceWrite, false);
    let routes = [
        ("absolute path", format!("echo x > {out}/abs")),
        ("../", "echo x > ../outside/dotdot".to_string()),
        ("overwrite", format!("echo pwned > {out}/victim")),
        ("append", format!("echo pwned >> {out}/victim")),
        ("symlinked dir", "echo x > dirlink/via-dir".to_string()),
        ("symlinked file", "echo pwned > filelink".to_string()),
        ("dangling symlink", "echo x > dangling".to_string()),
        (
            "hard link",
            format!("ln {out}/victim hard && echo pwned > hard"),
        ),
        ("mv out", format!("mv moveme {out}/moved")),
        ("cp", format!("cp moveme {out}/copied")),
        ("proc root", format!("echo x > /proc/self/root{out}/proc")),
        (
            "proc cwd",
            "echo x > /proc/self/cwd/../outside/proc-cwd".to_string(),
        ),
        ("mkdir", format!("mkdir {out}/dir")),
        ("rm", format!("rm -f {out}/victim")),
        ("truncate", format!("truncate -s 0 {out}/victim")),
        (
            "rename over",
            format!("echo y > {out}/../ws/t && mv t {out}/victim"),
        ),
        ("symlink creation", format!("ln -s /etc {out}/etc-link")),
        (
            "python",
            format!("python3 -c \"open('{out}/py', 'w').write('x')\""),
        ),
        ("/etc", "echo x > /etc/agent-sandbox-test".to_string()),
    ];
    for (route, command) in &routes {
        let outcome = place.run(&settings, command);
        assert_ne!(
            exit_code(&outcome),
            0,
            "{route}: `{command}` succeeded: {outcome:?}"
        );
        assert!(
            matches!(outcome.confinement, Confinement::Confined(_)),
            "{route}"
        );
    }
    assert_eq!(
        place.outside_files(),
        vec![("victim".to_string(), "original\n".to_string())]
    );
    assert!(!Path::new("/etc/agent-sandbox-test").exists());
    assert!(
        place.ws.join("moveme").exists(),
        "mv must not have removed the source"
    );
    // The agent (this process) is not confined by any of it.
    std::fs::write(place.outside.join("agent-can-write"), "yes").unwrap();
}

#[test]
fn writes_inside_the_workspace_and_tmp_succeed() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let tmp = tmp.path().display();
    let command = format!(
        "set -e; echo a > in.txt; mkdir -p d/e; mv in.txt d/e/; ln -s d sl; echo b > sl/x; \
         ln d/e/in.txt hard; rm hard; echo c > {tmp}/t; cat {tmp}/t; rm {tmp}/t; \
         echo quiet > /dev/null; echo err > /dev/stderr; cat d/e/in.txt sl/x"
    );
    let outcome = place.run(&settings(SandboxMode::WorkspaceWrite, false), &command);
    assert_eq!(outcome.output.text, "c\nerr\na\nb\n", "{outcome:?}");
    assert_eq!(exit_code(&outcome), 0);
}

#[test]
fn writable_roots_are_writable() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    let mut settings = settings(SandboxMode::WorkspaceWrite, false);
    settings.writable_roots = vec![place.outside.clone()];
    let outcome = place.run(&settings, "echo extra > ../outside/extra");
    assert_eq!(exit_code(&outcome), 0, "{outcome:?}");
    assert_eq!(
        std::fs::read_to_string(place.outside.join("extra")).unwrap(),
        "extra\n"
    );
}

#[test]
fn read_only_blocks_workspace_writes() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    std::fs::write(place.ws.join("README"), "read me\n").unwrap();
    let settings = settings(SandboxMode::ReadOnly, false);
    for command in [
        "echo x > new.txt",
        "echo x >> README",
        "mkdir d",
        "rm README",
        "echo x > /tmp/agent-ro",
    ] {
        let outcome = place.run(&settings, command);
        assert_ne!(exit_code(&outcome), 0, "`{command}` succeeded");
    }
    let outcome = place.run(&settings, "cat README; ls; echo ok > /dev/null");
    assert_eq!(outcome.output.text, "read me\nREADME\n");
    assert_eq!(exit_code(&outcome), 0);
    assert_eq!(
        std::fs::read_to_string(place.ws.join("README")).unwrap(),
        "read me\n"
    );
}

/// Accepts connections on 127.0.0.1 until the test ends; returns the port.
fn listener() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || for _ in listener.incoming() {});
    port
}

#[test]
fn tcp_connect_is_refused_without_network_and_allowed_with_it() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    let port = listener();
    let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let off = place.run(&settings(SandboxMode::WorkspaceWrite, false), &command);
    assert_ne!(exit_code(&off), 0, "{off:?}");
    assert!(!off.output.text.contains("connected"), "{off:?}");
    let on = place.run(&settings(SandboxMode::WorkspaceWrite, true), &command);
    assert_eq!(on.output.text, "connected\n", "{on:?}");
    let bind = "python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); print('bound')\"";
    assert_ne!(
        exit_code(&place.run(&settings(SandboxMode::WorkspaceWrite, false), bind)),
        0
    );
    let bound = place.run(&settings(SandboxMode::WorkspaceWrite, true), bind);
    assert_eq!(bound.output.text, "bound\n", "{bound:?}");
}

#[test]
fn other_sockets_are_refused_without_network() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    let settings = settings(SandboxMode::WorkspaceWrite, false);
    for family in [
        "AF_INET, socket.SOCK_DGRAM",
        "AF_UNIX",
        "AF_INET6, socket.SOCK_RAW",
    ] {
        let command = format!("python3 -c \"import socket; socket.socket(socket.{family})\"");
        let outcome = place.run(&settings, &command);
        assert_ne!(exit_code(&outcome), 0, "{family}: {outcome:?}");
    }
    // Pipes and socket pairs keep working.
    let pair = "python3 -c \"import socket; a, b = socket.socketpair(); a.send(b'hi'); print(b.recv(2).decode())\"";
    assert_eq!(place.run(&settings, pair).output.text, "hi\n");
}

#[test]
fn commands_cannot_signal_processes_outside_the_sandbox() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    let me = std::process::id();
    let outcome = place.run(
        &settings(SandboxMode::WorkspaceWrite, false),
        &format!("kill -0 {me}"),
    );
    assert_ne!(exit_code(&outcome), 0, "{outcome:?}");
    // ...but can signal their own children.
    let own = place.run(
        &settings(SandboxMode::WorkspaceWrite, false),
        "sleep 5 & kill $! && wait $!; echo $?",
    );
    assert_eq!(own.output.text, "143\n");
}

/// Processes whose environment holds `marker` (no pkill: /proc is read directly).
pub(super) fn survivors(marker: &str) -> Vec<u32> {
    let needle = marker.as_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.windows(needle.len()).any(|w| w == needle))
        })
        .collect()
}

/// `AGENT_TEST_MARK=<unique>`: exported by a command so [`survivors`] finds its processes.
pub(crate) fn marker(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("AGENT_TEST_MARK={name}-{}-{nanos}", std::process::id())
}

#[test]
fn survivor_scan_finds_marked_processes() {
    let mark = marker("scan");
    let (key, value) = mark.split_once('=').unwrap();
    let mut child = std::process::Command::new("sleep")
        .arg("300")
        .env(key, value)
        .spawn()
        .unwrap();
    assert_eq!(survivors(&mark), vec![child.id()]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(survivors(&mark), Vec::<u32>::new());
}

#[test]
fn timeout_kills_the_whole_process_tree() {
    let place = Place::new();
    for mode in [SandboxMode::Off, SandboxMode::WorkspaceWrite] {
        if mode != SandboxMode::Off && !landlock() {
            continue;
        }
        let mark = marker("timeout");
        let command = format!("export {mark}; sh -c 'sleep 300 & sleep 300'");
        let started = Instant::now();
        let outcome = place.run_with(
            &settings(mode, false),
            &command,
            Duration::from_secs(2),
            &CancelToken::new(),
        );
        assert_eq!(outcome.ending, Ending::TimedOut(Duration::from_secs(2)));
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(survivors(&mark), Vec::<u32>::new(), "{mode:?}");
    }
}

#[test]
fn a_process_ignoring_sigterm_is_killed_after_the_grace_period() {
    let place = Place::new();
    let mark = marker("trap");
    let mut settings = settings(SandboxMode::Off, false);
    settings.kill_grace = Duration::from_millis(300);
    let command = format!("export {mark}; trap '' TERM; sh -c \"trap '' TERM; sleep 300\"");
    let outcome = place.run_with(
        &settings,
        &command,
        Duration::from_secs(1),
        &CancelToken::new(),
    );
    assert_eq!(outcome.ending, Ending::TimedOut(Duration::from_secs(1)));
    assert_eq!(survivors(&mark), Vec::<u32>::new());
}

#[test]
fn background_process_holding_the_pipe_does_not_hang_and_is_stopped() {
    let place = Place::new();
    for mode in [SandboxMode::Off, SandboxMode::WorkspaceWrite] {
        if mode != SandboxMode::Off && !landlock() {
            continue;
        }
        let mark = marker("background");
        let command = format!("export {mark}; sleep 300 & echo started");
        let started = Instant::now();
        let outcome = place.run(&settings(mode, false), &command);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(outcome.output.text, "started\n");
        assert_eq!(outcome.ending, Ending::Exited(0));
        assert_eq!(outcome.background, Background::Stopped);
        assert_eq!(survivors(&mark), Vec::<u32>::new(), "{mode:?}");
    }
}

#[test]
fn a_server_started_and_used_within_one_command_works() {
    let place = Place::new();
    let command = "python3 -c 'import time; time.sleep(0.2); print(\"server up\", flush=True); time.sleep(300)' & sleep 1; echo client done";
    let outcome = place.run(&settings(SandboxMode::Off, false), command);
    assert_eq!(outcome.output.text, "server up\nclient done\n");
    assert_eq!(outcome.background, Background::Stopped);
}

#[test]
fn interrupt_kills_the_group() {
    let place = Place::new();
    let mark = marker("interrupt");
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    let ready = place.ws.join("ready");
    let watcher = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !ready.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        trigger.cancel();
    });
    let command = format!("export {mark}; sleep 300 & touch ready; sleep 300");
    let outcome = place.run_with(
        &settings(SandboxMode::Off, false),
        &command,
        Duration::from_secs(60),
        &cancel,
    );
    watcher.join().unwrap();
    assert_eq!(outcome.ending, Ending::Interrupted);
    assert_eq!(survivors(&mark), Vec::<u32>::new());
}

#[test]
fn stdin_is_empty_and_there_is_no_terminal() {
    let place = Place::new();
    let outcome = place.run(
        &settings(SandboxMode::Off, false),
        "cat; read line || echo eof; (exec 3</dev/tty) 2>/dev/null || echo no-tty; echo $PAGER $GIT_EDITOR $CI $AGENT_SANDBOX",
    );
    assert_eq!(outcome.output.text, "eof\nno-tty\ncat true 1 off\n");
}

#[test]
fn stdout_and_stderr_interleave_in_order() {
    let place = Place::new();
    let outcome = place.run(
        &settings(SandboxMode::Off, false),
        "echo 1; echo 2 >&2; echo 3; echo 4 >&2; exit 3",
    );
    assert_eq!(outcome.output.text, "1\n2\n3\n4\n");
    assert_eq!(outcome.ending, Ending::Exited(3));
}

#[test]
fn huge_output_is_capped_with_totals() {
    let place = Place::new();
    let outcome = place.run(&settings(SandboxMode::Off, false), "seq 1 3000000");
    assert_eq!(outcome.ending, Ending::Exited(0));
    assert!(outcome.output.truncated);
    assert_eq!(outcome.output.lines, 3_000_000);
    assert_eq!(outcome.output.bytes, 22_888_896);
    let text = &outcome.output.text;
    assert!(text.starts_with("1\n2\n3\n"), "{}", &text[..100]);
    assert!(text.ends_with("\n2999999\n3000000\n"));
    assert!(text.contains("[... output truncated: 22888896 bytes, 3000000 lines in total;"));
    assert!(text.chars().count() <= 29_000 + 300);
}

#[test]
fn ansi_is_stripped_and_invalid_utf8_replaced() {
    let place = Place::new();
    let outcome = place.run(
        &settings(SandboxMode::Off, false),
        r"printf '\033[31mred\033[0m \xff ok\n'",
    );
    assert_eq!(outcome.output.text, "red \u{fffd} ok\n");
}

#[test]
fn helper_refuses_malformed_arguments() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(["__sandbox", "--mode", "off", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(125));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "agent: sandbox error: sandbox mode `off` is not one of workspace-write, read-only\n"
    );
}

/// Calls a raw system call from Python and prints `ok` or the errno name.
#[cfg(target_arch = "x86_64")]
fn syscall_command(number: u32, args: &str) -> String {
    format!(
        "python3 -c \"import ctypes, errno; libc = ctypes.CDLL(None, use_errno=True); r = libc.syscall({number}, {args}); print('ok' if r >= 0 else errno.errorcode[ctypes.get_errno()])\""
    )
}

#[test]
#[cfg(target_arch = "x86_64")]
fn seccomp_refuses_what_landlock_cannot_express() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0), io_uring_setup(0, NULL),
    // userfaultfd(0): allowed unconfined, refused in the sandbox.
    let calls = [(250, "0, -3, 0"), (425, "1, 0"), (323, "0")];
    for (number, args) in calls {
        let command = syscall_command(number, args);
        let confined = place.run(&settings(SandboxMode::WorkspaceWrite, true), &command);
        assert_eq!(confined.output.text, "EPERM\n", "syscall {number}");
    }
    let unconfined = place.run(
        &settings(SandboxMode::Off, false),
        &syscall_command(250, "0, -3, 0"),
    );
    assert_eq!(unconfined.output.text, "ok\n");
}

#[test]
fn confined_commands_have_no_new_privileges_and_a_seccomp_filter() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    let command = "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; echo $AGENT_SANDBOX";
    let outcome = place.run(&settings(SandboxMode::ReadOnly, false), command);
    assert_eq!(
        outcome.output.text,
        "NoNewPrivs:\t1\nSeccomp:\t2\nread-only\n"
    );
}

#[test]
fn commands_cannot_ptrace_the_agent() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    let me = std::process::id();
    // PTRACE_SEIZE (0x4206, attaches without stopping) to this test process, which plays
    // the agent.
    let command = format!(
        "python3 -c \"import ctypes, errno; libc = ctypes.CDLL(None, use_errno=True); r = libc.ptrace(0x4206, {me}, 0, 0); print('attached' if r == 0 else errno.errorcode[ctypes.get_errno()])\""
    );
    let outcome = place.run(&settings(SandboxMode::WorkspaceWrite, true), &command);
    // Landlock refuses (EPERM); in a PID namespace the agent is not even visible (ESRCH).
    let refused = ["EPERM\n", "ESRCH\n"];
    assert!(
        refused.contains(&outcome.output.text.as_str()),
        "{outcome:?}"
    );
}
