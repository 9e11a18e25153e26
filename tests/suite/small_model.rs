//! The small-model profile behind the coach (issue 19) end to end on the mock: the smaller
//! request, lenient text calls, whole-file listings, recovery lines; and the pin that a
//! capable model's request is what it was before (full tool set, the same system prompt, no
//! `max_tokens`). Every request the mock receives is checked for the tool-call/tool-result
//! invariant when the server is dropped.

use serde_json::Value;

use crate::support::env::texts;
use crate::support::sse::{text_events, tool_events};
use crate::support::{CAPABLE_MODEL, MockServer, Reply, SMALL_MODEL, TestEnv};

/// The system prompt a capable model got before issue 19, with `{workspace}` for the path.
const CAPABLE_SYSTEM_PROMPT: &str = include_str!("../data/capable_system_prompt.txt");

/// The tools a capable model is offered (all of them, in the registry's order).
const ALL_TOOLS: &[&str] = &[
    "bash",
    "read_file",
    "write_file",
    "str_replace",
    "write_todos",
    "task",
];

/// The size of the first request before issue 19, in bytes (system prompt, every tool
/// schema, a one-word task).
const FIRST_REQUEST_BEFORE: usize = 3_783;

fn text(reply: &str) -> Reply {
    Reply::Sse(text_events(&[reply]))
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

fn last_content(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

#[test]
fn a_capable_model_sees_the_request_it_saw_before() {
    let server = MockServer::start(vec![text("ok")]);
    let env = TestEnv::with_model(&server, CAPABLE_MODEL);
    let output = env.run(&["hi"]);
    assert_eq!(output.status.code(), Some(0));
    let request = &server.chat_requests()[0];
    let body = &request.body;
    assert_eq!(tool_names(body), ALL_TOOLS);
    assert!(body.get("max_tokens").is_none(), "{body}");
    let system = body["messages"][0]["content"].as_str().unwrap_or("");
    let workspace = env
        .workspace
        .canonicalize()
        .unwrap_or(env.workspace.clone());
    assert_eq!(
        system,
        CAPABLE_SYSTEM_PROMPT
            .trim_end()
            .replace("{workspace}", &workspace.display().to_string())
    );
}

#[test]
fn a_small_model_gets_a_smaller_bounded_request() {
    let server = MockServer::start(vec![text("ok")]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["hi"]);
    assert_eq!(output.status.code(), Some(0));
    let request = &server.chat_requests()[0];
    let body = &request.body;
    assert_eq!(
        tool_names(body),
        ["bash", "read_file", "write_file", "str_replace"]
    );
    assert_eq!(body["max_tokens"], 1536);
    let system = body["messages"][0]["content"].as_str().unwrap_or("");
    assert!(
        system.contains("<tool_call>\n{\"name\": \"write_file\""),
        "{system}"
    );
    let size = request.raw_body.len();
    eprintln!("a small model's first request: {size} bytes");
    assert!(
        size * 4 < FIRST_REQUEST_BEFORE * 3,
        "the first request is {size} bytes, not well under {FIRST_REQUEST_BEFORE}"
    );
    // With the coach off, the same model gets the full request.
    let server = MockServer::start(vec![text("ok")]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["--coach", "off", "hi"]);
    assert_eq!(output.status.code(), Some(0));
    let body = &server.chat_requests()[0].body;
    assert_eq!(tool_names(body), ALL_TOOLS);
    assert!(body.get("max_tokens").is_none());
}

/// The baseline evaluation's failures: a call with raw newlines in `content`, and one with
/// the invalid escape `\;`, each the whole reply, printed as the final answer before.
#[test]
fn almost_json_calls_are_read_through_the_dispatcher() {
    let write = "```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"hello.py\", \"content\": \"print('hello')\nprint('bye')\n\",}}\n```";
    let mark = "```json\n{\n  \"name\": \"bash\",\n  \"arguments\": {\n    \"command\": \"find build -name '*.tmp' -exec touch {}.seen \\;\"\n  }\n}\n```";
    let server = MockServer::start(vec![text(write), text(mark), text("Done.")]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    env.write("build/a.tmp", "");
    env.write("build/keep.txt", "");
    let output = env.run(&["--yes", "create hello.py and mark the .tmp files in build"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "Done.\n");
    assert_eq!(env.read("hello.py"), "print('hello')\nprint('bye')\n");
    assert!(env.workspace.join("build/a.tmp.seen").exists(), "{stderr}");
    assert!(!env.workspace.join("build/keep.txt.seen").exists());
    // A capable model's almost-JSON reply stays text: its answer is final.
    let server = MockServer::start(vec![text(write)]);
    let env = TestEnv::with_model(&server, CAPABLE_MODEL);
    let output = env.run(&["--yes", "create hello.py"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(!env.workspace.join("hello.py").exists());
}

/// The baseline's new_script reply: the listing shown, never written.
const LISTING: &str = "To create `count.py`, you can use the following code:\n\n```python\n# count.py\nwith open('words.txt') as f:\n    print(len(f.readlines()))\n```\n\nRun it with:\n```bash\npython3 count.py\n```";

#[test]
fn a_listing_of_a_file_to_create_is_written() {
    let server = MockServer::start(vec![
        text(LISTING),
        Reply::Sse(tool_events(
            "b1",
            "bash",
            r#"{"command":"python3 count.py"}"#,
        )),
        text("It prints 2."),
    ]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    env.write("words.txt", "a\nb\n");
    let output = env.run(&[
        "--yes",
        "Create count.py that prints how many lines words.txt has, then run it.",
    ]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "It prints 2.\n");
    assert_eq!(
        env.read("count.py"),
        "with open('words.txt') as f:\n    print(len(f.readlines()))\n"
    );
    let requests = server.chat_requests();
    assert!(
        last_content(&requests[1].body).contains("count.py"),
        "the write's result"
    );
}

#[test]
fn a_listing_shown_for_a_question_is_not_written() {
    for request in [
        "Show me what count.py would look like",
        "Explain how I would write count.py; don't change anything",
    ] {
        let server = MockServer::start(vec![text(LISTING)]);
        let env = TestEnv::with_model(&server, SMALL_MODEL);
        let output = env.run(&["--yes", request]);
        let (stdout, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        assert!(stdout.contains("python3 count.py"), "{stdout}");
        assert!(!env.workspace.join("count.py").exists(), "{request}");
        assert_eq!(server.chat_requests().len(), 1, "{request}: {stderr}");
    }
}

#[test]
fn a_refusal_says_what_to_call_instead_with_the_coach_on_only() {
    for (model, expected) in [(SMALL_MODEL, true), (CAPABLE_MODEL, false)] {
        let server = MockServer::start(vec![
            Reply::Sse(tool_events(
                "s1",
                "str_replace",
                r#"{"path":"fruits.txt","old_str":"pear","new_str":"banana"}"#,
            )),
            text("I could not change it."),
        ]);
        let env = TestEnv::with_model(&server, model);
        env.write("fruits.txt", "apple\n");
        let output = env.run(&["--yes", "Replace pear with banana in fruits.txt"]);
        let (_, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let result = server.chat_requests()[1].messages()[3]["content"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(result.contains("not found"), "{result}");
        assert_eq!(
            result.contains(
                "Next: read the file and copy `old_str` exactly from it: {\"name\": \"read_file\", \"arguments\": {\"path\":\"fruits.txt\"}}"
            ),
            expected,
            "{model}: {result}"
        );
    }
}

/// git_commit on Qwen2.5-Coder-1.5B: `write_file` of a file not read yet was refused, and the
/// model looped on prose. With the coach on, the refusal carries the file's content (read
/// through the dispatcher, so it counts as read) and the next write runs; with it off the
/// refusal is as before and the next write is refused too.
#[test]
fn a_write_refused_as_not_read_carries_the_file_with_the_coach_on_only() {
    for (model, coached) in [(SMALL_MODEL, true), (CAPABLE_MODEL, false)] {
        let write = r#"{"path":"fruits.txt","content":"apple\nbanana\n"}"#;
        let server = MockServer::start(vec![
            Reply::Sse(tool_events("w1", "write_file", write)),
            Reply::Sse(tool_events("w2", "write_file", write)),
            text("Added banana."),
        ]);
        let env = TestEnv::with_model(&server, model);
        env.write("fruits.txt", "apple\n");
        let output = env.run(&["--yes", "Add a line banana at the end of fruits.txt"]);
        let (_, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let refusal = server.chat_requests()[1].messages()[3]["content"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(refusal.contains("not read"), "{refusal}");
        assert_eq!(
            refusal.contains("`fruits.txt` now counts as read") && refusal.contains("1\tapple"),
            coached,
            "{model}: {refusal}"
        );
        assert!(
            !refusal.contains("Next: read the file first"),
            "{model}: the plain loop adds nothing, the coach adds the file: {refusal}"
        );
        let second = server.chat_requests()[2].messages()[5]["content"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert_eq!(second.contains("not read"), !coached, "{model}: {second}");
        let on_disk = std::fs::read_to_string(env.workspace.join("fruits.txt")).unwrap_or_default();
        assert_eq!(
            on_disk,
            if coached {
                "apple\nbanana\n"
            } else {
                "apple\n"
            },
            "{model}"
        );
        assert_eq!(
            stderr.contains("the coach ran `read_file`"),
            coached,
            "{stderr}"
        );
    }
}

/// count_rows on Qwen2.5-Coder-1.5B: the answer was a ```` ```python ```` block in prose and
/// no call, and the turn ended with nothing done. With the coach on, one request says so and
/// shows a call; a capable model's answer is final; a question gets no request.
#[test]
fn code_instead_of_the_work_gets_one_request_with_the_coach_on_only() {
    let count =
        "How many rows of sales.csv have the region EU? Write only the number into answer.txt.";
    let code = "Here's the code:\n```python\nwith open('sales.csv') as f:\n    print(len(f.readlines()))\n```\nAfter running it the number is in answer.txt.";
    for (model, request, coached) in [
        (SMALL_MODEL, count, true),
        (CAPABLE_MODEL, count, false),
        (
            SMALL_MODEL,
            "How many rows of sales.csv have the region EU?",
            false,
        ),
    ] {
        let server = MockServer::start(vec![text(code), text("Done.")]);
        let env = TestEnv::with_model(&server, model);
        env.write("sales.csv", "id,region\n1,EU\n2,US\n");
        let output = env.run(&["--yes", request]);
        let (_, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let requests = server.chat_requests();
        assert_eq!(
            requests.len(),
            if coached { 2 } else { 1 },
            "{model} {request}"
        );
        if coached {
            let asked = last_content(&requests[1].body);
            assert!(asked.contains("Nothing has been done yet"), "{asked}");
            assert!(
                asked.contains("<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>"),
                "{asked}"
            );
        }
    }
}

/// The tool calls of the assistant messages of a request body, as (name, arguments).
fn assistant_calls(body: &Value) -> Vec<(String, Value)> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|call| {
            let name = call["function"]["name"].as_str().unwrap_or("").to_string();
            let arguments = call["function"]["arguments"].as_str().unwrap_or("{}");
            (name, serde_json::from_str(arguments).unwrap_or(Value::Null))
        })
        .collect()
}

/// The hello.py runs on Qwen2.5-Coder-1.5B: `bash` called with a whole tool call as its
/// command. With the coach on it is the call it wraps; with it off it runs as written.
#[test]
fn a_call_wrapped_in_a_bash_command_is_that_call_with_the_coach_on_only() {
    let write = serde_json::json!({"command": "{\"name\":\"write_file\",\"arguments\":{\"path\":\"hello.py\",\"content\":\"print('hello')\n\"}}"}).to_string();
    let run = serde_json::json!({"command": "{\"name\": \"bash\", \"arguments\": {\"command\": \"python3 hello.py\"}}"}).to_string();
    let replies = || {
        vec![
            Reply::Sse(tool_events("b1", "bash", &write)),
            Reply::Sse(tool_events("b2", "bash", &run)),
            text("Done."),
        ]
    };
    let server = MockServer::start(replies());
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["--yes", "create hello.py that prints hello and run it"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "Done.\n");
    assert_eq!(env.read("hello.py"), "print('hello')\n");
    assert!(stderr.contains("● write_file  hello.py"), "{stderr}");
    assert!(stderr.contains("● bash  python3 hello.py"), "{stderr}");
    assert!(!stderr.contains("command not found"), "{stderr}");
    let last = &server.chat_requests()[2];
    assert!(
        last_content(&last.body).contains("hello"),
        "the run's result"
    );
    // The history holds the calls that ran, under the model's ids.
    let calls = assistant_calls(&last.body);
    assert_eq!(calls[0].0, "write_file");
    assert_eq!(
        calls[1],
        (
            "bash".to_string(),
            serde_json::json!({"command": "python3 hello.py"})
        )
    );

    let server = MockServer::start(replies());
    let env = TestEnv::with_model(&server, CAPABLE_MODEL);
    let output = env.run(&["--yes", "create hello.py that prints hello and run it"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!env.workspace.join("hello.py").exists(), "{stderr}");
    let calls = assistant_calls(&server.chat_requests()[2].body);
    assert_eq!(
        calls.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        ["bash", "bash"]
    );
    assert_eq!(calls[1].1, serde_json::from_str::<Value>(&run).unwrap());
}

/// A reply held back as a possible call that only the coach's lenient reader takes as one:
/// it is the call, and its text is not shown as an answer before the call's line.
#[test]
fn held_text_read_as_calls_by_the_coach_is_not_shown() {
    // Almost JSON: a raw newline inside `content` and a trailing comma.
    let call = "{\"name\": \"write_file\", \"arguments\": {\"path\": \"hello.py\", \"content\": \"print('hello')\n\",}}";
    let prose = "{\"a\": 1} is a JSON object.";
    let server = MockServer::start(vec![
        Reply::Sse(text_events(&[&call[..20], &call[20..]])),
        text(prose),
    ]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["--yes", "--json", "create hello.py that prints hello"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(env.read("hello.py"), "print('hello')\n");
    let deltas: String = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "message.delta")
        .filter_map(|event| event["text"].as_str().map(str::to_string))
        .collect();
    // The prose answer, held back because it starts with `{`, is still shown.
    assert_eq!(deltas, prose, "{stdout}");

    let server = MockServer::start(vec![
        Reply::Sse(text_events(&[&call[..20], &call[20..]])),
        text("Done."),
    ]);
    let env = TestEnv::with_model(&server, SMALL_MODEL);
    let output = env.run(&["--yes", "create hello.py that prints hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("● write_file  hello.py"), "{stderr}");
    assert!(!stderr.contains("\"name\""), "{stderr}");
}

/// `bash hello.py` on a Python file fails with a syntax error; the result says to run it with
/// python3 (coach on only).
#[test]
fn a_python_file_run_by_bash_gets_the_python3_line() {
    for (model, expected) in [(SMALL_MODEL, true), (CAPABLE_MODEL, false)] {
        let server = MockServer::start(vec![
            Reply::Sse(tool_events("b1", "bash", r#"{"command":"bash hello.py"}"#)),
            text("It failed."),
        ]);
        let env = TestEnv::with_model(&server, model);
        env.write("hello.py", "print('hello')\n");
        let output = env.run(&["--yes", "run hello.py"]);
        let (_, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let result = last_content(&server.chat_requests()[1].body);
        assert!(result.contains("exit code"), "{result}");
        assert_eq!(
            result.contains(
                "Next: `hello.py` is a Python file, not a shell script; run it with python3: {\"name\": \"bash\", \"arguments\": {\"command\":\"python3 hello.py\"}}"
            ),
            expected,
            "{model}: {result}"
        );
    }
}

/// hello.py run 1 and fix_script on Qwen2.5-Coder-1.5B: the shell block shown after the
/// request to run it was `write_file path=X content="..."`; taken as a `bash` call it failed
/// with "command not found". With the coach on it is that `write_file` call (its `\n` a line
/// break); a capable model's answer stays final.
#[test]
fn a_call_written_as_a_command_line_is_that_call_with_the_coach_on_only() {
    let keyed = "Create it:\n```bash\nwrite_file path=hello.py content=\"print('hello')\\n\"\n```";
    for (model, coached) in [(SMALL_MODEL, true), (CAPABLE_MODEL, false)] {
        let server = MockServer::start(vec![text(keyed), text(keyed), text("Done.")]);
        let env = TestEnv::with_model(&server, model);
        let output = env.run(&["--yes", "Create hello.py that prints hello"]);
        let (_, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        if coached {
            assert_eq!(env.read("hello.py"), "print('hello')\n", "{stderr}");
            assert!(!stderr.contains("command not found"), "{stderr}");
        } else {
            assert!(!env.workspace.join("hello.py").exists(), "{stderr}");
            assert_eq!(server.chat_requests().len(), 1, "the answer is final");
        }
    }
}
