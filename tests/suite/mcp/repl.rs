//! The REPL does not wait for MCP servers: the prompt comes at once, the first request goes
//! without a slow server's tools, they join from the first request after it is ready, `/mcp`
//! shows the servers, and the servers stop when the REPL ends.

use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::session::OsSession;
use expectrl::{Expect, Session};

use super::{alive, marks, pid_in, stdio_server};
use crate::suite::governance::offered_tools;
use crate::support::sse::text_events;
use crate::support::{MockServer, Reply, TestEnv};

const WAIT: Duration = Duration::from_secs(20);

fn expect(session: &mut OsSession, needle: &str, timeout: Duration) -> Result<String, String> {
    session.set_expect_timeout(Some(timeout));
    session
        .expect(needle)
        .map(|found| String::from_utf8_lossy(found.before()).into_owned())
        .map_err(|e| format!("waiting for {needle:?}: {e}"))
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
    let mut session = Session::spawn(command).expect("spawn agent in a pty");

    expect(&mut session, "MCP servers starting: test", WAIT).unwrap();
    expect(&mut session, "›", WAIT).unwrap();
    session.send("hello\r").unwrap();
    expect(&mut session, "first answer", WAIT).unwrap();
    expect(&mut session, "›", WAIT).unwrap();

    // `/mcp` until the server is ready (it sleeps 3 s before serving).
    let deadline = Instant::now() + WAIT;
    loop {
        session.send("/mcp\r").unwrap();
        expect(&mut session, "MCP servers:", WAIT).unwrap();
        let listing = expect(&mut session, "›", WAIT).unwrap();
        if listing.contains("  test  ready") {
            assert!(listing.contains("mcp__test__echo"), "{listing}");
            break;
        }
        assert!(listing.contains("  test  starting"), "{listing}");
        assert!(Instant::now() < deadline, "the server never became ready");
        std::thread::sleep(Duration::from_millis(200));
    }
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
