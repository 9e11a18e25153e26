//! The REPL in a real pseudo-terminal (expectrl) against the mock model server: typing a
//! task, answering an approval with one key, interrupting a running tool and a streaming
//! answer with Ctrl-C, the keys at the prompt, and plain output under `NO_COLOR`.
//!
//! Waits are on output with a timeout, never sleeps. The one timing assertion is the one the
//! issue sets: the prompt is back within a second of Ctrl-C.

use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession;
use expectrl::{Expect, Session};
use serde_json::json;

use crate::support::sse::{check_request_invariants, text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

/// Generous: the machine is shared and debug builds are slow to start.
pub(super) const WAIT: Duration = Duration::from_secs(20);

pub(super) struct Pty {
    session: OsSession,
    /// Everything read so far, escape codes included.
    pub(super) log: String,
    pub(super) env: TestEnv,
}

impl Pty {
    /// `agent` with `args` in a 100x30 terminal; colour unless `vars` says otherwise.
    fn start(server: &MockServer, args: &[&str], vars: &[(&str, &str)]) -> Self {
        Self::start_in(TestEnv::with_server(server), server, args, vars)
    }

    /// Like [`Pty::start`], in a test environment the caller prepared.
    pub(super) fn start_in(
        env: TestEnv,
        server: &MockServer,
        args: &[&str],
        vars: &[(&str, &str)],
    ) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent"));
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &env.home)
            .env("AGENT_HOME", &env.agent_home)
            .env("BASE_URL", server.base_url())
            .env("MODEL", "mock-model")
            .env("TERM", "xterm-256color")
            .current_dir(&env.workspace);
        for (key, value) in vars {
            cmd.env(key, value);
        }
        let mut session = Session::spawn(cmd).expect("spawn agent in a pty");
        session
            .get_process_mut()
            .set_window_size(100, 30)
            .expect("window size");
        Self {
            session,
            log: String::new(),
            env,
        }
    }

    /// Waits until `needle` appears; returns what came before it. Panics with the screen
    /// output so far when it does not come within `timeout`.
    pub(super) fn expect(&mut self, needle: &str, timeout: Duration) -> String {
        self.session.set_expect_timeout(Some(timeout));
        match self.session.expect(needle) {
            Ok(found) => {
                self.log
                    .push_str(&String::from_utf8_lossy(found.as_bytes()));
                String::from_utf8_lossy(found.before()).into_owned()
            }
            Err(error) => panic!(
                "waiting for {needle:?}: {error}\n--- output so far ---\n{}",
                strip(&self.log)
            ),
        }
    }

    pub(super) fn send(&mut self, text: &str) {
        self.session.send(text).expect("write to pty");
    }

    /// Ctrl-<key>.
    pub(super) fn ctrl(&mut self, key: char) {
        let byte = (key.to_ascii_uppercase() as u8) & 0x1f;
        self.session.send([byte]).expect("write to pty");
    }

    /// Waits for the process to end and returns its exit code.
    pub(super) fn exit_code(&mut self) -> i32 {
        let deadline = Instant::now() + WAIT;
        loop {
            // Keep draining output so the child never blocks on a full pty.
            self.session
                .set_expect_timeout(Some(Duration::from_millis(50)));
            if let Ok(found) = self.session.expect(expectrl::Eof) {
                self.log
                    .push_str(&String::from_utf8_lossy(found.as_bytes()));
            }
            match self.session.get_process().status() {
                Ok(WaitStatus::Exited(_, code)) => return code,
                Ok(WaitStatus::StillAlive) | Err(_) if Instant::now() < deadline => {}
                other => panic!("agent did not exit: {other:?}\n{}", strip(&self.log)),
            }
        }
    }
}

/// `text` without escape sequences.
pub(super) fn strip(text: &str) -> String {
    agent::ui::text::clean(text, 4)
}

#[test]
fn task_approval_and_ctrl_d() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events(
            "call_1",
            "bash",
            &json!({"command": "touch approved.txt && echo made-it"}).to_string(),
        )),
        Reply::Sse(text_events(&[
            "Created **approved",
            ".txt** for ",
            "you.\n",
        ])),
    ]);
    let mut pty = Pty::start(&server, &[], &[]);
    pty.expect("›", WAIT);
    // A trailing backslash continues the input on a new line.
    pty.send("create the file\\\r");
    pty.send("named approved.txt\r");
    pty.expect("allow?", WAIT);
    pty.send("y");
    pty.expect("made-it", WAIT);
    pty.expect("you.", WAIT);
    pty.expect("in · ", WAIT);
    pty.expect("›", WAIT);
    assert!(pty.env.workspace.join("approved.txt").exists());
    let screen = strip(&pty.log);
    assert!(
        screen.contains("● bash  touch approved.txt && echo made-it"),
        "{screen}"
    );
    assert!(screen.contains("Created approved.txt for you."), "{screen}");
    pty.ctrl('d');
    let history_file = pty.env.agent_home.join("history");
    assert_eq!(pty.exit_code(), 0);

    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].messages();
    assert!(
        first[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("create the file\nnamed approved.txt"),
        "{first:?}"
    );
    check_request_invariants(&requests[1].body).unwrap();
    let history = std::fs::read_to_string(history_file).unwrap_or_default();
    assert!(history.contains("named approved.txt"), "{history}");
}

#[test]
fn ctrl_c_during_a_tool_kills_it_and_returns_to_the_prompt() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events(
            "call_1",
            "bash",
            r#"{"command": "sleep 30 && touch late.txt"}"#,
        )),
        Reply::Sse(text_events(&["back again"])),
    ]);
    let mut pty = Pty::start(&server, &[], &[]);
    pty.expect("›", WAIT);
    pty.send("wait a while\r");
    pty.expect("allow?", WAIT);
    pty.send("y");
    // The spinner shows the tool is running.
    pty.expect("running", WAIT);
    let pressed = Instant::now();
    pty.ctrl('c');
    pty.expect("interrupted by user", Duration::from_secs(1));
    pty.expect("›", Duration::from_secs(1));
    let elapsed = pressed.elapsed();
    assert!(
        elapsed < Duration::from_secs(1),
        "prompt back after {elapsed:?}"
    );

    pty.send("and now?\r");
    pty.expect("back again", WAIT);
    pty.expect("›", WAIT);
    pty.ctrl('d');
    assert_eq!(pty.exit_code(), 0);

    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    check_request_invariants(&requests[1].body).unwrap();
    let messages = requests[1].messages();
    let tool = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool message");
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("interrupted by user"),
        "{tool}"
    );
}

#[test]
fn ctrl_c_at_the_approval_prompt_declines_and_interrupts() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events(
            "call_1",
            "bash",
            r#"{"command": "touch never.txt"}"#,
        )),
        Reply::Sse(text_events(&["fine"])),
    ]);
    let mut pty = Pty::start(&server, &[], &[]);
    pty.expect("›", WAIT);
    pty.send("make a file\r");
    pty.expect("allow?", WAIT);
    let pressed = Instant::now();
    pty.ctrl('c');
    pty.expect("interrupted by user", Duration::from_secs(1));
    pty.expect("›", Duration::from_secs(1));
    assert!(pressed.elapsed() < Duration::from_secs(1));
    assert!(!pty.env.workspace.join("never.txt").exists());

    pty.send("ok?\r");
    pty.expect("fine", WAIT);
    pty.expect("›", WAIT);
    pty.ctrl('d');
    assert_eq!(pty.exit_code(), 0);
    let requests = server.chat_requests();
    check_request_invariants(&requests[1].body).unwrap();
    let messages = requests[1].messages();
    let tool = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool message");
    assert_eq!(tool["content"], "interrupted by user");
}

#[test]
fn json_needs_a_task() {
    let server = MockServer::start(vec![]);
    let mut pty = Pty::start(&server, &["--json"], &[]);
    let (code, output) = pty.exit_code_with_log();
    assert_eq!(code, 2, "{output}");
    assert!(output.contains("`--json` needs a task"), "{output}");
}

#[test]
fn ctrl_c_while_streaming_cancels_the_request() {
    let first = json!({"choices": [{"index": 0, "delta": {"content": "Streaming slowly "}}]});
    let server = MockServer::start(vec![
        Reply::SseRaw(vec![
            (Duration::ZERO, format!("data: {first}\n\n").into_bytes()),
            (Duration::from_secs(30), b"data: [DONE]\n\n".to_vec()),
        ]),
        Reply::Sse(text_events(&["second answer"])),
    ]);
    let mut pty = Pty::start(&server, &[], &[]);
    pty.expect("›", WAIT);
    pty.send("tell me a story\r");
    pty.expect("Streaming", WAIT);
    let pressed = Instant::now();
    pty.ctrl('c');
    pty.expect("interrupted by user", Duration::from_secs(1));
    pty.expect("›", Duration::from_secs(1));
    assert!(pressed.elapsed() < Duration::from_secs(1));

    pty.send("again\r");
    pty.expect("second answer", WAIT);
    pty.expect("›", WAIT);
    pty.ctrl('d');
    assert_eq!(pty.exit_code(), 0);
    let requests = server.chat_requests();
    check_request_invariants(&requests[1].body).unwrap();
    let roles: Vec<String> = requests[1]
        .messages()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(roles, vec!["system", "user", "user"]);
}

#[test]
fn keys_and_commands_at_the_prompt() {
    let server = MockServer::start(vec![]);
    let mut pty = Pty::start(&server, &[], &[]);
    pty.expect("›", WAIT);
    pty.send("/help\r");
    pty.expect("/resume", WAIT);
    pty.expect("›", WAIT);
    pty.send("/nope\r");
    pty.expect("unknown command `/nope`; known: /help, /exit", WAIT);
    pty.expect("›", WAIT);
    // An argument a command cannot take is an error, not silently dropped.
    pty.send("/model gpt 4\r");
    pty.expect(
        "`/model` takes one name, got `gpt 4`; names have no spaces",
        WAIT,
    );
    pty.expect("›", WAIT);
    // Tab completes a slash command.
    pty.send("/he\t");
    pty.expect("lp", WAIT);
    pty.send("\r");
    pty.expect("/resume", WAIT);
    pty.expect("›", WAIT);
    // Ctrl-C clears a line with text and keeps the session.
    pty.send("half a thought");
    pty.expect("thought", WAIT);
    pty.ctrl('c');
    pty.send("/model\r");
    pty.expect("model: mock-model", WAIT);
    pty.expect("›", WAIT);
    // On an empty line: once warns, twice exits.
    pty.ctrl('c');
    pty.expect("Ctrl-C again", WAIT);
    // The prompt is drawn once the line editor is reading keys again (raw mode); a Ctrl-C
    // sent before that is a SIGINT from the terminal driver, not a key press.
    pty.expect("›", WAIT);
    pty.ctrl('c');
    assert_eq!(pty.exit_code(), 0);
    assert!(server.chat_requests().is_empty());
}

#[test]
fn no_color_means_no_escape_codes() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events(
            "call_1",
            "bash",
            r#"{"command": "touch x.txt"}"#,
        )),
        Reply::Sse(text_events(&["# Done\n\n**Created** `x.txt`.\n"])),
    ]);
    let mut pty = Pty::start(&server, &["make x.txt"], &[("NO_COLOR", "1")]);
    pty.expect("allow?", WAIT);
    pty.send("y");
    pty.expect("Created", WAIT);
    let code = pty.exit_code_with_log();
    assert_eq!(code.0, 0, "{}", code.1);
    let output = code.1;
    assert!(
        !output.contains('\x1b'),
        "escape code in NO_COLOR output: {output:?}"
    );
    assert!(output.contains("● bash  touch x.txt"), "{output}");
    assert!(output.contains("**Created** `x.txt`."), "{output}");
}

impl Pty {
    /// Like [`Pty::exit_code`], also returning everything the process wrote.
    fn exit_code_with_log(&mut self) -> (i32, String) {
        self.session.set_expect_timeout(Some(WAIT));
        if let Ok(found) = self.session.expect(expectrl::Eof) {
            self.log
                .push_str(&String::from_utf8_lossy(found.as_bytes()));
        }
        let log = self.log.clone();
        (self.exit_code(), log)
    }
}

/// A reply held back as a possible tool call (it streams for over a second) shows the
/// spinner with `writing` and the count of characters received, then runs as a call; the
/// markup itself is never printed.
#[test]
fn a_held_back_reply_shows_that_the_model_is_writing() {
    let call = r#"{"name": "bash", "arguments": {"command": "echo HELD_RAN"}}"#;
    let chars: Vec<char> = call.chars().collect();
    let mut pieces: Vec<(Duration, Vec<u8>)> = chars
        .chunks(8)
        .map(|piece| {
            let text: String = piece.iter().collect();
            let event = json!({"choices": [{"index": 0, "delta": {"content": text}}]});
            (
                Duration::from_millis(200),
                format!("data: {event}\n\n").into_bytes(),
            )
        })
        .collect();
    let finish = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    pieces.push((
        Duration::ZERO,
        format!("data: {finish}\n\ndata: [DONE]\n\n").into_bytes(),
    ));
    let server = MockServer::start(vec![
        Reply::SseRaw(pieces),
        Reply::Sse(text_events(&["ran it"])),
    ]);
    let mut pty = Pty::start(&server, &["run the check"], &[]);
    pty.expect("writing", WAIT);
    let count = pty.expect(" chars ", WAIT);
    assert!(
        count.trim().parse::<usize>().is_ok_and(|n| n > 0),
        "{count:?}"
    );
    let (code, log) = pty.exit_code_with_log();
    let log = strip(&log);
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("bash  echo HELD_RAN"), "{log}");
    assert!(log.contains("ran it"), "{log}");
    assert!(!log.contains("\"arguments\""), "{log}");
    for request in server.chat_requests() {
        check_request_invariants(&request.body).unwrap();
    }
}

#[test]
fn a_custom_command_runs_with_its_arguments_and_completes_with_tab() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["fixed it"]))]);
    let env = TestEnv::with_server(&server);
    env.write(
        ".agents/commands/fix-issue.md",
        "---\ndescription: Fix a GitHub issue\nargument-hint: NUMBER [PRIORITY]\n---\nFix issue #$1 with priority $2 ($ARGUMENTS).\n",
    );
    let mut pty = Pty::start_in(env, &server, &[], &[]);
    pty.expect("›", WAIT);
    pty.send("/help\r");
    pty.expect("Fix a GitHub issue", WAIT);
    pty.expect("›", WAIT);
    pty.send("/fix-i\t");
    pty.expect("issue", WAIT);
    pty.send(" 42 high\r");
    pty.expect("fixed it", WAIT);
    pty.expect("›", WAIT);
    pty.ctrl('d');
    assert_eq!(pty.exit_code(), 0);
    let screen = strip(&pty.log);
    assert!(
        screen.contains("/fix-issue NUMBER [PRIORITY] Fix a GitHub issue"),
        "{screen}"
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 1);
    let user = requests[0].messages()[1]["content"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        user.starts_with("Fix issue #42 with priority high (42 high)."),
        "{user}"
    );
}

#[test]
fn approvals_and_finished_turns_ring_the_terminal_unless_notify_is_off() {
    for notify in ["auto", "off"] {
        let server = MockServer::start(vec![
            Reply::Sse(tool_events(
                "call_1",
                "bash",
                &json!({"command": "touch rung.txt"}).to_string(),
            )),
            Reply::Sse(text_events(&["all done"])),
        ]);
        let env = TestEnv::with_server(&server);
        // A Notification hook hears of the approval too.
        let heard = env.outside().join("notification.json");
        env.config(&format!(
            "[ui]\nnotify = \"{notify}\"\nnotify_after = 0\n\
             [[hooks.Notification]]\ncommand = \"cat > '{}'\"\n",
            heard.display()
        ));
        let mut pty = Pty::start_in(env, &server, &[], &[]);
        pty.expect("›", WAIT);
        pty.send("make the file\r");
        let before_prompt = pty.expect("allow?", WAIT);
        pty.send("y");
        pty.expect("all done", WAIT);
        let after_answer = pty.expect("›", WAIT);
        pty.ctrl('d');
        assert_eq!(pty.exit_code(), 0);
        let ringing = notify == "auto";
        assert_eq!(
            before_prompt.contains('\x07'),
            ringing,
            "{notify}: {before_prompt:?}"
        );
        assert_eq!(
            after_answer.contains('\x07'),
            ringing,
            "{notify}: {after_answer:?}"
        );
        let input: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&heard).unwrap()).unwrap();
        assert_eq!(input["hook_event_name"], "Notification");
        assert_eq!(
            input["message"],
            "agent needs your approval to run bash: touch rung.txt"
        );
    }
}
