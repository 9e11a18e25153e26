//! Resumable sessions (SPEC §8.3): the JSONL file, `--resume`, `agent sessions`, repair
//! after `kill -9`, torn last lines, and governance state round trips.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::env::texts;
use crate::support::sse::{check_request_invariants, text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

fn sse_tool(id: &str, name: &str, args: &str) -> Reply {
    Reply::Sse(tool_events(id, name, args))
}

fn sse_text(text: &str) -> Reply {
    Reply::Sse(text_events(&[text]))
}

fn session_files(env: &TestEnv) -> Vec<PathBuf> {
    let dir = env.agent_home.join("sessions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn roles_and_texts(messages: &[Value]) -> Vec<(String, String)> {
    messages
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or("").to_string(),
                m["content"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn resume_restores_history_and_todos() {
    let todos = r#"{"todos":[{"content":"write tests","status":"in_progress"}]}"#;
    let server = MockServer::start(vec![
        sse_tool("c1", "write_todos", todos),
        sse_text("first done"),
        sse_text("second done"),
    ]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["plan the work"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let files = session_files(&env);
    assert_eq!(files.len(), 1);
    let id = files[0].file_stem().unwrap().to_string_lossy().to_string();

    let output = env.run(&["--resume", "continue"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "second done\n");
    assert!(
        stderr.contains(&format!(
            "resumed session {id} (4 messages) · last request: \"plan the work\""
        )),
        "{stderr}"
    );
    let request = &server.chat_requests()[2];
    check_request_invariants(&request.body).unwrap();
    let messages = roles_and_texts(&request.messages());
    let roles: Vec<&str> = messages.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        roles,
        vec!["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(messages[1].1, "plan the work");
    assert_eq!(messages[4].1, "first done");
    assert!(messages[5].1.starts_with("continue\n\n<system-reminder>"));
    assert!(
        messages[5].1.contains("todos:\n[>] write tests"),
        "{}",
        messages[5].1
    );
    // Both runs wrote to the same file.
    assert_eq!(session_files(&env).len(), 1);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with(r#"{"type":"message""#))
            .count(),
        6
    );
}

#[test]
fn resume_after_kill_9_during_a_tool_call_gives_a_valid_history() {
    let server = MockServer::start(vec![
        sse_tool("c1", "bash", r#"{"command":"sleep 10"}"#),
        sse_text("the sleep was interrupted"),
    ]);
    let env = TestEnv::with_server(&server);
    let mut child = env
        .std_cmd()
        .args(["--yes", "wait a while"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let written = session_files(&env)
            .first()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .is_some_and(|t| t.contains("tool_calls"));
        if written {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the tool call was never recorded"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let output = env.run(&["--resume", "what happened?"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "the sleep was interrupted\n");
    assert!(
        stderr.contains("1 unfinished tool calls marked as interrupted"),
        "{stderr}"
    );
    let request = server.chat_requests().pop().unwrap();
    check_request_invariants(&request.body).unwrap();
    let messages = roles_and_texts(&request.messages());
    let roles: Vec<&str> = messages.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "tool", "user"]);
    assert!(
        messages[3].1.starts_with("interrupted: "),
        "{}",
        messages[3].1
    );
    assert_eq!(request.messages()[3]["tool_call_id"], "c1");
}

#[test]
fn sessions_lists_id_workspace_start_first_message_and_count() {
    let server = MockServer::start(vec![sse_text("hello there")]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["say   hello\nplease"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let id = session_files(&env)[0]
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let output = env.run(&["sessions"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines[0].starts_with("ID"), "{stdout}");
    let row = lines[1];
    assert!(row.starts_with(&id), "{row}");
    assert!(row.contains(" UTC "), "{row}");
    assert!(row.contains(&env.workspace.display().to_string()), "{row}");
    assert!(row.contains("       2  "), "{row}");
    assert!(row.ends_with("say hello please"), "{row}");
}

#[test]
fn resume_errors_are_clear_and_exit_2() {
    let env = TestEnv::with_server(&MockServer::start(vec![]));
    let output = env.run(&["--resume", "go"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no saved session for"), "{stderr}");
    let output = env.run(&["--resume=20990101-000000-dead", "go"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no session `20990101-000000-dead`; run `agent sessions` to list them"),
        "{stderr}"
    );
    let sessions = env.agent_home.join("sessions");
    std::fs::create_dir_all(sessions.join("20990101-000000-0dir.jsonl")).unwrap();
    std::fs::write(sessions.join("20990101-000000-junk.jsonl"), "not json\n").unwrap();
    for (id, why) in [
        ("20990101-000000-0dir", "it is a directory"),
        (
            "20990101-000000-junk",
            "its first line is not a session header",
        ),
    ] {
        let output = env.run(&[&format!("--resume={id}"), "go"]);
        let (_, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("{id}.jsonl` cannot be resumed: {why}")),
            "{stderr}"
        );
    }
}

#[test]
fn torn_last_line_is_skipped_with_a_warning_and_cut() {
    let server = MockServer::start(vec![sse_text("one"), sse_text("two")]);
    let env = TestEnv::with_server(&server);
    env.run(&["first"]);
    let file = session_files(&env)[0].clone();
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(r#"{"type":"message","message":{"role":"assis"#);
    std::fs::write(&file, text).unwrap();
    let output = env.run(&["--resume", "second"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("skipped a truncated last line"), "{stderr}");
    let request = server.chat_requests().pop().unwrap();
    check_request_invariants(&request.body).unwrap();
    assert_eq!(request.messages().len(), 4);
    // New records start on a line of their own: every line parses.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.lines()
            .all(|l| serde_json::from_str::<Value>(l).is_ok()),
        "{text}"
    );
}

#[test]
fn resume_picks_the_newest_session_of_this_workspace() {
    let server = MockServer::start(vec![sse_text("a"), sse_text("b"), sse_text("c")]);
    let env = TestEnv::with_server(&server);
    env.run(&["older task"]);
    std::thread::sleep(Duration::from_millis(20)); // distinct modification times
    env.run(&["newer task"]);
    // A session of another workspace, written last.
    let other = json!({"type": "session", "id": "20990101-000000-0000", "workspace": "/elsewhere",
        "started": 0});
    let message = json!({"type": "message", "message": {"role": "user", "content": "elsewhere"}});
    std::fs::write(
        env.agent_home.join("sessions/20990101-000000-0000.jsonl"),
        format!("{other}\n{message}\n"),
    )
    .unwrap();
    let output = env.run(&["--resume", "go on"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let messages = roles_and_texts(&server.chat_requests()[2].messages());
    assert_eq!(messages[1].1, "newer task");
}

#[test]
fn resume_rebuilds_the_pruned_history_byte_for_byte() {
    let server = MockServer::start(vec![
        sse_tool("c1", "bash", r#"{"command":"cat a.txt"}"#),
        sse_tool("c2", "bash", r#"{"command":"cat b.txt"}"#),
        sse_text("done"),
        sse_text("again done"),
    ]);
    let env = TestEnv::with_server(&server);
    env.config("[context]\ncontext_window = 4096\nprune_at = 0.5\nkeep_recent_tool_results = 1\n");
    env.write("a.txt", &"a".repeat(4000));
    env.write("b.txt", &"b".repeat(4000));
    let output = env.run(&["read both"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("context: pruned 1 old tool results"),
        "{stderr}"
    );
    let output = env.run(&["--resume", "again"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let requests = server.chat_requests();
    let before = requests[2].messages();
    let after = requests[3].messages();
    assert!(
        before[3]["content"]
            .as_str()
            .unwrap()
            .starts_with("[pruned to save context")
    );
    // Everything up to the message that carried the reminder is identical.
    let n = before.len() - 1;
    assert_eq!(before[..n], after[..n]);
    // The session file still holds the full output.
    let text = std::fs::read_to_string(&session_files(&env)[0]).unwrap();
    assert!(text.contains(&"a".repeat(4000)));
}

#[tokio::test(flavor = "multi_thread")]
async fn governance_state_round_trips_through_resume() {
    use agent::agent::{Agent, AgentParts};
    use agent::config::{Environment, Flags, Settings, Sources};
    use agent::events::NullSink;

    let server = MockServer::start(vec![sse_text("ok")]);
    let env = TestEnv::with_server(&server);
    let build = || {
        let vars = [
            ("AGENT_HOME", env.agent_home.display().to_string()),
            ("BASE_URL", server.base_url()),
            ("MODEL", "mock-model".to_string()),
        ];
        let environment = Environment {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            cwd: env.workspace.clone(),
        };
        let sources = Sources::load(Flags::default(), environment).unwrap();
        let settings = Settings::resolve(&sources).unwrap();
        let client = agent::model::Client::new(settings.endpoint, Default::default()).unwrap();
        let (permissions, _) = agent::permissions::PermissionEngine::from_settings(
            &settings.permissions,
            (&settings.paths).into(),
        );
        let memory = agent::context::Memory::load(&settings.paths);
        let registry = agent::agent::memory::session_tools(&memory);
        let mut agent = Agent::new(AgentParts {
            paths: settings.paths,
            client,
            registry,
            permissions,
            approver: Arc::new(agent::permissions::approval::AlwaysYes),
            sink: Arc::new(NullSink),
            exec: Default::default(),
            context: settings.context,
            loop_settings: Default::default(),
        });
        agent.set_memory(memory);
        agent
    };
    let mut first = build();
    first.record_governance(json!({"role": "reviewer", "spent": {"tokens": 10}}));
    first
        .run_turn("hi", &agent::cancel::CancelToken::new())
        .await;
    first.record_governance(json!({"role": "reviewer", "spent": {"tokens": 250}}));
    let id = first.session_id();
    drop(first);
    let mut second = build();
    assert_eq!(second.governance_state(), None);
    let summary = second.resume(None).unwrap();
    assert_eq!(summary.id, id);
    assert_eq!(
        second.governance_state(),
        Some(&json!({"role": "reviewer", "spent": {"tokens": 250}}))
    );
}

#[test]
fn repl_resume_todos_sessions_and_compact() {
    use expectrl::Expect;

    let todos = r#"{"todos":[{"content":"write tests","status":"in_progress"}]}"#;
    let server = MockServer::start(vec![
        sse_tool("c1", "write_todos", todos),
        sse_text("first done"),
        sse_text("## Goal\nWrite the tests.\n## Next steps\nRun them."),
    ]);
    let env = TestEnv::with_server(&server);
    assert_eq!(env.run(&["plan the work"]).status.code(), Some(0));
    let id = session_files(&env)[0]
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .to_string();

    let mut command = env.std_cmd();
    command.args(["--resume"]);
    let mut repl = expectrl::Session::spawn(command).unwrap();
    repl.set_expect_timeout(Some(Duration::from_secs(15)));
    repl.expect(format!("resumed session {id} (4 messages)").as_str())
        .unwrap();
    repl.send_line("/todos").unwrap();
    repl.expect("[>] write tests").unwrap();
    repl.send_line("/sessions").unwrap();
    repl.expect(id.as_str()).unwrap();
    repl.send_line("/compact").unwrap();
    repl.expect("compacted 4 older messages into a handoff note, kept 0 verbatim")
        .unwrap();
    repl.send_line("/resume 1999").unwrap();
    repl.expect("no session `1999`").unwrap();
    repl.send_line("/exit").unwrap();
    repl.expect(expectrl::Eof).unwrap();

    let requests = server.chat_requests();
    let summary = roles_and_texts(&requests[2].messages());
    assert_eq!(summary.len(), 6, "system, the 4 messages, the instruction");
    assert!(summary[5].1.starts_with("Write a handoff note"));
    // The compaction is in the session file: resuming again gives note + acknowledgement.
    let loaded = agent::session::load(&session_files(&env)[0]).unwrap();
    let roles: Vec<agent::model::Role> = loaded.history.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        vec![agent::model::Role::User, agent::model::Role::Assistant]
    );
    assert!(
        loaded.history[0]
            .text_content()
            .contains("Write the tests.")
    );
}

#[test]
fn resume_restores_the_role_and_budget_spending() {
    let server = MockServer::start(vec![
        sse_tool("c1", "bash", r#"{"command":"echo hi"}"#),
        sse_text("ran it"),
        sse_text("resumed"),
    ]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["--role", "debugger", "--yes", "run echo"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let output = env.run(&["--resume", "what next?"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let request = server.chat_requests().pop().unwrap();
    let last = request.messages().pop().unwrap();
    let reminder = last["content"].as_str().unwrap();
    assert!(reminder.contains("role: debugger"), "{reminder}");
    assert!(reminder.contains("shell 1/200"), "{reminder}");
}
