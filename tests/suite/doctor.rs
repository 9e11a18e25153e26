//! `agent doctor` against the mock server.

use serde_json::json;

use crate::support::env::texts;
use crate::support::sse::{text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

fn models(ids: &[&str]) -> Reply {
    Reply::Json(
        json!({"object": "list", "data": ids.iter().map(|id| json!({"id": id, "object": "model"})).collect::<Vec<_>>()}),
    )
}

fn doctor(env: &TestEnv) -> (Option<i32>, String, String) {
    let output = env.cmd().arg("doctor").output().unwrap();
    let (stdout, stderr) = texts(&output);
    (output.status.code(), stdout, stderr)
}

/// The check lines (`ok`, `warn`, `FAIL`) without timings.
fn verdicts(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.starts_with("ok") || l.starts_with("warn") || l.starts_with("FAIL"))
        .map(|l| l.split(':').next().unwrap_or(l).to_string())
        .collect()
}

#[test]
fn doctor_passes_against_a_working_endpoint() {
    let mut usage = text_events(&["o", "k"]);
    usage.pop();
    usage.push(json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 8}}}));
    let server = MockServer::start(vec![
        Reply::Sse(usage),
        Reply::Sse(tool_events("call_1", "echo", r#"{"text":"ping"}"#)),
    ]);
    server.on_get("/models", models(&["other", "mock-model"]));
    let mut env = TestEnv::with_server(&server);
    env.var("API_KEY", "sk-secret-value");
    env.var("GITHUB_TOKEN", "ghp-secret-value");
    env.config("[provider]\nheaders = { X-Title = \"agent\" }\n");
    let (code, stdout, stderr) = doctor(&env);
    assert!(
        stdout.contains(" · 2 secret variables removed from commands: API_KEY, GITHUB_TOKEN\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("ghp-secret-value"), "{stdout}");
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_eq!(
        verdicts(&stdout),
        vec![
            "ok    reachable",
            "ok    model `mock-model` is listed",
            "ok    streaming",
            "ok    tool calling"
        ]
    );
    assert!(stdout.contains("`ok` in 2 chunk(s)"), "{stdout}");
    assert!(
        stdout.contains("usage reported (12 in / 1 out, 8 cached)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("native call `echo` with arguments `{\"text\":\"ping\"}`"),
        "{stdout}"
    );
    assert!(stdout.contains("headers X-Title"), "{stdout}");
    assert!(
        !stdout.contains("sk-secret-value"),
        "the key is never printed"
    );
    assert!(stdout.ends_with("all checks passed\n"), "{stdout}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body["tools"][0]["function"]["name"], "echo");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-secret-value")
    );
    assert_eq!(requests[0].header("x-title"), Some("agent"));
}

#[test]
fn doctor_reports_broken_tool_calling_and_exits_1() {
    let server = MockServer::start(vec![
        Reply::Sse(text_events(&["ok"])),
        Reply::Sse(text_events(&["I would echo ping for you."])),
    ]);
    server.on_get("/models", models(&["mock-model"]));
    let env = TestEnv::with_server(&server);
    let (code, stdout, _) = doctor(&env);
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(
        verdicts(&stdout),
        vec![
            "ok    reachable",
            "ok    model `mock-model` is listed",
            "ok    streaming",
            "FAIL  tool calling"
        ]
    );
    assert!(
        stdout.contains(
            "the model answered without calling the probe tool (`I would echo ping for you.`)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("--jinja"), "{stdout}");
    assert!(stdout.ends_with("1 check failed\n"), "{stdout}");
}

#[test]
fn doctor_reports_a_tool_rejecting_server() {
    let server = MockServer::start(vec![
        Reply::Sse(text_events(&["ok"])),
        Reply::error(
            400,
            "registry.ollama.ai/library/gemma:2b does not support tools",
        ),
    ]);
    let env = TestEnv::with_server(&server);
    let (code, stdout, _) = doctor(&env);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("ok    reachable: GET /models answered 404"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAIL  tool calling: the model server answered 400: registry.ollama.ai/library/gemma:2b does not support tools (this model cannot call tools; choose a model with tool support)"),
        "{stdout}"
    );
}

#[test]
fn doctor_accepts_text_written_tool_calls_when_auto() {
    let call = "```json\n{\"name\": \"echo\", \"arguments\": {\"text\": \"ping\"}}\n```";
    let server = MockServer::start(vec![
        Reply::Sse(text_events(&["ok"])),
        Reply::Sse(text_events(&[call])),
    ]);
    server.on_get("/models", models(&["some-other-model"]));
    let env = TestEnv::with_server(&server);
    let (code, stdout, _) = doctor(&env);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("warn  model `mock-model` is not among the 1 listed (some-other-model)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ok    tool calling: the model writes tool calls as text"),
        "{stdout}"
    );
}

#[test]
fn doctor_with_text_tool_calls_off_fails_on_text_calls() {
    let call = "{\"name\": \"echo\", \"arguments\": {\"text\": \"ping\"}}";
    let server = MockServer::start(vec![
        Reply::Sse(text_events(&["ok"])),
        Reply::Sse(text_events(&[call])),
    ]);
    let env = TestEnv::with_server(&server);
    env.config("[provider]\ntext_tool_calls = \"off\"\n");
    let (code, stdout, _) = doctor(&env);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  tool calling: the model writes tool calls as text, which text_tool_calls = \"off\" ignores"), "{stdout}");
}

#[test]
fn doctor_reports_streaming_fallback() {
    let server = MockServer::start(vec![
        Reply::error(400, "stream is not supported"),
        Reply::Json(crate::support::sse::text_completion("ok")),
        Reply::Json(crate::support::sse::tool_completion(&[(
            "c",
            "echo",
            r#"{"text":"ping"}"#,
        )])),
    ]);
    let env = TestEnv::with_server(&server);
    let (code, stdout, _) = doctor(&env);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("warn  answering: `ok`"), "{stdout}");
    assert!(stdout.contains("the server rejected streaming"), "{stdout}");
    assert_eq!(
        server.chat_requests()[2].body["stream"],
        json!(false),
        "remembered for the session"
    );
}

#[test]
fn doctor_stops_when_unreachable_or_unauthorized() {
    let mut env = TestEnv::new();
    env.var("BASE_URL", "http://127.0.0.1:9/v1")
        .var("MODEL", "m");
    let (code, stdout, _) = doctor(&env);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL  reachable: cannot connect to http://127.0.0.1:9/v1/models"),
        "{stdout}"
    );
    assert_eq!(verdicts(&stdout).len(), 1, "later checks skipped: {stdout}");

    let server = MockServer::start(vec![]);
    server.on_get("/models", Reply::error(401, "Incorrect API key provided"));
    let env = TestEnv::with_server(&server);
    let (code, stdout, _) = doctor(&env);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  reachable: the model server answered 401: Incorrect API key provided (check API_KEY)"), "{stdout}");
    assert!(server.chat_requests().is_empty());
}

#[test]
fn doctor_without_endpoint_is_a_config_error() {
    let env = TestEnv::new();
    let (code, _, stderr) = doctor(&env);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("missing `BASE_URL`"), "{stderr}");
}
