//! The tools offered in a session, in a fixed order (the serialized tool list must stay
//! byte-identical between requests so provider prompt caches keep working).

use std::sync::Arc;

use super::{Tool, ToolSpec};

/// An ordered set of tools with unique names.
#[derive(Clone, Default)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in tools of this version: `bash`, `read_file`, `write_file`, `str_replace`.
    pub fn builtin() -> Self {
        let mut registry = Self::new();
        registry.register(Arc::new(super::bash::BashTool::new()));
        registry.register(Arc::new(super::files::ReadFileTool::new()));
        registry.register(Arc::new(super::files::WriteFileTool::new()));
        registry.register(Arc::new(super::edit::StrReplaceTool::new()));
        registry
    }

    /// Adds `tool`, replacing a tool of the same name in place.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.spec().name;
        match self.tools.iter().position(|t| t.spec().name == name) {
            Some(at) => self.tools[at] = tool,
            None => self.tools.push(tool),
        }
    }

    /// Keeps only the tools for which `keep` returns true (role tool policy).
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.tools.retain(|t| keep(t.spec().name));
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.spec().name == name)
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.spec().name).collect()
    }

    /// Specs in registration order, for the request's `tools`.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec().clone()).collect()
    }
}
