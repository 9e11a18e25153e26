//! The `task` tool (SPEC §8.4): a subagent that works in a throw-away context and returns
//! only its final answer.
//!
//! The child runs the same inner loop ([`super::turn::run`]) with a fresh history, the same
//! endpoint, permissions, approver and call policy (role and budget are shared, so spending
//! adds up), the parent's tools minus `task` (no nesting) and with a todo list of its own,
//! its own context manager, and at most [`MAX_CHILD_CALLS`] model calls. Its events reach
//! the UI wrapped in [`AgentEvent::Subagent`] (shown indented); its text is not streamed.
//! Whatever happens to the child becomes the `task` result: an error result never ends the
//! parent's turn (only the user's interrupt does, through the shared cancel token).
//!
//! The tool is synchronous like every tool; it drives the child loop with
//! `Handle::block_on` from the blocking section the dispatcher already runs in.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;

use super::turn::{self, LoopContext, LoopLimits, TurnOutcome, TurnStats};
use crate::context::{ContextManager, ContextSettings};
use crate::events::{AgentEvent, EventSink};
use crate::model::{Client, Message};
use crate::tools::ToolErrorKind;
use crate::tools::todos::{TodoStore, WriteTodosTool};
use crate::tools::{Access, Args, Tool, ToolContext, ToolError, ToolOutput, ToolSpec, Toolbox};

/// Model calls a subagent may make (§8.4).
pub(crate) const MAX_CHILD_CALLS: u32 = 30;

/// What a child loop shares with its parent.
#[derive(Clone)]
pub(crate) struct ChildEnv {
    pub(crate) client: Client,
    /// The parent's tools without `task`, its permissions (session approvals included),
    /// approver and policy (role and budget are shared, so spending adds up).
    pub(crate) tools: Toolbox,
    /// The parent's sink; the child's events are wrapped before they reach it.
    pub(crate) sink: Arc<dyn EventSink>,
    pub(crate) system_prompt: String,
    pub(crate) context: ContextSettings,
    pub(crate) workspace: PathBuf,
    /// The parent's coach switch (the same model).
    pub(crate) coach: Arc<super::coach::CoachSwitch>,
    pub(crate) limits: LoopLimits,
}

/// `task(description, prompt)`.
pub(crate) struct TaskTool {
    spec: ToolSpec,
    env: Option<Arc<ChildEnv>>,
}

impl TaskTool {
    /// A tool that is listed but not yet connected to a parent (the agent connects it at
    /// the start of each turn with [`TaskTool::with_env`]).
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: "task",
                description: "Run a subagent with a fresh context on a self-contained job \
                    (search, investigate); returns only its final answer.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "description": {"type": "string"},
                        "prompt": {"type": "string"}
                    },
                    "required": ["description", "prompt"]
                }),
            },
            env: None,
        }
    }

    pub(crate) fn with_env(env: Arc<ChildEnv>) -> Self {
        Self {
            env: Some(env),
            ..Self::new()
        }
    }
}

impl Default for TaskTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for TaskTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &Args, _: &ToolContext<'_>) -> Result<Access, ToolError> {
        Ok(Access::None)
    }

    fn run(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let env = self.env.as_ref().ok_or_else(|| {
            ToolError::new(
                ToolErrorKind::Unavailable,
                "subagents are not available here",
            )
        })?;
        let text = |key: &str| args.get(key).and_then(|v| v.as_str()).unwrap_or("").trim();
        let (description, prompt) = (text("description"), text("prompt"));
        if prompt.is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::InvalidInput,
                "`prompt` is empty; say what the subagent should do",
            ));
        }
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|e| ToolError::new(ToolErrorKind::Unavailable, e.to_string()))?;
        let answer = tokio::task::block_in_place(|| {
            handle.block_on(run_child(env, description, prompt, ctx))
        })?;
        Ok(ToolOutput::text(answer))
    }
}

/// Forwards a child's events to the parent's sink, wrapped; streaming text is dropped.
struct ChildSink {
    parent: Arc<dyn EventSink>,
}

impl EventSink for ChildSink {
    fn emit(&self, event: AgentEvent) {
        match event {
            AgentEvent::TextDelta { .. }
            | AgentEvent::TextHeld { .. }
            | AgentEvent::ReasoningDelta { .. }
            | AgentEvent::MessageCompleted { .. }
            | AgentEvent::TurnStarted { .. } => {}
            other => self.parent.emit(AgentEvent::Subagent {
                event: Box::new(other),
            }),
        }
    }
}

/// The first (and only) user message of the child.
pub(crate) fn child_prompt(description: &str, prompt: &str) -> String {
    format!(
        "{prompt}\n\n(You are a subagent started for: {description}. Work on your own with your \
         tools. Only your final message is passed back, so end with a complete, concise answer: \
         findings, file paths and line numbers, and anything you changed.)"
    )
}

async fn run_child(
    env: &ChildEnv,
    description: &str,
    prompt: &str,
    ctx: &ToolContext<'_>,
) -> Result<String, ToolError> {
    let todos = TodoStore::new();
    let mut tools = env.tools.clone();
    if tools.registry.get("write_todos").is_some() {
        tools
            .registry
            .register(Arc::new(WriteTodosTool::new(todos.clone())));
    }
    let sink: Arc<dyn EventSink> = Arc::new(ChildSink {
        parent: Arc::clone(&env.sink),
    });
    let dispatcher = tools.dispatcher();
    let context = ContextManager::new(env.context.clone());
    let workspace = env.workspace.clone();
    let reminder_todos = todos.clone();
    let reminder = move || {
        let extra = super::prompt::todo_lines(&reminder_todos.get());
        super::prompt::reminder(&crate::clock::today(), &workspace, &extra)
    };
    let seen = AtomicU64::new(0);
    let on_message = |_: &Message| {
        let version = todos.version();
        if seen.swap(version, Ordering::SeqCst) != version {
            sink.emit(AgentEvent::TodosChanged { todos: todos.get() });
        }
    };
    let request = child_prompt(description, prompt);
    let cx = LoopContext {
        request: &request,
        client: &env.client,
        dispatcher: &dispatcher,
        tools: ctx,
        sink: &sink,
        system_prompt: &env.system_prompt,
        reminder: &reminder,
        on_message: &on_message,
        context: Some(&context),
        coach: &env.coach,
        limits: env.limits,
    };
    let mut history = vec![Message::user(request.clone())];
    context.turn_started(0);
    let mut stats = TurnStats::default();
    let mut outcome = turn::run(&cx, &mut history, ctx.cancel, &mut stats).await;
    let mut continued = 0;
    while let TurnOutcome::Done { text } = &outcome {
        let Some(reason) = tools.policy.subagent_stop(text, continued) else {
            break;
        };
        continued += 1;
        history.push(Message::harness(format!(
            "A SubagentStop hook of the user did not let the task end yet: {reason}\nContinue \
             the work."
        )));
        outcome = turn::run(&cx, &mut history, ctx.cancel, &mut stats).await;
    }
    sink.emit(AgentEvent::TurnCompleted {
        usage: stats.usage,
        model_calls: stats.model_calls,
        context_tokens: stats.last_prompt_tokens,
        context_window: context.window(),
    });
    outcome_result(outcome)
}

/// The `task` result for how the child ended.
///
/// # Errors
/// A [`ToolError`] for every ending but a non-empty final answer.
pub(crate) fn outcome_result(outcome: TurnOutcome) -> Result<String, ToolError> {
    match outcome {
        TurnOutcome::Done { text } if !text.trim().is_empty() => Ok(text),
        TurnOutcome::Done { .. } => Err(ToolError::new(
            ToolErrorKind::Subagent,
            "the subagent finished without an answer; do the job directly or give it a clearer prompt",
        )),
        TurnOutcome::MaxTurns { limit } => Err(ToolError::new(
            ToolErrorKind::Subagent,
            format!(
                "the subagent stopped after {limit} model calls without a final answer; give it a narrower job"
            ),
        )),
        TurnOutcome::Interrupted => Err(ToolError::new(
            ToolErrorKind::Interrupted,
            crate::cancel::INTERRUPTED,
        )),
        TurnOutcome::BudgetExhausted { message } => {
            Err(ToolError::new(ToolErrorKind::Budget, message))
        }
        TurnOutcome::Failed { message } | TurnOutcome::Refused { message } => {
            Err(ToolError::new(ToolErrorKind::Subagent, message))
        }
        TurnOutcome::Repeating { message } => {
            Err(ToolError::new(ToolErrorKind::Repeating, message))
        }
    }
}
