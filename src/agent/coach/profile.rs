//! The request a small model gets (coach on): fewer tools, a shorter system prompt with one
//! worked example of a call, and a bound on the reply's length.
//!
//! A 1.5B model reads the prompt at about 70 tokens/s and writes at 6–14 tokens/s. It uses
//! four tools well; offered `task` it hands the whole request to a subagent, offered
//! `write_todos` it plans instead of working. A reply that runs on without a call (2,000+
//! tokens, minutes) is cut at [`MAX_REPLY_TOKENS`], which still fits a whole-file
//! `write_file` of a small script. With the coach off none of this applies: the request is
//! sent as the loop built it.

use std::path::Path;

use crate::model::{ChatRequest, Role};

/// The tools offered to a small model, in this order of preference.
pub(crate) const SMALL_MODEL_TOOLS: &[&str] = &["bash", "read_file", "write_file", "str_replace"];

/// Short descriptions of [`SMALL_MODEL_TOOLS`] for a small model (the schemas stay as
/// they are; the full descriptions cost about 550 bytes of a 3 KB request).
const SHORT_DESCRIPTIONS: &[(&str, &str)] = &[
    (
        "bash",
        "Run a shell command in the workspace; returns its output and exit code.",
    ),
    ("read_file", "Read a text file; returns numbered lines."),
    (
        "write_file",
        "Create a file, or overwrite a file you have read, with all of its content.",
    ),
    (
        "str_replace",
        "Change part of a file you have read: replace old_str (exact, unique) with new_str.",
    ),
];

/// `max_tokens` of a small model's request, in tokens.
pub(crate) const MAX_REPLY_TOKENS: u32 = 1_536;

/// The tools of `offered` a small model gets.
pub(crate) fn small_tools<'a>(offered: &[&'a str]) -> Vec<&'a str> {
    offered
        .iter()
        .copied()
        .filter(|name| SMALL_MODEL_TOOLS.contains(name))
        .collect()
}

/// The system prompt for a small model in `workspace`, offered `tools`: what to do, where,
/// one call in the `<tool_call>` JSON form Qwen-family models are trained on, and the few
/// rules that matter most.
pub(crate) fn small_system_prompt(workspace: &Path, tools: &[&str]) -> String {
    format!(
        "You are agent, a coding assistant. The workspace is {workspace} (the current \
         directory): use paths relative to it, like `hello.py`.\n\
         Do the user's task yourself with your tools ({tools}). If they ask you to show, tell \
         or explain something, or not to run it, just answer.\n\
         To use a tool, reply with only the call and wait for its result. Example, creating a \
         file:\n\
         <tool_call>\n\
         {{\"name\": \"write_file\", \"arguments\": {{\"path\": \"hello.py\", \"content\": \
         \"print('hello')\\n\"}}}}\n\
         </tool_call>\n\
         Read a file before you change it; change part of it with str_replace. After a \
         change, run it with bash and fix what fails. When done, answer in one or two \
         sentences.",
        workspace = workspace.display(),
        tools = tools.join(", "),
    )
}

/// Shapes `request` for a small model in `workspace`: the tools cut to
/// [`SMALL_MODEL_TOOLS`], the base system prompt (`base`, built by the caller for the full
/// tool list) replaced by [`small_system_prompt`] while what follows it (AGENTS.md, skills)
/// stays, the tools' descriptions shortened, and `max_tokens` set to [`MAX_REPLY_TOKENS`].
pub(crate) fn shape(request: &mut ChatRequest, workspace: &Path) {
    let all: Vec<&str> = request.tools.iter().map(|t| t.name).collect();
    let base = crate::agent::prompt::system_prompt(workspace, &all);
    request
        .tools
        .retain(|tool| SMALL_MODEL_TOOLS.contains(&tool.name));
    for tool in &mut request.tools {
        if let Some((_, short)) = SHORT_DESCRIPTIONS.iter().find(|(n, _)| *n == tool.name) {
            tool.description = short;
        }
    }
    let kept: Vec<&str> = request.tools.iter().map(|t| t.name).collect();
    if let Some(system) = request
        .messages
        .first_mut()
        .filter(|m| m.role == Role::System)
        && let Some(text) = system.content.as_mut()
        && let Some(memory) = text.strip_prefix(&base)
    {
        *text = format!("{}{memory}", small_system_prompt(workspace, &kept));
    }
    request.max_tokens = Some(MAX_REPLY_TOKENS);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, ToolSpec};

    fn spec(name: &'static str) -> ToolSpec {
        ToolSpec {
            name,
            description: "d",
            parameters: serde_json::json!({}),
        }
    }

    #[test]
    fn the_request_is_cut_down_and_bounded() {
        let workspace = Path::new("/w");
        let names = [
            "bash",
            "read_file",
            "write_file",
            "str_replace",
            "task",
            "write_todos",
        ];
        let base = crate::agent::prompt::system_prompt(workspace, &names);
        let mut request = ChatRequest {
            messages: vec![
                Message::system(format!("{base}\n\n# AGENTS.md\nuse tabs")),
                Message::user("hi"),
            ],
            tools: names.iter().map(|n| spec(n)).collect(),
            max_tokens: None,
        };
        shape(&mut request, workspace);
        let kept: Vec<&str> = request.tools.iter().map(|t| t.name).collect();
        assert_eq!(kept, ["bash", "read_file", "write_file", "str_replace"]);
        assert_eq!(request.max_tokens, Some(MAX_REPLY_TOKENS));
        let system = request.messages[0].text_content();
        assert!(system.starts_with("You are agent, a coding assistant. The workspace is /w"));
        assert!(system.ends_with("\n\n# AGENTS.md\nuse tabs"), "memory kept");
        assert!(!system.contains("write_todos"), "{system}");
        assert!(
            system.len() < base.len(),
            "{} vs {}",
            system.len(),
            base.len()
        );
        // The worked example is a call the readers take.
        let example = system
            .split("<tool_call>")
            .nth(1)
            .and_then(|rest| rest.split("</tool_call>").next())
            .unwrap_or_default();
        let calls = super::super::lenient::extract(example, &kept).unwrap_or_default();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "write_file");
    }
}
