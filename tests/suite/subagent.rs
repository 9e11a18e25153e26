//! Subagents (SPEC §8.4): `task` runs a child loop with a fresh history; only its final
//! answer reaches the parent; failures are error results; no nesting; 30 calls at most.

use crate::support::env::texts;
use crate::support::sse::{check_request_invariants, text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

fn sse_tool(id: &str, name: &str, args: &str) -> Reply {
    Reply::Sse(tool_events(id, name, args))
}

fn sse_text(text: &str) -> Reply {
    Reply::Sse(text_events(&[text]))
}

const TASK: &str =
    r#"{"description":"find the config loader","prompt":"Where is the config loaded?"}"#;

fn tool_names(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_parent_sees_only_the_childs_answer() {
    let server = MockServer::start(vec![
        sse_tool("p1", "task", TASK),
        sse_tool("k1", "bash", r#"{"command":"echo child-secret-output"}"#),
        sse_text("The config is loaded in src/config/mod.rs:42."),
        sse_text("It is in src/config/mod.rs."),
    ]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["where is the config loaded?"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "It is in src/config/mod.rs.\n");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    for request in &requests {
        check_request_invariants(&request.body).unwrap();
    }
    // The child's first request: a fresh history, the same endpoint, no `task` tool.
    let child = requests[1].messages();
    assert_eq!(child.len(), 2);
    assert_eq!(child[0]["role"], "system");
    let prompt = child[1]["content"].as_str().unwrap();
    assert!(prompt.starts_with("Where is the config loaded?\n\n(You are a subagent started for: find the config loader."), "{prompt}");
    assert!(!tool_names(&requests[1].body).contains(&"task".to_string()));
    assert!(tool_names(&requests[0].body).contains(&"task".to_string()));
    assert_eq!(requests[1].body["model"], requests[0].body["model"]);
    // The parent's next request: its own history plus the child's answer, nothing else.
    let parent = requests[3].messages();
    let roles: Vec<&str> = parent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "tool"]);
    assert!(
        parent[3]["content"]
            .as_str()
            .unwrap()
            .starts_with("The config is loaded in src/config/mod.rs:42.")
    );
    let body = String::from_utf8_lossy(&requests[3].raw_body).to_string();
    assert!(
        !body.contains("child-secret-output"),
        "child activity leaked to the parent"
    );
    // The child's tool activity is shown indented under the parent's `task` line.
    let task_line = stderr
        .find("● task  find the config loader")
        .expect(&stderr);
    let child_line = stderr
        .find("    ● bash  echo child-secret-output")
        .expect(&stderr);
    assert!(task_line < child_line, "{stderr}");
}

#[test]
fn a_failing_child_is_an_error_result_and_the_parent_goes_on() {
    let server = MockServer::start(vec![
        sse_tool("p1", "task", TASK),
        Reply::error(400, "model does not support this request"),
        sse_text("I will look myself then."),
    ]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["where is the config loaded?"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "I will look myself then.\n");
    let parent = server.chat_requests()[2].messages();
    let result = parent[3]["content"].as_str().unwrap();
    assert!(
        result.starts_with("Error: task failed - subagent: the model server answered 400: model does not support this request"),
        "{result}"
    );
}

#[test]
fn a_child_stops_after_30_model_calls() {
    let mut replies = vec![sse_tool("p1", "task", TASK)];
    for i in 0..30 {
        replies.push(sse_tool(
            &format!("k{i}"),
            "bash",
            &format!(r#"{{"command":"echo again {i}"}}"#),
        ));
    }
    replies.push(sse_text("The subagent gave up; done."));
    let server = MockServer::start(replies);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["where is the config loaded?"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "The subagent gave up; done.\n");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 32);
    let parent = requests[31].messages();
    assert_eq!(
        parent[3]["content"]
            .as_str()
            .unwrap()
            .lines()
            .next()
            .unwrap(),
        "Error: task failed - subagent: the subagent stopped after 30 model calls without a final answer; give it a narrower job"
    );
}

#[test]
fn a_child_calling_task_gets_an_unknown_tool_error() {
    let server = MockServer::start(vec![
        sse_tool("p1", "task", TASK),
        sse_tool("k1", "task", TASK),
        sse_text("no nesting for me"),
        sse_text("ok"),
    ]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["go"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    let child = server.chat_requests()[2].messages();
    let result = child[3]["content"].as_str().unwrap();
    assert!(
        result.starts_with("Error: no tool named 'task'. Available: "),
        "{result}"
    );
}
