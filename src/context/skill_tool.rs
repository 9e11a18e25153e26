//! The `read_skill` tool (SPEC §4.1, §8.2): the instructions of one skill, read from its
//! `SKILL.md` at call time. An unknown name is an error listing the available skills.

use std::sync::Arc;

use serde_json::json;

use super::skills::{SkillError, Skills};
use crate::tools::ToolErrorKind;
use crate::tools::{Access, Args, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

/// `read_skill(name)`.
pub(crate) struct ReadSkillTool {
    spec: ToolSpec,
    skills: Arc<Skills>,
}

impl ReadSkillTool {
    pub(crate) fn new(skills: Arc<Skills>) -> Self {
        Self {
            spec: ToolSpec {
                name: "read_skill",
                description: "Load a skill's instructions by name (skills are listed in the system prompt).",
                parameters: json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                }),
            },
            skills,
        }
    }
}

impl Tool for ReadSkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &Args, _: &ToolContext<'_>) -> Result<Access, ToolError> {
        Ok(Access::None)
    }

    fn run(&self, args: &Args, _: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let name = args.get("name").and_then(|v| v.as_str()).unwrap_or("");
        match self.skills.body(name) {
            Ok((body, skill)) => {
                let folder = skill
                    .path
                    .parent()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                Ok(ToolOutput::text(format!(
                    "Skill `{}` (files in {folder}):\n\n{body}",
                    skill.name
                )))
            }
            Err(error @ SkillError::NotFound { .. }) => {
                Err(ToolError::new(ToolErrorKind::NotFound, error.to_string()))
            }
            Err(error) => Err(ToolError::new(ToolErrorKind::Io, error.to_string())),
        }
    }
}
