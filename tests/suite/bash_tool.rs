//! The `bash` tool end to end: the `agent` binary, the mock model scripting bash calls, and
//! the tool results the model got back. Covers the sandbox as the model sees it and the
//! tool-execution cases of tests/data/tool-execution.jsonl.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::sandbox::landlock;
use crate::support::env::texts;
use crate::support::outside::outside_dir;
use crate::support::sse::{text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

/// Replies calling `bash` once per command (each with an optional timeout), then a final text.
pub(super) fn script(calls: &[(&str, Option<u64>)]) -> Vec<Reply> {
    let mut replies: Vec<Reply> = calls
        .iter()
        .enumerate()
        .map(|(i, (command, timeout))| {
            let mut args = json!({ "command": command });
            if let Some(timeout) = timeout {
                args["timeout"] = json!(timeout);
            }
            Reply::Sse(tool_events(&format!("call_{i}"), "bash", &args.to_string()))
        })
        .collect();
    replies.push(Reply::Sse(text_events(&["all done"])));
    replies
}

/// The tool results of the session, in order (from the last request, reminder removed).
pub(super) fn tool_results(server: &MockServer) -> Vec<String> {
    let requests = server.chat_requests();
    let last = requests.last().expect("a request");
    last.messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let content = m["content"].as_str().unwrap_or_default();
            // The per-request reminder rides on the last message; it is not the tool's.
            let end = content
                .find("\n\n<system-reminder>")
                .unwrap_or(content.len());
            content[..end].to_string()
        })
        .collect()
}

/// Runs a one-shot session with `--yes` plus `args`; asserts it finished normally.
fn session(env: &TestEnv, server: &MockServer, args: &[&str]) -> (Vec<String>, String) {
    let mut all = vec!["--yes"];
    all.extend_from_slice(args);
    all.push("do it");
    let output = env.run(&all);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "all done\n", "{stderr}");
    (tool_results(server), stderr)
}

#[test]
fn blocked_write_is_explained_and_the_session_goes_on() {
    if !landlock() {
        return;
    }
    let outside = outside_dir();
    let target = outside.path().canonicalize().unwrap().join("pwned");
    let escape = format!("echo pwned > {}", target.display());
    let server = MockServer::start(script(&[
        (&escape, None),
        ("echo ok > inside.txt && cat inside.txt", None),
    ]));
    let env = TestEnv::with_server(&server);
    let (results, stderr) = session(&env, &server, &[]);
    assert!(
        stderr.contains("sandbox workspace-write, network off (Landlock ABI"),
        "{stderr}"
    );
    let first = format!(
        "bash: line 1: {0}: Permission denied\n[write to {0} blocked by sandbox (workspace-write: writes allowed only under {1}, /tmp",
        target.display(),
        env.workspace.display()
    );
    assert!(results[0].starts_with(&first), "{results:?}");
    assert!(
        results[0]
            .ends_with("; ask the user to allow it or work inside the workspace]\n[exit code 1]"),
        "{results:?}"
    );
    assert_eq!(results[1], "ok\n");
    assert!(!target.exists());
    assert_eq!(env.read("inside.txt"), "ok\n");
}

#[test]
fn read_only_flag_blocks_workspace_writes() {
    if !landlock() {
        return;
    }
    let server = MockServer::start(script(&[("echo x > new.txt", None), ("cat README", None)]));
    let env = TestEnv::with_server(&server);
    env.write("README", "hello\n");
    let (results, stderr) = session(&env, &server, &["--sandbox", "read-only"]);
    assert!(
        stderr.contains("sandbox read-only, network off"),
        "{stderr}"
    );
    assert!(
        results[0].contains(&format!(
            "[write to {} blocked by sandbox (read-only);",
            env.workspace.join("new.txt").display()
        )),
        "{results:?}"
    );
    assert_eq!(results[1], "hello\n");
    assert!(!env.workspace.join("new.txt").exists());
}

#[test]
fn network_is_off_by_default_and_on_with_the_flag() {
    if !landlock() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || for _ in listener.incoming() {});
    let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    for (flag, expected) in [(None, false), (Some("--network"), true)] {
        let server = MockServer::start(script(&[(&command, None)]));
        let env = TestEnv::with_server(&server);
        let args: Vec<&str> = flag.into_iter().collect();
        let (results, _) = session(&env, &server, &args);
        if expected {
            assert_eq!(results, vec!["connected\n".to_string()]);
        } else {
            assert!(
                results[0].contains("[network access is blocked by the sandbox (network off);"),
                "{results:?}"
            );
            assert!(!results[0].contains("[write to"), "{results:?}");
        }
    }
}

#[test]
fn config_network_true_allows_tcp() {
    if !landlock() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || for _ in listener.incoming() {});
    let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let server = MockServer::start(script(&[(&command, None)]));
    let env = TestEnv::with_server(&server);
    env.config("[sandbox]\nnetwork = true\n");
    let (results, stderr) = session(&env, &server, &[]);
    assert!(stderr.contains("network on"), "{stderr}");
    assert_eq!(results, vec!["connected\n".to_string()]);
}

#[test]
fn untrusted_project_config_cannot_loosen_the_sandbox() {
    if !landlock() {
        return;
    }
    let outside = outside_dir();
    let target = outside.path().canonicalize().unwrap().join("x");
    let command = format!("echo x > {}", target.display());
    let server = MockServer::start(script(&[(&command, None)]));
    let env = TestEnv::with_server(&server);
    env.write(
        ".agents/config.toml",
        &format!(
            "[sandbox]\nmode = \"off\"\nwritable_roots = [\"{}\"]\n",
            outside.path().display()
        ),
    );
    let (results, stderr) = session(&env, &server, &[]);
    assert!(
        stderr.contains("loosens the sandbox; ignored because this workspace is not trusted"),
        "{stderr}"
    );
    assert!(
        results[0].contains("blocked by sandbox (workspace-write"),
        "{results:?}"
    );
    assert!(!target.exists());
}

#[test]
fn secrets_never_reach_the_child() {
    let server = MockServer::start(script(&[("env", None)]));
    let mut env = TestEnv::with_server(&server);
    env.var("API_KEY", "sk-from-process-env");
    env.var("FILE_SECRET", "also-in-process-env");
    env.var("EDITOR", "vim");
    std::fs::write(
        env.agent_home.join("env"),
        "API_KEY=sk-from-file\nFILE_SECRET=s3cr3t\n",
    )
    .unwrap();
    let (results, _) = session(&env, &server, &[]);
    let child_env = &results[0];
    for secret in [
        "sk-from-process-env",
        "sk-from-file",
        "s3cr3t",
        "also-in-process-env",
        "API_KEY",
        "FILE_SECRET",
    ] {
        assert!(!child_env.contains(secret), "{secret} leaked: {child_env}");
    }
    for var in [
        "PAGER=cat",
        "GIT_PAGER=cat",
        "GIT_EDITOR=true",
        "EDITOR=true",
        "VISUAL=true",
        "GIT_SEQUENCE_EDITOR=false",
        "GIT_TERMINAL_PROMPT=0",
        "CI=1",
    ] {
        assert!(
            child_env.lines().any(|l| l == var),
            "{var} missing: {child_env}"
        );
    }
}

/// One case of tests/data/tool-execution.jsonl by id.
fn case(id: &str) -> Value {
    let text = include_str!("../data/tool-execution.jsonl");
    text.lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|case| case["id"] == id)
        .unwrap_or_else(|| panic!("no case {id}"))
}

/// Asserts no result was killed by a timeout and the session took under `limit`.
fn assert_prompt(results: &[String], started: Instant, limit: Duration) {
    for result in results {
        assert!(!result.contains("timed out"), "{result}");
    }
    assert!(started.elapsed() < limit, "took {:?}", started.elapsed());
}

const GIT_SETUP: &str = "git init -q . && git config user.email t@example.com && git config user.name t && echo x > f && git add f";

#[test]
fn case_git_editor_hang() {
    let case = case("c-git-editor-hang");
    let command = case["input"]["command"].as_str().unwrap();
    let editor = case["input"]["env"]["EDITOR"].as_str().unwrap();
    let rebase =
        "git commit -q -m first && echo y > f && git commit -q -am second && git rebase -i HEAD~1";
    let server = MockServer::start(script(&[
        (GIT_SETUP, Some(20)),
        (command, Some(20)),
        (rebase, Some(20)),
    ]));
    let mut env = TestEnv::with_server(&server);
    env.var("EDITOR", editor).var("VISUAL", editor);
    let started = Instant::now();
    let (results, _) = session(&env, &server, &[]);
    assert_prompt(&results, started, Duration::from_secs(40));
    assert!(
        results[1].contains("Aborting commit due to empty commit message"),
        "{results:?}"
    );
    assert!(results[2].contains("[exit code 1]"), "{results:?}");
}

#[test]
fn case_interactive_stdin_pager() {
    let case = case("c-interactive-stdin-pager");
    let mut commands: Vec<String> = case["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    let has_npm = std::process::Command::new("npm")
        .arg("--version")
        .output()
        .is_ok();
    if !has_npm {
        eprintln!("npm not installed: skipping `npm init`");
        commands.retain(|c| !c.starts_with("npm"));
    }
    let setup = format!("{GIT_SETUP} && git commit -q -m 'first commit'");
    let mut calls: Vec<(&str, Option<u64>)> = vec![(&setup, Some(20))];
    calls.extend(commands.iter().map(|c| (c.as_str(), Some(20))));
    let server = MockServer::start(script(&calls));
    let env = TestEnv::with_server(&server);
    env.write("README.md", "# readme\nline two\n");
    let started = Instant::now();
    let (results, _) = session(&env, &server, &[]);
    assert_prompt(&results, started, Duration::from_secs(60));
    assert!(results[1].contains("first commit"), "git log: {results:?}");
    assert_eq!(results[2], "# readme\nline two\n", "less");
    assert_eq!(results[3], "(no output)", "python3 reads EOF and exits");
}

#[test]
fn case_huge_output() {
    let case = case("c-huge-output");
    let command = case["input"].as_str().unwrap();
    let server = MockServer::start(script(&[(command, None)]));
    let env = TestEnv::with_server(&server);
    let (results, _) = session(&env, &server, &[]);
    let result = &results[0];
    assert!(
        result.chars().count() <= 30_000,
        "{}",
        result.chars().count()
    );
    assert!(result.starts_with("1\n2\n3\n"));
    assert!(
        result.ends_with("\n2999999\n3000000\n"),
        "{}",
        &result[result.len() - 100..]
    );
    assert!(result.contains("[... output truncated: 22888896 bytes, 3000000 lines in total;"));
    assert!(result.contains("redirect the output to a file and read parts of it"));
}

#[test]
fn case_timeout_kills_tree() {
    let case = case("c-timeout-kills-tree");
    let command = case["input"]["command"].as_str().unwrap();
    let timeout = case["input"]["timeout_s"].as_u64().unwrap();
    let mark = format!("AGENT_TEST_MARK=e2e-timeout-{}", std::process::id());
    let marked = format!("export {mark}; {command}");
    let server = MockServer::start(script(&[(&marked, Some(timeout))]));
    let env = TestEnv::with_server(&server);
    let started = Instant::now();
    let (results, _) = session(&env, &server, &[]);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(
        results[0]
            .starts_with("[timed out after 2s: the command and its process group were killed."),
        "{results:?}"
    );
    assert!(results[0].contains("it looked interactive"), "{results:?}");
    assert_eq!(super::sandbox::survivors(&mark), Vec::<u32>::new());
}

#[test]
fn agent_process_stays_unconfined() {
    if !landlock() {
        return;
    }
    // AGENT_HOME outside every writable root: the sandboxed command cannot touch it, the
    // agent still writes its REPL history there afterwards.
    let home = outside_dir();
    let agent_home: PathBuf = home.path().canonicalize().unwrap();
    let history = agent_home.join("history");
    let command = format!("echo clobbered > {}", history.display());
    let server = MockServer::start(script(&[(&command, None)]));
    let env = TestEnv::with_server(&server);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("AGENT_HOME", &agent_home)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env("BASE_URL", server.base_url())
        .env("MODEL", "mock-model")
        .arg("--yes")
        .current_dir(&env.workspace);
    use expectrl::Expect;
    let mut repl = expectrl::Session::spawn(cmd).unwrap();
    repl.set_expect_timeout(Some(Duration::from_secs(30)));
    repl.expect("› ").unwrap();
    repl.send_line("please clobber the history").unwrap();
    repl.expect("all done").unwrap();
    repl.expect("› ").unwrap();
    repl.send_line("/exit").unwrap();
    repl.expect(expectrl::Eof).unwrap();
    let results = tool_results(&server);
    assert!(
        results[0].contains("blocked by sandbox (workspace-write"),
        "{results:?}"
    );
    let saved = std::fs::read_to_string(&history).unwrap();
    assert!(saved.contains("please clobber the history"), "{saved}");
    assert!(saved.contains("/exit"), "{saved}");
    assert!(!saved.contains("clobbered"), "{saved}");
}

#[test]
fn sandbox_required_runs_confined_where_landlock_works() {
    if !landlock() {
        return;
    }
    let server = MockServer::start(script(&[("echo $AGENT_SANDBOX", None)]));
    let env = TestEnv::with_server(&server);
    let (results, stderr) = session(&env, &server, &["--sandbox", "required"]);
    assert!(
        stderr.contains("sandbox workspace-write, network off"),
        "{stderr}"
    );
    assert_eq!(results, vec!["workspace-write\n".to_string()]);
}

#[test]
fn sandbox_off_is_announced_and_unconfined() {
    let outside = outside_dir();
    let target = outside.path().join("allowed");
    let command = format!("echo $AGENT_SANDBOX > {}", target.display());
    let server = MockServer::start(script(&[(&command, None)]));
    let env = TestEnv::with_server(&server);
    let (results, stderr) = session(&env, &server, &["--sandbox", "off"]);
    assert!(
        stderr.contains("sandbox off: shell commands are not confined"),
        "{stderr}"
    );
    assert_eq!(results, vec!["(no output)".to_string()]);
    assert_eq!(std::fs::read_to_string(target).unwrap(), "off\n");
}

#[test]
fn a_command_with_a_nul_byte_is_refused_before_approval() {
    // It reached the approval prompt and then failed with "cannot start shell: cannot start
    // the shell: nul byte found in provided data".
    let server = MockServer::start(script(&[("echo a\u{0}b", None)]));
    let env = TestEnv::with_server(&server);
    let output = env.run(&["do it"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "all done\n");
    assert_eq!(
        tool_results(&server),
        vec![
            "Error: bash failed - invalid input: `command` holds a NUL byte, which no shell \
             command can contain; remove it"
                .to_string()
        ]
    );
}

#[test]
fn without_namespaces_one_warning_line_and_required_refuses_to_start() {
    if !landlock() {
        return;
    }
    let server = MockServer::start(script(&[("echo $AGENT_SANDBOX", None)]));
    let mut env = TestEnv::with_server(&server);
    env.var("AGENT_SANDBOX_NO_NAMESPACES", "1");
    let (results, stderr) = session(&env, &server, &[]);
    assert_eq!(results, vec!["workspace-write\n"]);
    assert_eq!(
        stderr
            .matches("warning: sandbox without namespaces")
            .count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("(Landlock ABI"), "{stderr}");
    assert!(stderr.contains(", no namespaces)"), "{stderr}");
    let output = env.run(&["--sandbox", "required", "do it"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with(
            "agent: error: the sandbox is required but user namespaces are unavailable: turned off by AGENT_SANDBOX_NO_NAMESPACES=1;"
        ),
        "{stderr}"
    );
}
