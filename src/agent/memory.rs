//! The agent's memory glue: session persistence, resume, `/compact`, the todo list in the
//! reminder, the governance-state slot, and connecting the `task` tool to this agent.
//!
//! Every message is recorded as it is added (the user's before the turn starts, the rest
//! through the inner loop's `on_message` hook); the context manager records its prunes and
//! compactions through the same session handle, so a resumed session is exactly the history
//! the model last saw. `/clear` starts a new session file.
//!
//! Governance (roles, budgets) keeps its own state; it saves it with
//! [`Agent::record_governance`] (an opaque JSON value, the latest one wins) and reads it
//! back after a resume with [`Agent::governance_state`].

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::subagent::{ChildEnv, MAX_CHILD_CALLS, TaskTool};
use super::{Agent, LoopLimits, Saved, prompt};
use crate::cancel::CancelToken;
use crate::config::Paths;
use crate::context::Memory;
use crate::context::compact::{CompactError, ModelAccess};
use crate::context::manager::{CompactReport, EditRecorder, HistoryEdit, Trigger};
use crate::context::overflow::InstructionSize;
use crate::events::{AgentEvent, EventSink};
use crate::model::{Message, Role};
use crate::session::{self, Header, Record, SessionError, SessionHandle, SessionInfo, SessionLog};
use crate::tools::todos::Todo;

/// What a resume restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumeSummary {
    pub id: String,
    /// Messages recorded in the file.
    pub(crate) messages: usize,
    /// Messages in the restored (pruned/compacted) history.
    pub(crate) history_len: usize,
    /// Tool calls answered as interrupted by the repair.
    pub(crate) interrupted: usize,
    pub(crate) todos: usize,
}

/// The tools of a session: the built-ins, `read_skill` (when there are skills) and
/// `write_todos` from `memory`, and `task` (connected to the agent at the start of each turn).
pub fn session_tools(memory: &Memory) -> crate::tools::Registry {
    let mut registry = crate::tools::Registry::builtin();
    memory.register_tools(&mut registry);
    registry.register(Arc::new(TaskTool::new()));
    registry
}

/// A log for a new session in `paths`' workspace.
pub(crate) fn new_session_log(paths: &Paths, model: &str) -> SessionLog {
    let dir = paths.sessions_dir();
    let started = session::now_secs();
    let mut id = session::new_id(started);
    for _ in 0..3 {
        if !dir.join(format!("{id}.jsonl")).exists() {
            break;
        }
        id = session::new_id(started);
    }
    SessionLog::create(
        &dir,
        Header {
            id,
            workspace: paths.workspace.clone(),
            started,
            model: model.to_string(),
            agent_version: env!("CARGO_PKG_VERSION").to_string(),
        },
    )
}

/// Records the context manager's history edits in the session.
pub(crate) fn edit_recorder(session: &Arc<SessionHandle>) -> EditRecorder {
    let session = Arc::clone(session);
    Arc::new(move |edit: &HistoryEdit| {
        session.record(&match edit {
            HistoryEdit::Pruned { stubs } => Record::Pruned {
                stubs: stubs.clone(),
            },
            HistoryEdit::Compacted(compaction) => Record::Compacted(compaction.clone()),
        });
    })
}

/// The inner loop's `on_message` hook: saves the message, then the todo list when a tool
/// changed it (and shows it).
pub(super) fn on_message(saved: &Saved, sink: &Arc<dyn EventSink>, message: &Message) {
    saved.session.record(&Record::Message {
        message: message.clone(),
    });
    let version = saved.todos.version();
    if saved.todos_seen.swap(version, Ordering::SeqCst) != version {
        let list = saved.todos.get();
        saved.session.record(&Record::Todos {
            todos: list.clone(),
        });
        sink.emit(AgentEvent::TodosChanged { todos: list });
    }
}

impl Agent {
    /// The id of the session being written.
    pub fn session_id(&self) -> String {
        self.saved.session.id()
    }

    pub(crate) fn todos(&self) -> Vec<Todo> {
        self.saved.todos.get()
    }

    /// Uses `memory` (AGENTS.md, skills, the todo list shared with `write_todos`): its
    /// sections are appended to the system prompt. Call before the first turn, with the
    /// memory whose tools ([`Memory::register_tools`]) are in the registry.
    pub fn set_memory(&mut self, memory: Memory) {
        let base_len = self.prompt.system.len() - self.prompt.memory.len();
        self.prompt.system.truncate(base_len);
        self.prompt.memory = memory.prompt_sections();
        self.prompt.system.push_str(&self.prompt.memory);
        let workspace = &self.paths.workspace;
        self.context.set_instructions(
            memory
                .instructions
                .files
                .iter()
                .map(|file| InstructionSize {
                    shown: file
                        .path
                        .strip_prefix(workspace)
                        .unwrap_or(&file.path)
                        .display()
                        .to_string(),
                    bytes: file.text.len(),
                })
                .collect(),
        );
        self.commands = memory.commands;
        self.saved.todos = memory.todos;
        self.saved
            .todos_seen
            .store(self.saved.todos.version(), Ordering::SeqCst);
    }

    /// Saves governance state (role, spending) in the session; the latest one is restored
    /// by resume.
    pub fn record_governance(&self, state: serde_json::Value) {
        self.saved.session.record(&Record::Governance { state });
    }

    /// The governance state restored by the last resume, if the session had one.
    pub fn governance_state(&self) -> Option<&serde_json::Value> {
        self.saved.governance.as_ref()
    }

    /// Sessions in `$AGENT_HOME/sessions`, most recently active first; only this
    /// workspace's unless `all`.
    pub(crate) fn list_sessions(&self, all: bool) -> Vec<SessionInfo> {
        let mut sessions = session::list(&self.paths.sessions_dir());
        if !all {
            sessions.retain(|s| s.workspace == self.paths.workspace);
        }
        sessions
    }

    /// Compacts the history now (`/compact`).
    ///
    /// # Errors
    /// [`CompactError`] when nothing changed (nothing to compact, interrupted, no summary).
    pub(crate) async fn compact(
        &mut self,
        cancel: &CancelToken,
    ) -> Result<CompactReport, CompactError> {
        let access = ModelAccess {
            client: &self.client,
            system_prompt: &self.prompt.system,
            tools: self.tools.registry.specs(),
            sink: &self.sink,
            cancel,
        };
        self.context
            .compact(&access, &mut self.history, Trigger::Manual, true)
            .await
    }

    /// Continues session `id`, or the most recent one of this workspace: restores its
    /// history (repaired), todos and governance state, and appends to its file from now on.
    /// Problems reading the file are emitted as warnings; [`Agent::resume_notice`] describes
    /// the result.
    ///
    /// # Errors
    /// [`SessionError`] when no such session exists or it cannot be read; nothing changes then.
    pub fn resume(&mut self, id: Option<&str>) -> Result<ResumeSummary, SessionError> {
        let info = session::find(&self.paths.sessions_dir(), id, &self.paths.workspace)?;
        let loaded = session::load(&info.path)?;
        for message in &loaded.warnings {
            self.sink.emit(AgentEvent::Warning {
                message: message.clone(),
            });
        }
        if loaded.header.workspace != self.paths.workspace {
            self.sink.emit(AgentEvent::Warning {
                message: format!(
                    "session `{}` was started in `{}`; continuing it in `{}`",
                    loaded.header.id,
                    loaded.header.workspace.display(),
                    self.paths.workspace.display()
                ),
            });
        }
        let summary = ResumeSummary {
            id: loaded.header.id.clone(),
            messages: loaded.messages,
            history_len: loaded.history.len(),
            interrupted: loaded.interrupted,
            todos: loaded.todos.len(),
        };
        self.history = loaded.history;
        self.checkpoints.turns = loaded.turns;
        self.saved.todos.set(loaded.todos);
        self.saved
            .todos_seen
            .store(self.saved.todos.version(), Ordering::SeqCst);
        self.saved.governance = loaded.governance;
        self.restore_governance();
        self.saved
            .session
            .replace(SessionLog::resume(info.path, loaded.header));
        self.context.reset();
        self.governor.set_session_id(&self.saved.session.id());
        self.governor
            .set_transcript(Some(self.saved.session.path()));
        Ok(summary)
    }

    /// `resumed session <id> (N messages) · last request: "..."`, for the user.
    pub(crate) fn resume_notice(&self, summary: &ResumeSummary) -> String {
        resume_notice(summary, &self.history)
    }

    /// A new, empty session (used by `/clear`): new file, no todos.
    pub(super) fn start_new_session(&mut self) {
        let log = new_session_log(&self.paths, &self.client.endpoint().model);
        self.saved.session.replace(log);
        self.governor.set_session_id(&self.saved.session.id());
        self.governor
            .set_transcript(Some(self.saved.session.path()));
        self.saved.todos.set(Vec::new());
        self.saved
            .todos_seen
            .store(self.saved.todos.version(), Ordering::SeqCst);
        self.saved.governance = None;
        self.context.reset();
        self.checkpoints.reset();
    }

    /// Saves the governor's role and spending in the session (after each turn).
    pub(super) fn save_governance(&self) {
        self.record_governance(serde_json::json!({
            "role": self.governor.role().name,
            "spending": self.governor.spending(),
        }));
    }

    /// Applies the governance state restored by resume: the role (when it still exists)
    /// and the spending (§9.2: spending survives `--resume`).
    fn restore_governance(&mut self) {
        let Some(state) = self.saved.governance.clone() else {
            return;
        };
        if let Some(role) = state.get("role").and_then(serde_json::Value::as_str)
            && let Err(error) = self.set_role(role)
        {
            self.sink.emit(AgentEvent::Warning {
                message: format!("cannot restore the session's role: {error}"),
            });
        }
        if let Some(spending) = state
            .get("spending")
            .and_then(|s| serde_json::from_value(s.clone()).ok())
        {
            self.governor.restore(spending);
        }
    }

    /// Connects the listed `task` tool to this agent's current parts (role, policy and
    /// tools may change between turns).
    pub(super) fn connect_task_tool(&mut self) {
        if self.tools.registry.get("task").is_some() {
            let env = Arc::new(self.child_env());
            self.tools
                .registry
                .register(Arc::new(TaskTool::with_env(env)));
        }
    }

    fn child_env(&self) -> ChildEnv {
        let mut tools = self.tools.clone();
        tools.registry.retain(|name| name != "task");
        let system_prompt = prompt::system_prompt(&self.paths.workspace, &tools.registry.names())
            + &self.prompt.memory;
        ChildEnv {
            client: self.client.clone(),
            tools,
            sink: Arc::clone(&self.sink),
            system_prompt,
            context: self.context.settings().clone(),
            workspace: self.paths.workspace.clone(),
            coach: Arc::clone(&self.coach),
            limits: LoopLimits {
                max_model_calls: MAX_CHILD_CALLS,
                repeat_limit: self.settings.repeat_limit,
            },
        }
    }
}

/// `resumed session <id> (N messages) · last request: "..."`.
fn resume_notice(summary: &ResumeSummary, history: &[Message]) -> String {
    let mut notice = format!(
        "resumed session {} ({} messages",
        summary.id, summary.messages
    );
    if summary.interrupted > 0 {
        notice.push_str(&format!(
            "; {} unfinished tool calls marked as interrupted",
            summary.interrupted
        ));
    }
    notice.push(')');
    let last_user = history
        .iter()
        .rev()
        .find(|m| m.role == Role::User && !m.is_from_harness());
    if let Some(message) = last_user {
        let text: String = message
            .text_content()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let short: String = text.chars().take(100).collect();
        let more = if text.chars().count() > 100 {
            "…"
        } else {
            ""
        };
        notice.push_str(&format!(" · last request: \"{short}{more}\""));
    }
    notice
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resume_notice_quotes_the_users_request_not_a_nudge() {
        let summary = ResumeSummary {
            id: "s1".into(),
            messages: 3,
            history_len: 3,
            interrupted: 0,
            todos: 0,
        };
        let history = vec![
            Message::user("Create   notes.txt\nwith apple"),
            Message::assistant("Run it with ```sh\ncat notes.txt\n```"),
            Message::harness(
                "<system-reminder>\nRun `cat notes.txt` yourself now\n</system-reminder>",
            ),
            Message::harness("[Handoff note: the earlier part was compacted]"),
        ];
        assert_eq!(
            resume_notice(&summary, &history),
            "resumed session s1 (3 messages) · last request: \"Create notes.txt with apple\""
        );
    }
}
