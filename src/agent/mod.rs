//! The agent: one session's state and the inner loop that drives the model and the tools.

pub(crate) mod checkpoint;
pub(crate) mod coach;

pub(crate) mod facts;
pub(crate) mod guard;
pub(crate) mod hooks;
pub mod memory;
pub(crate) mod prompt;

pub(crate) mod subagent;
pub mod turn;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

pub use crate::config::LoopSettings;
pub use coach::{CoachStatus, CoachSwitch};
pub use turn::{LoopLimits, TurnOutcome, TurnStats};

use crate::cancel::CancelToken;
use crate::config::Paths;
use crate::context::{ContextManager, ContextSettings};
use crate::events::{AgentEvent, EventSink};
use crate::governance::{GovernanceError, Governor};
use crate::model::{Client, Message};
use crate::permissions::{Approver, PermissionEngine};
use crate::sandbox::ExecSettings;
use crate::session::SessionHandle;
use crate::tools::{FileTracker, Policy, Registry, ToolContext, Toolbox};

/// Everything a session needs, assembled by the caller from the resolved settings.
pub struct AgentParts {
    pub paths: Paths,
    pub client: Client,
    pub registry: Registry,
    pub permissions: PermissionEngine,
    pub approver: Arc<dyn Approver>,
    pub sink: Arc<dyn EventSink>,
    pub exec: ExecSettings,
    pub context: ContextSettings,
    pub loop_settings: LoopSettings,
}

/// The system prompt: the base prompt followed by the memory's sections (AGENTS.md, skills).
struct Prompt {
    system: String,
    /// The memory's part of `system` (also given to subagents).
    memory: String,
}

/// What is saved with the session besides the history: the file, the todo list, the
/// governance state restored by resume.
struct Saved {
    session: Arc<SessionHandle>,
    todos: crate::tools::todos::TodoStore,
    /// Todo-list version last shown and saved.
    todos_seen: AtomicU64,
    /// Governance state restored by resume.
    governance: Option<serde_json::Value>,
}

/// One session: history plus the parts that act on it.
pub struct Agent {
    paths: Paths,
    client: Client,
    /// Tools, permissions, approver and the policy (the governor) for the dispatcher.
    tools: Toolbox,
    /// Roles, budgets and policy events (§9); also the toolbox's policy.
    governor: Arc<Governor>,
    sink: Arc<dyn EventSink>,
    exec: ExecSettings,
    files: FileTracker,
    prompt: Prompt,
    history: Vec<Message>,
    context: ContextManager,
    saved: Saved,
    /// Whether the coach for weak models is on (shared with subagents).
    coach: Arc<CoachSwitch>,
    settings: LoopSettings,
    /// The session's MCP servers, when any are configured (their tools reach the model
    /// through the registry).
    mcp: Option<Arc<crate::mcp::McpServers>>,
    /// Turn numbers and the workspace's checkpoints ([`checkpoint`]).
    checkpoints: checkpoint::SessionCheckpoints,
    /// Custom slash commands of the session (`set_memory`).
    commands: Arc<crate::context::commands::Commands>,
    /// Context from `SessionStart` hooks, for the next turn.
    session_context: Vec<String>,
    /// The governor the context manager's `PreCompact` hooks go to (replaced with it).
    compact_governor: Arc<Mutex<Arc<Governor>>>,
}

impl Agent {
    pub fn new(parts: AgentParts) -> Self {
        let model = parts.client.endpoint().model.clone();
        let system = prompt::system_prompt(&parts.paths.workspace, &parts.registry.names());
        let session = Arc::new(SessionHandle::new(
            memory::new_session_log(&parts.paths, &model),
            Arc::clone(&parts.sink),
        ));
        let governor = Arc::new(Governor::builtin(&model));
        governor.set_session_id(&session.id());
        governor.set_transcript(Some(session.path()));
        let compact_governor = Arc::new(Mutex::new(Arc::clone(&governor)));
        let context = ContextManager::new(parts.context)
            .with_recorder(memory::edit_recorder(&session))
            .with_before_compact(hooks::pre_compact(&compact_governor));
        let coach = Arc::new(CoachSwitch::new(parts.loop_settings.coach, &model));
        Self {
            paths: parts.paths,
            client: parts.client,
            tools: Toolbox {
                registry: parts.registry,
                permissions: Arc::new(Mutex::new(parts.permissions)),
                approver: parts.approver,
                policy: Arc::clone(&governor) as Arc<dyn Policy>,
            },
            governor,
            sink: parts.sink,
            exec: parts.exec,
            files: FileTracker::default(),
            prompt: Prompt {
                system,
                memory: String::new(),
            },
            history: Vec::new(),
            context,
            saved: Saved {
                session,
                todos: crate::tools::todos::TodoStore::new(),
                todos_seen: AtomicU64::new(0),
                governance: None,
            },
            coach,
            settings: parts.loop_settings,
            mcp: None,
            checkpoints: checkpoint::SessionCheckpoints::default(),
            commands: Arc::default(),
            session_context: Vec::new(),
            compact_governor,
        }
    }

    /// Offers the tools of `servers` from the first request after each is ready.
    pub(crate) fn set_mcp(&mut self, servers: Arc<crate::mcp::McpServers>) {
        self.tools.registry.add_source(Arc::clone(&servers) as _);
        self.mcp = Some(servers);
    }

    /// The session's MCP servers, when any are configured.
    pub(crate) fn mcp(&self) -> Option<&Arc<crate::mcp::McpServers>> {
        self.mcp.as_ref()
    }

    /// Tells the user what happened to the MCP servers since the last time (ready as a
    /// notice, failures as warnings).
    pub(crate) fn report_mcp(&self) {
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
    pub(crate) fn coach_status(&self) -> CoachStatus {
        self.coach.status()
    }

    /// The workspace, working directory and `$AGENT_HOME` of this session.
    pub(crate) fn paths(&self) -> &Paths {
        &self.paths
    }

    /// The custom slash commands (`/name args`).
    pub(crate) fn commands(&self) -> &crate::context::commands::Commands {
        &self.commands
    }

    pub fn history(&self) -> &[Message] {
        &self.history
    }

    pub(crate) fn sink(&self) -> &Arc<dyn EventSink> {
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
        governor.hide_denied(&mut self.tools.registry);
        self.tools.policy = Arc::clone(&governor) as Arc<dyn Policy>;
        governor.set_session_id(&self.saved.session.id());
        governor.set_transcript(Some(self.saved.session.path()));
        *hooks::lock(&self.compact_governor) = Arc::clone(&governor);
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
        self.governor.hide_denied(&mut self.tools.registry);
        Ok(())
    }

    /// The model requests go to.
    pub(crate) fn model(&self) -> &str {
        &self.client.endpoint().model
    }

    /// Sends the following requests to `model` (`/model NAME`).
    pub(crate) fn set_model(&mut self, model: &str) {
        self.client.set_model(model);
        self.coach.set_model(model);
    }

    /// Starts a new conversation (`/clear`) in a new session file (`SessionEnd` and
    /// `SessionStart` hooks run around it).
    pub(crate) fn clear(&mut self) {
        self.end_hooks("clear");
        self.history.clear();
        self.start_new_session();
        self.start_hooks("clear");
    }

    /// Runs one user turn to its end.
    pub async fn run_turn(&mut self, input: &str, cancel: &CancelToken) -> TurnOutcome {
        if let Some(message) = self.tools.policy.exhausted() {
            return TurnOutcome::BudgetExhausted { message };
        }
        let prompt_hooks = self.prompt_hooks(input);
        if let Some(message) = prompt_hooks.block {
            return TurnOutcome::Refused { message };
        }
        self.sink.emit(AgentEvent::TurnStarted {
            input: input.to_string(),
        });
        self.connect_task_tool();
        let user = Message::user(input);
        self.saved.session.record(&crate::session::Record::Message {
            message: user.clone(),
        });
        self.history.push(user);
        self.context.turn_started(self.history.len() - 1);
        let mut context = std::mem::take(&mut self.session_context);
        context.extend(prompt_hooks.context);
        if let Some(note) = hooks::context_note(&context) {
            self.saved.session.record(&crate::session::Record::Message {
                message: note.clone(),
            });
            self.history.push(note);
        }
        let recorder = self.start_turn_checkpoint(input);
        let tools = ToolContext {
            workspace: &self.paths.workspace,
            cwd: &self.paths.cwd,
            files: &self.files,
            exec: &self.exec,
            cancel,
            max_output_chars: self.context.settings().max_output_chars,
            before_run: recorder
                .as_deref()
                .map(|r| r as &dyn crate::tools::BeforeRun),
        };
        let dispatcher = self.tools.dispatcher();
        let workspace = self.paths.workspace.clone();
        let (todos, policy) = (self.saved.todos.clone(), Arc::clone(&self.tools.policy));
        let reminder = move || {
            let mut extra = prompt::todo_lines(&todos.get());
            extra.extend(policy.reminder_lines());
            prompt::reminder(&crate::clock::today(), &workspace, &extra)
        };
        let saved = &self.saved;
        let sink = &self.sink;
        let on_message = move |m: &Message| memory::on_message(saved, sink, m);
        let cx = turn::LoopContext {
            request: input,
            client: &self.client,
            dispatcher: &dispatcher,
            tools: &tools,
            sink: &self.sink,
            system_prompt: &self.prompt.system,
            reminder: &reminder,
            on_message: &on_message,
            context: Some(&self.context),
            coach: &self.coach,
            limits: LoopLimits {
                max_model_calls: self.settings.max_turns,
                repeat_limit: self.settings.repeat_limit,
            },
        };
        let mut stats = TurnStats::default();
        let spent_before = self.governor.spending().cost_usd;
        let mut outcome = turn::run(&cx, &mut self.history, cancel, &mut stats).await;
        let mut continued = 0;
        while let TurnOutcome::Done { text } = &outcome {
            let Some(note) = hooks::stop(&self.governor, &self.sink, text, continued) else {
                break;
            };
            continued += 1;
            (cx.on_message)(&note);
            self.history.push(note);
            outcome = turn::run(&cx, &mut self.history, cancel, &mut stats).await;
        }
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
