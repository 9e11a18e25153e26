//! The inner loop (SPEC §3.2): request → stream → tool calls → dispatch → repeat, until the
//! model answers without tool calls.
//!
//! Invariants: every assistant tool call gets exactly one tool message (also when denied,
//! interrupted or over budget); stored arguments are valid JSON object text; nothing from an
//! interrupted stream is stored or executed; an empty assistant message is never stored.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::events::{AgentEvent, EventSink};
use super::repetition::RepetitionGuard;
use crate::cancel::CancelToken;
use crate::model::types::sanitize_arguments;
use crate::model::{ChatRequest, Client, Message, ModelError, Role, StreamEvent, ToolCall, Usage};
use crate::tools::{DispatchOutcome, Dispatcher, ToolContext};

/// Added (to this request only) when the model's previous reply was empty.
const EMPTY_REPLY_NUDGE: &str =
    "\n(Your last reply was empty. Continue the task: call a tool, or give your final answer.)";

/// Result text for a call that was never run because the user interrupted the turn.
pub const INTERRUPTED: &str = "interrupted by user";

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    /// The model answered without tool calls; `text` is its final answer.
    Done { text: String },
    /// `--max-turns` model calls were made without a final answer.
    MaxTurns { limit: u32 },
    /// The user interrupted.
    Interrupted,
    /// A budget is exhausted; the message says how to continue.
    BudgetExhausted { message: String },
    /// The model endpoint failed after retries.
    Failed { message: String },
}

/// What the inner loop needs besides the history.
pub struct LoopContext<'a> {
    pub client: &'a Client,
    pub dispatcher: &'a Dispatcher<'a>,
    pub tools: &'a ToolContext<'a>,
    pub sink: &'a Arc<dyn EventSink>,
    /// The first message of every request.
    pub system_prompt: &'a str,
    /// Builds the reminder appended to the last message of a request.
    pub reminder: &'a (dyn Fn() -> String + Send + Sync),
    /// Model calls allowed in this turn.
    pub max_model_calls: u32,
    /// Asked after every tool call; `Some(message)` ends the turn (budget exhausted).
    pub exhausted: &'a (dyn Fn() -> Option<String> + Send + Sync),
    /// Called with every message added to the history, in order (session persistence).
    pub on_message: &'a (dyn Fn(&Message) + Send + Sync),
    /// Governance hooks (§9): usage per model call, every tool call before and after.
    pub hooks: &'a dyn LoopHooks,
    /// Prunes/compacts the history before each model call and recovers from
    /// context-length errors (§7.2, §7.3); `None` leaves the history alone.
    pub context: Option<&'a crate::context::ContextManager>,
}

/// What the governance layer needs to see of a turn (SPEC §9): the usage of each model call
/// (cost), and each tool call before it is dispatched and after (the audit log, budgets). A
/// call that is never dispatched (interrupted, or after the budget ran out) still goes
/// through both, with a blocked outcome. `after_tool` may rewrite the result the model gets
/// (compressed shell output, a budget line). Every method defaults to doing nothing.
pub trait LoopHooks: Send + Sync {
    /// After each model call that reported usage.
    fn on_usage(&self, _usage: &Usage) {}
    /// Before a tool call is dispatched (or skipped).
    fn before_tool(&self, _call: &ToolCall) {}
    /// After a tool call, before its result is shown and stored.
    fn after_tool(&self, _call: &ToolCall, _outcome: &mut DispatchOutcome, _took: Duration) {}
}

/// No governance: every hook does nothing.
#[derive(Debug, Default)]
pub struct NoHooks;

impl LoopHooks for NoHooks {}

/// Totals of one turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnStats {
    pub model_calls: u32,
    pub usage: Option<Usage>,
    /// Prompt tokens of the last request, when reported.
    pub last_prompt_tokens: Option<u64>,
}

/// Runs model calls and tools until the model answers, appending to `history`.
pub async fn run(
    cx: &LoopContext<'_>,
    history: &mut Vec<Message>,
    cancel: &CancelToken,
    stats: &mut TurnStats,
) -> TurnOutcome {
    let mut empty_replies = 0;
    // The run-it-yourself requests of this turn (see `verify`).
    let mut nudges = super::verify::Nudges::default();
    let mut retried_overflow = false;
    loop {
        if stats.model_calls >= cx.max_model_calls {
            return TurnOutcome::MaxTurns {
                limit: cx.max_model_calls,
            };
        }
        stats.model_calls += 1;
        if let Some(context) = cx.context {
            context.before_request(cx, history, cancel).await;
        }
        let completion = match call_model(cx, history, cancel, empty_replies > 0).await {
            Ok(completion) => completion,
            Err(CallError::Interrupted) => return TurnOutcome::Interrupted,
            Err(CallError::Model(error)) => {
                match recover(cx, history, cancel, error, &mut retried_overflow).await {
                    Some(outcome) => return outcome,
                    None => continue,
                }
            }
        };
        retried_overflow = false;
        if let Some(context) = cx.context {
            context.after_response(history.len(), completion.usage.as_ref());
        }
        if let Some(usage) = completion.usage {
            let total = stats.usage.get_or_insert_with(Usage::default);
            total.prompt_tokens += usage.prompt_tokens;
            total.completion_tokens += usage.completion_tokens;
            total.cached_tokens = match (total.cached_tokens, usage.cached_tokens) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            };
            total.cost = match (total.cost, usage.cost) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
            };
            stats.last_prompt_tokens = Some(usage.prompt_tokens);
            cx.hooks.on_usage(&usage);
        }
        let mut message = completion.message;
        if nudges.take_answering() && cx.client.text_tool_calls_enabled() {
            super::verify::take_suggested_call(&mut message, &cx.dispatcher.registry.names());
        }
        let raw_calls = message.tool_calls.clone();
        for call in &mut message.tool_calls {
            call.arguments = sanitize_arguments(&call.arguments);
        }
        let text = message.text_content().to_string();
        cx.sink.emit(AgentEvent::MessageCompleted {
            text: text.clone(),
            has_tool_calls: !message.tool_calls.is_empty(),
        });
        if message.tool_calls.is_empty() {
            if text.trim().is_empty() {
                empty_replies += 1;
                if empty_replies == 1 {
                    cx.sink.emit(AgentEvent::Warning {
                        message: "the model returned an empty reply; asking once more".into(),
                    });
                    continue;
                }
                cx.sink.emit(AgentEvent::Warning {
                    message: "the model returned an empty reply again; ending the turn".into(),
                });
                return TurnOutcome::Done {
                    text: String::new(),
                };
            }
            push(cx, history, message);
            let nudge = nudges.next(
                super::verify::this_turn(history),
                &text,
                &cx.dispatcher.registry.names(),
                cx.client.text_tool_calls_enabled(),
            );
            if let Some(nudge) = nudge {
                cx.sink.emit(AgentEvent::Notice {
                    message: "asking the model to do it instead of leaving it to you".into(),
                });
                push(cx, history, Message::user(nudge));
                continue;
            }
            return TurnOutcome::Done { text };
        }
        push(cx, history, message);
        if let Some(outcome) = dispatch_all(cx, history, cancel, raw_calls) {
            return outcome;
        }
    }
}

/// After a failed model call: for a context-length error (with context management),
/// compact and retry once (`None`); otherwise end the turn with the error.
async fn recover(
    cx: &LoopContext<'_>,
    history: &mut Vec<Message>,
    cancel: &CancelToken,
    error: ModelError,
    retried: &mut bool,
) -> Option<TurnOutcome> {
    let (Some(context), ModelError::ContextLengthExceeded { message }) = (cx.context, &error)
    else {
        return Some(TurnOutcome::Failed {
            message: error.to_string(),
        });
    };
    match context
        .recover(cx, history, cancel, message, *retried)
        .await
    {
        crate::context::manager::Recovery::Retry => {
            *retried = true;
            None
        }
        crate::context::manager::Recovery::GiveUp(message) => Some(TurnOutcome::Failed { message }),
    }
}

fn push(cx: &LoopContext<'_>, history: &mut Vec<Message>, message: Message) {
    (cx.on_message)(&message);
    history.push(message);
}

/// Dispatches each call in order, answering every one. Returns an outcome when the turn
/// must end (interrupted, budget exhausted).
fn dispatch_all(
    cx: &LoopContext<'_>,
    history: &mut Vec<Message>,
    cancel: &CancelToken,
    calls: Vec<crate::model::ToolCall>,
) -> Option<TurnOutcome> {
    let mut stop: Option<TurnOutcome> = None;
    for call in calls {
        cx.hooks.before_tool(&call);
        let content = if cancel.is_cancelled() {
            stop.get_or_insert(TurnOutcome::Interrupted);
            skip(cx, &call, INTERRUPTED.to_string())
        } else if let Some(TurnOutcome::BudgetExhausted { message }) = &stop {
            skip(cx, &call, format!("Blocked by policy: {message}"))
        } else {
            cx.sink.emit(AgentEvent::ToolStarted {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                summary: summarize(&call.arguments),
            });
            let started = Instant::now();
            let mut outcome =
                tokio::task::block_in_place(|| cx.dispatcher.dispatch(&call, cx.tools));
            cx.hooks.after_tool(&call, &mut outcome, started.elapsed());
            cx.sink.emit(AgentEvent::ToolFinished {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                ok: outcome.ok,
                output: outcome.content.clone(),
                display: outcome.display.clone(),
                duration: started.elapsed(),
            });
            if cancel.is_cancelled() {
                stop.get_or_insert(TurnOutcome::Interrupted);
            } else if let Some(message) = (cx.exhausted)() {
                stop.get_or_insert(TurnOutcome::BudgetExhausted { message });
            }
            outcome.content
        };
        push(cx, history, Message::tool_result(call.id, content));
    }
    stop
}

/// The answer to a call that is not dispatched, after the hooks have seen it.
fn skip(cx: &LoopContext<'_>, call: &ToolCall, content: String) -> String {
    let mut outcome = DispatchOutcome {
        content,
        ok: false,
        decision: None,
        blocked: true,
        display: None,
    };
    cx.hooks.after_tool(call, &mut outcome, Duration::ZERO);
    outcome.content
}

/// The key argument of a call for one-line display: `command`, else `path`, else the JSON.
pub fn summarize(arguments: &str) -> String {
    let parsed = crate::model::types::parse_arguments(arguments).unwrap_or_default();
    for key in ["command", "path", "name", "description"] {
        if let Some(value) = parsed.get(key).and_then(|v| v.as_str()) {
            return value.to_string();
        }
    }
    arguments.to_string()
}

enum CallError {
    Interrupted,
    Model(ModelError),
}

async fn call_model(
    cx: &LoopContext<'_>,
    history: &[Message],
    cancel: &CancelToken,
    nudge: bool,
) -> Result<crate::model::Completion, CallError> {
    let mut request = build_request(cx, history);
    if nudge && let Some(last) = request.messages.last_mut() {
        last.content
            .get_or_insert_with(String::new)
            .push_str(EMPTY_REPLY_NUDGE);
    }
    let sink = Arc::clone(cx.sink);
    let guard = Arc::new(std::sync::Mutex::new(RepetitionGuard::default()));
    let looped = Arc::new(tokio::sync::Notify::new());
    let (watch, stop) = (Arc::clone(&guard), Arc::clone(&looped));
    let mut on_event = move |event: StreamEvent| {
        // A retried or re-sent request starts a new reply: text of a cut attempt is no copy.
        if matches!(
            event,
            StreamEvent::Retrying { .. } | StreamEvent::StreamingDisabled
        ) && let Ok(mut guard) = watch.lock()
        {
            *guard = RepetitionGuard::default();
        }
        sink.emit(match event {
            StreamEvent::Text(text) => {
                if watch.lock().is_ok_and(|mut guard| guard.push(&text)) {
                    stop.notify_one();
                }
                AgentEvent::TextDelta { text }
            }
            StreamEvent::Reasoning(text) => AgentEvent::ReasoningDelta { text },
            StreamEvent::Held { chars } => AgentEvent::TextHeld { chars },
            StreamEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason,
            } => AgentEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason,
            },
            StreamEvent::StreamingDisabled => AgentEvent::Notice {
                message: "the server does not stream; continuing without streaming".into(),
            },
        });
    };
    tokio::select! {
        result = cx.client.complete(&request, &mut on_event) => result.map_err(CallError::Model),
        () = cancel.cancelled() => Err(CallError::Interrupted),
        () = looped.notified() => Ok(stopped_loop(cx, &guard)),
    }
}

/// The reply the model was stopped in (see [`super::repetition`]): its text up to the end of
/// the loop's first copy, with a warning; the request is dropped, which ends generation.
fn stopped_loop(
    cx: &LoopContext<'_>,
    guard: &std::sync::Mutex<RepetitionGuard>,
) -> crate::model::Completion {
    let (kept, streamed) = guard
        .lock()
        .map(|g| (g.kept().to_string(), g.len()))
        .unwrap_or_default();
    cx.sink.emit(AgentEvent::Warning {
        message: format!(
            "the model kept repeating the same text; stopped its reply after {streamed} bytes \
             and kept the first copy"
        ),
    });
    crate::model::Completion {
        message: Message::assistant(kept),
        finish_reason: Some("repetition".into()),
        usage: None,
    }
}

/// System prompt + history + the reminder appended to the last message (not stored).
pub fn build_request(cx: &LoopContext<'_>, history: &[Message]) -> ChatRequest {
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(Message::system(cx.system_prompt));
    messages.extend(history.iter().cloned());
    if let Some(last) = messages.last_mut().filter(|m| m.role != Role::System) {
        let reminder = (cx.reminder)();
        let text = last.content.get_or_insert_with(String::new);
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&reminder);
    }
    ChatRequest {
        messages,
        tools: cx.dispatcher.registry.specs(),
    }
}
