//! The pure renderers (markdown, diff, tool line, preview, usage line) as snapshots, the
//! text sink's transcripts in colour and plain mode, and the JSON sink's lines.
//!
//! Colour snapshots show escape codes as `«1;35»…«0»` so they can be reviewed as text.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent::events::{AgentEvent, EventSink};
use agent::model::Usage;
use agent::tools::ToolDisplay;
use agent::ui::json::JsonSink;
use agent::ui::markdown::MarkdownStream;
use agent::ui::spinner::{self, Waiting};
use agent::ui::style::{ColorDepth, Painter};
use agent::ui::terminal::{TerminalSink, Width};
use agent::ui::{diff, lines, theme};
use proptest::prelude::*;

const COLOR: Painter = Painter::color(ColorDepth::Ansi256);

/// Escape codes made readable: `\x1b[1;35m` → `«1;35»`, `\x1b[0m` → `«0»`.
fn visible(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after
            .find(|c: char| c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let code = &after[..end];
        let letter = after[end..].chars().next().unwrap_or('m');
        if letter == 'm' {
            out.push_str(&format!("«{code}»"));
        } else {
            out.push_str(&format!("«{code}{letter}»"));
        }
        rest = &after[(end + 1).min(after.len())..];
    }
    out.push_str(rest);
    out
}

fn markdown(source: &str, painter: Painter, width: usize, chunk: usize) -> String {
    let mut md = MarkdownStream::new(painter, width);
    let mut out = String::new();
    let chars: Vec<char> = source.chars().collect();
    for piece in chars.chunks(chunk.max(1)) {
        md.push(&piece.iter().collect::<String>(), &mut out);
    }
    md.finish(&mut out);
    out
}

const DOCUMENT: &str = "# Fixing the test

The test `adds_two_numbers` fails because **`add`** subtracts. See [the docs](https://doc.rust-lang.org/book/) and _this note_ for ~~nothing~~ more.

## Steps

1. Read `src/lib.rs`
2. Change the operator
   - keep the signature
   - run the tests again with a longer explanation that needs to wrap around the width
3. Done

> Quoted advice that is long enough to wrap onto a second line of the quote.

```rust
pub fn add(a: i32, b: i32) -> i32 {
    a + b // fixed
}
```

---

| file | change |
|:-----|-------:|
| `src/lib.rs` | 1 line |
| tests | none |

### Notes ###
Plain text with snake_case_names, 3 * 4 = 12, and a <b>tag</b>.";

#[test]
fn markdown_in_colour() {
    insta::assert_snapshot!(visible(&markdown(DOCUMENT, COLOR, 60, 1000)));
}

#[test]
fn markdown_narrow_wraps() {
    insta::assert_snapshot!(markdown(DOCUMENT, Painter::PLAIN, 34, 1000));
}

#[test]
fn markdown_streaming_shows_text_before_the_line_ends() {
    let mut md = MarkdownStream::new(COLOR, 80);
    let mut shown = Vec::new();
    for piece in [
        "The fix is",
        " simple: the **",
        "operator** was wrong",
        ".\n",
        "```sh\ncargo",
        " test\n",
    ] {
        let mut out = String::new();
        md.push(piece, &mut out);
        shown.push(visible(&out));
    }
    assert_eq!(
        shown,
        vec![
            "The fix",
            " is simple: the",
            " «1»operator«0» was",
            " wrong.\n",
            "",
            "  «38;5;109»cargo«0» test\n",
        ]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// However the text is cut into chunks, the screen shows the same thing.
    #[test]
    fn markdown_chunking_is_invisible(cuts in proptest::collection::vec(1usize..40, 1..60)) {
        let whole = markdown(DOCUMENT, COLOR, 60, 100_000);
        let chars: Vec<char> = DOCUMENT.chars().collect();
        let mut md = MarkdownStream::new(COLOR, 60);
        let mut out = String::new();
        let mut at = 0;
        let mut i = 0;
        while at < chars.len() {
            let end = (at + cuts[i % cuts.len()]).min(chars.len());
            md.push(&chars[at..end].iter().collect::<String>(), &mut out);
            at = end;
            i += 1;
        }
        md.finish(&mut out);
        prop_assert_eq!(out, whole);
    }

    /// Arbitrary text never panics and plain mode never writes an escape code.
    #[test]
    fn markdown_survives_any_text(source in "[ -~\n\t`*_#>|\\[\\]()~-]{0,200}") {
        let out = markdown(&source, Painter::PLAIN, 20, 3);
        prop_assert!(!out.contains('\x1b'));
        let _ = markdown(&source, COLOR, 20, 7);
    }
}

const BEFORE: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds_two_numbers() {\n        assert_eq!(add(2, 2), 4);\n    }\n}\n";

fn after() -> String {
    BEFORE.replace("a - b", "a + b").replace(
        "assert_eq!(add(2, 2), 4);",
        "assert_eq!(add(2, 2), 4);\n        assert_eq!(add(-1, 1), 0);",
    )
}

#[test]
fn diff_in_colour() {
    insta::assert_snapshot!(visible(&diff::render(BEFORE, &after(), COLOR, 60, 40)));
}

#[test]
fn diff_plain() {
    insta::assert_snapshot!(diff::render(BEFORE, &after(), Painter::PLAIN, 60, 40));
}

#[test]
fn diff_of_new_file_is_capped() {
    let content: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    insta::assert_snapshot!(diff::render("", &content, Painter::PLAIN, 60, 8));
}

#[test]
fn tool_lines() {
    let cases = [
        lines::tool_line("bash", "cargo test", COLOR, 80),
        lines::tool_line("bash", "cargo test", Painter::PLAIN, 80),
        lines::tool_line(
            "bash",
            "cat > notes.txt <<'EOF'\nhello\nEOF",
            Painter::PLAIN,
            80,
        ),
        lines::tool_line(
            "read_file",
            "src/a/very/long/path/that/does/not/fit/in/the/terminal/width.rs",
            Painter::PLAIN,
            40,
        ),
        lines::tool_line("bash", "printf '\x1b]0;pwned\x07'", Painter::PLAIN, 80),
    ];
    insta::assert_snapshot!(visible(&cases.concat()));
}

#[test]
fn previews() {
    let long: String = (1..=12)
        .map(|i| format!("test case_{i} ... ok\n"))
        .collect();
    let cases = [
        lines::preview(
            "running 1 test\ntest adds ... ok",
            true,
            Duration::from_millis(20),
            COLOR,
            80,
        ),
        lines::preview(&long, true, Duration::from_millis(2500), Painter::PLAIN, 80),
        lines::preview(
            "Error: bash failed - io error: boom",
            false,
            Duration::ZERO,
            COLOR,
            80,
        ),
        lines::preview("", true, Duration::ZERO, Painter::PLAIN, 80),
        lines::preview(&"x".repeat(200), true, Duration::ZERO, Painter::PLAIN, 30),
        lines::preview(
            "\x1b[32mgreen\x1b[0m\r\nprogress 10%\rprogress 100%",
            true,
            Duration::ZERO,
            Painter::PLAIN,
            80,
        ),
    ];
    insta::assert_snapshot!(visible(&cases.concat()));
}

#[test]
fn usage_lines() {
    let usage = Usage {
        prompt_tokens: 12_345,
        completion_tokens: 456,
        cached_tokens: Some(8_000),
        cost: Some(0.01234),
    };
    let small = Usage {
        prompt_tokens: 10,
        completion_tokens: 5,
        ..Usage::default()
    };
    let cases = [
        lines::usage_line(Some(&usage), 3, Some(11_520), 128_000),
        lines::usage_line(Some(&small), 1, Some(10), 128_000),
        lines::usage_line(None, 1, None, 128_000),
    ];
    insta::assert_snapshot!(cases.join("\n"));
}

/// A writer the test can read back.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// A fix-the-test turn as events.
fn session_events() -> Vec<AgentEvent> {
    let text = |t: &str| AgentEvent::TextDelta { text: t.into() };
    vec![
        AgentEvent::SessionStarted {
            session_id: "s1".into(),
            model: "mock-model".into(),
            workspace: PathBuf::from("/work/project"),
            sandbox: "sandbox workspace-write, network off".into(),
            coach: "coach off (auto: no sign the model needs help)".into(),
        },
        AgentEvent::TurnStarted {
            input: "fix the failing test".into(),
        },
        text("Let me run the "),
        text("tests first."),
        AgentEvent::MessageCompleted {
            text: "Let me run the tests first.".into(),
            has_tool_calls: true,
        },
        AgentEvent::ToolStarted {
            call_id: "c1".into(),
            tool: "bash".into(),
            summary: "cargo test".into(),
        },
        AgentEvent::ApprovalRequested {
            tool: "bash".into(),
            subject: "cargo test".into(),
            reason: "not in the allow list".into(),
            rule: None,
        },
        AgentEvent::ApprovalAnswered {
            tool: "bash".into(),
            answer: "yes".into(),
            approved: true,
        },
        AgentEvent::ToolFinished {
            call_id: "c1".into(),
            tool: "bash".into(),
            ok: true,
            output: "running 1 test\ntest adds_two_numbers ... FAILED\n[exit code 101]".into(),
            display: None,
            duration: Duration::from_millis(1500),
        },
        AgentEvent::ToolStarted {
            call_id: "c2".into(),
            tool: "str_replace".into(),
            summary: "src/lib.rs".into(),
        },
        AgentEvent::ToolFinished {
            call_id: "c2".into(),
            tool: "str_replace".into(),
            ok: true,
            output: "replaced 1 occurrence in src/lib.rs".into(),
            display: Some(ToolDisplay::Diff {
                path: "src/lib.rs".into(),
                before: BEFORE.into(),
                after: after(),
            }),
            duration: Duration::from_millis(3),
        },
        AgentEvent::ReasoningDelta {
            text: "The tests should pass now.".into(),
        },
        text("Fixed: `add` now **adds**.\n\n- ran `cargo test`\n- changed one line"),
        AgentEvent::MessageCompleted {
            text: String::new(),
            has_tool_calls: false,
        },
        AgentEvent::TurnCompleted {
            usage: Some(Usage {
                prompt_tokens: 2_400,
                completion_tokens: 120,
                ..Usage::default()
            }),
            model_calls: 3,
            context_tokens: Some(900),
            context_window: 128_000,
        },
        AgentEvent::Warning {
            message: "budget at 80%".into(),
        },
        AgentEvent::Error {
            message: "interrupted".into(),
        },
    ]
}

fn transcript(painter: Painter) -> String {
    let buffer = Buffer::default();
    let sink =
        TerminalSink::with_writers((Box::new(buffer.clone()), painter), None, Width::Fixed(60));
    for event in session_events() {
        sink.emit(event);
    }
    buffer.text()
}

#[test]
fn transcript_in_colour() {
    insta::assert_snapshot!(visible(&transcript(COLOR)));
}

#[test]
fn transcript_plain_has_no_escape_codes() {
    let text = transcript(Painter::PLAIN);
    assert!(!text.contains('\x1b'), "{text:?}");
    insta::assert_snapshot!(text);
}

#[test]
fn plain_mode_drops_escapes_from_model_text() {
    let buffer = Buffer::default();
    let sink = TerminalSink::with_writers(
        (Box::new(buffer.clone()), Painter::PLAIN),
        None,
        Width::Fixed(60),
    );
    sink.emit(AgentEvent::TextDelta {
        text: "a\x1b[2Jb\x1b]52;c;eA==\x07c\n".into(),
    });
    assert_eq!(buffer.text(), "abc\n");
}

/// Progress of a held-back reply is a spinner frame only: plain output and `--json` lines
/// are the same with or without it.
#[test]
fn held_reply_progress_is_only_a_spinner_frame() {
    let waiting = Waiting {
        label: "writing",
        since: Instant::now(),
        chars: Some(1_234),
    };
    let secs = Duration::from_secs(42);
    assert_eq!(
        spinner::frame(0, &waiting, secs, Painter::PLAIN, 0),
        "⠋ writing 1.2k chars 42s · Ctrl-C to interrupt"
    );
    assert_eq!(
        visible(&spinner::frame(1, &waiting, secs, COLOR, 30)),
        visible(&format!(
            "{} {}",
            COLOR.paint(theme::SPINNER, "⠙"),
            COLOR.paint(theme::SECONDARY, "writing 1.2k chars 42s · C…")
        ))
    );
    let thinking = Waiting {
        chars: None,
        label: "thinking",
        ..waiting
    };
    assert_eq!(
        spinner::frame(0, &thinking, secs, Painter::PLAIN, 0),
        "⠋ thinking 42s · Ctrl-C to interrupt"
    );

    let with_progress: Vec<AgentEvent> = session_events()
        .into_iter()
        .flat_map(|event| {
            let mut events = Vec::new();
            if matches!(event, AgentEvent::TextDelta { .. }) {
                events.extend((1..=3).map(|n| AgentEvent::TextHeld { chars: n * 100 }));
            }
            events.push(event);
            events
        })
        .collect();
    let render = |events: Vec<AgentEvent>| {
        let buffer = Buffer::default();
        let sink = TerminalSink::with_writers(
            (Box::new(buffer.clone()), Painter::PLAIN),
            None,
            Width::Fixed(60),
        );
        let json = Buffer::default();
        let json_sink = JsonSink::new(Box::new(json.clone()));
        for event in events {
            json_sink.emit(event.clone());
            sink.emit(event);
        }
        (buffer.text(), json.text())
    };
    assert_eq!(render(with_progress), render(session_events()));
}

#[test]
fn json_lines_parse_and_keep_field_names() {
    let buffer = Buffer::default();
    let sink = JsonSink::new(Box::new(buffer.clone()));
    for event in session_events() {
        sink.emit(event);
    }
    let mut values: Vec<serde_json::Value> = buffer
        .text()
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is one JSON object"))
        .collect();
    assert!(values.iter().all(|v| v["type"].is_string()));
    assert_eq!(values[0]["version"], env!("CARGO_PKG_VERSION"));
    values[0]["version"] = "[version]".into();
    insta::assert_json_snapshot!(values);
}

mod binary {
    //! The binary end to end: `--json` on stdout, help, version and completions.

    use serde_json::Value;

    use crate::support::env::texts;
    use crate::support::sse::{text_events, tool_events};
    use crate::support::{MockServer, Reply, TestEnv};

    fn json_lines(stdout: &str) -> Vec<Value> {
        stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
            })
            .collect()
    }

    #[test]
    fn json_mode_prints_only_json_events() {
        let server = MockServer::start(vec![
            Reply::Sse(tool_events(
                "call_1",
                "bash",
                r#"{"command": "echo from-tool"}"#,
            )),
            Reply::Sse(text_events(&["All ", "done."])),
        ]);
        let env = TestEnv::with_server(&server);
        env.config("[pricing.\"mock-model\"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n");
        let output = env.run(&["--json", "say hi"]);
        let (stdout, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let events = json_lines(&stdout);
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            vec![
                "session.started",
                "turn.started",
                "message.completed",
                "tool.started",
                "tool.finished",
                "message.delta",
                "message.delta",
                "message.completed",
                "turn.completed",
            ]
        );
        assert_eq!(events[0]["model"], "mock-model");
        assert_eq!(events[1]["input"], "say hi");
        assert_eq!(events[3]["tool"], "bash");
        assert_eq!(events[3]["summary"], "echo from-tool");
        assert_eq!(events[4]["ok"], true);
        assert!(
            events[4]["output"]
                .as_str()
                .unwrap()
                .starts_with("from-tool\n")
        );
        assert!(events[4]["duration_ms"].is_u64());
        assert_eq!(events[7]["text"], "All done.");
        assert_eq!(events[8]["usage"]["prompt_tokens"], 20);
        assert_eq!(events[8]["usage"]["completion_tokens"], 10);
        assert_eq!(events[8]["model_calls"], 2);
    }

    #[test]
    fn json_mode_reports_approvals_and_errors() {
        let server = MockServer::start(vec![
            Reply::Sse(tool_events(
                "call_1",
                "bash",
                r#"{"command": "touch made.txt"}"#,
            )),
            Reply::error(401, "bad key"),
        ]);
        let env = TestEnv::with_server(&server);
        let output = env.run(&["--json", "--yes", "make a file"]);
        let (stdout, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        let events = json_lines(&stdout);
        let find = |kind: &str| {
            events
                .iter()
                .find(|e| e["type"] == kind)
                .unwrap_or_else(|| panic!("no {kind} in {stdout}"))
        };
        let asked = find("approval.requested");
        assert_eq!(asked["subject"], "touch made.txt");
        assert!(asked["reason"].is_string() && asked.get("rule").is_some());
        assert_eq!(find("approval.answered")["answer"], "yes");
        assert!(
            find("error")["message"]
                .as_str()
                .unwrap()
                .contains("bad key")
        );
        assert!(env.workspace.join("made.txt").exists());
    }

    #[test]
    fn text_mode_pipes_are_plain() {
        let server = MockServer::start(vec![Reply::Sse(text_events(&["# Title\n\n**bold**"]))]);
        let mut env = TestEnv::with_server(&server);
        env.var("NO_COLOR", "");
        let output = env.run(&["hello"]);
        let (stdout, stderr) = texts(&output);
        assert_eq!(stdout, "# Title\n\n**bold**\n");
        assert!(!stderr.contains('\x1b'), "{stderr:?}");
        assert!(stderr.contains("10 in · 5 out"), "{stderr}");
    }

    #[test]
    fn help_version_and_completions() {
        let env = TestEnv::new();
        let output = env.run(&["--help"]);
        let (stdout, _) = texts(&output);
        assert_eq!(output.status.code(), Some(0));
        for needle in [
            "Usage: agent [OPTIONS] [PROMPT]",
            "--json",
            "Examples:",
            "Exit codes:",
        ] {
            assert!(stdout.contains(needle), "{needle} missing from --help");
        }
        let output = env.run(&["--version"]);
        assert_eq!(
            texts(&output).0,
            format!("agent {}\n", env!("CARGO_PKG_VERSION"))
        );
        for (shell, marker) in [
            ("bash", "complete -F"),
            ("zsh", "#compdef agent"),
            ("fish", "complete -c agent"),
        ] {
            let output = env.run(&["completions", shell]);
            assert_eq!(output.status.code(), Some(0), "{shell}");
            assert!(
                texts(&output).0.contains(marker),
                "{shell} completion lacks {marker}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Lines of words and inline markup render the same streamed char by char as whole.
    #[test]
    fn inline_streaming_matches_whole_lines(
        words in proptest::collection::vec(
            prop_oneof![
                Just("word"), Just("*em*"), Just("**strong**"), Just("`code`"), Just("`a b`"),
                Just("_u_"), Just("snake_case"), Just("[l](http://x)"), Just("*"), Just("_"),
                Just("`"), Just("~~s~~"), Just("<b>"), Just("3 * 4"), Just("a*b*c"), Just("\\*"),
                Just("- x"), Just("1."), Just("#"), Just("**a *b** c*"),
            ],
            1..12,
        )
    ) {
        let line = format!("{}\n", words.join(" "));
        let whole = markdown(&line, COLOR, 0, 100_000);
        let streamed = markdown(&line, COLOR, 0, 1);
        prop_assert_eq!(streamed, whole, "{:?}", line);
    }
}
