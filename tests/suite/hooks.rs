//! Hooks (issue 18) end to end: small shell-script hooks written into the temp directories,
//! the binary against the mock model. Each test checks what the model was sent, what ran,
//! and what the event log and `--json` recorded.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::env::texts;
use crate::support::sse::{check_request_invariants, text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

/// Writes an executable hook script `name` outside the workspace; returns its path.
fn script(env: &TestEnv, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = env.outside().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("hook script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// A `[[hooks.EVENT]]` table running `command`.
fn hook(event: &str, matcher: Option<&str>, command: &str) -> String {
    let matcher = matcher
        .map(|m| format!("matcher = \"{m}\"\n"))
        .unwrap_or_default();
    format!("[[hooks.{event}]]\n{matcher}command = '{command}'\n")
}

/// One bash call, then a final answer.
fn bash_then_done(command: &str) -> Vec<Reply> {
    vec![
        Reply::Sse(tool_events(
            "call_1",
            "bash",
            &json!({ "command": command }).to_string(),
        )),
        Reply::Sse(text_events(&["done"])),
    ]
}

/// The tool message answering `call_1` in the last request, without the reminder.
fn tool_result(server: &MockServer) -> String {
    let requests = server.chat_requests();
    let last = requests.last().expect("a request");
    check_request_invariants(&last.body).expect("well-formed request");
    last.messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .map(|c| {
            c.split("\n\n<system-reminder>")
                .next()
                .unwrap_or(c)
                .to_string()
        })
        .unwrap_or_default()
}

/// The `HookRun` events of the event log.
fn hook_runs(env: &TestEnv) -> Vec<Value> {
    let text = std::fs::read_to_string(env.agent_home.join("events.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "HookRun")
        .collect()
}

#[test]
fn pre_tool_use_exit_2_blocks_the_call_and_the_model_reads_why() {
    let server = MockServer::start(bash_then_done("touch made.txt"));
    let env = TestEnv::with_server(&server);
    let seen = env.outside().join("stdin.json");
    let block = script(
        &env,
        "block.sh",
        &format!(
            "cat > '{}'\necho 'no shell today' >&2\nexit 2",
            seen.display()
        ),
    );
    env.config(&hook(
        "PreToolUse",
        Some("bash"),
        &block.display().to_string(),
    ));
    let output = env.run(&["--yes", "make the file"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!env.workspace.join("made.txt").exists(), "the call ran");
    assert_eq!(tool_result(&server), "Blocked by hook: no shell today");

    let input: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "bash");
    assert_eq!(input["tool_input"], json!({"command": "touch made.txt"}));
    assert_eq!(input["tool_name"], "bash");
    assert_eq!(input["cwd"], env.workspace.display().to_string());
    assert!(
        input["session_id"].as_str().is_some_and(|s| !s.is_empty()),
        "{input}"
    );
    assert!(
        input["transcript_path"]
            .as_str()
            .is_some_and(|p| p.ends_with(".jsonl")),
        "{input}"
    );

    let runs = hook_runs(&env);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(
        (
            &runs[0]["event"],
            &runs[0]["result"],
            &runs[0]["exit_code"],
            &runs[0]["subject"]
        ),
        (
            &json!("PreToolUse"),
            &json!("blocked"),
            &json!(2),
            &json!("bash")
        )
    );
}

#[test]
fn pre_tool_use_denies_through_json_and_json_mode_shows_the_run() {
    let server = MockServer::start(bash_then_done("touch made.txt"));
    let env = TestEnv::with_server(&server);
    let deny = script(
        &env,
        "deny.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on Fridays"}}'"#,
    );
    // A hook for other tools does not run.
    let other = script(&env, "other.sh", "exit 2");
    env.config(&format!(
        "{}{}",
        hook("PreToolUse", Some("Bash"), &deny.display().to_string()),
        hook(
            "PreToolUse",
            Some("write_file|str_replace"),
            &other.display().to_string()
        )
    ));
    let output = env.run(&["--yes", "--json", "make the file"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!env.workspace.join("made.txt").exists());
    assert_eq!(tool_result(&server), "Blocked by hook: not on Fridays");
    let hooks: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "hook")
        .collect();
    assert_eq!(hooks.len(), 1, "{stdout}");
    assert_eq!(hooks[0]["event"], "PreToolUse");
    assert_eq!(hooks[0]["result"], "deny");
    assert_eq!(hooks[0]["exit_code"], 0);
    assert_eq!(hooks[0]["warning"], Value::Null);
    let violations: Vec<Value> = std::fs::read_to_string(env.agent_home.join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "PolicyViolation")
        .collect();
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0]["by"], "hook");
    assert_eq!(violations[0]["rule"], "not on Fridays");
}

#[test]
fn user_prompt_submit_adds_context_or_refuses_the_prompt() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["noted"]))]);
    let env = TestEnv::with_server(&server);
    let context = script(&env, "context.sh", "echo 'The release branch is r42.'");
    env.config(&hook(
        "UserPromptSubmit",
        None,
        &context.display().to_string(),
    ));
    let output = env.run(&["which branch?"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let requests = server.chat_requests();
    let messages = requests[0].messages();
    assert_eq!(messages[1]["content"], "which branch?");
    let note = messages[2]["content"].as_str().unwrap_or("");
    assert!(
        note.starts_with("Context added by the user's hooks:\nThe release branch is r42."),
        "{messages:?}"
    );

    let server = MockServer::start(vec![Reply::Sse(text_events(&["never"]))]);
    let env = TestEnv::with_server(&server);
    let refuse = script(
        &env,
        "refuse.sh",
        "echo 'prompts about secrets are refused' >&2; exit 2",
    );
    env.config(&hook(
        "UserPromptSubmit",
        None,
        &refuse.display().to_string(),
    ));
    let output = env.run(&["print the secrets"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains(
            "a UserPromptSubmit hook refused the prompt: prompts about secrets are refused"
        ),
        "{stderr}"
    );
    assert!(
        server.chat_requests().is_empty(),
        "the prompt reached the model"
    );
}

#[test]
fn a_stop_hook_continues_the_turn_at_most_three_times() {
    let replies = (0..5)
        .map(|i| Reply::Sse(text_events(&[&format!("answer {i}")])))
        .collect();
    let server = MockServer::start(replies);
    let env = TestEnv::with_server(&server);
    let log = env.outside().join("stop.log");
    let stop = script(
        &env,
        "stop.sh",
        &format!(
            "grep -o '\"stop_hook_active\":[a-z]*' >> '{}'\necho 'the tests still fail' >&2\nexit 2",
            log.display()
        ),
    );
    env.config(&hook("Stop", None, &stop.display().to_string()));
    let output = env.run(&["finish"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.trim(), "answer 3");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4, "first answer + 3 continuations");
    let last = requests[3].messages();
    check_request_invariants(&requests[3].body).unwrap();
    let notes = last
        .iter()
        .filter(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.contains("the tests still fail"))
        })
        .count();
    assert_eq!(notes, 3, "{last:?}");
    assert!(
        stderr.contains("a Stop hook asked to continue the turn again after 3 times"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "\"stop_hook_active\":false\n\"stop_hook_active\":true\n\"stop_hook_active\":true\n\"stop_hook_active\":true\n"
    );
}

#[test]
fn a_hanging_hook_is_stopped_at_its_timeout_and_the_call_goes_on() {
    let server = MockServer::start(bash_then_done("touch made.txt"));
    let env = TestEnv::with_server(&server);
    let marker = env.outside().join("late");
    let hang = script(
        &env,
        "hang.sh",
        &format!("sleep 30\ntouch '{}'", marker.display()),
    );
    env.config(&format!(
        "[[hooks.PreToolUse]]\ncommand = '{}'\ntimeout = 0.5\n",
        hang.display()
    ));
    let started = Instant::now();
    let output = env.run(&["--yes", "make the file"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );
    assert!(env.workspace.join("made.txt").exists(), "{stderr}");
    assert!(
        stderr.contains("ran past its timeout and was stopped; ignored it"),
        "{stderr}"
    );
    assert!(!marker.exists(), "the hook outlived its timeout");
    assert_eq!(hook_runs(&env)[0]["exit_code"], Value::Null);
}

#[test]
fn bad_hooks_warn_once_each_and_the_session_goes_on() {
    let server = MockServer::start(bash_then_done("touch made.txt"));
    let env = TestEnv::with_server(&server);
    let garbage = script(&env, "garbage.sh", "echo '{not json'");
    let flood = script(&env, "flood.sh", "head -c 3000000 /dev/zero | tr '\\0' x");
    let killed = script(&env, "killed.sh", "kill -9 $$");
    let not_executable = env.outside().join("plain.sh");
    std::fs::write(&not_executable, "#!/bin/sh\nexit 2\n").unwrap();
    let mut config = String::new();
    for command in [
        garbage.display().to_string(),
        flood.display().to_string(),
        killed.display().to_string(),
        not_executable.display().to_string(),
        "/nonexistent/hook.sh".to_string(),
    ] {
        config.push_str(&hook("PreToolUse", None, &command));
    }
    env.config(&config);
    let output = env.run(&["--yes", "make the file"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(env.workspace.join("made.txt").exists(), "{stderr}");
    for expected in [
        "garbage.sh` printed invalid JSON; ignored it",
        "flood.sh` printed 3000000 bytes (more than 262144); ignored it",
        "killed by signal 9",
        "plain.sh` is not executable (exit 126)",
        "/nonexistent/hook.sh` was not found (exit 127)",
    ] {
        assert_eq!(stderr.matches(expected).count(), 1, "{expected}\n{stderr}");
    }
    assert_eq!(hook_runs(&env).len(), 5);
}

#[test]
fn a_project_hook_runs_only_in_a_trusted_workspace() {
    for trusted in [false, true] {
        let server = MockServer::start(bash_then_done("touch made.txt"));
        let env = TestEnv::with_server(&server);
        let block = script(&env, "block.sh", "echo 'project says no' >&2; exit 2");
        env.write(
            ".agents/config.toml",
            &hook("PreToolUse", None, &block.display().to_string()),
        );
        if trusted {
            env.config(&format!(
                "trusted_workspaces = ['{}']\n",
                env.workspace.display()
            ));
        }
        let output = env.run(&["--yes", "make the file"]);
        let (_, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        assert_eq!(
            env.workspace.join("made.txt").exists(),
            !trusted,
            "{stderr}"
        );
        assert_eq!(
            stderr.contains("ignoring [hooks] PreToolUse in the untrusted project config"),
            !trusted,
            "{stderr}"
        );
        if trusted {
            assert_eq!(tool_result(&server), "Blocked by hook: project says no");
        }
    }
}

#[test]
fn a_deny_rule_beats_a_hook_allow_and_an_allow_answers_an_ask() {
    let allow = |env: &TestEnv| {
        script(
            env,
            "allow.sh",
            r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'"#,
        )
    };
    let server = MockServer::start(bash_then_done("touch made.txt"));
    let env = TestEnv::with_server(&server);
    let hook_path = allow(&env);
    env.config(&format!(
        "[[permissions.rules]]\ntool = \"bash\"\npattern = \"touch *\"\naction = \"deny\"\n{}",
        hook("PreToolUse", None, &hook_path.display().to_string())
    ));
    let output = env.run(&["--yes", "make the file"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    assert!(!env.workspace.join("made.txt").exists());
    assert!(tool_result(&server).starts_with("Blocked by policy: `touch made.txt`"));

    // `mkdir` is `ask` by default; without --yes and without a terminal it would be
    // declined, but the hook's allow answers it (the sandbox still applies).
    if std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .is_ok()
    {
        eprintln!("skipped the ask half: a controlling terminal would be asked");
        return;
    }
    let server = MockServer::start(bash_then_done("mkdir made"));
    let env = TestEnv::with_server(&server);
    let hook_path = allow(&env);
    env.config(&hook("PreToolUse", None, &hook_path.display().to_string()));
    let output = env.run(&["make the dir"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    assert!(
        env.workspace.join("made").is_dir(),
        "{}",
        tool_result(&server)
    );
}

#[test]
fn post_tool_use_runs_a_formatter_after_an_edit_and_its_feedback_reaches_the_model() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events(
            "call_1",
            "write_file",
            &json!({"path": "notes.txt", "content": "shout this\n"}).to_string(),
        )),
        Reply::Sse(text_events(&["written"])),
    ]);
    let env = TestEnv::with_server(&server);
    // A "formatter": upper-cases the file the edit touched, and says so on stderr (exit 2
    // sends stderr to the model after the result).
    let format = script(
        &env,
        "format.sh",
        "file=$(sed -n 's/.*\"path\":\"\\([^\"]*\\)\".*/\\1/p')\n\
         tr a-z A-Z < \"$file\" > \"$file.tmp\" && mv \"$file.tmp\" \"$file\"\n\
         echo \"formatted $file\" >&2\nexit 2",
    );
    env.config(&hook(
        "PostToolUse",
        Some("write_file|str_replace"),
        &format.display().to_string(),
    ));
    let output = env.run(&["--yes", "write notes"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    assert_eq!(env.read("notes.txt"), "SHOUT THIS\n");
    let result = tool_result(&server);
    assert!(
        result.contains("\nPostToolUse hook: formatted notes.txt\n"),
        "{result}"
    );
}

/// The tool message answering `id` in the last request, without the reminder.
fn tool_result_of(server: &MockServer, id: &str) -> String {
    let requests = server.chat_requests();
    let last = requests.last().expect("a request");
    check_request_invariants(&last.body).expect("well-formed request");
    last.messages()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str())
        .map(|c| {
            c.split("\n\n<system-reminder>")
                .next()
                .unwrap_or(c)
                .to_string()
        })
        .unwrap_or_default()
}

#[test]
fn a_file_a_post_tool_use_hook_rewrote_can_be_edited_again_without_a_read() {
    let call =
        |id: &str, tool: &str, args: Value| Reply::Sse(tool_events(id, tool, &args.to_string()));
    let server = MockServer::start(vec![
        call(
            "call_1",
            "write_file",
            json!({"path": "notes.txt", "content": "shout this\n"}),
        ),
        // The new text, as the hook left it, without a read_file in between.
        call(
            "call_2",
            "str_replace",
            json!({"path": "notes.txt", "old_str": "SHOUT THIS", "new_str": "SHOUT THAT"}),
        ),
        // Something other than the hook changes the file: that is still a foreign change.
        call(
            "call_3",
            "bash",
            json!({"command": "sed -i s/THAT/THOSE/ notes.txt"}),
        ),
        call(
            "call_4",
            "str_replace",
            json!({"path": "notes.txt", "old_str": "THOSE", "new_str": "THEM"}),
        ),
        Reply::Sse(text_events(&["done"])),
    ]);
    let env = TestEnv::with_server(&server);
    // A "formatter" that upper-cases the file the edit touched.
    let format = script(
        &env,
        "format.sh",
        "file=$(sed -n 's/.*\"path\":\"\\([^\"]*\\)\".*/\\1/p')\n\
         tr a-z A-Z < \"$file\" > \"$file.tmp\" && mv \"$file.tmp\" \"$file\"",
    );
    env.config(&hook(
        "PostToolUse",
        Some("write_file|str_replace"),
        &format.display().to_string(),
    ));
    let output = env.run(&["--yes", "write notes"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);

    let note = "A PostToolUse hook changed `notes.txt` after this edit (formatter?): read it \
                before an edit that depends on its exact text.";
    let first = tool_result_of(&server, "call_1");
    assert!(first.starts_with("Created `notes.txt`"), "{first}");
    assert!(first.ends_with(&format!("\n{note}")), "{first}");
    // The hook's rewrite counts as seen: the edit of the new text goes through, and the
    // hook leaving that edit as it was is no change to report.
    let second = tool_result_of(&server, "call_2");
    assert!(!second.starts_with("Error"), "{second}");
    assert!(!second.contains("PostToolUse hook changed"), "{second}");
    let fourth = tool_result_of(&server, "call_4");
    assert!(
        fourth.contains("notes.txt changed on disk since last read"),
        "{fourth}"
    );
    assert_eq!(env.read("notes.txt"), "SHOUT THOSE\n");
}

#[test]
fn a_hook_ask_puts_an_allowed_call_to_the_user() {
    if std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .is_ok()
    {
        eprintln!("skipped: a controlling terminal would be asked");
        return;
    }
    // `ls` is allowed by the default rules; the hook asks, no terminal can answer: declined.
    let server = MockServer::start(bash_then_done("ls"));
    let env = TestEnv::with_server(&server);
    let ask = script(
        &env,
        "ask.sh",
        r#"echo '{"permissionDecision":"ask","reason":"look first"}'"#,
    );
    env.config(&hook("PreToolUse", None, &ask.display().to_string()));
    let output = env.run(&["--json", "list files"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let requested: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "approval.requested")
        .collect();
    assert_eq!(requested.len(), 1, "{stdout}");
    assert_eq!(requested[0]["reason"], "a PreToolUse hook asks: look first");
    assert!(
        tool_result(&server).starts_with("The user denied this tool call: approval was needed"),
        "{}",
        tool_result(&server)
    );
}

#[test]
fn session_start_adds_context_and_session_end_runs_at_exit() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["hello"]))]);
    let env = TestEnv::with_server(&server);
    let ended = env.outside().join("ended.json");
    let start = script(&env, "start.sh", "echo 'Open tickets: 3.'");
    let end = script(&env, "end.sh", &format!("cat > '{}'", ended.display()));
    env.config(&format!(
        "{}{}",
        hook(
            "SessionStart",
            Some("startup"),
            &start.display().to_string()
        ),
        hook("SessionEnd", None, &end.display().to_string())
    ));
    let output = env.run(&["hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let messages = server.chat_requests()[0].messages();
    assert!(
        messages[2]["content"]
            .as_str()
            .unwrap_or("")
            .starts_with("Context added by the user's hooks:\nOpen tickets: 3."),
        "{messages:?}"
    );
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&ended).unwrap()).unwrap();
    assert_eq!(
        (&input["hook_event_name"], &input["reason"]),
        (&json!("SessionEnd"), &json!("exit"))
    );
}
