//! Model endpoint robustness end to end (issue 7, SPEC §11): every case of
//! tests/data/provider-payloads.jsonl served as raw bytes by the mock server to the real
//! binary, plus cut streams, retries, session adjustments and provider settings. Every test
//! checks the requests the mock recorded with `check_request_invariants`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::env::texts;
use crate::support::mock::Recorded;
use crate::support::sse::{check_request_invariants, text_completion, text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

const CASES: &str = include_str!("../data/provider-payloads.jsonl");

/// The `input` of a case: one string, or a list of strings.
fn case_inputs(id: &str) -> Vec<String> {
    let case = CASES
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|case| case["id"] == id)
        .unwrap_or_else(|| panic!("no case {id}"));
    match &case["input"] {
        Value::String(text) => vec![text.clone()],
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().unwrap().to_string())
            .collect(),
        other => panic!("input of {id}: {other}"),
    }
}

fn case_input(id: &str) -> String {
    case_inputs(id).remove(0)
}

/// A 200 answer with this exact JSON body.
fn json_reply(body: &str) -> Reply {
    Reply::Raw(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

/// A 200 event stream with these exact bytes, then the connection closes.
fn sse_reply(bytes: impl Into<Vec<u8>>) -> Reply {
    Reply::SseRaw(vec![(Duration::ZERO, bytes.into())])
}

/// An environment whose retries do not wait (`max_retry_wait_secs = 0`).
fn env_fast(server: &MockServer, extra_provider: &str) -> TestEnv {
    let env = TestEnv::with_server(server);
    env.config(&format!(
        "[provider]\nmax_retry_wait_secs = 0\n{extra_provider}"
    ));
    env
}

fn assert_valid(requests: &[Recorded]) {
    for (i, request) in requests.iter().enumerate() {
        if let Err(problem) = check_request_invariants(&request.body) {
            panic!("request {i}: {problem}\n{}", request.body);
        }
    }
}

/// The tool message answering `id` in a request.
fn tool_result(request: &Recorded, id: &str) -> String {
    request
        .messages()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no tool result for {id}: {}", request.body))
}

/// The assistant messages of a request.
fn assistants(request: &Recorded) -> Vec<Value> {
    request
        .messages()
        .into_iter()
        .filter(|m| m["role"] == "assistant")
        .collect()
}

fn run_yes(env: &TestEnv, task: &str) -> (Option<i32>, String, String) {
    let output = env.run(&["--yes", task]);
    let (stdout, stderr) = texts(&output);
    (output.status.code(), stdout, stderr)
}

#[test]
fn args_as_json_object_run_and_are_replayed_as_a_string() {
    let server = MockServer::start(vec![
        json_reply(&case_input("b-args-json-object")),
        Reply::Sse(text_events(&["listed"])),
    ]);
    let env = env_fast(&server, "");
    env.write("marker.txt", "x");
    let (code, stdout, stderr) = run_yes(&env, "list files");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "listed\n");
    let requests = server.chat_requests();
    assert_valid(&requests);
    let call = &assistants(&requests[1])[0]["tool_calls"][0];
    assert_eq!(
        call["function"]["arguments"],
        json!(r#"{"command":"ls -la"}"#)
    );
    assert!(tool_result(&requests[1], "call_1").contains("marker.txt"));
}

#[test]
fn empty_string_arguments_fail_validation_and_are_sent_as_an_empty_object() {
    let server = MockServer::start(vec![
        json_reply(&case_input("b-args-empty-string")),
        Reply::Sse(text_events(&["ok"])),
    ]);
    let env = env_fast(&server, "");
    let (code, _, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    let requests = server.chat_requests();
    assert_valid(&requests);
    let result = tool_result(&requests[1], "call_2");
    assert!(
        result.starts_with("Error: wrong arguments for bash (missing required field `command`)."),
        "{result}"
    );
    let assistant = &assistants(&requests[1])[0];
    assert_eq!(assistant["content"], Value::Null, "tool-only: content null");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        json!("{}")
    );
}

#[test]
fn broken_json_arguments_are_answered_with_the_parser_error() {
    let server = MockServer::start(vec![
        json_reply(&case_input("b-args-broken-json")),
        Reply::Sse(text_events(&["ok"])),
    ]);
    let env = env_fast(&server, "");
    let (code, _, stderr) = run_yes(&env, "read it");
    assert_eq!(code, Some(0), "{stderr}");
    let requests = server.chat_requests();
    assert_valid(&requests);
    let result = tool_result(&requests[1], "call_3");
    assert!(
        result.starts_with("Error: arguments were not valid JSON ("),
        "{result}"
    );
    assert!(
        result.contains("write a backslash as \\\\ (or use / in paths)"),
        "{result}"
    );
    let call = &assistants(&requests[1])[0]["tool_calls"][0];
    assert_eq!(call["function"]["arguments"], json!("{}"), "stored as {{}}");
}

#[test]
fn unknown_and_null_tool_names_each_get_an_error_result() {
    let server = MockServer::start(vec![
        json_reply(&case_input("b-unknown-or-null-tool-name")),
        Reply::Sse(text_events(&["ok"])),
    ]);
    let env = env_fast(&server, "");
    let (code, _, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    let requests = server.chat_requests();
    assert_valid(&requests);
    let unknown = tool_result(&requests[1], "call_4");
    assert!(
        unknown.starts_with("Error: no tool named 'execute_python'. Available: bash"),
        "{unknown}"
    );
    let nameless = tool_result(&requests[1], "call_5");
    assert!(
        nameless.starts_with("Error: no tool named ''"),
        "{nameless}"
    );
    let calls = &assistants(&requests[1])[0]["tool_calls"];
    assert_eq!(
        calls[1]["function"]["arguments"],
        json!("{}"),
        "`{{}}{{}}` stored as {{}}"
    );
}

#[test]
fn tool_call_in_content_goes_through_the_permission_engine() {
    let server = MockServer::start(vec![
        json_reply(&case_input("b-tool-call-in-content")),
        Reply::Sse(text_events(&["kept the build"])),
    ]);
    let env = env_fast(&server, "");
    env.write("build/keep.txt", "x");
    let (code, stdout, stderr) = run_yes(&env, "clean up");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "kept the build\n");
    assert!(
        env.workspace.join("build/keep.txt").exists(),
        "rm -rf must be denied"
    );
    assert!(
        !stderr.contains("<tool_call>") && !stdout.contains("<tool_call>"),
        "{stderr}"
    );
    let requests = server.chat_requests();
    assert_valid(&requests);
    let assistant = &assistants(&requests[1])[0];
    let id = assistant["tool_calls"][0]["id"].as_str().unwrap();
    assert!(
        id.len() == 9 && id.starts_with("call"),
        "synthesized id `{id}`"
    );
    assert_eq!(assistant["content"], Value::Null);
    assert!(tool_result(&requests[1], id).starts_with("Blocked by policy"));
}

#[test]
fn tool_call_in_content_streamed_in_pieces_is_never_shown() {
    let content =
        "```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"echo streamed-call\"}}\n```";
    let pieces: Vec<String> = content
        .chars()
        .collect::<Vec<_>>()
        .chunks(3)
        .map(|c| c.iter().collect())
        .collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![
        Reply::Sse(text_events(&refs)),
        Reply::Sse(text_events(&["done"])),
    ]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "done\n");
    assert!(
        !stderr.contains("```") && !stderr.contains("\"name\""),
        "{stderr}"
    );
    assert!(stderr.contains("● bash  echo streamed-call"), "{stderr}");
    let requests = server.chat_requests();
    assert_valid(&requests);
    let id = assistants(&requests[1])[0]["tool_calls"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(tool_result(&requests[1], &id).starts_with("streamed-call"));
}

#[test]
fn text_tool_calls_off_keeps_the_text() {
    let server = MockServer::start(vec![json_reply(&case_input("b-tool-call-in-content"))]);
    let env = env_fast(&server, "text_tool_calls = \"off\"\n");
    let (code, stdout, stderr) = run_yes(&env, "clean up");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("<tool_call>"), "{stdout}");
    assert_eq!(server.chat_requests().len(), 1);
}

#[test]
fn json_answer_that_is_not_a_call_is_shown() {
    let text = "{\"status\": \"ok\"} is what the API returns.";
    let server = MockServer::start(vec![Reply::Sse(text_events(&[
        "{\"status\"",
        ": \"ok\"}",
        " is what the API returns.",
    ]))]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "what does it return?");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, format!("{text}\n"));
}

#[test]
fn interleaved_parallel_calls_are_assembled_by_index() {
    let server = MockServer::start(vec![
        sse_reply(case_input("b-stream-parallel-interleaved")),
        Reply::Sse(text_events(&["both ran"])),
    ]);
    let env = env_fast(&server, "");
    env.write("marker.txt", "x");
    let (code, stdout, stderr) = run_yes(&env, "look around");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "both ran\n");
    let requests = server.chat_requests();
    assert_valid(&requests);
    let calls = assistants(&requests[1])[0]["tool_calls"].clone();
    let summary: Vec<(Value, Value, Value)> = calls
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].clone(),
                c["function"]["name"].clone(),
                c["function"]["arguments"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (json!("call_A"), json!("bash"), json!(r#"{"command":"ls"}"#)),
            (
                json!("call_B"),
                json!("read_file"),
                json!(r#"{"path":"README.md"}"#)
            ),
        ]
    );
    let ids: Vec<Value> = requests[1]
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].clone())
        .collect();
    assert_eq!(
        ids,
        vec![json!("call_A"), json!("call_B")],
        "results in index order"
    );
    assert!(tool_result(&requests[1], "call_A").contains("marker.txt"));
}

#[test]
fn finish_reason_mismatch_is_decided_on_the_tool_calls_array() {
    let inputs = case_inputs("b-finish-reason-mismatch");
    // A capable model's empty reply ends the turn: its answer is final (SPEC §3.5).
    let server = MockServer::start(vec![json_reply(&inputs[0])]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "status?");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("empty reply; ending the turn"), "{stderr}");
    assert_eq!(server.chat_requests().len(), 1);
    // The coach asks a small model once more, without storing the empty reply.
    let server = MockServer::start(vec![
        json_reply(&inputs[0]),
        json_reply(&inputs[1]),
        Reply::Sse(text_events(&["status shown"])),
    ]);
    let mut env = env_fast(&server, "");
    env.var("MODEL", crate::support::SMALL_MODEL);
    let (code, stdout, stderr) = run_yes(&env, "status?");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "status shown\n");
    assert!(stderr.contains("empty reply"), "{stderr}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    assert_valid(&requests);
    let (first, retry) = (requests[0].messages(), requests[1].messages());
    assert_eq!(first.len(), retry.len(), "the empty reply is not stored");
    assert_eq!(
        first[..first.len() - 1],
        retry[..retry.len() - 1],
        "the empty reply is not stored"
    );
    assert!(
        retry.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("Your last reply was empty"),
        "the retry nudges the model"
    );
    let result = tool_result(&requests[2], "call_8");
    assert!(
        !result.starts_with("Error: no tool") && !result.starts_with("Error: arguments"),
        "{result}"
    );
    assert!(stderr.contains("● bash  git status"), "{stderr}");
}

#[test]
fn usage_only_final_chunk_is_recorded() {
    let server = MockServer::start(vec![sse_reply(case_input("b-usage-only-final-chunk"))]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "ok?");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "ok\n");
    assert!(stderr.contains("10 in · 1 out"), "{stderr}");
}

#[test]
fn stream_without_usage_and_with_null_choices_completes() {
    let bytes = "data: {\"choices\": null}\n\ndata: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"ok\"}}]}\n\ndata: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n";
    let server = MockServer::start(vec![sse_reply(bytes)]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "ok?");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "ok\n");
    assert!(stderr.contains("usage not reported"), "{stderr}");
}

#[test]
fn sse_framing_variants_lf_and_crlf() {
    let lf = case_input("b-sse-framing-variants");
    let crlf = lf.replace('\n', "\r\n");
    let cr = lf.replace('\n', "\r");
    for bytes in [lf, crlf, cr] {
        let server = MockServer::start(vec![sse_reply(bytes.clone())]);
        let env = env_fast(&server, "");
        let (code, stdout, stderr) = run_yes(&env, "hi?");
        assert_eq!(code, Some(0), "{bytes:?}: {stderr}");
        assert_eq!(stdout, "hi\n", "{bytes:?}");
    }
}

#[test]
fn reasoning_is_shown_apart_and_never_part_of_the_answer() {
    let events = vec![
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": "The user wants a greeting."}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "Hello!"}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ];
    let server = MockServer::start(vec![Reply::Sse(events)]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "greet");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "Hello!\n");
    assert!(stderr.contains("The user wants a greeting."), "{stderr}");
}

/// The write_file call of the case, then a complete bash call whose effect is observable.
fn bash_call_chunks(id: &str, command: &str) -> Vec<Vec<u8>> {
    let arguments = json!({"command": command}).to_string();
    let (head, tail) = arguments.split_at(arguments.len() / 2);
    [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": "bash", "arguments": ""}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": head}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": tail}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
    ]
    .iter()
    .map(|chunk| format!("data: {chunk}\n\n").into_bytes())
    .chain([b"data: [DONE]\n\n".to_vec()])
    .collect()
}

#[test]
fn cut_mid_tool_call_never_runs_or_is_stored_and_is_retried() {
    let cut = case_input("b-sse-cut-mid-tool-call").replace("<connection closed>", "");
    let full: Vec<u8> = bash_call_chunks("call_ok", "echo run >> effects.txt").concat();
    let server = MockServer::start(vec![
        sse_reply(cut),
        sse_reply(full),
        Reply::Sse(text_events(&["done"])),
    ]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "write the app");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "done\n");
    assert!(!env.workspace.join("src/app.py").exists());
    assert_eq!(env.read("effects.txt"), "run\n");
    assert!(
        stderr.contains(
            "retrying in 0 s (attempt 2/5): the answer stream ended before it was complete"
        ),
        "{stderr}"
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    assert_valid(&requests);
    assert_eq!(
        requests[0].body["messages"], requests[1].body["messages"],
        "nothing partial stored"
    );
    assert!(
        !requests[2].raw_body.windows(6).any(|w| w == b"call_w"),
        "the cut call is nowhere in history"
    );
}

#[test]
fn stream_cut_at_every_chunk_boundary_never_executes_and_the_retry_succeeds() {
    let chunks = bash_call_chunks("call_run", "echo run >> effects.txt");
    let finish_chunk = 3;
    let mut cuts: Vec<Vec<u8>> = (0..finish_chunk).map(|k| chunks[..k].concat()).collect();
    // Also inside each chunk before the finish.
    for k in 0..finish_chunk {
        let mut prefix = chunks[..k].concat();
        prefix.extend_from_slice(&chunks[k][..chunks[k].len() / 2]);
        cuts.push(prefix);
    }
    for cut in cuts {
        let server = MockServer::start(vec![
            sse_reply(cut.clone()),
            sse_reply(chunks.concat()),
            Reply::Sse(text_events(&["done"])),
        ]);
        let env = env_fast(&server, "");
        let (code, stdout, stderr) = run_yes(&env, "run it");
        let label = String::from_utf8_lossy(&cut).into_owned();
        assert_eq!(code, Some(0), "cut {label:?}: {stderr}");
        assert_eq!(stdout, "done\n");
        assert_eq!(
            env.read("effects.txt"),
            "run\n",
            "cut {label:?}: executed exactly once"
        );
        let requests = server.chat_requests();
        assert_eq!(requests.len(), 3, "cut {label:?}");
        assert_valid(&requests);
        assert_eq!(
            requests[0].body["messages"], requests[1].body["messages"],
            "cut {label:?}"
        );
    }
}

#[test]
fn stream_ending_after_finish_reason_without_done_is_complete() {
    let chunks = bash_call_chunks("call_run", "echo run >> effects.txt");
    let server = MockServer::start(vec![
        sse_reply(chunks[..4].concat()),
        Reply::Sse(text_events(&["done"])),
    ]);
    let env = env_fast(&server, "");
    let (code, _, stderr) = run_yes(&env, "run it");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(env.read("effects.txt"), "run\n");
    assert!(!stderr.contains("retrying"), "{stderr}");
    assert_eq!(server.chat_requests().len(), 2);
}

#[test]
fn rate_limits_are_retried_with_a_visible_status() {
    let inputs = case_inputs("b-rate-limit-retry-after");
    let server = MockServer::start(vec![
        Reply::Raw(inputs[0].clone().into_bytes()),
        Reply::Raw(inputs[1].clone().into_bytes()),
        Reply::Sse(text_events(&["finally"])),
    ]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "finally\n");
    assert!(
        stderr.contains("retrying in 0 s (attempt 2/5): the server answered 429"),
        "{stderr}"
    );
    assert!(
        stderr.contains("retrying in 0 s (attempt 3/5): the server answered 529"),
        "{stderr}"
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    assert_valid(&requests);
}

#[test]
fn after_the_last_attempt_a_readable_error_and_exit_1() {
    let server = MockServer::start(
        (0..5)
            .map(|_| Reply::error(503, "upstream overloaded"))
            .collect(),
    );
    let env = env_fast(&server, "");
    let (code, _, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "error: the model server answered 503: upstream overloaded (gave up after 5 attempts)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("(attempt 5/5)"), "{stderr}");
    assert_eq!(server.chat_requests().len(), 5);
}

#[test]
fn client_errors_are_not_retried() {
    let cases = [
        (400, "bad request", None),
        (401, "Incorrect API key provided", Some("(check API_KEY)")),
        (403, "forbidden", Some("(check API_KEY)")),
        (
            404,
            "The model `nope` does not exist",
            Some("(check MODEL and BASE_URL)"),
        ),
    ];
    for (status, message, hint) in cases {
        let server = MockServer::start(vec![Reply::error(status, message)]);
        let env = env_fast(&server, "");
        let (code, _, stderr) = run_yes(&env, "go");
        assert_eq!(code, Some(1), "{status}: {stderr}");
        assert!(
            stderr.contains(&format!("the model server answered {status}: {message}")),
            "{stderr}"
        );
        if let Some(hint) = hint {
            assert!(stderr.contains(hint), "{stderr}");
        }
        assert!(!stderr.contains("retrying"), "{stderr}");
        assert_eq!(server.chat_requests().len(), 1, "{status} not retried");
    }
}

#[test]
fn context_length_exceeded_is_not_retried_and_is_readable() {
    let raw = case_input("b-context-length-exceeded");
    let server = MockServer::start(vec![Reply::Raw(raw.into_bytes())]);
    let env = env_fast(&server, "");
    let (code, _, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "the request is too long for the model's context window (the server said `Request \
             is longer than this model allows.`)"
        ),
        "{stderr}"
    );
    assert_eq!(server.chat_requests().len(), 1);
}

#[test]
fn null_content_rejection_switches_to_empty_content_for_the_session() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events("c1", "bash", r#"{"command":"echo one"}"#)),
        Reply::error(400, "messages.2.content: Input should be a valid string"),
        Reply::Sse(tool_events("c2", "bash", r#"{"command":"echo two"}"#)),
        Reply::Sse(text_events(&["done"])),
    ]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "done\n");
    assert!(!stderr.contains("retrying"), "resent at once: {stderr}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    assert_valid(&requests);
    let contents = |r: &Recorded| {
        assistants(r)
            .iter()
            .map(|m| m["content"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(contents(&requests[1]), vec![Value::Null]);
    assert_eq!(contents(&requests[2]), vec![json!("")]);
    assert_eq!(
        contents(&requests[3]),
        vec![json!(""), json!("")],
        "stays switched"
    );
}

#[test]
fn reasoning_goes_back_on_tool_calls_until_a_server_rejects_it() {
    let mut events = tool_events("c1", "bash", r#"{"command":"echo hi"}"#);
    events.insert(
        0,
        json!({"choices": [{"index": 0, "delta": {"reasoning_content": "Run echo."}}]}),
    );
    let server = MockServer::start(vec![
        Reply::Sse(events),
        Reply::error(
            400,
            "'messages.2' : property 'reasoning_content' is unsupported, did you mean 'reasoning'?",
        ),
        Reply::Sse(text_events(&["done"])),
    ]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "done\n");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    assert_valid(&requests);
    assert_eq!(
        assistants(&requests[1])[0]["reasoning_content"],
        json!("Run echo.")
    );
    assert_eq!(assistants(&requests[2])[0].get("reasoning_content"), None);
}

#[test]
fn streaming_rejected_falls_back_for_the_session() {
    let server = MockServer::start(vec![
        Reply::error(400, "streaming is not supported by this server"),
        Reply::Json(crate::support::sse::tool_completion(&[(
            "c1",
            "bash",
            r#"{"command":"echo hi"}"#,
        )])),
        Reply::Json(text_completion("plain answer")),
    ]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "plain answer\n");
    assert!(
        stderr.contains("the server does not stream; continuing without streaming"),
        "{stderr}"
    );
    let requests = server.chat_requests();
    assert_valid(&requests);
    let streams: Vec<Value> = requests.iter().map(|r| r.body["stream"].clone()).collect();
    assert_eq!(streams, vec![json!(true), json!(false), json!(false)]);
    assert_eq!(requests[1].body.get("stream_options"), None);
}

#[test]
fn stream_options_rejected_are_dropped_but_streaming_kept() {
    let server = MockServer::start(vec![
        Reply::error(
            400,
            "Unrecognized request argument supplied: stream_options",
        ),
        Reply::Sse(text_events(&["streamed"])),
    ]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "streamed\n");
    let requests = server.chat_requests();
    assert_eq!(requests[1].body["stream"], json!(true));
    assert_eq!(requests[1].body.get("stream_options"), None);
}

#[test]
fn a_json_answer_to_a_stream_request_is_accepted() {
    let server = MockServer::start(vec![Reply::Json(text_completion("not streamed"))]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "not streamed\n");
    assert_eq!(server.chat_requests().len(), 1);
}

#[test]
fn an_error_object_inside_a_stream_is_retried() {
    let bytes = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\ndata: {\"error\":{\"code\":502,\"message\":\"Provider disconnected\"},\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"error\"}]}\n\ndata: [DONE]\n\n";
    let server = MockServer::start(vec![
        sse_reply(bytes),
        Reply::Sse(text_events(&["whole answer"])),
    ]);
    let env = env_fast(&server, "");
    let (code, stdout, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "whole answer\n");
    assert!(
        stderr.contains("the model server reported an error: Provider disconnected"),
        "{stderr}"
    );
}

#[test]
fn a_closed_connection_and_a_silent_server_are_retried() {
    let server = MockServer::start(vec![
        Reply::Raw(Vec::new()),
        Reply::Hang,
        Reply::SseRaw(vec![
            (
                Duration::ZERO,
                b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"stalled\"}}]}\n\n"
                    .to_vec(),
            ),
            (Duration::from_secs(5), b"data: [DONE]\n\n".to_vec()),
        ]),
        Reply::Sse(text_events(&["recovered"])),
    ]);
    let env = env_fast(&server, "idle_timeout_secs = 1\n");
    let (code, stdout, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.ends_with("recovered\n"), "{stdout}");
    assert!(stderr.contains("(attempt 2/5)"), "{stderr}");
    assert!(stderr.contains("(attempt 3/5)"), "{stderr}");
    assert!(
        stderr.contains("(attempt 4/5): no data from the model server for 1 s"),
        "{stderr}"
    );
    assert_eq!(server.chat_requests().len(), 4);
}

#[test]
fn provider_headers_and_extra_body_are_sent() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let env = env_fast(
        &server,
        "headers = { \"HTTP-Referer\" = \"https://example.org\", X-Title = \"agent\" }\nextra_body = { usage = { include = true }, temperature = 0.2 }\n",
    );
    let (code, _, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    let request = &server.chat_requests()[0];
    assert_eq!(request.header("http-referer"), Some("https://example.org"));
    assert_eq!(request.header("x-title"), Some("agent"));
    assert_eq!(request.body["usage"], json!({"include": true}));
    assert_eq!(request.body["temperature"], json!(0.2));
}

#[test]
fn bad_provider_settings_are_config_errors() {
    let server = MockServer::start(vec![]);
    for (toml, expected) in [
        (
            "send_reasoning = \"sometimes\"\n",
            "[provider] send_reasoning = `sometimes`",
        ),
        (
            "extra_body = { model = \"x\" }\n",
            "extra_body sets `model`",
        ),
        (
            "headers = { \"bad header\" = \"x\" }\n",
            "header name `bad header`",
        ),
    ] {
        let env = env_fast(&server, toml);
        let output = env.run(&["go"]);
        let (_, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(2), "{toml}: {stderr}");
        assert!(stderr.contains(expected), "{stderr}");
    }
    assert_eq!(server.chat_requests().len(), 0);
}

#[test]
fn cached_tokens_and_cost_are_reported() {
    let mut events = text_events(&["ok"]);
    events.pop();
    events.push(
        json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": 80}, "cost": 0.0012}}),
    );
    let server = MockServer::start(vec![Reply::Sse(events)]);
    let env = env_fast(&server, "");
    let (code, _, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("100 in · 5 out · 80 cached · $0.0012"),
        "{stderr}"
    );
}

#[test]
fn request_prefix_is_byte_identical_between_requests() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events("c1", "bash", r#"{"command":"echo one"}"#)),
        Reply::Sse(tool_events("c2", "bash", r#"{"command":"echo two"}"#)),
        Reply::Sse(text_events(&["done"])),
    ]);
    let env = env_fast(&server, "");
    let (code, _, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    let requests = server.chat_requests();
    assert_valid(&requests);
    // Everything up to the last message (which carries the reminder) is a prefix of the next
    // request's messages.
    for pair in requests.windows(2) {
        let before = pair[0].messages();
        let after = pair[1].messages();
        assert_eq!(before[..before.len() - 1], after[..before.len() - 1]);
        assert_eq!(
            pair[0].body["tools"].to_string(),
            pair[1].body["tools"].to_string()
        );
    }
}

#[test]
fn the_repl_stays_usable_after_the_last_attempt_fails() {
    use expectrl::Expect;
    let server = MockServer::start(vec![
        Reply::error(503, "overloaded"),
        Reply::error(503, "overloaded"),
        Reply::Sse(text_events(&["second works"])),
    ]);
    let env = TestEnv::with_server(&server);
    env.config("[provider]\nmax_attempts = 2\nmax_retry_wait_secs = 0\n");
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("agent"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("AGENT_HOME", &env.agent_home)
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .env("BASE_URL", server.base_url())
        .env("MODEL", "mock-model")
        .current_dir(&env.workspace);
    let mut session = expectrl::Session::spawn(command).unwrap();
    session.set_expect_timeout(Some(Duration::from_secs(20)));
    session.expect("› ").unwrap();
    session.send("first task\r").unwrap();
    session.expect("(gave up after 2 attempts)").unwrap();
    session.expect("› ").unwrap();
    session.send("second task\r").unwrap();
    session.expect("second works").unwrap();
    session.expect("› ").unwrap();
    session.send("/exit\r").unwrap();
    session.expect(expectrl::Eof).unwrap();
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    assert_valid(&requests);
    let users: Vec<Value> = requests[2]
        .messages()
        .into_iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(users.len(), 2, "the failed turn's task stays in history");
}

#[test]
fn double_encoded_arguments_are_unwrapped_once() {
    let encoded = json!(json!({"command": "echo dbl"}).to_string()).to_string();
    let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "call_d", "type": "function", "function": {"name": "bash", "arguments": encoded}}]}}]});
    let server = MockServer::start(vec![
        json_reply(&body.to_string()),
        Reply::Sse(text_events(&["ok"])),
    ]);
    let env = env_fast(&server, "");
    let (code, _, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(0), "{stderr}");
    let requests = server.chat_requests();
    assert_valid(&requests);
    assert!(tool_result(&requests[1], "call_d").starts_with("dbl"));
    let call = &assistants(&requests[1])[0]["tool_calls"][0];
    assert_eq!(
        call["function"]["arguments"],
        json!(r#"{"command":"echo dbl"}"#)
    );
}

#[test]
fn quota_exhausted_429_is_not_retried() {
    let server = MockServer::start(vec![Reply::Status {
        status: 429,
        headers: vec![],
        body: r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#.into(),
    }]);
    let env = env_fast(&server, "");
    let (code, _, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("You exceeded your current quota"),
        "{stderr}"
    );
    assert!(
        stderr.contains("(check the account's plan, credit and billing with the provider)"),
        "{stderr}"
    );
    assert_eq!(server.chat_requests().len(), 1);
}

#[test]
fn an_upstream_400_does_not_turn_streaming_off() {
    let server = MockServer::start(vec![Reply::error(
        400,
        "upstream provider returned an invalid request error",
    )]);
    let env = env_fast(&server, "");
    let (code, _, stderr) = run_yes(&env, "go");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("does not stream"), "{stderr}");
    assert_eq!(server.chat_requests().len(), 1);
}

#[test]
fn every_provider_payload_case_is_served_by_a_test_here() {
    let source = include_str!("provider.rs");
    for line in CASES.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let id = case["id"].as_str().unwrap();
        assert!(
            source.contains(&format!("\"{id}\"")),
            "case `{id}` has no test"
        );
    }
}
