//! [`Governor`]: the active role, the session's spending and the event bus, plugged into the
//! dispatcher and the inner loop as their one [`Policy`].
//!
//! Per tool call: `before_tool` logs `ToolCall`; the dispatcher asks `check` (role tool
//! policy, then budget) and blocks with `Blocked by policy: <reason>`; `after_tool`
//! compresses `bash` output under the `compress` policy, counts the output tokens and shell
//! calls of tools that ran (our own refusals and argument errors are not tool output), logs `PolicyViolation` / `ToolResult`, emits budget crossings, and appends the
//! warning or exhausted line to the result of a tool that ran. Per model call: `on_usage`
//! adds the cost (§9.3) and logs `ModelUsage`.
//!
//! Spending belongs to the session, not the role: `/role` keeps it, [`Governor::spending`]
//! and [`Governor::restore`] carry it across `--resume`. When the session's signal is
//! `EXHAUSTED` every tool call is blocked, the inner loop ends the turn
//! ([`Governor::exhausted_message`]), and new turns are refused until the user switches role
//! or raises a limit.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::audit::{Block, crossings, logged_command, verdict, violation};
use super::budget::{self, Dimension, Signal, Spending, Status};
use super::compress::compress;
use super::cost::PriceBook;
use super::error::GovernanceError;
use super::events::{self, EventBus, EventRecord, PolicyEvent, Subscriber};
use super::hooks::{self, Hooks, MAX_STOP_CONTINUATIONS};
use super::role_files::RoleSet;
use super::roles::{self, Limits, Role, ShellPolicy};
use super::settings::BudgetSettings;
use crate::config::hooks::HookEvent;
use crate::model::{ToolCall, Usage};
use crate::permissions::Decision;
use crate::tools::{Args, DispatchOutcome, HookGate, Policy, PolicyBlock, Registry};

/// Roles, budgets and the policy event bus of one session (shared with subagents).
pub struct Governor {
    roles: RoleSet,
    settings: BudgetSettings,
    prices: PriceBook,
    bus: EventBus,
    state: Mutex<State>,
    /// The user's hooks (issue 18), set once by the session.
    hooks: std::sync::OnceLock<Hooks>,
}

struct State {
    role: Role,
    model: String,
    session: String,
    spending: Spending,
    /// The last signal of each dimension, to emit crossings once.
    levels: [Signal; 3],
    /// Why `before` blocked the call in flight.
    pending: Option<Block>,
    /// The session's transcript (its JSONL file), for hooks.
    transcript: Option<std::path::PathBuf>,
}

impl Governor {
    /// A governor with `active` as the role.
    ///
    /// # Errors
    /// [`GovernanceError::UnknownRole`] listing the available roles.
    pub(crate) fn new(
        roles: RoleSet,
        active: &str,
        settings: BudgetSettings,
        prices: PriceBook,
        model: &str,
    ) -> Result<Self, GovernanceError> {
        let role = find(&roles, active)?;
        Ok(Self {
            roles,
            settings,
            prices,
            bus: EventBus::default(),
            state: Mutex::new(State {
                role,
                model: model.to_string(),
                session: events::new_session_id(),
                spending: Spending::default(),
                levels: [Signal::Ok; 3],
                pending: None,
                transcript: None,
            }),
            hooks: std::sync::OnceLock::new(),
        })
    }

    /// The built-in roles with `coder` active, default budgets and prices, no subscribers.
    pub(crate) fn builtin(model: &str) -> Self {
        let state = State {
            role: roles::coder(),
            model: model.to_string(),
            session: events::new_session_id(),
            spending: Spending::default(),
            levels: [Signal::Ok; 3],
            pending: None,
            transcript: None,
        };
        Self {
            roles: RoleSet::default(),
            settings: BudgetSettings::default(),
            prices: PriceBook::default(),
            bus: EventBus::default(),
            state: Mutex::new(state),
            hooks: std::sync::OnceLock::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub(crate) fn subscribe(&self, subscriber: Arc<dyn Subscriber>) {
        self.bus.subscribe(subscriber);
    }

    pub fn session_id(&self) -> String {
        self.lock().session.clone()
    }

    /// Uses the session store's id in event records (sessions, `--resume`).
    pub(crate) fn set_session_id(&self, id: &str) {
        self.lock().session = id.to_string();
    }

    /// The session's transcript file, given to hooks as `transcript_path`.
    pub(crate) fn set_transcript(&self, path: Option<std::path::PathBuf>) {
        self.lock().transcript = path;
    }

    /// Uses `hooks` for the rest of the session (the first call wins).
    pub(crate) fn set_hooks(&self, hooks: Hooks) {
        let _ = self.hooks.set(hooks);
    }

    /// Runs the hooks of `event` matching `subject` with the event's `fields` added to the
    /// common input, records each run as a `HookRun` event, and returns their combined
    /// verdict. Blocks for as long as the hooks run (off the async workers).
    pub(crate) fn run_hooks(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        fields: serde_json::Map<String, serde_json::Value>,
    ) -> hooks::Outcome {
        let Some(hooks) = self.hooks.get().filter(|h| h.has(event)) else {
            return hooks::Outcome::default();
        };
        let mut input = {
            let state = self.lock();
            hooks::common_input(
                event,
                &state.session,
                state.transcript.as_deref(),
                hooks.workspace(),
            )
        };
        input.extend(fields);
        let (outcome, runs) = blocking(|| hooks.run(event, subject, &input));
        let records = {
            let state = self.lock();
            let events = runs
                .into_iter()
                .map(|run| PolicyEvent::HookRun {
                    event: run.event.name().to_string(),
                    command: run.command,
                    subject: run.subject,
                    exit_code: run.exit_code,
                    result: run.verdict.result().to_string(),
                    duration_ms: run.duration_ms,
                    warning: run.verdict.warning,
                })
                .collect();
            self.stamp(&state, events)
        };
        self.publish(records);
        outcome
    }

    /// `tool_name` and `tool_input`; a file tool's input also gets `file_path`, the path made
    /// absolute against the workspace, as Claude Code's hook scripts read it.
    fn tool_fields(
        &self,
        tool: &str,
        input: &serde_json::Value,
    ) -> serde_json::Map<String, serde_json::Value> {
        let mut input = input.clone();
        if let Some(fields) = input.as_object_mut()
            && !fields.contains_key("file_path")
            && let Some(path) = fields.get("path").and_then(serde_json::Value::as_str)
            && let Some(hooks) = self.hooks.get()
        {
            let absolute = hooks.workspace().join(path).display().to_string();
            fields.insert("file_path".into(), absolute.into());
        }
        let mut fields = serde_json::Map::new();
        fields.insert("tool_name".into(), tool.into());
        fields.insert("tool_input".into(), input);
        fields
    }

    /// `PostToolUse` (after a call that succeeded, as in Claude Code): hooks see the call and
    /// its result; a block or context goes to the
    /// model after the result.
    fn post_tool_hooks(&self, call: &ToolCall, outcome: &mut DispatchOutcome) {
        if !self
            .hooks
            .get()
            .is_some_and(|h| h.has(HookEvent::PostToolUse))
        {
            return;
        }
        let mut fields = self.tool_fields(&call.name, &tool_input(call));
        let mut response = serde_json::Map::new();
        response.insert("output".into(), outcome.content.clone().into());
        response.insert("ok".into(), outcome.ok.into());
        response.insert("exit_code".into(), outcome.exit_code.into());
        fields.insert("tool_response".into(), response.into());
        let result = self.run_hooks(HookEvent::PostToolUse, Some(&call.name), fields);
        outcome.post_hooks_ran = result.ran > 0;
        for text in result.block.iter().chain(&result.context) {
            if !outcome.content.ends_with('\n') {
                outcome.content.push('\n');
            }
            outcome
                .content
                .push_str(&format!("PostToolUse hook: {text}"));
        }
    }

    pub(crate) fn role(&self) -> Role {
        self.lock().role.clone()
    }

    /// Whether the active role, under the limits in force, allows `tool`.
    #[cfg(test)]
    pub(crate) fn offers(&self, tool: &str) -> bool {
        self.permits(&self.lock().role, tool)
    }

    fn permits(&self, role: &Role, tool: &str) -> bool {
        role.allows_tool_under(tool, &role.limits.under(&self.settings))
    }

    /// Hides from `registry` the tools the active role does not allow (they stay callable,
    /// so a call to one gets the policy's answer).
    pub fn hide_denied(&self, registry: &mut Registry) {
        let role = self.role();
        let limits = role.limits.under(&self.settings);
        registry.set_hidden(move |name| !role.allows_tool_under(name, &limits));
    }

    /// Makes `name` the active role; spending is kept (§9.2). Emits `RoleChanged`, and budget
    /// crossings if the new limits put the session past a threshold.
    ///
    /// # Errors
    /// [`GovernanceError::UnknownRole`] listing the available roles.
    pub(crate) fn switch_role(&self, name: &str) -> Result<(), GovernanceError> {
        let role = find(&self.roles, name)?;
        let records = {
            let mut state = self.lock();
            let from = std::mem::replace(&mut state.role, role).name;
            let to = state.role.name.clone();
            let mut events = vec![PolicyEvent::RoleChanged { from, to }];
            let status = self.status_of(&state);
            events.extend(crossings(&mut state.levels, &status));
            self.stamp(&state, events)
        };
        self.publish(records);
        Ok(())
    }

    /// The session's budget against the active role's limits.
    pub(crate) fn status(&self) -> Status {
        self.status_of(&self.lock())
    }

    fn status_of(&self, state: &State) -> Status {
        budget::status(
            &state.role.name,
            &state.role.limits.under(&self.settings),
            &state.spending,
            self.settings.thresholds,
        )
    }

    /// The `/budget` line of §9.2.
    pub fn budget_line(&self) -> String {
        self.status().line()
    }

    /// Lines for the per-request reminder (§7.2): the role and the budget line.
    pub(crate) fn reminder_lines(&self) -> Vec<String> {
        let state = self.lock();
        vec![
            format!("role: {} ({})", state.role.name, state.role.description),
            self.status_of(&state).line(),
        ]
    }

    /// `Some(why and how to continue)` when the session's budget is exhausted.
    pub(crate) fn exhausted_message(&self) -> Option<String> {
        let status = self.status();
        (status.signal == Signal::Exhausted).then(|| status.exhausted_message())
    }

    /// What the session has spent, to store with the session.
    pub fn spending(&self) -> Spending {
        self.lock().spending.clone()
    }

    /// Restores spending saved with a session (`--resume`). Thresholds already crossed are
    /// not announced again.
    pub(crate) fn restore(&self, spending: Spending) {
        let mut state = self.lock();
        state.spending = spending;
        let status = self.status_of(&state);
        for d in Dimension::ALL {
            state.levels[d.index()] = status.dimension(d).signal;
        }
    }

    /// Every role, the active one marked with `*`, with its policy and limits (`/role`).
    pub(crate) fn roles_listing(&self) -> String {
        let active = self.lock().role.name.clone();
        let mut text = String::from("roles (* = active):\n");
        for role in self.roles.iter() {
            let mark = if role.name == active { '*' } else { ' ' };
            text.push_str(&format!(
                "{mark} {} ({}) - {}\n      {}\n",
                role.name,
                role.source.as_str(),
                role.description,
                role.summary(&role.limits.under(&self.settings))
            ));
        }
        text.push_str("switch with /role NAME; spending is kept\n");
        text
    }

    /// Adds the cost of one model call (§9.3) and logs it.
    pub(crate) fn record_usage(&self, usage: &Usage) {
        let records = {
            let mut state = self.lock();
            let model = state.model.clone();
            let (cost, source) = self.prices.cost(&model, usage);
            state.spending.model_calls += 1;
            let mut events = Vec::new();
            match cost {
                Some(cost) => state.spending.cost_usd += cost,
                None if state.spending.unpriced_model.is_none() => {
                    state.spending.unpriced_model = Some(model.clone());
                    events.push(PolicyEvent::PriceUnknown {
                        model: model.clone(),
                    });
                }
                None => {}
            }
            let status = self.status_of(&state);
            events.push(PolicyEvent::ModelUsage {
                model,
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                cached_tokens: usage.cached_tokens,
                cost_usd: cost,
                cost_source: source,
                session_cost_usd: state.spending.cost_usd,
                signal: status.signal,
            });
            events.extend(crossings(&mut state.levels, &status));
            self.stamp(&state, events)
        };
        self.publish(records);
    }

    fn stamp(&self, state: &State, events: Vec<PolicyEvent>) -> Vec<EventRecord> {
        let ts = events::timestamp();
        events
            .into_iter()
            .map(|event| EventRecord {
                ts: ts.clone(),
                session: state.session.clone(),
                role: state.role.name.clone(),
                event,
            })
            .collect()
    }

    /// Stamps `event` with the session and role and publishes it (events that happen
    /// outside governance, such as checkpoints, still belong in the event log).
    pub fn record_event(&self, event: PolicyEvent) {
        let records = self.stamp(&self.lock(), vec![event]);
        self.publish(records);
    }

    /// Publishes outside the state lock, so subscribers may call back into the governor.
    fn publish(&self, records: Vec<EventRecord>) {
        for record in &records {
            self.bus.publish(record);
        }
    }

    /// Accounts for a finished call and rewrites its result; see the module doc.
    fn settle(&self, call: &ToolCall, outcome: &mut DispatchOutcome, took: Duration) {
        let records = {
            let mut state = self.lock();
            let block = state.pending.take().filter(|b| b.tool == call.name);
            let ran = outcome.decision.is_some() && !outcome.blocked;
            let is_bash = call.name == "bash";
            if ran && is_bash {
                state.spending.shell_calls += 1;
                if outcome.ok && state.role.shell_policy == ShellPolicy::Compress {
                    let (text, saved) = compress(&outcome.content);
                    outcome.content = text;
                    state.spending.compressed_chars_saved += saved;
                }
            }
            let output_tokens = budget::estimate_tokens(&outcome.content);
            if ran {
                state.spending.tokens += output_tokens;
            }
            let mut events = Vec::new();
            events.extend(violation(call, outcome, block.as_ref(), ran));
            events.push(PolicyEvent::ToolResult {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                verdict: verdict(outcome, block.as_ref(), ran).to_string(),
                ok: outcome.ok,
                duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
                output_chars: outcome.content.chars().count() as u64,
                output_tokens,
            });
            let status = self.status_of(&state);
            events.extend(crossings(&mut state.levels, &status));
            if ran {
                let line = match status.signal {
                    Signal::Ok => None,
                    Signal::Warning => Some(status.warning_line(self.settings.thresholds)),
                    Signal::Exhausted => Some(status.exhausted_message()),
                };
                if let Some(line) = line {
                    if !outcome.content.is_empty() && !outcome.content.ends_with('\n') {
                        outcome.content.push('\n');
                    }
                    outcome.content.push_str(&line);
                }
            }
            self.stamp(&state, events)
        };
        self.publish(records);
    }
}

fn find(roles: &RoleSet, name: &str) -> Result<Role, GovernanceError> {
    roles
        .get(name)
        .cloned()
        .ok_or_else(|| GovernanceError::UnknownRole {
            name: name.to_string(),
            available: roles.names(),
        })
}

/// Why `role` refuses `tool`: `role <name> does not allow <tool>` (issue 5's exact text),
/// or, for `bash` refused only because no shell calls are allowed, that limit.
fn refusal(role: &Role, tool: &str) -> String {
    let one_call = Limits {
        max_shell_invocations: 1,
        ..role.limits
    };
    if tool == "bash" && role.allows_tool_under(tool, &one_call) {
        format!(
            "role {} allows no shell calls (max_shell_invocations = 0); raise the limit or \
             switch role",
            role.name
        )
    } else {
        format!("role {} does not allow {tool}", role.name)
    }
}

/// Runs `f`, which blocks on a child process, without stalling an async worker thread.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    let multi_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi_thread {
        tokio::task::block_in_place(f)
    } else {
        f()
    }
}

/// The call's arguments as JSON (an object; `{}` when they do not parse).
fn tool_input(call: &ToolCall) -> serde_json::Value {
    serde_json::from_str::<serde_json::Value>(&call.arguments)
        .ok()
        .filter(serde_json::Value::is_object)
        .unwrap_or_else(|| serde_json::Value::Object(serde_json::Map::new()))
}

impl Policy for Governor {
    fn on_usage(&self, usage: &Usage) {
        self.record_usage(usage);
    }

    fn before_tool(&self, call: &ToolCall) {
        let records = {
            let mut state = self.lock();
            state.pending = None;
            let event = PolicyEvent::ToolCall {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                command: logged_command(call),
            };
            self.stamp(&state, vec![event])
        };
        self.publish(records);
    }

    /// Role tool policy, then budget (§4.2 step 4).
    fn check(&self, tool: &str, _: &Args) -> Result<(), PolicyBlock> {
        let mut state = self.lock();
        let block = if !self.permits(&state.role, tool) {
            Some((true, refusal(&state.role, tool)))
        } else {
            let status = self.status_of(&state);
            (status.signal == Signal::Exhausted).then(|| (false, status.exhausted_message()))
        };
        match block {
            None => Ok(()),
            Some((by_role, reason)) => {
                state.pending = Some(Block {
                    tool: tool.to_string(),
                    by_role,
                    reason: reason.clone(),
                });
                Err(PolicyBlock { reason })
            }
        }
    }

    fn pre_tool(&self, tool: &str, args: &Args) -> HookGate {
        let input = serde_json::Value::Object(args.clone());
        let outcome = self.run_hooks(
            HookEvent::PreToolUse,
            Some(tool),
            self.tool_fields(tool, &input),
        );
        match outcome.block {
            // Exit 2 or `decision: block`: the call is not run; stderr goes to the model.
            Some(reason) => HookGate {
                decision: Some(Decision::Deny),
                reason: Some(reason),
            },
            None => HookGate {
                decision: outcome.permission,
                reason: outcome.reason,
            },
        }
    }

    fn waiting(&self, message: &str) {
        let mut fields = serde_json::Map::new();
        fields.insert("message".into(), message.into());
        let _ = self.run_hooks(HookEvent::Notification, None, fields);
    }

    fn subagent_stop(&self, _answer: &str, continued: u32) -> Option<String> {
        let mut fields = serde_json::Map::new();
        fields.insert("stop_hook_active".into(), (continued > 0).into());
        let outcome = self.run_hooks(HookEvent::SubagentStop, None, fields);
        outcome.block.filter(|_| continued < MAX_STOP_CONTINUATIONS)
    }

    fn after_tool(&self, call: &ToolCall, outcome: &mut DispatchOutcome, took: Duration) {
        let succeeded = outcome.ok && outcome.decision.is_some() && !outcome.blocked;
        self.settle(call, outcome, took);
        if succeeded {
            self.post_tool_hooks(call, outcome);
        }
    }

    fn exhausted(&self) -> Option<String> {
        self.exhausted_message()
    }

    fn reminder_lines(&self) -> Vec<String> {
        Governor::reminder_lines(self)
    }
}

#[cfg(test)]
#[path = "governor_tests.rs"]
mod tests;
