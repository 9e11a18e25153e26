//! Context management (SPEC §7.2, §7.3, §8.1, §8.2, §4.1 `write_todos`): pruning,
//! compaction, context-length recovery, AGENTS.md, skills and todos, end to end against the
//! mock server, plus loop-level tests with a tool whose output size is chosen exactly.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use agent::agent::turn::{self, LoopContext, TurnOutcome, TurnStats};
use agent::cancel::CancelToken;
use agent::config::Endpoint;
use agent::context::compact::{ACK, INSTRUCTION, NOTE_HEADER};
use agent::context::prune::STUB_PREFIX;
use agent::context::{ContextManager, ContextSettings};
use agent::events::{AgentEvent, EventSink};
use agent::model::{Client, Message, ProviderSettings, Role};
use agent::permissions::approval::AlwaysYes;
use agent::permissions::{PathContext, PermissionEngine};
use agent::sandbox::ExecSettings;
use agent::tools::NoPolicy;
use agent::tools::{
    Access, Args, Dispatcher, FileTracker, Registry, Tool, ToolContext, ToolError, ToolOutput,
    ToolSpec,
};

use crate::support::env::texts;
use crate::support::sse::{
    check_request_invariants, text_completion, text_events, tool_completion, tool_events,
};
use crate::support::{MockServer, Reply, TestEnv};

/// A tool whose result is `bytes` bytes long, starting with `tag`.
struct SizedTool {
    spec: ToolSpec,
}

impl SizedTool {
    fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: "sized",
                description: "test tool",
                parameters: json!({"type": "object", "properties": {
                    "tag": {"type": "string"}, "bytes": {"type": "integer"}}}),
            },
        }
    }
}

impl Tool for SizedTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn access(&self, _: &Args, _: &ToolContext<'_>) -> Result<Access, ToolError> {
        Ok(Access::None)
    }
    fn run(&self, args: &Args, _: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let tag = args.get("tag").and_then(Value::as_str).unwrap_or("");
        let bytes = args.get("bytes").and_then(Value::as_u64).unwrap_or(0) as usize;
        let mut text = format!("{tag}:");
        text.push_str(&"x".repeat(bytes.saturating_sub(text.len())));
        Ok(ToolOutput::text(text))
    }
}

/// Collects events.
#[derive(Default)]
struct Events(Mutex<Vec<AgentEvent>>);

impl EventSink for Events {
    fn emit(&self, event: AgentEvent) {
        self.0.lock().unwrap().push(event);
    }
}

impl Events {
    fn notices(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Notice { message } | AgentEvent::Warning { message } => {
                    Some(message.clone())
                }
                _ => None,
            })
            .collect()
    }
}

fn sse_tool(id: &str, name: &str, args: &str) -> Reply {
    Reply::Sse(tool_events(id, name, args))
}

fn sse_text(text: &str) -> Reply {
    Reply::Sse(text_events(&[text]))
}

fn sized_call(id: &str, tag: &str, bytes: usize) -> Reply {
    let args = json!({"tag": tag, "bytes": bytes}).to_string();
    Reply::Json(tool_completion(&[(id, "sized", &args)]))
}

const SYSTEM: &str = "You are a test agent.";

/// Runs one turn of the inner loop against `server` with the `sized` tool only and the
/// given context settings, continuing `history`.
async fn run_loop(
    server: &MockServer,
    settings: ContextSettings,
    history: &mut Vec<Message>,
    events: &Arc<Events>,
) -> TurnOutcome {
    let client = Client::new(
        Endpoint {
            base_url: server.base_url(),
            api_key: String::new(),
            model: "mock-model".into(),
        },
        ProviderSettings {
            stream: true,
            max_attempts: 1,
            ..ProviderSettings::default()
        },
    )
    .unwrap();
    let mut registry = Registry::new();
    registry.register(Arc::new(SizedTool::new()));
    let permissions = Mutex::new(PermissionEngine::new(Vec::new(), PathContext::default()));
    let dispatcher = Dispatcher {
        registry: &registry,
        permissions: &permissions,
        approver: &AlwaysYes,
        policy: &NoPolicy,
    };
    let dir = tempfile::tempdir().unwrap();
    let (files, exec, cancel) = (
        FileTracker::default(),
        ExecSettings::default(),
        CancelToken::new(),
    );
    let tools = ToolContext {
        workspace: dir.path(),
        cwd: dir.path(),
        files: &files,
        exec: &exec,
        cancel: &cancel,
        max_output_chars: 1_000_000,
        before_run: None,
    };
    let sink: Arc<dyn EventSink> = events.clone();
    let context = ContextManager::new(settings);
    let coach = agent::agent::CoachSwitch::new(Default::default(), "mock-model");
    // As the agent does when it adds the user's message.
    if history.last().is_some_and(|m| m.role == Role::User) {
        context.turn_started(history.len() - 1);
    }
    let cx = LoopContext {
        request: "",
        client: &client,
        dispatcher: &dispatcher,
        tools: &tools,
        sink: &sink,
        system_prompt: SYSTEM,
        reminder: &|| "<system-reminder>r</system-reminder>".to_string(),
        on_message: &|_| {},
        context: Some(&context),
        coach: &coach,
        limits: agent::agent::LoopLimits {
            max_model_calls: 20,
            repeat_limit: None,
        },
    };
    let mut stats = TurnStats::default();
    turn::run(&cx, history, &cancel, &mut stats).await
}

fn settings(window: u64, prune_at: f64, compact_at: f64, keep: usize) -> ContextSettings {
    ContextSettings {
        window,
        prune_at,
        compact_at,
        keep_recent_tool_results: keep,
        ..ContextSettings::default()
    }
}

fn contents(request: &crate::support::mock::Recorded) -> Vec<(String, String)> {
    request
        .messages()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or("").to_string(),
                m["content"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn pruning_stubs_old_results_in_one_step_and_keeps_pairs() {
    // Window 10,000 tokens: prune above 5,000 when a step saves at least 1,000.
    // Each result is 6,000 bytes (1,500 tokens).
    let server = MockServer::start(vec![
        sized_call("c1", "one", 6000),
        sized_call("c2", "two", 6000),
        sized_call("c3", "three", 6000),
        sized_call("c4", "four", 6000),
        sized_call("c5", "five", 6000),
        Reply::Json(text_completion("done")),
    ]);
    let events = Arc::new(Events::default());
    let mut history = vec![Message::user("go")];
    let outcome = run_loop(
        &server,
        settings(10_000, 0.5, 0.95, 1),
        &mut history,
        &events,
    )
    .await;
    assert_eq!(
        outcome,
        TurnOutcome::Done {
            text: "done".into()
        }
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 6);
    for request in &requests {
        check_request_invariants(&request.body).unwrap();
    }
    let stubbed = |i: usize| -> Vec<bool> {
        contents(&requests[i])
            .iter()
            .filter(|(role, _)| role == "tool")
            .map(|(_, text)| text.starts_with(STUB_PREFIX))
            .collect()
    };
    // Requests 1-4 carry up to three full results (4,500 tokens): no pruning yet.
    assert_eq!(stubbed(3), vec![false, false, false]);
    // Before request 5 (four results, about 6,000 tokens) all but the last are stubbed at once.
    assert_eq!(stubbed(4), vec![true, true, true, false]);
    // The next request keeps that prefix (no new prune step: it would save too little).
    assert_eq!(stubbed(5), vec![true, true, true, false, false]);
    let first_stub = &contents(&requests[4])[3].1;
    assert_eq!(
        first_stub,
        "[pruned to save context: the result of sized (6,000 characters) was removed; repeat \
         the call if you need it]"
    );
    let prefix = |i: usize| requests[i].raw_body.len();
    assert!(prefix(4) < prefix(3), "pruned request is smaller");
    assert_eq!(
        events
            .notices()
            .iter()
            .filter(|n| n.starts_with("context: pruned"))
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn compaction_at_threshold_sends_summary_request_and_keeps_recent_turns() {
    // Window 10,000 tokens, compaction at 60% (6,000). The earlier turns hold two results
    // of 12,000 bytes (3,000 tokens each); the new turn's user message is small.
    let mut history = two_big_turns();
    let server = MockServer::start(vec![
        Reply::Json(text_completion(
            "## Goal\nFix parser and lexer.\n## Next steps\nRun tests.",
        )),
        Reply::Json(text_completion("tests pass")),
    ]);
    let events = Arc::new(Events::default());
    let outcome = run_loop(
        &server,
        settings(10_000, 0.95, 0.6, 4),
        &mut history,
        &events,
    )
    .await;
    assert_eq!(
        outcome,
        TurnOutcome::Done {
            text: "tests pass".into()
        }
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    // The summary request: the same prefix (system prompt, history, tools) plus the instruction.
    let summary = contents(&requests[0]);
    assert_eq!(summary[0], ("system".into(), SYSTEM.into()));
    assert_eq!(
        summary.len(),
        1 + 8 + 1,
        "older history only, then the instruction"
    );
    assert_eq!(summary[1].1, "first task: fix the parser");
    assert_eq!(
        summary.last().unwrap(),
        &("user".into(), INSTRUCTION.into())
    );
    assert_eq!(requests[0].body["tools"][0]["function"]["name"], "sized");
    // The next request: note, acknowledgement, then the recent turn verbatim.
    let next = contents(&requests[1]);
    let roles: Vec<&str> = next.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "user"]);
    assert!(next[1].1.starts_with(NOTE_HEADER), "{}", next[1].1);
    assert!(next[1].1.contains("## Goal\nFix parser and lexer."));
    assert_eq!(next[2].1, ACK);
    assert!(next[3].1.starts_with("third task: run the tests"));
    check_request_invariants(&requests[1].body).unwrap();
    // The in-memory history has the same shape (plus the answer).
    let roles: Vec<Role> = history.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        vec![Role::User, Role::Assistant, Role::User, Role::Assistant]
    );
    assert!(
        events
            .notices()
            .iter()
            .any(|n| n.starts_with("context: compacted 8 older messages"))
    );
}

/// Two finished turns with a 12,000-byte result each (3,000 tokens), then a small request.
fn two_big_turns() -> Vec<Message> {
    let big = "y".repeat(12_000);
    let call = |id: &str| Message {
        content: None,
        tool_calls: vec![agent::model::ToolCall {
            id: id.into(),
            name: "sized".into(),
            arguments: "{}".into(),
        }],
        ..Message::assistant("")
    };
    vec![
        Message::user("first task: fix the parser"),
        call("a1"),
        Message::tool_result("a1", big.clone()),
        Message::assistant("parser fixed in src/parse.rs"),
        Message::user("second task: and the lexer"),
        call("a2"),
        Message::tool_result("a2", big),
        Message::assistant("lexer fixed"),
        Message::user("third task: run the tests"),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rambling_handoff_note_is_stopped_at_its_cap() {
    // Window 10,000 tokens: a note may take 1,000 tokens (4,000 characters). The summary
    // streams 100-character lines and would end only after 60 s.
    let line = format!("{}\n", "z".repeat(99));
    let mut pieces: Vec<(std::time::Duration, Vec<u8>)> = (0..200)
        .map(|_| {
            let event = json!({"choices": [{"index": 0, "delta": {"content": line}}]});
            (
                std::time::Duration::ZERO,
                format!("data: {event}\n\n").into_bytes(),
            )
        })
        .collect();
    pieces.push((
        std::time::Duration::from_secs(60),
        b"data: [DONE]\n\n".to_vec(),
    ));
    let server = MockServer::start(vec![
        Reply::SseRaw(pieces),
        Reply::Json(text_completion("tests pass")),
    ]);
    let events = Arc::new(Events::default());
    let mut history = two_big_turns();
    let started = std::time::Instant::now();
    let outcome = run_loop(
        &server,
        settings(10_000, 0.95, 0.6, 4),
        &mut history,
        &events,
    )
    .await;
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(
        outcome,
        TurnOutcome::Done {
            text: "tests pass".into()
        }
    );
    let note = history[0].text_content();
    assert!(note.starts_with(NOTE_HEADER), "{note}");
    assert!(
        note.ends_with("[handoff note cut at 4000 characters]"),
        "{note}"
    );
    assert!(note.len() < 4200, "{}", note.len());
}

fn overflow() -> Reply {
    Reply::Status {
        status: 400,
        headers: Vec::new(),
        body: json!({"error": {"message": "Request is longer than this model allows.",
            "type": "invalid_request_error", "code": "context_length_exceeded"}})
        .to_string(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn context_length_error_compacts_and_retries_once() {
    // The configured window is far too large; the server rejects bodies over 12,000 bytes.
    let server = MockServer::start(vec![
        sized_call("c1", "one", 8000),
        sized_call("c2", "two", 8000),
        // Request 3 is rejected (about 16 KB); then the summary (transcript form) and the retry.
        Reply::Json(text_completion("## Goal\nRead two files.")),
        Reply::Json(text_completion("finished")),
    ]);
    server.reject_over(12_000, overflow());
    let events = Arc::new(Events::default());
    let mut history = vec![Message::user("read both")];
    let outcome = run_loop(
        &server,
        settings(1_000_000, 0.9, 0.95, 4),
        &mut history,
        &events,
    )
    .await;
    assert_eq!(
        outcome,
        TurnOutcome::Done {
            text: "finished".into()
        }
    );
    let requests = server.chat_requests();
    let sizes: Vec<usize> = requests.iter().map(|r| r.raw_body.len()).collect();
    assert_eq!(requests.len(), 5, "{sizes:?}");
    assert!(sizes[2] > 12_000, "{sizes:?}");
    // The summary request is the bounded transcript form: no tools.
    assert!(requests[3].body.get("tools").is_none());
    assert!(contents(&requests[3])[1].1.contains("<transcript>"));
    // The retry fits and is valid.
    assert!(sizes[4] <= 12_000, "{sizes:?}");
    check_request_invariants(&requests[4].body).unwrap();
    assert!(contents(&requests[4])[1].1.starts_with(NOTE_HEADER));
}

#[tokio::test(flavor = "multi_thread")]
async fn overflowing_summary_drops_oldest_turns_and_says_so() {
    // Bodies over 1,200 bytes are rejected, the summary request included: the oldest turns
    // are dropped without a summary (the user's message is kept) and the retry goes through.
    let server = MockServer::start(vec![
        sized_call("c1", "one", 6000),
        Reply::Json(text_completion("answer after the drop")),
    ]);
    server.reject_over(1_200, overflow());
    let events = Arc::new(Events::default());
    let mut history = vec![Message::user("go")];
    let outcome = run_loop(
        &server,
        settings(1_000_000, 0.9, 0.95, 4),
        &mut history,
        &events,
    )
    .await;
    assert_eq!(
        outcome,
        TurnOutcome::Done {
            text: "answer after the drop".into()
        }
    );
    assert!(
        events.notices().iter().any(|n| n.ends_with(
            "dropped the oldest 2 messages without a summary to fit the \
                 context window; kept your message"
        )),
        "{:?}",
        events.notices()
    );
    let last = server.chat_requests().pop().unwrap();
    assert!(last.raw_body.len() <= 1_200);
    check_request_invariants(&last.body).unwrap();
    // The user's message stays, verbatim, before the note.
    assert!(
        contents(&last)[1].1.starts_with("go"),
        "{:?}",
        contents(&last)
    );
    assert!(
        contents(&last)[2]
            .1
            .starts_with("[The earlier part of this session (2 messages) was dropped")
    );
    assert_eq!(history[0], Message::user("go"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_rejects_everything_never_makes_the_loop_replay() {
    let server = MockServer::start(vec![]);
    server.reject_over(100, overflow());
    let events = Arc::new(Events::default());
    let wide = || settings(1_000_000, 0.9, 0.95, 4);
    let mut history = vec![
        Message::user("first"),
        Message::assistant("done"),
        Message::user("go"),
    ];
    let outcome = run_loop(&server, wide(), &mut history, &events).await;
    let TurnOutcome::Failed { message } = outcome else {
        panic!("expected a failure, got {outcome:?}");
    };
    assert!(
        message.starts_with(
            "the request is too long for the model's context window (the server said \
             `Request is longer than this model allows.`) even after compaction: the \
             conversation so far is about"
        ),
        "{message}"
    );
    assert!(
        message.ends_with(
            "the oldest 2 messages were dropped without a summary (your message was kept)"
        ),
        "{message}"
    );
    assert_eq!(history.last(), Some(&Message::user("go")));
    // The request, one summary attempt (the bounded transcript form), one retry: then it ends.
    assert_eq!(server.chat_requests().len(), 3);
    // The next turn starts from the drop note and again makes a bounded number of attempts.
    history.push(Message::user("again"));
    let outcome = run_loop(&server, wide(), &mut history, &events).await;
    assert!(matches!(outcome, TurnOutcome::Failed { .. }), "{outcome:?}");
    assert!(server.chat_requests().len() <= 8);
    // A lone message the server rejects is answered at once, blaming what is larger, and
    // kept: nothing in the history can make room.
    let mut lone = vec![Message::user("x")];
    let before = server.chat_requests().len();
    let outcome = run_loop(&server, wide(), &mut lone, &events).await;
    let TurnOutcome::Failed { message } = outcome else {
        panic!("expected a failure, got {outcome:?}");
    };
    assert!(
        message.contains(": the system prompt and tool definitions are about"),
        "{message}"
    );
    assert!(
        message.contains("your message was not the problem and was kept"),
        "{message}"
    );
    assert_eq!(lone, vec![Message::user("x")]);
    assert_eq!(server.chat_requests().len(), before + 1);
}

#[test]
fn context_length_exceeded_recovery_end_to_end() {
    let big = "z".repeat(9_000);
    let server = MockServer::start(vec![
        sse_tool("c1", "bash", r#"{"command":"cat big.txt"}"#),
        sse_text("## Goal\nShow big.txt"),
        sse_text("the file is all z"),
    ]);
    let env = TestEnv::with_server(&server);
    env.write("big.txt", &big);
    let first_size = {
        // Reject anything clearly larger than the first request (the one with the file in it).
        let probe = MockServer::start(vec![sse_text("x")]);
        let probe_env = TestEnv::with_server(&probe);
        probe_env.run(&["show big.txt"]);
        probe.chat_requests()[0].raw_body.len()
    };
    server.reject_over(first_size + 4_000, overflow());
    let output = env.run(&["show big.txt"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "the file is all z\n");
    assert!(stderr.contains("compacting the conversation"), "{stderr}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4, "rejected, summary, retry");
    check_request_invariants(&requests[3].body).unwrap();
}

#[test]
fn agents_md_precedence_from_home_then_root_down_to_cwd() {
    let server = MockServer::start(vec![sse_text("ok")]);
    let env = TestEnv::with_server(&server);
    std::fs::write(env.agent_home.join("AGENTS.md"), "global: use tabs").unwrap();
    env.write("AGENTS.md", "root: run make test");
    env.write("sub/dir/AGENTS.md", "leaf: this crate is no_std");
    let output = env
        .cmd()
        .current_dir(env.workspace.join("sub/dir"))
        .args(["hi"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let system = contents(&server.chat_requests()[0])[0].1.clone();
    let at = |needle: &str| {
        system
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} in {system}"))
    };
    assert!(at("global: use tabs") < at("root: run make test"));
    assert!(at("root: run make test") < at("leaf: this crate is no_std"));
    assert!(at("# Project instructions (AGENTS.md)") < at("global: use tabs"));
}

#[test]
fn agents_md_cap_is_32_kib_and_noted_when_cut() {
    let server = MockServer::start(vec![sse_text("ok")]);
    let env = TestEnv::with_server(&server);
    std::fs::write(env.agent_home.join("AGENTS.md"), "g".repeat(20_000)).unwrap();
    env.write("AGENTS.md", &"r".repeat(20_000));
    let output = env.run(&["hi"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("was cut by 7232 bytes"), "{stderr}");
    let system = contents(&server.chat_requests()[0])[0].1.clone();
    assert_eq!(count_run(&system, 'g') + count_run(&system, 'r'), 32 * 1024);
    assert!(
        system.contains("[... 7232 more bytes cut: AGENTS.md content is limited to 32 KiB ...]")
    );
}

/// Length of the longest run of `c` in `text`.
fn count_run(text: &str, c: char) -> usize {
    text.split(|x| x != c).map(str::len).max().unwrap_or(0)
}

#[test]
fn skills_are_listed_and_read_skill_of_a_missing_skill_lists_them() {
    let server = MockServer::start(vec![
        sse_tool("c1", "read_skill", r#"{"name":"nope"}"#),
        sse_tool("c2", "read_skill", r#"{"name":"release"}"#),
        sse_text("ok"),
    ]);
    let env = TestEnv::with_server(&server);
    env.write(
        ".agents/skills/release/SKILL.md",
        "---\nname: release\ndescription: Cut a release with the changelog\n---\nStep 1: bump.\n",
    );
    let home_skill = env.agent_home.join("skills/review");
    std::fs::create_dir_all(&home_skill).unwrap();
    std::fs::write(
        home_skill.join("SKILL.md"),
        "---\nname: review\ndescription: Review a diff\n---\nLook.",
    )
    .unwrap();
    let output = env.run(&["release it"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let requests = server.chat_requests();
    let system = contents(&requests[0])[0].1.clone();
    assert!(system.contains("# Skills\n"), "{system}");
    assert!(
        system.contains("- release: Cut a release with the changelog\n- review: Review a diff")
    );
    let results: Vec<String> = contents(&requests[2])
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, text)| text)
        .collect();
    assert_eq!(
        results[0],
        "Error: read_skill failed - not found: no skill named `nope`; available: release, review"
    );
    assert!(
        results[1].starts_with("Skill `release` (files in "),
        "{}",
        results[1]
    );
    assert!(
        results[1].contains("):\n\nStep 1: bump.\n\n<system-reminder>"),
        "{}",
        results[1]
    );
}

#[test]
fn write_todos_validates_shows_and_reminds() {
    let bad = r#"{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}"#;
    let wrong_status = r#"{"todos":[{"content":"a","status":"doing"}]}"#;
    let good = r#"{"todos":[{"content":"read code","status":"completed"},{"content":"fix bug","status":"in_progress"}]}"#;
    let server = MockServer::start(vec![
        sse_tool("c1", "write_todos", bad),
        sse_tool("c2", "write_todos", wrong_status),
        sse_tool("c3", "write_todos", good),
        sse_text("ok"),
    ]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["plan"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let requests = server.chat_requests();
    let tool_results: Vec<String> = contents(&requests[3])
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, text)| text)
        .collect();
    assert_eq!(
        tool_results[0],
        "Error: write_todos failed - invalid todos: 2 items are in_progress (todos[0], todos[1]); \
         mark at most one as in_progress"
    );
    assert!(
        tool_results[1]
            .starts_with("Error: wrong arguments for write_todos (field `todos[0].status`"),
        "{}",
        tool_results[1]
    );
    // The third result is the list, also shown to the user and put in the next reminder.
    assert!(tool_results[2].starts_with("Todo list updated:\n[x] read code\n[>] fix bug"));
    assert!(
        stderr.contains("todos:\n  [x] read code\n  [>] fix bug"),
        "{stderr}"
    );
    let last = contents(&requests[3]).pop().unwrap().1;
    assert!(
        last.contains("todos:\n[x] read code\n[>] fix bug"),
        "{last}"
    );
    // The failed calls changed nothing: the reminder before the good call had no todos.
    let before = contents(&requests[2]).pop().unwrap().1;
    assert!(!before.contains("todos:"), "{before}");
}

#[test]
fn first_request_is_under_4000_bytes_without_agents_md_or_skills() {
    let server = MockServer::start(vec![sse_text("ok")]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["hi"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let request = &server.chat_requests()[0];
    let tools: Vec<&str> = request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"write_todos") && tools.contains(&"task"),
        "{tools:?}"
    );
    assert!(
        !tools.contains(&"read_skill"),
        "no skills, no read_skill: {tools:?}"
    );
    let size = request.raw_body.len();
    eprintln!("first request: {size} bytes");
    assert!(size < 4000, "first request is {size} bytes");
}

#[test]
fn a_project_max_output_chars_tightens_the_cap_and_a_tiny_one_is_an_error() {
    let server = MockServer::start(vec![
        sse_tool("c1", "read_file", r#"{"path":"big.txt"}"#),
        sse_text("done"),
    ]);
    let env = TestEnv::with_server(&server);
    env.write(
        "big.txt",
        &"0123456789abcdef0123456789abcdef\n".repeat(1000),
    );
    // It used to be read from the user file only, so this was silently ignored.
    env.write(
        ".agents/config.toml",
        "[context]\nmax_output_chars = 2000\n",
    );
    let output = env.run(&["show big.txt"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let result = contents(&server.chat_requests()[1])
        .into_iter()
        .find(|(role, _)| role == "tool")
        .map(|(_, text)| text)
        .unwrap_or_default();
    assert!(result.len() < 3_000, "{} chars: {result}", result.len());

    env.write(".agents/config.toml", "[context]\nmax_output_chars = 10\n");
    let output = env.run(&["show big.txt"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "[context] max_output_chars = `10` is too small; use at least 1000 characters"
        ),
        "{stderr}"
    );
}

/// The report behind issue 13 item 8: a 28 KB AGENTS.md, a 4,096-token window and a
/// 15-character task. The error blames the instructions with their size and the fix, and the
/// task stays in the history, the session file and what resume shows.
#[test]
fn an_oversized_agents_md_is_blamed_and_the_task_is_kept() {
    let server = MockServer::start(vec![]);
    server.reject_over(16_000, overflow());
    let env = TestEnv::with_server(&server);
    env.write(
        "AGENTS.md",
        &"Always write the tests first.\n".repeat(28 * 1024 / 30 + 1)[..28 * 1024],
    );
    env.config("[context]\ncontext_window = 4096\n");
    let output = env.run(&["check the build"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stdout, "");
    for expected in [
        "error: the request is too long for the model's context window",
        "the AGENTS.md instructions (`AGENTS.md` 28,672 bytes) are about 7,168 tokens",
        "more than the whole context window of 4,096 tokens",
        "your message was not the problem and was kept",
        "shorten AGENTS.md, or raise `context_window` under [context] in config.toml",
    ] {
        assert!(stderr.contains(expected), "{expected:?} missing:\n{stderr}");
    }
    for wrong in ["shorter one", "dropped"] {
        assert!(!stderr.contains(wrong), "{wrong:?} in:\n{stderr}");
    }
    let sessions = env.agent_home.join("sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let log = std::fs::read_to_string(&file).unwrap();
    assert!(
        log.contains(r#"{"role":"user","content":"check the build"}"#),
        "{log}"
    );
    assert!(
        !log.contains("compacted") && !log.contains("was dropped"),
        "{log}"
    );

    let output = env.run(&["--resume", "and the tests"]);
    let (_, stderr) = texts(&output);
    assert!(
        stderr.contains("last request: \"check the build\""),
        "{stderr}"
    );
    let requests = server.chat_requests();
    assert_eq!(
        requests.len(),
        2,
        "one request a turn, no compaction attempts"
    );
    let users: Vec<String> = requests[1]
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| {
            m["content"]
                .as_str()
                .unwrap()
                .lines()
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(users, ["check the build", "and the tests"]);
    for request in &requests {
        check_request_invariants(&request.body).unwrap();
    }
}
