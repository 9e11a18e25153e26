//! A tool of an MCP server as the dispatcher sees it: a [`Tool`] named
//! `mcp__<server>__<tool>` whose arguments are checked by [`ArgumentSchema`], which the
//! permission rules rate by name ([`Access::Opaque`]), and whose call goes to the server.
//!
//! [`ToolSpec`] holds `&'static str` (the built-in tools' texts are static). The names and
//! descriptions of MCP tools are interned for the life of the process by [`Interner`]: each
//! distinct text is stored once, so a server's restart adds nothing.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, Weak};

use serde_json::Value;

use super::connection::RemoteTool;
use super::content::Rendered;
use super::schema::ArgumentSchema;
use crate::cancel::CancelToken;
use crate::tools::schema::SchemaError;
use crate::tools::{
    Access, Args, Tool, ToolContext, ToolError, ToolErrorKind, ToolOutput, ToolSpec,
};

/// Longest description offered to the model, in characters; longer ones are cut with `…`.
const MAX_DESCRIPTION: usize = 2_000;

/// Process-lifetime storage for the texts of MCP tool specs.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    texts: Mutex<HashSet<&'static str>>,
}

impl Interner {
    /// The stored copy of `text`, stored now if it is new.
    pub(crate) fn intern(&self, text: &str) -> &'static str {
        let mut texts = match self.texts.lock() {
            Ok(texts) => texts,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(stored) = texts.get(text) {
            return stored;
        }
        let stored: &'static str = Box::leak(text.to_string().into_boxed_str());
        texts.insert(stored);
        stored
    }
}

/// What a tool needs of the server it belongs to: the call ([`super::server::Server`]
/// implements it, restarting a stopped server first).
pub(crate) trait Remote: Send + Sync {
    /// Calls the server's tool `name` with `args`.
    fn call<'a>(
        &'a self,
        name: &'a str,
        args: Args,
        cancel: &'a CancelToken,
    ) -> Pin<Box<dyn Future<Output = Result<Rendered, ToolError>> + 'a>>;
}

/// One tool of one server.
pub(crate) struct McpTool {
    spec: ToolSpec,
    /// The server's own name for the tool.
    remote: String,
    schema: ArgumentSchema,
    /// Weak: the server owns its tools.
    server: Weak<dyn Remote>,
}

impl McpTool {
    /// The tool `remote` of server `server_name`, offered as `offered`.
    pub(crate) fn new(
        interner: &Interner,
        offered: &str,
        remote: &RemoteTool,
        server_name: &str,
        server: Weak<dyn Remote>,
    ) -> Self {
        let description = match remote.description.as_deref().map(str::trim) {
            Some(text) if !text.is_empty() => cut(text, MAX_DESCRIPTION),
            _ => format!("Tool `{}` of the MCP server `{server_name}`.", remote.name),
        };
        Self {
            spec: ToolSpec {
                name: interner.intern(offered),
                description: interner.intern(&description),
                parameters: offered_schema(&remote.input_schema),
            },
            remote: remote.name.clone(),
            schema: ArgumentSchema::new(&remote.input_schema),
            server,
        }
    }
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn validate(&self, args: Args) -> Result<Args, SchemaError> {
        self.schema.check(args)
    }

    fn access(&self, args: &Args, _: &ToolContext<'_>) -> Result<Access, ToolError> {
        Ok(Access::Opaque(Value::Object(args.clone()).to_string()))
    }

    fn run(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let server = self.server.upgrade().ok_or_else(|| {
            ToolError::new(ToolErrorKind::Unavailable, "the MCP server was shut down")
        })?;
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|e| ToolError::new(ToolErrorKind::Unavailable, e.to_string()))?;
        let rendered = tokio::task::block_in_place(|| {
            handle.block_on(server.call(&self.remote, args.clone(), ctx.cancel))
        })?;
        if rendered.is_error {
            return Err(ToolError::new(ToolErrorKind::ToolFailed, rendered.text));
        }
        Ok(ToolOutput::text(rendered.text))
    }
}

/// The schema offered to the model: the server's, as an object schema with `properties`
/// (some endpoints reject an object schema without them), without `$schema`.
fn offered_schema(schema: &Value) -> Value {
    let mut schema = match schema {
        Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    schema.remove("$schema");
    schema
        .entry("type")
        .or_insert_with(|| Value::String("object".into()));
    schema
        .entry("properties")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    Value::Object(schema)
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn interning_stores_each_text_once() {
        let interner = Interner::default();
        let a = interner.intern("mcp__a__b");
        let b = interner.intern(&String::from("mcp__a__b"));
        assert!(std::ptr::eq(a, b));
    }

    #[test]
    fn offered_schemas_are_object_schemas() {
        assert_eq!(
            offered_schema(&json!({"$schema": "http://json-schema.org/draft-07/schema#"})),
            json!({"type": "object", "properties": {}})
        );
        let full = json!({"type": "object", "properties": {"a": {"type": "string"}},
            "required": ["a"], "additionalProperties": false});
        assert_eq!(offered_schema(&full), full);
    }

    /// A server that is gone: specs never call it.
    struct Gone;

    impl Remote for Gone {
        fn call<'a>(
            &'a self,
            _: &'a str,
            _: Args,
            _: &'a CancelToken,
        ) -> Pin<Box<dyn Future<Output = Result<Rendered, ToolError>> + 'a>> {
            Box::pin(async { Err(ToolError::new(ToolErrorKind::Unavailable, "gone")) })
        }
    }

    #[test]
    fn specs_keep_descriptions_and_name_the_server_without_one() {
        let interner = Interner::default();
        let remote = RemoteTool {
            name: "echo".into(),
            description: None,
            input_schema: json!({"type": "object"}),
        };
        let tool = McpTool::new(&interner, "mcp__t__echo", &remote, "t", Weak::<Gone>::new());
        assert_eq!(tool.spec().name, "mcp__t__echo");
        assert_eq!(
            tool.spec().description,
            "Tool `echo` of the MCP server `t`."
        );
        let long = RemoteTool {
            description: Some("x".repeat(3000)),
            ..remote
        };
        let tool = McpTool::new(&interner, "mcp__t__echo", &long, "t", Weak::<Gone>::new());
        assert_eq!(tool.spec().description.chars().count(), MAX_DESCRIPTION + 1);
    }
}
