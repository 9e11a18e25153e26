//! Command-line behaviour: configuration errors, exit codes, the stdout/stderr split.

use crate::support::env::texts;
use crate::support::sse::text_events;
use crate::support::{MockServer, Reply, TestEnv};

#[test]
fn missing_base_url_names_variable_and_file() {
    let env = TestEnv::new();
    let output = env.run(&["hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let expected = format!(
        "agent: error: missing `BASE_URL`; pass --base-url, set it in the environment, or add it to {}/env\n",
        env.agent_home.display()
    );
    assert_eq!(stderr, expected);
}

#[test]
fn missing_model_names_variable() {
    let mut env = TestEnv::new();
    env.var("BASE_URL", "http://127.0.0.1:9/v1");
    let output = env.run(&["hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr.contains("missing `MODEL`"), "{stderr}");
}

#[test]
fn env_file_supplies_endpoint_and_key() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["hi"]))]);
    let env = TestEnv::new();
    std::fs::write(
        env.agent_home.join("env"),
        format!(
            "# test\nexport BASE_URL=\"{}\"\nMODEL='m1'\nAPI_KEY=sk-test\n",
            server.base_url()
        ),
    )
    .unwrap();
    let output = env.run(&["say hi"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "hi\n");
    let request = &server.chat_requests()[0];
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(request.body["model"], "m1");
}

#[test]
fn bad_env_file_line_is_a_config_error() {
    let env = TestEnv::new();
    std::fs::write(env.agent_home.join("env"), "BASE_URL http://x\n").unwrap();
    let output = env.run(&["hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr.contains("env:1: expected KEY=VALUE"), "{stderr}");
}

#[test]
fn unknown_config_key_is_a_config_error() {
    let server = MockServer::start(vec![]);
    let env = TestEnv::with_server(&server);
    env.config("[sandbox]\nmod = \"off\"\n");
    let output = env.run(&["hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr.contains("unknown field `mod`"), "{stderr}");
    assert!(stderr.contains("config.toml"), "{stderr}");
}

#[test]
fn a_rule_for_an_unknown_tool_is_a_config_error_not_a_dead_deny() {
    let server = MockServer::start(vec![]);
    let env = TestEnv::with_server(&server);
    // A typo: this deny used to be silently ignored.
    env.config(
        "[[permissions.rules]]\ntool = \"Bash\"\npattern = \"git push*\"\naction = \"deny\"\n",
    );
    for args in [&["check", "git push"][..], &["hello"]] {
        let output = env.run(args);
        let (stdout, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains("tool = `Bash`"), "{stderr}");
        assert!(stderr.contains("config.toml"), "{stderr}");
    }
    assert!(server.chat_requests().is_empty());
}

#[test]
fn base_url_without_a_scheme_is_a_config_error_at_once() {
    let mut env = TestEnv::new();
    env.var("BASE_URL", "localhost:8080/v1").var("MODEL", "m");
    for args in [&["hello"][..], &["doctor"]] {
        let output = env.run(args);
        let (stdout, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains("BASE_URL `localhost:8080/v1` is not an http(s) URL"),
            "{stderr}"
        );
        assert!(!stderr.contains("retrying"), "{stderr}");
    }
}

#[test]
fn empty_stdin_is_a_usage_error() {
    let server = MockServer::start(vec![]);
    let env = TestEnv::with_server(&server);
    let output = env.cmd().write_stdin("  \n").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn task_from_stdin() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["do", "ne"]))]);
    let env = TestEnv::with_server(&server);
    let output = env.cmd().write_stdin("what is 1+1?\n").output().unwrap();
    let (stdout, _) = texts(&output);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout, "done\n");
    let messages = server.chat_requests()[0].messages();
    assert!(
        messages[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("what is 1+1?")
    );
}

#[test]
fn connection_refused_names_the_url() {
    let mut env = TestEnv::new();
    env.var("BASE_URL", "http://127.0.0.1:9/v1")
        .var("MODEL", "m");
    env.config("[provider]\nmax_attempts = 1\n");
    let output = env.run(&["hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot connect to http://127.0.0.1:9/v1/chat/completions"),
        "{stderr}"
    );
}

#[test]
fn unauthorized_is_reported_with_hint_and_not_retried() {
    let server = MockServer::start(vec![Reply::error(401, "Incorrect API key provided")]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr.contains("401: Incorrect API key provided (check API_KEY)"),
        "{stderr}"
    );
    assert_eq!(server.chat_requests().len(), 1);
}

#[test]
fn turn_cost_is_priced_from_config_when_the_provider_sends_none() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let env = TestEnv::with_server(&server);
    env.config("[pricing.\"mock-model\"]\ninput_per_mtok = 1000.0\noutput_per_mtok = 2000.0\n");
    let output = env.run(&["--json", "hi"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let completed: serde_json::Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["type"] == "turn.completed")
        .unwrap();
    // 10 prompt tokens at $1000/Mtok + 5 completion tokens at $2000/Mtok.
    let cost = completed["usage"]["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.02).abs() < 1e-9, "{completed}");
}

#[test]
fn a_huge_provider_timeout_is_a_config_error_not_a_panic() {
    let server = MockServer::start(vec![]);
    let env = TestEnv::with_server(&server);
    // It overflowed `Instant + Duration` and panicked before the first request.
    env.config("[provider]\nidle_timeout_secs = 18446744073709551615\n");
    let output = env.run(&["hello"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
    assert_eq!(
        stderr,
        "agent: error: [provider] idle_timeout_secs = `18446744073709551615` is too large; use at most 86400 seconds (a day)\n"
    );
    assert!(server.chat_requests().is_empty());
}

#[test]
fn a_nan_price_is_a_config_error_not_a_silently_unenforced_budget() {
    let server = MockServer::start(vec![]);
    let env = TestEnv::with_server(&server);
    env.config("[pricing.\"mock-model\"]\ninput_per_mtok = nan\noutput_per_mtok = 1.0\n");
    let output = env.run(&["hello"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("[pricing.\"mock-model\"] input_per_mtok = `NaN` is not a price"),
        "{stderr}"
    );
    assert!(server.chat_requests().is_empty());
}

#[test]
fn provider_settings_in_a_project_config_are_ignored_with_a_warning() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["hi"]))]);
    let env = TestEnv::with_server(&server);
    // Only the user file may set these; they used to be dropped without a word.
    env.write(
        ".agents/config.toml",
        "trusted_workspaces = [\"/\"]\n[provider]\nstream = false\n",
    );
    let output = env.run(&["hello"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "hi\n");
    for (key, fix) in [
        ("[provider]", "move it there"),
        (
            "trusted_workspaces",
            "run `agent trust` in a workspace to trust it",
        ),
    ] {
        let warning = format!(
            "ignoring {key} in the project config {}: only {} may set it; {fix}",
            env.workspace.join(".agents/config.toml").display(),
            env.agent_home.join("config.toml").display()
        );
        assert!(stderr.contains(&warning), "{warning}\n{stderr}");
    }
    assert_eq!(server.chat_requests()[0].body["stream"], true);
}
