//! The REPL does not wait for MCP servers: the prompt comes at once, the first request goes
//! without a slow server's tools, they join from the first request after it is ready, `/mcp`
//! shows the servers, and the servers stop when the REPL ends. Ctrl-C cancels a running MCP
//! call on the server and the prompt comes back.

use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::session::OsSession;
use expectrl::{Expect, Session};

use super::{alive, marks, pid_in, stdio_server, wait_for};
use crate::suite::governance::offered_tools;
use crate::support::sse::{text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

const WAIT: Duration = Duration::from_secs(20);

fn expect(session: &mut OsSession, needle: &str, timeout: Duration) -> Result<String, String> {
    session.set_expect_timeout(Some(timeout));
    session
        .expect(needle)
        .map(|found| String::from_utf8_lossy(found.before()).into_owned())
        .map_err(|e| format!("waiting for {needle:?}: {e}"))
}

/// Types `/mcp` until the server `test` is ready (the prompt is showing).
fn wait_ready(session: &mut OsSession) {
    let deadline = Instant::now() + WAIT;
    loop {
        session.send("/mcp\r").unwrap();
        expect(session, "MCP servers:", WAIT).unwrap();
        let listing = expect(session, "›", WAIT).unwrap();
        if listing.contains("  test  ready") {
            assert!(listing.contains("mcp__test__echo"), "{listing}");
            return;
        }
        assert!(listing.contains("  test  starting"), "{listing}");
        assert!(Instant::now() < deadline, "the server never became ready");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `agent` at a terminal with `env`'s settings.
fn spawn(env: &TestEnv, server: &MockServer) -> OsSession {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("AGENT_HOME", &env.agent_home)
        .env("BASE_URL", server.base_url())
        .env("MODEL", "mock-model")
        .env("TERM", "xterm-256color")
        .env("NO_COLOR", "1")
        .current_dir(&env.workspace);
    Session::spawn(command).expect("spawn agent in a pty")
}

#[test]
fn ctrl_c_cancels_a_running_call_on_the_server() {
    let server = MockServer::start(vec![Reply::Sse(tool_events(
        "c1",
        "mcp__test__slow",
        r#"{"seconds": 30}"#,
    ))]);
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    let rule =
        "[[permissions.rules]]\ntool = \"mcp__test__slow\"\npattern = \"*\"\naction = \"allow\"\n";
    env.config(&format!("{rule}{}", stdio_server("test", &marks, &[], "")));
    let mut session = spawn(&env, &server);
    expect(&mut session, "›", WAIT).unwrap();
    wait_ready(&mut session);
    session.send("wait a while\r").unwrap();
    wait_for(&marks.join("started-slow"), WAIT);
    session.send([3u8]).unwrap();
    expect(&mut session, "interrupted by user", WAIT).unwrap();
    expect(&mut session, "›", WAIT).unwrap();
    wait_for(&marks.join("cancel-reason"), WAIT);
    assert_eq!(
        std::fs::read_to_string(marks.join("cancel-reason")).unwrap(),
        "interrupted by the user"
    );
    wait_for(&marks.join("cancelled-slow"), WAIT);
    session.send([4u8]).unwrap();
    session.set_expect_timeout(Some(WAIT));
    let _ = session.expect(expectrl::Eof);
}

#[test]
fn the_prompt_comes_at_once_and_tools_join_when_the_server_is_ready() {
    let server = MockServer::start(vec![
        Reply::Sse(text_events(&["first answer"])),
        Reply::Sse(text_events(&["second answer"])),
    ]);
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    env.config(&stdio_server("test", &marks, &["--slow-start", "3"], ""));
    let mut session = spawn(&env, &server);

    expect(&mut session, "MCP servers starting: test", WAIT).unwrap();
    expect(&mut session, "›", WAIT).unwrap();
    session.send("hello\r").unwrap();
    expect(&mut session, "first answer", WAIT).unwrap();
    expect(&mut session, "›", WAIT).unwrap();

    // The server sleeps 3 s before serving.
    wait_ready(&mut session);
    session.send("again\r").unwrap();
    expect(&mut session, "second answer", WAIT).unwrap();
    expect(&mut session, "›", WAIT).unwrap();
    let server_pid = pid_in(&marks.join("pid"));
    assert!(alive(server_pid));
    session.send([4u8]).unwrap();
    session.set_expect_timeout(Some(WAIT));
    let _ = session.expect(expectrl::Eof);

    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    let first = offered_tools(&requests[0].body);
    assert!(!first.iter().any(|t| t.starts_with("mcp__")), "{first:?}");
    let second = offered_tools(&requests[1].body);
    assert!(
        second.contains(&"mcp__test__echo".to_string()),
        "{second:?}"
    );

    let deadline = Instant::now() + WAIT;
    while alive(server_pid) {
        assert!(Instant::now() < deadline, "the server outlived the REPL");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn leaving_while_a_server_starts_does_not_wait_for_it() {
    let server = MockServer::start(Vec::new());
    let env = TestEnv::with_server(&server);
    let marks = marks(&env);
    env.config(&stdio_server(
        "test",
        &marks,
        &["--slow-start", "60"],
        "startup_timeout_sec = 120",
    ));
    let mut session = spawn(&env, &server);
    expect(&mut session, "›", WAIT).unwrap();
    wait_for(&marks.join("pid"), WAIT);
    let server_pid = pid_in(&marks.join("pid"));
    let asked = Instant::now();
    session.send([4u8]).unwrap();
    session.set_expect_timeout(Some(WAIT));
    let _ = session.expect(expectrl::Eof);
    while alive(server_pid) {
        assert!(
            asked.elapsed() < WAIT,
            "the starting server outlived the REPL"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "exit waited {:?} for a server still starting",
        asked.elapsed()
    );
}
