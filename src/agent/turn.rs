//! The inner loop (SPEC §3.2): request → stream → tool calls → dispatch → repeat, until the
//! model answers without tool calls.
//!
//! Invariants: every assistant tool call gets exactly one tool message (also when denied,
//! interrupted or over budget); stored arguments are valid JSON object text; nothing from an
//! interrupted stream is stored or executed; an empty assistant message is never stored.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::coach::{Coach, CoachSwitch, Step, TurnView};
use super::facts::{CallFact, TurnFacts};
use super::guard::{RepeatGuard, Verdict};
use crate::cancel::{CancelToken, INTERRUPTED};
use crate::context::ContextManager;
use crate::context::compact::ModelAccess;
use crate::context::manager::Recovery;
use crate::events::{AgentEvent, EventSink};
use crate::model::types::sanitize_arguments;
use crate::model::{ChatRequest, Client, Message, ModelError, Role, StreamEvent, ToolCall, Usage};
use crate::tools::{DispatchOutcome, Dispatcher, ToolContext};

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
    /// The model kept making the same tool call with the same result after being told
    /// ([`super::guard`]).
    Repeating { message: String },
    /// A `UserPromptSubmit` hook refused the prompt (exit 2); the message is its reason, for
    /// the user. Nothing was sent or stored.
    Refused { message: String },
}

/// What the inner loop needs besides the history.
pub struct LoopContext<'a> {
    /// The user's own words for this turn (the coach reads them; never a harness message).
    pub request: &'a str,
    pub client: &'a Client,
    /// The tools, permissions and approver, and the governance [`crate::tools::Policy`],
    /// which the loop also tells about usage and every tool call (§9).
    pub dispatcher: &'a Dispatcher<'a>,
    pub tools: &'a ToolContext<'a>,
    pub sink: &'a Arc<dyn EventSink>,
    /// The first message of every request.
    pub system_prompt: &'a str,
    /// Builds the reminder appended to the last message of a request.
    pub reminder: &'a (dyn Fn() -> String + Send + Sync),
    /// Called with every message added to the history, in order (session persistence).
    pub on_message: &'a (dyn Fn(&Message) + Send + Sync),
    /// Prunes/compacts the history before each model call and recovers from
    /// context-length errors (§7.2, §7.3); `None` leaves the history alone.
    pub context: Option<&'a ContextManager>,
    /// Whether the coach for weak models is on ([`super::coach`]).
    pub coach: &'a CoachSwitch,
    pub limits: LoopLimits,
}

/// How far one turn may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopLimits {
    /// Model calls allowed in this turn.
    pub max_model_calls: u32,
    /// Identical calls in a row before the repeated-call guard speaks up (`None`: never).
    pub repeat_limit: Option<u32>,
}

impl LoopContext<'_> {
    /// What the context manager may use of this turn: the model, the request frame, the
    /// sink and the cancel token.
    fn model_access<'b>(&'b self, cancel: &'b CancelToken) -> ModelAccess<'b> {
        ModelAccess {
            client: self.client,
            system_prompt: self.system_prompt,
            tools: self.dispatcher.registry.specs(),
            sink: self.sink,
            cancel,
        }
    }
}

/// Totals of one turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnStats {
    pub(crate) model_calls: u32,
    pub(crate) usage: Option<Usage>,
    /// Prompt tokens of the last request, when reported.
    pub(crate) last_prompt_tokens: Option<u64>,
}

/// Runs model calls and tools until the model answers, appending to `history`.
pub async fn run(
    cx: &LoopContext<'_>,
    history: &mut Vec<Message>,
    cancel: &CancelToken,
    stats: &mut TurnStats,
) -> TurnOutcome {
    let mut facts = TurnFacts::new(cx.request);
    let mut coach = cx.coach.coach_for_turn(cx.request, cx.tools.workspace);
    let mut guard = RepeatGuard::new(cx.limits.repeat_limit);
    let offered = cx.dispatcher.registry.names();
    let text_calls = cx.client.text_tool_calls_enabled();
    // A note for the next request only (after an empty reply).
    let mut note: Option<String> = None;
    let mut retried_overflow = false;
    loop {
        if stats.model_calls >= cx.limits.max_model_calls {
            return TurnOutcome::MaxTurns {
                limit: cx.limits.max_model_calls,
            };
        }
        stats.model_calls += 1;
        if let Some(context) = cx.context {
            context
                .before_request(&cx.model_access(cancel), history)
                .await;
        }
        let completion = match call_model(cx, history, cancel, note.take(), coach.as_mut()).await {
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
            add_usage(stats, usage);
            cx.dispatcher.policy.on_usage(&usage);
        }
        if completion.calls_from_text
            && let Some(message) = cx.coach.saw_calls_as_text()
        {
            cx.sink.emit(AgentEvent::Notice { message });
            coach = cx.coach.coach_for_turn(cx.request, cx.tools.workspace);
        }
        let mut message = completion.message;
        let view = TurnView {
            facts: &facts,
            offered: &offered,
            text_calls,
        };
        let had_calls = !message.tool_calls.is_empty();
        let step = coach.after_reply(&view, &mut message);
        coach.rewrite_calls(&view, &mut message.tool_calls);
        let made_calls = !had_calls && !message.tool_calls.is_empty();
        show_held_text(cx, completion.held_text, made_calls);
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
            match step {
                Step::Retry {
                    note: retry,
                    warning,
                } => {
                    cx.sink.emit(AgentEvent::Warning { message: warning });
                    note = Some(retry);
                }
                Step::Ask { request, notice } => {
                    push(cx, history, message);
                    cx.sink.emit(AgentEvent::Notice { message: notice });
                    push(cx, history, Message::harness(request));
                }
                Step::Proceed if text.trim().is_empty() => {
                    cx.sink.emit(AgentEvent::Warning {
                        message: "the model returned an empty reply; ending the turn".into(),
                    });
                    return TurnOutcome::Done {
                        text: String::new(),
                    };
                }
                Step::Proceed => {
                    push(cx, history, message);
                    return TurnOutcome::Done { text };
                }
            }
            continue;
        }
        push(cx, history, message);
        let mut calls = Calls {
            facts: &mut facts,
            guard: &mut guard,
            coach: coach.as_mut(),
        };
        if let Some(outcome) = dispatch_all(cx, history, cancel, raw_calls, &mut calls) {
            return outcome;
        }
        coach.after_results(&TurnView {
            facts: &facts,
            offered: &offered,
            text_calls,
        });
    }
}

/// Text the client held back as a possible call written as text, and did not read as one
/// (`held`), once the coach has seen the reply: shown as the reply's text, unless the coach
/// made calls of the reply (`coach_made_calls`), when it is not the answer and is not shown.
fn show_held_text(cx: &LoopContext<'_>, held: String, coach_made_calls: bool) {
    if !held.is_empty() && !coach_made_calls {
        cx.sink.emit(AgentEvent::TextDelta { text: held });
    }
}

/// Adds one model call's usage to the turn's totals.
fn add_usage(stats: &mut TurnStats, usage: Usage) {
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
        .recover(&cx.model_access(cancel), history, message, *retried)
        .await
    {
        Recovery::Retry => {
            *retried = true;
            None
        }
        Recovery::GiveUp(message) => Some(TurnOutcome::Failed { message }),
    }
}

fn push(cx: &LoopContext<'_>, history: &mut Vec<Message>, message: Message) {
    (cx.on_message)(&message);
    history.push(message);
}

/// What the loop records about the calls of a turn.
struct Calls<'a> {
    facts: &'a mut TurnFacts,
    guard: &'a mut RepeatGuard,
    /// Sees each result before it goes into the history ([`Coach::on_result`]).
    coach: &'a mut dyn Coach,
}

/// Dispatches each call in order, answering every one and recording its outcome. Returns an
/// outcome when the turn must end (interrupted, budget exhausted, the same call repeated).
fn dispatch_all(
    cx: &LoopContext<'_>,
    history: &mut Vec<Message>,
    cancel: &CancelToken,
    calls: Vec<ToolCall>,
    record: &mut Calls<'_>,
) -> Option<TurnOutcome> {
    let mut stop: Option<TurnOutcome> = None;
    for call in calls {
        cx.dispatcher.policy.before_tool(&call);
        let verdict = record.guard.before(&call);
        let outcome = if cancel.is_cancelled() {
            stop.get_or_insert(TurnOutcome::Interrupted);
            skip(cx, &call, INTERRUPTED.to_string())
        } else if let Some(reason) = stop.as_ref().and_then(skip_reason) {
            skip(cx, &call, reason)
        } else if let Verdict::Stop { message, result } = verdict {
            stop = Some(TurnOutcome::Repeating { message });
            skip(cx, &call, result)
        } else {
            let outcome = run_call(cx, &call, record.guard);
            if cancel.is_cancelled() {
                stop.get_or_insert(TurnOutcome::Interrupted);
            } else if let Some(message) = cx.dispatcher.policy.exhausted() {
                stop.get_or_insert(TurnOutcome::BudgetExhausted { message });
            }
            let fact = CallFact::new(&call, &outcome, true);
            let mut content = outcome.content;
            record
                .coach
                .on_result(&fact, &mut content, &mut |extra| run_for_coach(cx, extra));
            record.facts.calls.push(fact);
            push(cx, history, Message::tool_result(call.id, content));
            continue;
        };
        let fact = CallFact::new(&call, &outcome, false);
        let mut content = outcome.content;
        record
            .coach
            .on_result(&fact, &mut content, &mut |extra| run_for_coach(cx, extra));
        record.facts.calls.push(fact);
        push(cx, history, Message::tool_result(call.id, content));
    }
    stop
}

/// Runs a call the coach makes for the model (reading a file whose write was refused as
/// not read yet) through the dispatcher, like any call, after telling the user.
fn run_for_coach(cx: &LoopContext<'_>, call: &ToolCall) -> DispatchOutcome {
    cx.sink.emit(AgentEvent::Notice {
        message: format!(
            "the coach ran `{}` {} for the model",
            call.name,
            crate::model::types::key_argument(&call.arguments)
        ),
    });
    tokio::task::block_in_place(|| cx.dispatcher.dispatch(call, cx.tools))
}

/// The result text for a call after the turn had to end, if that end skips calls.
fn skip_reason(stop: &TurnOutcome) -> Option<String> {
    match stop {
        TurnOutcome::BudgetExhausted { message } => Some(format!("Blocked by policy: {message}")),
        TurnOutcome::Repeating { message } => Some(format!("Not run: {message}")),
        _ => None,
    }
}

/// Dispatches one call, with the events around it and the policy's settling after it; the repeated-call
/// guard's note, when due, is appended to the result.
fn run_call(cx: &LoopContext<'_>, call: &ToolCall, guard: &mut RepeatGuard) -> DispatchOutcome {
    cx.sink.emit(AgentEvent::ToolStarted {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        summary: crate::model::types::key_argument(&call.arguments),
    });
    let started = Instant::now();
    let mut outcome = tokio::task::block_in_place(|| cx.dispatcher.dispatch(call, cx.tools));
    cx.dispatcher
        .policy
        .after_tool(call, &mut outcome, started.elapsed());
    if outcome.post_hooks_ran
        && let Some(wrote) = &outcome.wrote
        && let Some(note) = cx.tools.files.adopt_hook_change(wrote)
    {
        if !outcome.content.ends_with('\n') {
            outcome.content.push('\n');
        }
        outcome.content.push_str(&note);
    }
    if let Some(note) = guard.after(call, &outcome.content) {
        cx.sink.emit(AgentEvent::Notice {
            message: format!(
                "the model made the same `{}` call with the same result again; told it so",
                call.name
            ),
        });
        outcome.content.push('\n');
        outcome.content.push_str(&note);
    }
    cx.sink.emit(AgentEvent::ToolFinished {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        ok: outcome.ok,
        output: outcome.content.clone(),
        display: outcome.display.clone(),
        duration: started.elapsed(),
    });
    outcome
}

/// The answer to a call that is not dispatched, after the policy has seen it.
fn skip(cx: &LoopContext<'_>, call: &ToolCall, content: String) -> DispatchOutcome {
    let mut outcome = DispatchOutcome::blocked(content, None);
    cx.dispatcher
        .policy
        .after_tool(call, &mut outcome, Duration::ZERO);
    outcome
}

enum CallError {
    Interrupted,
    Model(ModelError),
}

/// One model call: the request for `history` (with `note` appended to its last message, for
/// this request only), streamed to the sink and watched by the coach, which may stop a reply
/// that loops.
async fn call_model(
    cx: &LoopContext<'_>,
    history: &[Message],
    cancel: &CancelToken,
    note: Option<String>,
    coach: &mut dyn Coach,
) -> Result<crate::model::Completion, CallError> {
    let mut request = build_request(cx, history);
    coach.shape_request(&mut request);
    if let Some(note) = note
        && let Some(last) = request.messages.last_mut()
    {
        last.content.get_or_insert_with(String::new).push_str(&note);
    }
    let stop = tokio::sync::Notify::new();
    let mut cut: Option<String> = None;
    let finished = {
        let sink = cx.sink;
        let (stop, cut) = (&stop, &mut cut);
        let mut on_event = move |event: StreamEvent| {
            match &event {
                StreamEvent::Retrying { .. } | StreamEvent::StreamingDisabled => {
                    coach.on_new_attempt();
                }
                StreamEvent::Text(text) if cut.is_none() => {
                    if let Some(kept) = coach.on_text(text) {
                        *cut = Some(kept);
                        stop.notify_one();
                    }
                }
                _ => {}
            }
            sink.emit(agent_event(event));
        };
        tokio::select! {
            result = cx.client.complete_keeping_held(&request, &mut on_event) => Some(result),
            () = cancel.cancelled() => return Err(CallError::Interrupted),
            () = stop.notified() => None,
        }
    };
    match finished {
        Some(result) => result.map_err(CallError::Model),
        None => Ok(stopped_loop(cx, cut.unwrap_or_default())),
    }
}

/// The screen's view of a stream event.
fn agent_event(event: StreamEvent) -> AgentEvent {
    match event {
        StreamEvent::Text(text) => AgentEvent::TextDelta { text },
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
    }
}

/// The reply the coach stopped because it looped: the text it kept, with a warning; the
/// request is dropped, which ends generation.
fn stopped_loop(cx: &LoopContext<'_>, kept: String) -> crate::model::Completion {
    cx.sink.emit(AgentEvent::Warning {
        message: "the model kept repeating the same text; stopped its reply and kept the \
                  first copy"
            .into(),
    });
    crate::model::Completion {
        message: Message::assistant(kept),
        finish_reason: Some("repetition".into()),
        usage: None,
        calls_from_text: false,
        held_text: String::new(),
    }
}

/// System prompt + history + the reminder appended to the last message (not stored).
pub(crate) fn build_request(cx: &LoopContext<'_>, history: &[Message]) -> ChatRequest {
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
        max_tokens: None,
    }
}
