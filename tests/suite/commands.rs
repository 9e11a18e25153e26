//! Custom slash commands one-shot (`agent /name args`, issue 18), and notifications that
//! never reach a pipe or `--json` (the terminal side is in `pty`).

use crate::support::env::texts;
use crate::support::sse::text_events;
use crate::support::{MockServer, Reply, TestEnv};

#[test]
fn one_shot_runs_a_custom_command_or_a_skill_with_arguments() {
    let server = MockServer::start(vec![
        Reply::Sse(text_events(&["reviewed"])),
        Reply::Sse(text_events(&["shipped"])),
    ]);
    let env = TestEnv::with_server(&server);
    std::fs::create_dir_all(env.agent_home.join("commands")).unwrap();
    std::fs::write(
        env.agent_home.join("commands/review.md"),
        "---\ndescription: Review a file\n---\nReview $1 for $2 problems.\n",
    )
    .unwrap();
    env.write(
        ".agents/skills/ship/SKILL.md",
        "---\nname: ship\ndescription: Ship a release\n---\nTag and push.\n",
    );
    let output = env.run(&["/review", "src/main.rs", "security"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.trim(), "reviewed");
    let output = env.run(&["/ship v1.2"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let requests = server.chat_requests();
    let user = |i: usize| {
        requests[i].messages()[1]["content"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(
        user(0).starts_with("Review src/main.rs for security problems."),
        "{}",
        user(0)
    );
    assert!(
        user(1).starts_with(
            "Use the skill `ship`. Its instructions:\n\nTag and push.\n\nThe task: v1.2"
        ),
        "{}",
        user(1)
    );
}

#[test]
fn an_unknown_slash_word_is_a_plain_task_and_broken_frontmatter_warns() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let env = TestEnv::with_server(&server);
    env.write(".agents/commands/odd.md", "---\ndescription x\n---\nBody\n");
    let output = env.run(&["/tmp/notes.txt explain"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("has broken frontmatter"), "{stderr}");
    let requests = server.chat_requests();
    let user = requests[0].messages()[1]["content"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(user.starts_with("/tmp/notes.txt explain"), "{user}");
}

#[test]
fn no_notification_escape_reaches_a_pipe_or_json() {
    for json in [false, true] {
        let server = MockServer::start(vec![Reply::Sse(text_events(&["done"]))]);
        let env = TestEnv::with_server(&server);
        env.config("[ui]\nnotify = \"auto\"\nnotify_after = 0\n");
        let mut args = vec!["--yes"];
        if json {
            args.push("--json");
        }
        args.push("say done");
        let output = env
            .cmd()
            .args(&args)
            .env("TERM_PROGRAM", "iTerm.app")
            .write_stdin("")
            .output()
            .unwrap();
        let (stdout, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        assert!(stdout.contains("done"), "{stdout}");
        for text in [&stdout, &stderr] {
            assert!(
                !text.contains('\x07') && !text.contains("\x1b]9;"),
                "{text:?}"
            );
        }
    }
}
