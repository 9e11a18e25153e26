//! The agent: one session's state and the inner loop that drives the model and the tools.

pub mod events;
pub mod prompt;
pub mod turn;

use std::sync::{Arc, Mutex};

pub use events::{AgentEvent, EventSink};
pub use turn::{TurnOutcome, TurnStats};

use crate::cancel::CancelToken;
use crate::config::Config;
use crate::model::{Client, Message};
use crate::permissions::{Approver, PermissionEngine};
use crate::sandbox::ExecSettings;
use crate::tools::dispatch::{CallPolicy, NoPolicy};
use crate::tools::{Dispatcher, FileTracker, Registry, ToolContext};

/// Default context window in tokens when config and the model table say nothing (§7.3).
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
/// Default cap on one tool result, in characters (§7.1).
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 30_000;

/// Everything a session needs, assembled by the caller.
pub struct AgentParts {
    pub config: Arc<Config>,
    pub client: Client,
    pub registry: Registry,
    pub permissions: PermissionEngine,
    pub approver: Arc<dyn Approver>,
    pub sink: Arc<dyn EventSink>,
    pub exec: ExecSettings,
}

/// One session: history plus the parts that act on it.
pub struct Agent {
    config: Arc<Config>,
    client: Client,
    registry: Registry,
    permissions: Mutex<PermissionEngine>,
    approver: Arc<dyn Approver>,
    policy: Arc<dyn CallPolicy>,
    sink: Arc<dyn EventSink>,
    exec: ExecSettings,
    files: FileTracker,
    system_prompt: String,
    history: Vec<Message>,
    max_output_chars: usize,
    context_window: u64,
}

impl Agent {
    pub fn new(parts: AgentParts) -> Self {
        let system_prompt = prompt::system_prompt(&parts.config.workspace, &parts.registry.names());
        let max_output_chars = parts
            .config
            .user
            .context
            .max_output_chars
            .unwrap_or(DEFAULT_MAX_OUTPUT_CHARS)
            .max(1000);
        let context_window = parts
            .config
            .user
            .context
            .context_window
            .unwrap_or(DEFAULT_CONTEXT_WINDOW);
        Self {
            config: parts.config,
            client: parts.client,
            registry: parts.registry,
            permissions: Mutex::new(parts.permissions),
            approver: parts.approver,
            policy: Arc::new(NoPolicy),
            sink: parts.sink,
            exec: parts.exec,
            files: FileTracker::default(),
            system_prompt,
            history: Vec::new(),
            max_output_chars,
            context_window,
        }
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

    /// The model requests go to.
    pub fn model(&self) -> &str {
        &self.client.endpoint().model
    }

    /// Sends the following requests to `model` (`/model NAME`).
    pub fn set_model(&mut self, model: &str) {
        self.client.set_model(model);
    }

    /// Starts a new conversation (`/clear`).
    pub fn clear(&mut self) {
        self.history.clear();
    }

    /// Runs one user turn to its end.
    pub async fn run_turn(&mut self, input: &str, cancel: &CancelToken) -> TurnOutcome {
        self.sink.emit(AgentEvent::TurnStarted {
            input: input.to_string(),
        });
        self.history.push(Message::user(input));
        let tools = ToolContext {
            workspace: &self.config.workspace,
            cwd: &self.config.cwd,
            files: &self.files,
            exec: &self.exec,
            cancel,
            max_output_chars: self.max_output_chars,
        };
        let dispatcher = Dispatcher {
            registry: &self.registry,
            permissions: &self.permissions,
            approver: self.approver.as_ref(),
            policy: self.policy.as_ref(),
        };
        let workspace = self.config.workspace.clone();
        let reminder = move || prompt::reminder(&prompt::today(), &workspace, &[]);
        let cx = turn::LoopContext {
            client: &self.client,
            dispatcher: &dispatcher,
            tools: &tools,
            sink: &self.sink,
            system_prompt: &self.system_prompt,
            reminder: &reminder,
            max_model_calls: self.config.run.max_turns,
            exhausted: &|| None,
            on_message: &|_| {},
        };
        let mut stats = TurnStats::default();
        let outcome = turn::run(&cx, &mut self.history, cancel, &mut stats).await;
        self.sink.emit(AgentEvent::TurnCompleted {
            usage: stats.usage,
            model_calls: stats.model_calls,
            context_tokens: stats.last_prompt_tokens,
            context_window: self.context_window,
        });
        outcome
    }
}
