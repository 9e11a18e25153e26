//! What a session knows beyond its history: AGENTS.md instructions, the skills, and the todo
//! list, loaded once at start and handed to the agent together with the tools that use them.

use std::sync::Arc;

use super::commands::Commands;
use super::instructions::{AGENTS_MD_CAP, Instructions, system_prompt_sections};
use super::skill_tool::ReadSkillTool;
use super::skills::Skills;
use crate::config::Paths;
use crate::tools::Registry;
use crate::tools::todos::{TodoStore, WriteTodosTool};

/// The session's instructions, skills, custom commands and todo list.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    pub(crate) instructions: Instructions,
    pub(crate) skills: Arc<Skills>,
    /// Custom slash commands (and the skills, as `/name`).
    pub(crate) commands: Arc<Commands>,
    pub(crate) todos: TodoStore,
    /// Problems found while loading (cut or unreadable files), for the user.
    pub(crate) warnings: Vec<String>,
}

impl Memory {
    /// AGENTS.md files and skills of `$AGENT_HOME`, the workspace and the working directory.
    pub fn load(paths: &Paths) -> Self {
        let (instructions, mut warnings) = Instructions::load(
            &paths.agent_home,
            &paths.workspace,
            &paths.cwd,
            AGENTS_MD_CAP,
        );
        let (skills, skill_warnings) = Skills::discover(&paths.workspace, &paths.agent_home);
        warnings.extend(skill_warnings);
        let skills = Arc::new(skills);
        let (commands, command_warnings) =
            Commands::discover(&paths.workspace, &paths.agent_home, Arc::clone(&skills));
        warnings.extend(command_warnings);
        Self {
            instructions,
            commands: Arc::new(commands),
            skills,
            todos: TodoStore::new(),
            warnings,
        }
    }

    /// Adds `read_skill` (when there are skills) and `write_todos` to `registry`.
    pub(crate) fn register_tools(&self, registry: &mut Registry) {
        if !self.skills.is_empty() {
            registry.register(Arc::new(ReadSkillTool::new(Arc::clone(&self.skills))));
        }
        registry.register(Arc::new(WriteTodosTool::new(self.todos.clone())));
    }

    /// The text appended to the base system prompt (AGENTS.md, then the skills listing).
    pub(crate) fn prompt_sections(&self) -> String {
        system_prompt_sections(&self.instructions, &self.skills)
    }
}
