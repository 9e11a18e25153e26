//! The seam MCP tools use, without a server: tools joining the registry through a source
//! (and the role's hide rule covering them), and `a` at the approval prompt allowing an
//! opaque tool for the session without overriding a deny.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use agent::cancel::CancelToken;
use agent::model::ToolCall;
use agent::permissions::{
    ApprovalAnswer, ApprovalRequest, Approver, Decision, PathContext, PermissionEngine, Rule,
    RuleSource,
};
use agent::sandbox::ExecSettings;
use agent::tools::NoPolicy;
use agent::tools::registry::ToolSource;
use agent::tools::{
    Access, Args, Dispatcher, FileTracker, Registry, Tool, ToolContext, ToolError, ToolOutput,
    ToolSpec,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::TestEnv;

struct Opaque(ToolSpec);

impl Opaque {
    fn named(name: &'static str) -> Arc<dyn Tool> {
        Arc::new(Self(ToolSpec {
            name,
            description: "an opaque tool",
            parameters: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        }))
    }
}

impl Tool for Opaque {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn access(&self, args: &Args, _: &ToolContext<'_>) -> Result<Access, ToolError> {
        Ok(Access::Opaque(Value::Object(args.clone()).to_string()))
    }
    fn run(&self, _: &Args, _: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ran"))
    }
}

#[derive(Default)]
struct Source(Mutex<Vec<Arc<dyn Tool>>>);

impl ToolSource for Source {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.0.lock().unwrap().clone()
    }
}

#[test]
fn tools_join_through_a_source_and_the_hide_rule_covers_them() {
    let source = Arc::new(Source::default());
    let mut registry = Registry::builtin();
    registry.add_source(Arc::clone(&source) as Arc<dyn ToolSource>);
    registry.set_hidden(|name| name.ends_with("__hidden"));
    let before = registry.names();
    assert!(registry.get("mcp__s__shown").is_none());
    source.0.lock().unwrap().extend([
        Opaque::named("mcp__s__shown"),
        Opaque::named("mcp__s__hidden"),
        Opaque::named("bash"),
    ]);
    let mut expected = before.clone();
    expected.push("mcp__s__shown");
    assert_eq!(
        registry.names(),
        expected,
        "joined after the registered tools"
    );
    assert!(
        registry.get("mcp__s__hidden").is_some(),
        "hidden, still callable"
    );
    assert_eq!(
        registry.get("bash").map(|t| t.spec().description),
        Registry::builtin()
            .get("bash")
            .map(|t| t.spec().description),
        "a source cannot replace a registered tool"
    );
}

/// Answers from a list (then `n`), recording what was asked.
struct Scripted {
    answers: Mutex<VecDeque<ApprovalAnswer>>,
    asked: Mutex<Vec<String>>,
}

impl Approver for Scripted {
    fn ask(&self, request: &ApprovalRequest) -> ApprovalAnswer {
        self.asked.lock().unwrap().push(request.tool.clone());
        self.answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(ApprovalAnswer::No)
    }
}

#[test]
fn always_allows_the_opaque_tool_for_the_session_but_never_over_a_deny() {
    let env = TestEnv::new();
    let deny = Rule {
        tool: "mcp__s__bad".into(),
        pattern: "*".into(),
        action: Decision::Deny,
        source: RuleSource::User,
    };
    let engine = Mutex::new(PermissionEngine::new(vec![deny], PathContext::default()));
    let approver = Scripted {
        answers: Mutex::new(VecDeque::from([ApprovalAnswer::Always])),
        asked: Mutex::new(Vec::new()),
    };
    let mut registry = Registry::new();
    for name in ["mcp__s__good", "mcp__s__other", "mcp__s__bad"] {
        registry.register(Opaque::named(name));
    }
    let dispatcher = Dispatcher {
        registry: &registry,
        permissions: &engine,
        approver: &approver,
        policy: &NoPolicy,
    };
    let (files, exec, cancel) = (
        FileTracker::default(),
        ExecSettings::default(),
        CancelToken::new(),
    );
    let ctx = ToolContext {
        workspace: &env.workspace,
        cwd: &env.workspace,
        files: &files,
        exec: &exec,
        cancel: &cancel,
        max_output_chars: 10_000,
        before_run: None,
    };
    let call = |name: &str, x: &str| {
        let call = ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: json!({ "x": x }).to_string(),
        };
        dispatcher.dispatch(&call, &ctx)
    };
    assert!(call("mcp__s__good", "1").ok, "approved with `a`");
    assert!(call("mcp__s__good", "2").ok, "other arguments: no prompt");
    assert_eq!(
        call("mcp__s__other", "1").content,
        "The user denied this tool call."
    );
    assert!(
        call("mcp__s__bad", "1")
            .content
            .starts_with("Blocked by policy: `mcp__s__bad`"),
    );
    assert_eq!(
        *approver.asked.lock().unwrap(),
        vec!["mcp__s__good", "mcp__s__other"]
    );
}
