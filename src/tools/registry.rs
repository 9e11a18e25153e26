//! The tools offered in a session, in a fixed order (the serialized tool list must stay
//! byte-identical between requests so provider prompt caches keep working).

use std::sync::Arc;

use super::{Tool, ToolSpec};

/// An ordered set of tools with unique names.
#[derive(Clone, Default)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    /// Tools that stay callable but are not offered (role tool policy, §9.1): left out of
    /// [`Registry::names`] and [`Registry::specs`], still found by [`Registry::get`] so a call
    /// to one reaches the policy check and gets its `Blocked by policy` answer.
    hidden: Vec<&'static str>,
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
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.tools.retain(|t| keep(t.spec().name));
    }

    /// Hides exactly the tools for which `hide` returns true (replacing what was hidden).
    pub(crate) fn set_hidden(&mut self, mut hide: impl FnMut(&str) -> bool) {
        self.hidden = self
            .tools
            .iter()
            .map(|t| t.spec().name)
            .filter(|name| hide(name))
            .collect();
    }

    fn offered(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools
            .iter()
            .filter(|t| !self.hidden.contains(&t.spec().name))
    }

    /// Any registered tool, hidden or not.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.spec().name == name)
    }

    /// Names of the offered (not hidden) tools.
    pub(crate) fn names(&self) -> Vec<&'static str> {
        self.offered().map(|t| t.spec().name).collect()
    }

    /// Specs of the offered tools in registration order, for the request's `tools`.
    pub(crate) fn specs(&self) -> Vec<ToolSpec> {
        self.offered().map(|t| t.spec().clone()).collect()
    }
}
