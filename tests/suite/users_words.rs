//! "The user's words win" (SPEC §3.5, issue 13) end to end on the mock: requests to show,
//! tell or explain, or that say not to run, end after the model's answer, with no harness
//! request and nothing run, with a capable model and with the coach on for a small one,
//! with and without `--yes`. Also: the coach's switch (auto by name, by evidence, the flag
//! and the config), and the repeated-call guard. Every request the mock receives is checked
//! for the tool-call/tool-result invariant when the server is dropped.

use serde_json::Value;

use crate::support::env::texts;
use crate::support::sse::{text_events, tool_events};
use crate::support::{CAPABLE_MODEL, MockServer, Reply, SMALL_MODEL, TestEnv};

const CASES: &str = include_str!("../data/reports-2026-12.jsonl");

fn case(id: &str) -> Value {
    CASES
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|case| case["id"] == id)
        .unwrap_or_else(|| panic!("no case {id}"))
}

/// How the agent is run: the model's name and the flags.
struct Mode {
    model: &'static str,
    args: &'static [&'static str],
}

/// A capable model with `--yes`; the same without `--yes` (no terminal to ask on); a small
/// model with the coach on by name (auto) and explicitly.
const MODES: &[Mode] = &[
    Mode {
        model: CAPABLE_MODEL,
        args: &["--yes"],
    },
    Mode {
        model: CAPABLE_MODEL,
        args: &[],
    },
    Mode {
        model: SMALL_MODEL,
        args: &["--yes"],
    },
    Mode {
        model: SMALL_MODEL,
        args: &["--yes", "--coach", "on"],
    },
    Mode {
        model: CAPABLE_MODEL,
        args: &["--yes", "--coach", "on"],
    },
];

/// Runs `request` in every mode against `replies` and checks the turn ended after
/// `answered` model calls, ran no command, created none of `markers`, and printed the last
/// answer. Returns each run's stderr.
fn ends_with_the_answer(request: &str, replies: &[Reply], answered: usize, markers: &[&str]) {
    for mode in MODES {
        let server = MockServer::start(replies.to_vec());
        let env = TestEnv::with_model(&server, mode.model);
        let mut args: Vec<&str> = mode.args.to_vec();
        args.push(request);
        let output = env.run(&args);
        let (stdout, stderr) = texts(&output);
        let label = format!("{} {:?}: {request}", mode.model, mode.args);
        assert_eq!(output.status.code(), Some(0), "{label}\n{stderr}");
        assert_eq!(
            server.chat_requests().len(),
            answered,
            "{label}: no harness request\n{stderr}"
        );
        assert!(
            !stderr.contains("● bash"),
            "{label}: nothing runs\n{stderr}"
        );
        assert!(!stderr.contains("asking the model"), "{label}\n{stderr}");
        assert!(
            !stderr.contains("wants to run"),
            "{label}: no approval\n{stderr}"
        );
        for marker in markers {
            assert!(
                !env.workspace.join(marker).exists(),
                "{label}: {marker} was created"
            );
        }
        assert!(!stdout.trim().is_empty(), "{label}: the answer is printed");
    }
}

fn text(reply: &str) -> Reply {
    Reply::Sse(text_events(&[reply]))
}

#[test]
fn show_me_how_to_rebase_ends_with_the_answer() {
    let answer = "Fetch, then rebase:\n```bash\ngit rebase origin/main && touch REBASED\n```";
    ends_with_the_answer(
        "Show me how to rebase my branch onto main",
        &[text(answer), text(answer)],
        1,
        &["REBASED"],
    );
}

#[test]
fn tell_me_the_command_ends_with_the_answer() {
    let answer = "Run:\n```bash\npython3 -m pytest -q && touch TESTS_RAN\n```";
    ends_with_the_answer(
        "Tell me the command to run the tests",
        &[text(answer), text(answer)],
        1,
        &["TESTS_RAN"],
    );
}

#[test]
fn a_script_the_user_will_run_is_written_but_never_run() {
    let write = Reply::Sse(tool_events(
        "w1",
        "write_file",
        r#"{"path":"deploy.sh","content":"touch DEPLOYED\n"}"#,
    ));
    let answer = "Written. Run it yourself: `sh deploy.sh`\n```sh\nsh deploy.sh\n```";
    let shown = "```sh\nsh deploy.sh\n```";
    for mode in MODES.iter().filter(|m| m.args.contains(&"--yes")) {
        let server = MockServer::start(vec![write.clone(), text(answer), text(shown)]);
        let env = TestEnv::with_model(&server, mode.model);
        let mut args = mode.args.to_vec();
        args.push(
            "Write deploy.sh that rsyncs dist/ to prod. Do not run it, I will run it myself after review.",
        );
        let output = env.run(&args);
        let (stdout, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        assert_eq!(server.chat_requests().len(), 2, "{}: {stderr}", mode.model);
        assert!(
            env.workspace.join("deploy.sh").exists(),
            "the file is written"
        );
        assert!(!env.workspace.join("DEPLOYED").exists(), "{stderr}");
        assert!(stdout.contains("Run it yourself"), "{stdout}");
    }
}

/// Case `b-exemplar-toolcall-in-prose`: the example call in the explanation is never run,
/// also not after a follow-up request (there is none).
#[test]
fn an_example_call_in_an_explanation_is_never_run() {
    let case = case("b-exemplar-toolcall-in-prose");
    let task = case["input"]["task"].as_str().unwrap();
    let reply = case["input"]["reply"].as_str().unwrap();
    ends_with_the_answer(task, &[text(reply), text(reply)], 1, &["EXAMPLE_RAN"]);
}

/// The same phrasings the table test reads, through the binary: every answer-only or
/// don't-run request ends after the answer, whichever way the answer shows a command.
#[test]
fn more_show_and_dont_run_phrasings_end_with_the_answer() {
    let answer = "Like this:\n```sh\ntouch RAN\n```\nor, as a call:\n```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"touch RAN\"}}\n```";
    for request in [
        "How do I run the tests?",
        "Explain how tool calls look; explain only, don't change anything",
        "What command builds the project?",
        "Give me the command to start the server",
        "Just tell me the command, don't run it",
    ] {
        ends_with_the_answer(request, &[text(answer), text(answer)], 1, &["RAN"]);
    }
}

/// A request for work with a capable model: its final answer is final, even when it leaves
/// a command to the user (no run request, no shown command taken as a call).
#[test]
fn a_capable_models_final_answer_is_final() {
    let write = Reply::Sse(tool_events(
        "w1",
        "write_file",
        r#"{"path":"hello.py","content":"print('hello')\n"}"#,
    ));
    let answer = "Created hello.py. Run it with:\n```bash\npython3 hello.py && touch RAN\n```";
    let server = MockServer::start(vec![write, text(answer), text(answer)]);
    let env = TestEnv::with_model(&server, CAPABLE_MODEL);
    let output = env.run(&["--yes", "Create hello.py that prints hello, then run it"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(server.chat_requests().len(), 2, "{stderr}");
    assert!(stdout.contains("Created hello.py"), "{stdout}");
    assert!(!env.workspace.join("RAN").exists());
    assert!(
        stderr.contains("coach off (auto: no sign the model needs help)"),
        "{stderr}"
    );
}

/// `auto`: a capable model's name, but the model writes its tool call as text: the coach
/// turns on (with a notice), and the answer that leaves the run to the user then gets the
/// run request.
#[test]
fn a_tool_call_written_as_text_turns_the_coach_on() {
    let call_as_text = "```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"hello.sh\", \"content\": \"echo hello\\n\"}}\n```";
    let server = MockServer::start(vec![
        text(call_as_text),
        text("Created it. Run it with:\n```bash\nsh hello.sh\n```"),
        Reply::Sse(tool_events("b1", "bash", r#"{"command":"sh hello.sh"}"#)),
        text("It prints hello."),
    ]);
    let env = TestEnv::with_model(&server, "some-hosted-model");
    let output = env.run(&["--yes", "create hello.sh and run it"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "It prints hello.\n");
    assert!(
        stderr.contains("coach on (auto: the model wrote a tool call as text)"),
        "{stderr}"
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4, "{stderr}");
    let nudge = requests[2].messages().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(nudge.contains("Run `sh hello.sh` yourself now"), "{nudge}");
}

/// `--coach off` (or `coach = "off"`): a small model gets the plain loop too; the banner
/// says so and why. A bad value in the config is a usage error naming the file.
#[test]
fn the_coach_setting_and_the_banner() {
    let answer = "Created it. Run it with:\n```bash\nsh hello.sh\n```";
    let write = Reply::Sse(tool_events(
        "w1",
        "write_file",
        r#"{"path":"hello.sh","content":"echo hello\n"}"#,
    ));
    let server = MockServer::start(vec![write.clone(), text(answer)]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["--yes", "--coach", "off", "create hello.sh and run it"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("coach off (set to off)"), "{stderr}");
    assert_eq!(server.chat_requests().len(), 2);

    let server = MockServer::start(vec![write, text(answer), text("ok")]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["--yes", "create hello.sh and run it"]);
    let (_, stderr) = texts(&output);
    assert!(
        stderr.contains(&format!(
            "coach on (auto: `{SMALL_MODEL}` is a small local model)"
        )),
        "{stderr}"
    );
    assert_eq!(server.chat_requests().len(), 3, "nudged once");

    let server = MockServer::start(vec![text("hi")]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    env.config("[model]\ncoach = \"off\"\n");
    let output = env.run(&["hello"]);
    let (_, stderr) = texts(&output);
    assert!(stderr.contains("coach off (set to off)"), "{stderr}");
    env.config("[model]\ncoach = \"sometimes\"\n");
    let output = env.run(&["hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("config.toml"), "{stderr}");
    assert!(stderr.contains("\"sometimes\""), "{stderr}");
}

/// Case `d-repeated-identical-tool-call`: every reply is the same `git status` call. The
/// third identical result is pointed out; the fourth identical call is not run and the turn
/// stops with exit code 3, far below `--max-turns`.
#[test]
fn the_same_call_over_and_over_is_pointed_out_then_stopped() {
    let expected = case("d-repeated-identical-tool-call")["expected"].clone();
    assert!(expected.as_str().unwrap().contains("far fewer"));
    for model in [CAPABLE_MODEL, SMALL_MODEL] {
        let replies: Vec<Reply> = (0..20)
            .map(|i| {
                Reply::Sse(tool_events(
                    &format!("c{i}"),
                    "bash",
                    r#"{"command":"git status --short"}"#,
                ))
            })
            .collect();
        let server = MockServer::start(replies);
        let env = TestEnv::with_model(&server, model);
        let output = env.run(&["--yes", "what changed?"]);
        let (_, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(3), "{model}: {stderr}");
        assert!(
            stderr.contains("stopped: the model made the same `bash` call 4 times in a row"),
            "{stderr}"
        );
        let requests = server.chat_requests();
        assert_eq!(requests.len(), 4, "{model}: {stderr}");
        let third = requests[3].messages().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(third.contains("3rd identical `bash` call"), "{third}");
        assert_eq!(stderr.matches("● bash").count(), 3, "the fourth is not run");
    }
}

/// The same call with a changing result is not a repeat (a test run while files change).
#[test]
fn the_same_call_with_a_new_result_is_no_repeat() {
    let mut replies: Vec<Reply> = (0..5)
        .map(|i| {
            Reply::Sse(tool_events(
                &format!("c{i}"),
                "bash",
                r#"{"command":"echo x >> log.txt; wc -l < log.txt"}"#,
            ))
        })
        .collect();
    replies.push(text("done"));
    let server = MockServer::start(replies);
    let env = TestEnv::with_model(&server, CAPABLE_MODEL);
    let output = env.run(&["--yes", "append five lines"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "done\n");
    assert_eq!(server.chat_requests().len(), 6);
    assert!(!stderr.contains("told it so"), "{stderr}");
}
