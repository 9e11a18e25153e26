//! The `write_todos` tool (SPEC §4.1) and the session's todo list.
//!
//! The list is replaced whole on every call, after validation: every item has non-empty
//! content (at most [`MAX_CONTENT_CHARS`] characters), at most [`MAX_TODOS`] items, at most
//! one `in_progress`. A rejected call leaves the list unchanged. The list lives in a
//! [`TodoStore`] shared with the agent, which shows it after each change, puts it in the
//! per-request reminder, and records it in the session file; a version number tells the
//! agent that it changed.

use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::ToolErrorKind;
use super::{Access, Args, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

/// Most items in the list.
pub(crate) const MAX_TODOS: usize = 50;
/// Longest item, in characters.
pub(crate) const MAX_CONTENT_CHARS: usize = 500;

/// State of one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// One item of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    pub(crate) content: String,
    pub(crate) status: TodoStatus,
}

/// The list shared by the tool and the agent; cheap to clone (all clones share it).
#[derive(Debug, Clone, Default)]
pub(crate) struct TodoStore {
    inner: Arc<Mutex<(Vec<Todo>, u64)>>,
}

impl TodoStore {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, (Vec<Todo>, u64)> {
        match self.inner.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub(crate) fn get(&self) -> Vec<Todo> {
        self.lock().0.clone()
    }

    /// Replaces the list and bumps the version.
    pub(crate) fn set(&self, todos: Vec<Todo>) {
        let mut guard = self.lock();
        guard.0 = todos;
        guard.1 += 1;
    }

    /// Increases on every [`TodoStore::set`].
    pub(crate) fn version(&self) -> u64 {
        self.lock().1
    }
}

/// The list as lines: `[x] done`, `[>] in progress`, `[ ] pending`.
pub(crate) fn render(todos: &[Todo]) -> String {
    todos
        .iter()
        .map(|todo| {
            let mark = match todo.status {
                TodoStatus::Pending => "[ ]",
                TodoStatus::InProgress => "[>]",
                TodoStatus::Completed => "[x]",
            };
            format!("{mark} {}", todo.content)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Checks a new list (already schema-validated JSON).
///
/// # Errors
/// A [`ToolError`] (`invalid todos`) naming the item and the fix.
pub(crate) fn validate(value: &serde_json::Value) -> Result<Vec<Todo>, ToolError> {
    let invalid = |message: String| ToolError::new(ToolErrorKind::InvalidTodos, message);
    let todos: Vec<Todo> = serde_json::from_value(value.clone())
        .map_err(|e| invalid(format!("{e}; send a list of {{content, status}} items")))?;
    if todos.len() > MAX_TODOS {
        return Err(invalid(format!(
            "{} items is more than {MAX_TODOS}; merge small steps",
            todos.len()
        )));
    }
    for (i, todo) in todos.iter().enumerate() {
        if todo.content.trim().is_empty() {
            return Err(invalid(format!(
                "todos[{i}].content is empty; describe each item in a few words"
            )));
        }
        if todo.content.chars().count() > MAX_CONTENT_CHARS {
            return Err(invalid(format!(
                "todos[{i}].content is longer than {MAX_CONTENT_CHARS} characters; keep items short"
            )));
        }
    }
    let active: Vec<String> = todos
        .iter()
        .enumerate()
        .filter(|(_, t)| t.status == TodoStatus::InProgress)
        .map(|(i, _)| format!("todos[{i}]"))
        .collect();
    if active.len() > 1 {
        return Err(invalid(format!(
            "{} items are in_progress ({}); mark at most one as in_progress",
            active.len(),
            active.join(", ")
        )));
    }
    Ok(todos
        .into_iter()
        .map(|t| Todo {
            content: t.content.trim().to_string(),
            status: t.status,
        })
        .collect())
}

/// `write_todos(todos)`.
pub(crate) struct WriteTodosTool {
    spec: ToolSpec,
    store: TodoStore,
}

impl WriteTodosTool {
    pub(crate) fn new(store: TodoStore) -> Self {
        Self {
            spec: ToolSpec {
                name: "write_todos",
                description: "Replace the todo list (plan multi-step work; one in_progress at a time).",
                parameters: json!({
                    "type": "object",
                    "properties": {"todos": {"type": "array", "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                        },
                        "required": ["content", "status"]
                    }}},
                    "required": ["todos"]
                }),
            },
            store,
        }
    }
}

impl Tool for WriteTodosTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, _: &Args, _: &ToolContext<'_>) -> Result<Access, ToolError> {
        Ok(Access::None)
    }

    fn run(&self, args: &Args, _: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let todos = validate(args.get("todos").unwrap_or(&serde_json::Value::Null))?;
        let text = if todos.is_empty() {
            "Todo list cleared.".to_string()
        } else {
            format!("Todo list updated:\n{}", render(&todos))
        };
        self.store.set(todos);
        Ok(ToolOutput::text(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn item(content: &str, status: &str) -> serde_json::Value {
        json!({"content": content, "status": status})
    }

    #[test]
    fn valid_list_is_trimmed_and_rendered() {
        let todos = validate(&json!([
            item(" a ", "completed"),
            item("b", "in_progress"),
            item("c", "pending")
        ]));
        assert_eq!(
            todos.as_ref().map(|t| render(t)),
            Ok("[x] a\n[>] b\n[ ] c".to_string())
        );
    }

    #[test]
    fn validation_errors_name_the_item() {
        let message = |value| {
            validate(&value)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert_eq!(
            message(json!([item("a", "in_progress"), item("b", "in_progress")])),
            "invalid todos: 2 items are in_progress (todos[0], todos[1]); mark at most one as in_progress"
        );
        assert_eq!(
            message(json!([item("a", "pending"), item("  ", "pending")])),
            "invalid todos: todos[1].content is empty; describe each item in a few words"
        );
        let many: Vec<serde_json::Value> =
            (0..51).map(|i| item(&i.to_string(), "pending")).collect();
        assert_eq!(
            message(json!(many)),
            "invalid todos: 51 items is more than 50; merge small steps"
        );
    }

    #[test]
    fn store_versions_changes() {
        let store = TodoStore::new();
        let shared = store.clone();
        assert_eq!(store.version(), 0);
        shared.set(vec![Todo {
            content: "x".into(),
            status: TodoStatus::Pending,
        }]);
        assert_eq!(store.version(), 1);
        assert_eq!(store.get().len(), 1);
    }
}
