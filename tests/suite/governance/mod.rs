//! Governance (SPEC §9, issue 5): roles, budgets, cost and the policy event log, end to end
//! against the mock server and in-process through the library.

mod budgets;
mod cost;
mod e2e;
mod events;
mod repl;
mod roles;

use std::sync::{Arc, Mutex};

use agent::agent::{Agent, AgentParts};
use agent::cli::Cli;
use agent::config::{Environment, Settings, Sources};
use agent::events::{AgentEvent, EventSink};
use agent::model::{Client, ProviderSettings};
use agent::permissions::PermissionEngine;
use agent::permissions::approval::AlwaysYes;
use agent::sandbox::ExecSettings;
use agent::tools::{Access, Args, Registry, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
use clap::Parser;
use serde_json::{Value, json};

use crate::support::{MockServer, TestEnv};

/// The lines of `$AGENT_HOME/events.jsonl`, parsed (panics on a line that is not JSON).
pub(super) fn event_lines(env: &TestEnv) -> Vec<Value> {
    let text = std::fs::read_to_string(env.agent_home.join("events.jsonl")).unwrap_or_default();
    text.lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("torn line {line:?}: {e}"))
        })
        .collect()
}

/// The events of one `type`.
pub(super) fn of_type(lines: &[Value], kind: &str) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["type"] == kind)
        .cloned()
        .collect()
}

/// Names of the tools offered in a recorded request.
pub(super) fn offered_tools(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The content of the tool message answering `call_id` in a recorded request, without the
/// reminder appended to the last message.
pub(super) fn tool_result(body: &Value, call_id: &str) -> String {
    let content = body["messages"]
        .as_array()
        .and_then(|m| {
            m.iter()
                .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        })
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no tool result for {call_id} in {body}"));
    let content = match content.split_once("\n\n<system-reminder>") {
        Some((result, _)) => result,
        None => content,
    };
    without_exec_notes(content)
}

/// `text` without the note the first-version `bash` sometimes adds at random about
/// background processes (a race in the skeleton's exec, not governance's business).
pub(super) fn without_exec_notes(text: &str) -> String {
    const NOTE: &str = "[background processes still running when the shell exited were stopped]";
    text.replace(&format!("{NOTE}\n"), "").replace(NOTE, "")
}

/// SSE events for a reply with these `(id, name, arguments)` tool calls and a usage chunk.
pub(super) fn calls_events(calls: &[(&str, &str, &str)], usage: Value) -> Vec<Value> {
    let deltas: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (id, name, args))| {
            json!({"index": i, "id": id, "type": "function",
                "function": {"name": name, "arguments": args}})
        })
        .collect();
    vec![
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": deltas}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": usage}),
    ]
}

/// SSE events for a text answer with this usage chunk.
pub(super) fn text_with_usage(text: &str, usage: Value) -> Vec<Value> {
    vec![
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": usage}),
    ]
}

/// `{"prompt_tokens": 10, "completion_tokens": 5}`.
pub(super) fn small_usage() -> Value {
    json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
}

/// Records every event the agent emits.
#[derive(Default)]
pub(super) struct Recorder(pub Mutex<Vec<AgentEvent>>);

impl EventSink for Recorder {
    fn emit(&self, event: AgentEvent) {
        self.0.lock().unwrap().push(event);
    }
}

impl Recorder {
    pub(super) fn warnings(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Warning { message } => Some(message.clone()),
                _ => None,
            })
            .collect()
    }
}

/// An agent built in-process the way `run` builds it (governance from config, `--yes`),
/// with `args` as the command line and events recorded.
pub(super) fn in_process(
    env: &TestEnv,
    server: &MockServer,
    args: &[&str],
) -> (Agent, Arc<Recorder>) {
    in_process_with(env, server, args, None)
}

/// A test tool, `emit`, that returns its `text` argument: output that does not depend on a
/// shell, for exact token counts.
pub(super) struct EmitTool(ToolSpec);

impl EmitTool {
    pub(super) fn new() -> Self {
        Self(ToolSpec {
            name: "emit",
            description: "Return the text.",
            parameters: json!({"type": "object", "properties": {"text": {"type": "string"}},
                "required": ["text"]}),
        })
    }
}

impl Tool for EmitTool {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn access(&self, _: &Args, _: &ToolContext<'_>) -> Result<Access, ToolError> {
        Ok(Access::None)
    }
    fn run(&self, args: &Args, _: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default()))
    }
}

/// As [`in_process`], with `extra` registered after the built-in tools.
pub(super) fn in_process_with(
    env: &TestEnv,
    server: &MockServer,
    args: &[&str],
    extra: Option<Arc<dyn Tool>>,
) -> (Agent, Arc<Recorder>) {
    let mut argv = vec!["agent"];
    argv.extend_from_slice(args);
    let cli = Cli::try_parse_from(argv).unwrap();
    let mut vars = std::collections::BTreeMap::new();
    vars.insert("HOME".to_string(), env.home.display().to_string());
    vars.insert(
        "AGENT_HOME".to_string(),
        env.agent_home.display().to_string(),
    );
    vars.insert("BASE_URL".to_string(), server.base_url());
    vars.insert("MODEL".to_string(), "mock-model".to_string());
    let environment = Environment {
        vars,
        cwd: env.workspace.clone(),
    };
    let sources = Sources::load(cli.run.flags(), environment).unwrap();
    let settings = Settings::resolve(&sources).unwrap();
    let endpoint = settings.endpoint.clone();
    let recorder = Arc::new(Recorder::default());
    let sink: Arc<dyn EventSink> = recorder.clone();
    let setup =
        agent::governance::setup(&settings.governance, &endpoint.model, Arc::clone(&sink)).unwrap();
    let mut registry = Registry::builtin();
    if let Some(tool) = extra {
        registry.register(tool);
    }
    setup.governor.hide_denied(&mut registry);
    let (permissions, _) =
        PermissionEngine::from_settings(&settings.permissions, (&settings.paths).into());
    let client = Client::new(endpoint, ProviderSettings::default()).unwrap();
    let mut agent = Agent::new(AgentParts {
        paths: settings.paths.clone(),
        client,
        registry,
        permissions,
        approver: Arc::new(AlwaysYes),
        sink,
        exec: ExecSettings {
            helper: std::path::PathBuf::from(env!("CARGO_BIN_EXE_agent")),
            ..ExecSettings::default()
        },
        context: settings.context.clone(),
        loop_settings: settings.loop_settings,
    });
    agent.set_governor(setup.governor);
    (agent, recorder)
}
