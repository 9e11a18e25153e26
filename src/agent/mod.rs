//! The agent: one session's state and the inner loop that drives the model and the tools.

pub mod checkpoint;
pub mod coach;
pub mod events;
pub mod facts;
pub mod guard;
pub mod memory;
pub mod prompt;
pub mod settings;
pub mod subagent;
pub mod turn;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

pub use coach::{CoachStatus, CoachSwitch};
pub use events::{AgentEvent, EventSink};
pub use settings::LoopSettings;
pub use turn::{TurnOutcome, TurnStats};

use crate::cancel::CancelToken;
use crate::config::Config;
use crate::context::{ContextManager, ContextSettings};
use crate::governance::{GovernanceError, Governor};
use crate::model::{Client, Message};
use crate::permissions::{Approver, PermissionEngine};
use crate::sandbox::ExecSettings;
use crate::session::SessionHandle;
use crate::tools::dispatch::CallPolicy;
use crate::tools::{Dispatcher, FileTracker, Registry, ToolContext};

/// Default context window in tokens when config and the model table say nothing (§7.3).
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
pub use crate::context::DEFAULT_MAX_OUTPUT_CHARS;

/// Everything a session needs, assembled by the caller.
pub struct AgentParts {
    pub config: Arc<Config>,
    pub client: Client,
    pub registry: Registry,
    pub permissions: PermissionEngine,
    pub approver: Arc<dyn Approver>,
    pub sink: Arc<dyn EventSink>,
    pub exec: ExecSettings,
    pub loop_settings: LoopSettings,
}

/// One session: history plus the parts that act on it.
pub struct Agent {
    config: Arc<Config>,
    client: Client,
    registry: Registry,
    permissions: Arc<Mutex<PermissionEngine>>,
    approver: Arc<dyn Approver>,
    policy: Arc<dyn CallPolicy>,
    /// Roles, budgets and policy events (§9); also `policy` and the loop's hooks.
    governor: Arc<Governor>,
    sink: Arc<dyn EventSink>,
    exec: ExecSettings,
    files: FileTracker,
    system_prompt: String,
    history: Vec<Message>,
    max_output_chars: usize,
    /// AGENTS.md and skills sections of the system prompt (also given to subagents).
    memory_prompt: String,
    context: ContextManager,
    session: Arc<SessionHandle>,
    todos: crate::tools::todos::TodoStore,
    /// Todo-list version last shown and saved.
    todos_seen: AtomicU64,
    /// Extra reminder lines (role and budget, from governance).
    reminder_lines: Vec<memory::ReminderLine>,
    /// Governance state restored by resume.
    governance: Option<serde_json::Value>,
    /// Whether the coach for weak models is on (shared with subagents).
    coach: Arc<CoachSwitch>,
    /// Identical calls in a row before the repeated-call guard speaks up.
    repeat_limit: Option<u32>,
    /// The session's MCP servers, when any are configured (their tools reach the model
    /// through the registry).
    mcp: Option<Arc<crate::mcp::McpServers>>,
    /// Turn numbers and the workspace's checkpoints ([`checkpoint`]).
    checkpoints: checkpoint::SessionCheckpoints,
}

impl Agent {
    pub fn new(parts: AgentParts) -> Self {
        let system_prompt = prompt::system_prompt(&parts.config.workspace, &parts.registry.names());
        let settings = ContextSettings::for_config(&parts.config, &parts.client.endpoint().model)
            .unwrap_or_default();
        let max_output_chars = settings.max_output_chars;
        let session = Arc::new(SessionHandle::new(
            memory::new_session_log(&parts.config, &parts.client.endpoint().model),
            Arc::clone(&parts.sink),
        ));
        let context = ContextManager::new(settings).with_recorder(memory::edit_recorder(&session));
        let governor = Arc::new(Governor::builtin(&parts.client.endpoint().model));
        governor.set_session_id(&session.id());
        let coach = Arc::new(CoachSwitch::new(
            parts.loop_settings.coach,
            &parts.client.endpoint().model,
        ));
        Self {
            config: parts.config,
            client: parts.client,
            registry: parts.registry,
            permissions: Arc::new(Mutex::new(parts.permissions)),
            approver: parts.approver,
            policy: Arc::clone(&governor) as Arc<dyn CallPolicy>,
            governor,
            sink: parts.sink,
            exec: parts.exec,
            files: FileTracker::default(),
            system_prompt,
            history: Vec::new(),
            max_output_chars,
            memory_prompt: String::new(),
            context,
            session,
            todos: crate::tools::todos::TodoStore::new(),
            todos_seen: AtomicU64::new(0),
            reminder_lines: Vec::new(),
            governance: None,
            coach,
            repeat_limit: parts.loop_settings.repeat_limit,
            mcp: None,
            checkpoints: checkpoint::SessionCheckpoints::default(),
        }
    }

    /// Offers the tools of `servers` from the first request after each is ready.
    pub fn set_mcp(&mut self, servers: Arc<crate::mcp::McpServers>) {
        self.registry.add_source(Arc::clone(&servers) as _);
        self.mcp = Some(servers);
    }

    /// The session's MCP servers, when any are configured.
    pub fn mcp(&self) -> Option<&Arc<crate::mcp::McpServers>> {
        self.mcp.as_ref()
    }

    /// Tells the user what happened to the MCP servers since the last time (ready as a
    /// notice, failures as warnings).
    pub fn report_mcp(&self) {
        for report in self.mcp.iter().flat_map(|m| m.take_reports()) {
            self.sink.emit(if report.warning {
                AgentEvent::Warning {
                    message: report.message,
                }
            } else {
                AgentEvent::Notice {
                    message: report.message,
                }
            });
        }
    }

    /// Whether the coach for weak models is on, and why.
    pub fn coach_status(&self) -> CoachStatus {
        self.coach.status()
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn history(&self) -> &[Message] {
        &self.history
    }

    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn sink(&self) -> &Arc<dyn EventSink> {
        &self.sink
    }

    pub fn governor(&self) -> &Arc<Governor> {
        &self.governor
    }

    /// Uses `governor` for roles, budgets and policy events (replacing the built-in default
    /// of [`Agent::new`]) and hides the tools its role denies. Call before the first turn:
    /// the system prompt lists the tools offered when the agent was built, so build the
    /// registry with [`Governor::hide_denied`] already applied.
    pub fn set_governor(&mut self, governor: Arc<Governor>) {
        governor.hide_denied(&mut self.registry);
        self.policy = Arc::clone(&governor) as Arc<dyn CallPolicy>;
        governor.set_session_id(&self.session.id());
        self.governor = governor;
    }

    /// Switches the active role (`/role NAME`): the tools offered change with it; spending
    /// is kept (§9.2). The system prompt is left as it is (the prefix stays cacheable); the
    /// request's tool list and the reminder name what the new role may use.
    ///
    /// # Errors
    /// [`GovernanceError::UnknownRole`] listing the available roles.
    pub fn set_role(&mut self, name: &str) -> Result<(), GovernanceError> {
        self.governor.switch_role(name)?;
        self.governor.hide_denied(&mut self.registry);
        Ok(())
    }

    /// The model requests go to.
    pub fn model(&self) -> &str {
        &self.client.endpoint().model
    }

    /// Sends the following requests to `model` (`/model NAME`).
    pub fn set_model(&mut self, model: &str) {
        self.client.set_model(model);
        self.coach.set_model(model);
    }

    /// Starts a new conversation (`/clear`) in a new session file.
    pub fn clear(&mut self) {
        self.history.clear();
        self.start_new_session();
    }

    /// Runs one user turn to its end.
    pub async fn run_turn(&mut self, input: &str, cancel: &CancelToken) -> TurnOutcome {
        if let Some(message) = self.governor.exhausted_message() {
            return TurnOutcome::BudgetExhausted { message };
        }
        self.sink.emit(AgentEvent::TurnStarted {
            input: input.to_string(),
        });
        self.connect_task_tool();
        let user = Message::user(input);
        self.session.record(&crate::session::Record::Message {
            message: user.clone(),
        });
        self.history.push(user);
        self.context.turn_started(self.history.len() - 1);
        let recorder = self.start_turn_checkpoint(input);
        let tools = ToolContext {
            workspace: &self.config.workspace,
            cwd: &self.config.cwd,
            files: &self.files,
            exec: &self.exec,
            cancel,
            max_output_chars: self.max_output_chars,
            before_run: recorder
                .as_deref()
                .map(|r| r as &dyn crate::tools::BeforeRun),
        };
        let dispatcher = Dispatcher {
            registry: &self.registry,
            permissions: &self.permissions,
            approver: self.approver.as_ref(),
            policy: self.policy.as_ref(),
        };
        let workspace = self.config.workspace.clone();
        let (todos, lines, governor) = (
            self.todos.clone(),
            self.reminder_lines.clone(),
            Arc::clone(&self.governor),
        );
        let reminder = move || {
            let mut extra = memory::reminder_extra(&todos, &lines);
            extra.extend(governor.reminder_lines());
            prompt::reminder(&prompt::today(), &workspace, &extra)
        };
        let exhausted = || self.governor.exhausted_message();
        let (session, todos, seen, sink) =
            (&self.session, &self.todos, &self.todos_seen, &self.sink);
        let on_message = move |m: &Message| memory::on_message(session, todos, seen, sink, m);
        let cx = turn::LoopContext {
            request: input,
            client: &self.client,
            dispatcher: &dispatcher,
            tools: &tools,
            sink: &self.sink,
            system_prompt: &self.system_prompt,
            reminder: &reminder,
            max_model_calls: self.config.run.max_turns,
            exhausted: &exhausted,
            on_message: &on_message,
            hooks: self.governor.as_ref(),
            context: Some(&self.context),
            coach: &self.coach,
            repeat_limit: self.repeat_limit,
        };
        let mut stats = TurnStats::default();
        let spent_before = self.governor.spending().cost_usd;
        let outcome = turn::run(&cx, &mut self.history, cancel, &mut stats).await;
        self.finish_turn_checkpoint(recorder);
        // Without `usage.cost` from the provider, the turn's cost is what the governor priced
        // (subagents included); unknown when a call could not be priced.
        let spending = self.governor.spending();
        if let Some(usage) = stats.usage.as_mut().filter(|u| u.cost.is_none())
            && spending.unpriced_model.is_none()
        {
            usage.cost = Some(spending.cost_usd - spent_before);
        }
        self.sink.emit(AgentEvent::TurnCompleted {
            usage: stats.usage,
            model_calls: stats.model_calls,
            context_tokens: stats.last_prompt_tokens,
            context_window: self.context.window(),
        });
        self.save_governance();
        outcome
    }
}
