//! The user reports of tests/data/reports-2026-12.jsonl (issue 13), each reproduced end to end
//! on the mock: the case's input is served or set up as the report describes, and the test
//! checks what the case's `expected` asks for. Every mocked request is checked with
//! `check_request_invariants`.

use serde_json::{Value, json};

use crate::support::env::texts;
use crate::support::mock::Recorded;
use crate::support::sse::{check_request_invariants, text_completion, text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

const CASES: &str = include_str!("../data/reports-2026-12.jsonl");

/// The `input` object of the case `id`.
fn case_input(id: &str) -> Value {
    CASES
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|case| case["id"] == id)
        .map(|case| case["input"].clone())
        .unwrap_or_else(|| panic!("no case {id}"))
}

fn assert_valid(requests: &[Recorded]) {
    for (i, request) in requests.iter().enumerate() {
        if let Err(problem) = check_request_invariants(&request.body) {
            panic!("request {i}: {problem}\n{}", request.body);
        }
    }
}

/// The tool messages of a request, in order.
fn tool_results(request: &Recorded) -> Vec<String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A non-streamed answer with this content and `finish_reason`.
fn content_reply(content: &str, finish_reason: &str) -> Reply {
    let mut body = text_completion(content);
    body["choices"][0]["finish_reason"] = json!(finish_reason);
    Reply::Json(body)
}

/// `content` streamed a few characters at a time, ending with `finish_reason: stop`.
fn streamed(content: &str) -> Reply {
    let chars: Vec<char> = content.chars().collect();
    let pieces: Vec<String> = chars.chunks(4).map(|c| c.iter().collect()).collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    Reply::Sse(text_events(&refs))
}

#[test]
fn qwen3_coder_call_without_its_opening_tag_runs() {
    let input = case_input("b-qwen3coder-xml-unwrapped");
    let content = input["content"].as_str().unwrap();
    let finish_reason = input["finish_reason"].as_str().unwrap();
    for first in [content_reply(content, finish_reason), streamed(content)] {
        let server = MockServer::start(vec![first, Reply::Sse(text_events(&["done"]))]);
        let env = TestEnv::with_server(&server);
        let output = env.run(&["--yes", "say it"]);
        let (stdout, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        assert_eq!(stdout, "done\n");
        assert!(stderr.contains("● bash  echo QWEN_RAN"), "{stderr}");
        for markup in ["<function", "<parameter", "</tool_call>"] {
            assert!(
                !stdout.contains(markup) && !stderr.contains(markup),
                "{markup} shown:\n{stderr}"
            );
        }
        let requests = server.chat_requests();
        assert_valid(&requests);
        assert_eq!(requests.len(), 2);
        let results = tool_results(&requests[1]);
        assert_eq!(results.len(), 1);
        assert!(results[0].starts_with("QWEN_RAN\n"), "{results:?}");
        let assistant = requests[1]
            .messages()
            .into_iter()
            .find(|m| m["role"] == "assistant")
            .unwrap();
        assert_eq!(assistant["content"], Value::Null);
        assert_eq!(assistant["tool_calls"][0]["function"]["name"], "bash");
    }
}

/// Several unwrapped calls each closed by a stray `</tool_call>`, with CRLF line ends: every
/// call goes through the permission rules (`rm` is denied even with `--yes`).
#[test]
fn several_unwrapped_qwen3_calls_each_go_through_the_permission_rules() {
    let content = "<function=bash>\r\n<parameter=command>\r\necho FIRST\r\n</parameter>\r\n</function>\r\n</tool_call>\r\n\
                   <function=bash>\r\n<parameter=command>\r\nrm -rf build\r\n</parameter>\r\n</function>\r\n</tool_call>\r\n";
    let server = MockServer::start(vec![streamed(content), Reply::Sse(text_events(&["ok"]))]);
    let env = TestEnv::with_server(&server);
    env.write("build/keep.txt", "x");
    let output = env.run(&["--yes", "clean up"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "ok\n");
    assert!(env.workspace.join("build/keep.txt").exists());
    let requests = server.chat_requests();
    assert_valid(&requests);
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].starts_with("FIRST\n"), "{results:?}");
    assert!(results[1].starts_with("Blocked by policy"), "{results:?}");
}

/// Prose that mentions the XML call form is the answer, not a call.
#[test]
fn prose_with_an_unwrapped_qwen3_call_stays_text() {
    let content = "Qwen3-Coder writes a call like this:\n<function=bash>\n<parameter=command>\necho QWEN_RAN\n</parameter>\n</function>\n</tool_call>";
    let server = MockServer::start(vec![streamed(content)]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["--yes", "how does qwen3 write calls?"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, format!("{content}\n"));
    assert!(!stderr.contains("● bash"), "{stderr}");
    assert_valid(&server.chat_requests());
}

/// A `str_replace` call as the model sends it, then a closing answer.
fn edit_then_answer(args: &Value) -> MockServer {
    MockServer::start(vec![
        Reply::Sse(tool_events("call_1", "str_replace", &args.to_string())),
        Reply::Sse(text_events(&["edited"])),
    ])
}

#[test]
fn spaces_sent_for_a_tab_indented_file_edit_it_keeping_the_tabs() {
    let input = case_input("c-tab-indent-edit");
    let file = &input["file"];
    let (path, text) = (
        file["path"].as_str().unwrap(),
        file["text"].as_str().unwrap(),
    );
    let edit = &input["edit"];
    let server = edit_then_answer(&json!({
        "path": path, "old_str": edit["old_str"], "new_str": edit["new_str"]
    }));
    let env = TestEnv::with_server(&server);
    env.write(path, text);
    let output = env.run(&["--yes", "print b instead of a"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "edited\n");
    let edited = env.read(path);
    assert_eq!(edited, text.replace("println(\"a\")", "println(\"b\")"));
    assert!(edited.contains("\t\tprintln(\"b\")"), "{edited:?}");
    assert!(!edited.lines().any(|l| l.starts_with(' ')), "{edited:?}");
    let requests = server.chat_requests();
    assert_valid(&requests);
    let results = tool_results(&requests[1]);
    assert!(
        results[0].starts_with("Edited `main.go` at line 4."),
        "{results:?}"
    );
    assert!(
        results[0].contains("old_str was indented with spaces but the file indents with tabs"),
        "{results:?}"
    );
}

/// When the place is ambiguous the edit is refused, the file is untouched, and the model is
/// told the file indents with tabs, with the tabs shown.
#[test]
fn an_ambiguous_indentation_only_match_is_refused_showing_the_tabs() {
    let text =
        "func a() {\n\tif ok {\n\t\treturn\n\t}\n}\n\nfunc b() {\n\tif ok {\n\t\treturn\n\t}\n}\n";
    let server = edit_then_answer(&json!({
        "path": "two.go",
        "old_str": "    if ok {\n        return",
        "new_str": "    if ok {\n        panic(1)"
    }));
    let env = TestEnv::with_server(&server);
    env.write("two.go", text);
    let output = env.run(&["--yes", "panic in b"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(env.read("two.go"), text);
    let requests = server.chat_requests();
    assert_valid(&requests);
    let result = &tool_results(&requests[1])[0];
    assert!(
        result.contains("it matches 2 places only if indentation is ignored"),
        "{result}"
    );
    assert!(result.contains("the file indents with tabs"), "{result}");
    assert!(
        result.contains("     2\t→if ok {\n     3\t→→return"),
        "{result}"
    );
}
