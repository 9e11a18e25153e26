//! stdio servers never outlive the agent, however it ends (done, SIGTERM, SIGHUP, SIGKILL),
//! nor does anything they started; a cloned repository cannot start servers.

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::{alive, marks, pid_in, stdio_server, wait_for};
use crate::support::env::texts;
use crate::support::sse::{text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

/// Waits until none of `pids` is alive.
fn assert_all_end(pids: &[i32], what: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while pids.iter().any(|&pid| alive(pid)) {
        assert!(
            Instant::now() < deadline,
            "{what}: still alive: {:?}",
            pids.iter().filter(|&&p| alive(p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts a one-shot run whose model has the server start a grandchild (`sleep 1000`), then
/// `then`; returns the agent and the pids of the server and its grandchild once both were
/// started.
fn agent_with_a_grandchild(then: Reply) -> (TestEnv, MockServer, std::process::Child, Vec<i32>) {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events("c1", "mcp__test__spawn_grandchild", "{}")),
        then,
    ]);
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    env.config(&stdio_server("test", &marks, &[], ""));
    let agent = env
        .std_cmd()
        .args(["--yes", "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&marks.join("grandchild.pid"), Duration::from_secs(30));
    let pids = vec![
        pid_in(&marks.join("pid")),
        pid_in(&marks.join("grandchild.pid")),
    ];
    (env, server, agent, pids)
}

#[test]
fn servers_and_what_they_started_end_when_the_agent_is_done() {
    let (_env, _server, agent, pids) = agent_with_a_grandchild(Reply::Sse(text_events(&["done"])));
    let output = agent.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_all_end(&pids, "after a normal exit");
}

fn ends_with_the_agent_on(signal: i32) {
    let (_env, _server, mut agent, pids) = agent_with_a_grandchild(Reply::Hang);
    assert!(pids.iter().all(|&pid| alive(pid)), "{pids:?}");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(agent.id() as i32, signal) };
    let status = agent.wait().unwrap();
    assert_eq!(status.signal(), Some(signal), "{status:?}");
    assert_all_end(&pids, &format!("after signal {signal}"));
}

#[test]
fn servers_end_when_the_agent_gets_sigterm() {
    ends_with_the_agent_on(libc::SIGTERM);
}

#[test]
fn servers_end_when_the_agent_gets_sighup() {
    ends_with_the_agent_on(libc::SIGHUP);
}

#[test]
fn servers_end_even_when_the_agent_is_killed() {
    ends_with_the_agent_on(libc::SIGKILL);
}

#[test]
fn an_untrusted_project_cannot_start_servers() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    env.write(
        ".agents/config.toml",
        &stdio_server("evil", &marks, &[], ""),
    );
    let output = env.run(&["hi"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "ok\n");
    assert!(
        stderr.contains("ignoring [mcp_servers] evil in the untrusted project config"),
        "{stderr}"
    );
    assert!(!marks.join("pid").exists(), "the server ran");

    // Trusted, the same file starts it.
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let trusted = TestEnv::with_server(&server);
    let marks = super::marks(&trusted);
    trusted.write(
        ".agents/config.toml",
        &stdio_server("evil", &marks, &[], ""),
    );
    assert_eq!(trusted.run(&["trust"]).status.code(), Some(0));
    let output = trusted.run(&["hi"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(marks.join("pid").exists(), "the trusted server did not run");
}
