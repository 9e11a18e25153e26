//! `agent` told to stop by SIGTERM (`timeout`, a CI job cancelled) or SIGHUP (the terminal
//! closed) while a command runs: the command's process group is stopped too, the session
//! records the call as interrupted, and `agent` ends by that signal. Before, the command kept
//! running (and writing to the workspace) after `agent` was gone.
//!
//! The command's processes are found by a marker in their environment, not by the pids the
//! command prints: inside the sandbox's PID namespace those are not the host's pids.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::sse::tool_events;
use crate::support::{MockServer, Reply, TestEnv};

use super::sandbox::{marker, survivors};

fn wait_for_file(path: &Path, deadline: Instant) -> String {
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stops_the_command_on(signal: libc::c_int) {
    // The command starts a background child, says so, then waits.
    let mark = marker("termination");
    let command = format!("export {mark}; sleep 300 & echo started > started.txt; wait");
    let server = MockServer::start(vec![Reply::Sse(tool_events(
        "c1",
        "bash",
        &json!({ "command": command }).to_string(),
    ))]);
    let env = TestEnv::with_server(&server);
    let mut child = env
        .std_cmd()
        .args(["--yes", "run it"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    wait_for_file(&env.workspace.join("started.txt"), deadline);
    // `started.txt` can be written before the forked child has exec'd `sleep`, and only
    // then does its /proc environ show the marker: wait for it.
    while survivors(&mark).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!survivors(&mark).is_empty(), "the background sleep runs");
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("agent did not stop on signal {signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.signal(), Some(signal), "{status:?}");
    // The group got TERM (then KILL); give init a moment to reap orphans.
    let gone = Instant::now() + Duration::from_secs(5);
    while !survivors(&mark).is_empty() && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(survivors(&mark), Vec::<u32>::new(), "outlived the agent");
    let session = std::fs::read_dir(env.agent_home.join("sessions"))
        .unwrap()
        .flatten()
        .next()
        .map(|entry| std::fs::read_to_string(entry.path()).unwrap())
        .unwrap_or_default();
    assert!(session.contains("interrupted"), "{session}");
}

#[test]
fn sigterm_stops_the_running_command_and_ends_agent_by_sigterm() {
    stops_the_command_on(libc::SIGTERM);
}

#[test]
fn sighup_stops_the_running_command_and_ends_agent_by_sighup() {
    stops_the_command_on(libc::SIGHUP);
}
