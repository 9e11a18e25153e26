//! `/budget` and `/role` in the REPL, driven through a pseudo-terminal.

use std::process::Command;
use std::time::Duration;

use expectrl::{Eof, Expect, Session};

use super::{event_lines, of_type};
use crate::support::{MockServer, TestEnv};

fn repl(env: &TestEnv, server: &MockServer) -> expectrl::session::OsSession {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin!("agent"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("AGENT_HOME", &env.agent_home)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env("BASE_URL", server.base_url())
        .env("MODEL", "mock-model")
        .current_dir(&env.workspace);
    let mut session = Session::spawn(command).unwrap();
    session.set_expect_timeout(Some(Duration::from_secs(20)));
    session
}

#[test]
fn budget_and_role_commands() {
    let server = MockServer::start(vec![]);
    let env = TestEnv::with_server(&server);
    let mut session = repl(&env, &server);
    session.expect("› ").unwrap();
    session.send("/budget\r").unwrap();
    session
        .expect(
            "Budget[coder]: tokens 0/200000 (0%) | shell 0/100 (0%) | cost $0.00/$5.00 (0%) → OK",
        )
        .unwrap();
    session.send("/role reviewer\r").unwrap();
    session.expect("role: reviewer").unwrap();
    session
        .expect(
            "Budget[reviewer]: tokens 0/150000 (0%) | shell 0/0 (0%) | cost $0.00/$3.00 (0%) → OK",
        )
        .unwrap();
    session.send("/role\r").unwrap();
    session.expect("roles (* = active):").unwrap();
    session
        .expect("* reviewer (built-in) - reads and reviews; cannot edit files or run commands")
        .unwrap();
    session.send("/role nope\r").unwrap();
    session
        .expect("unknown role `nope`; available: admin, coder, debugger, ops, reviewer")
        .unwrap();
    session.send("/exit\r").unwrap();
    session.expect(Eof).unwrap();
    let changes = of_type(&event_lines(&env), "RoleChanged");
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["from"], "coder");
    assert_eq!(changes[0]["to"], "reviewer");
}
