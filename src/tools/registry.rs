//! The tools offered in a session, in a fixed order (the serialized tool list must stay
//! byte-identical between requests so provider prompt caches keep working).
//!
//! Besides the tools registered up front, a [`ToolSource`] may add tools while the session
//! runs (MCP servers that become ready after the prompt appeared): they follow the registered
//! tools, in the source's own stable order, from the first request after they joined.

use std::sync::Arc;

use super::{Tool, ToolSpec};

/// Tools that join while the session runs.
pub trait ToolSource: Send + Sync {
    /// The tools offered now, in a stable order. A name a registered tool already has is
    /// ignored.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
}

/// Which tools are hidden (role tool policy, §9.1), by name.
type HideRule = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// An ordered set of tools with unique names.
#[derive(Clone, Default)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    sources: Vec<Arc<dyn ToolSource>>,
    /// Tools that stay callable but are not offered (role tool policy, §9.1): left out of
    /// [`Registry::names`] and [`Registry::specs`], still found by [`Registry::get`] so a call
    /// to one reaches the policy check and gets its `Blocked by policy` answer. A rule rather
    /// than a list, so it also covers tools a source adds later.
    hidden: Option<HideRule>,
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

    /// Adds the tools of `source` after the registered ones (and after earlier sources).
    pub fn add_source(&mut self, source: Arc<dyn ToolSource>) {
        self.sources.push(source);
    }

    /// Keeps only the registered tools for which `keep` returns true.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.tools.retain(|t| keep(t.spec().name));
    }

    /// Hides exactly the tools for which `hide` returns true (replacing what was hidden),
    /// including tools a source adds later.
    pub fn set_hidden(&mut self, hide: impl Fn(&str) -> bool + Send + Sync + 'static) {
        self.hidden = Some(Arc::new(hide));
    }

    /// Every tool: the registered ones, then those of the sources.
    fn all(&self) -> Vec<Arc<dyn Tool>> {
        let mut all = self.tools.clone();
        for source in &self.sources {
            for tool in source.tools() {
                if !all.iter().any(|t| t.spec().name == tool.spec().name) {
                    all.push(tool);
                }
            }
        }
        all
    }

    fn offered(&self) -> impl Iterator<Item = Arc<dyn Tool>> {
        let hidden = self.hidden.clone();
        self.all()
            .into_iter()
            .filter(move |t| !hidden.as_ref().is_some_and(|hide| hide(t.spec().name)))
    }

    /// Any tool, hidden or not.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if let Some(tool) = self.tools.iter().find(|t| t.spec().name == name) {
            return Some(Arc::clone(tool));
        }
        self.sources
            .iter()
            .find_map(|source| source.tools().into_iter().find(|t| t.spec().name == name))
    }

    /// Names of the offered (not hidden) tools.
    pub fn names(&self) -> Vec<&'static str> {
        self.offered().map(|t| t.spec().name).collect()
    }

    /// Specs of the offered tools in registration order, for the request's `tools`.
    pub(crate) fn specs(&self) -> Vec<ToolSpec> {
        self.offered().map(|t| t.spec().clone()).collect()
    }
}
