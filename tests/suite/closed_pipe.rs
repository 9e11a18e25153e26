//! A reader that goes away (`agent doctor | head -1`, `agent check ... 2>&1 | head -1`) must not
//! make `agent` panic with "failed printing to stdout: Broken pipe" and exit 101: output to a
//! closed pipe is dropped and the command ends with its usual exit code.

use std::process::{Command, Stdio};

use crate::support::{MockServer, Reply, TestEnv};

/// Runs `cmd` with the read ends of its stdout and stderr closed before it writes anything;
/// returns the exit code.
fn run_with_closed_pipes(mut cmd: Command) -> Option<i32> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    child.wait().unwrap().code()
}

#[test]
fn doctor_with_closed_stdout_does_not_panic() {
    let server = MockServer::start(vec![Reply::error(500, "down")]);
    let env = TestEnv::with_server(&server);
    let mut cmd = env.std_cmd();
    cmd.arg("doctor");
    // The endpoint fails, so the exit code is 1; a panic would be 101.
    assert_eq!(run_with_closed_pipes(cmd), Some(1));
}

#[test]
fn check_and_sessions_with_closed_pipes_do_not_panic() {
    let env = TestEnv::new();
    for args in [
        &["check", "ls; rm -rf /"][..],
        &["check", "--json", "ls"],
        &["sessions"],
        &["completions", "bash"],
    ] {
        let mut cmd = env.std_cmd();
        cmd.args(args);
        assert_eq!(run_with_closed_pipes(cmd), Some(0), "{args:?}");
    }
}

#[test]
fn config_error_with_closed_stderr_keeps_exit_code_2() {
    let env = TestEnv::new();
    env.config("[sandbox\n");
    let mut cmd = env.std_cmd();
    cmd.args(["check", "ls"]);
    assert_eq!(run_with_closed_pipes(cmd), Some(2));
}

#[test]
fn one_shot_answer_to_a_closed_stdout_does_not_panic() {
    let server = MockServer::start(vec![Reply::Sse(crate::support::sse::text_events(&[
        "line one\nline two\n",
    ]))]);
    let env = TestEnv::with_server(&server);
    let mut cmd = env.std_cmd();
    cmd.arg("say something");
    assert_eq!(run_with_closed_pipes(cmd), Some(0));
}
