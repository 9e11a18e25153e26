//! A small MCP server for the tests of the agent's MCP client (issue 17), built with the
//! server side of `rmcp`. Not part of the agent.
//!
//! ```text
//! mcp_test_server --stdio [OPTIONS]   serve on stdin/stdout
//! mcp_test_server --http [OPTIONS]    serve streamable HTTP on 127.0.0.1 (a free port);
//!                                      the first line on stdout is the URL
//! OPTIONS:
//!   --marks DIR        write marker files there: `pid`, `started-<tool>`, `cancelled-<tool>`,
//!                      `cancel-reason` (of the last `notifications/cancelled`),
//!                      `grandchild.pid`, `starts` (one line per start), `headers` (HTTP:
//!                      the last request's `Authorization` and `X-Team`)
//!   --slow-start SECS  wait that long before serving
//!   --fail-start       print an error to stderr and exit 3 before serving
//! ```
//!
//! Tools: `echo` {text}, `add` {a, b: integers}, `lookup` {code: three capitals, by
//! `pattern`, no other field}, `fail` (an `isError` result), `crash` (the process exits),
//! `slow` {seconds} (waits, or stops when cancelled), `huge` {bytes} (that much text),
//! `media` (an image and a resource link), `spawn_grandchild` (starts `sleep 1000`),
//! `weird.name/with spaces` and a tool with an 80-character name.

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    ContentBlock, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

const LONG_NAME: &str =
    "a_tool_whose_name_is_much_too_long_for_openai_compatible_endpoints_to_accept_it";

#[derive(Clone)]
struct TestServer {
    marks: Option<PathBuf>,
}

impl TestServer {
    /// Writes a marker file whole (through a rename), so a reader never sees it half
    /// written.
    fn mark(&self, name: &str, text: &str) {
        if let Some(dir) = &self.marks {
            let partial = dir.join(format!(".{name}.partial"));
            if std::fs::write(&partial, text).is_ok() {
                let _ = std::fs::rename(&partial, dir.join(name));
            }
        }
    }
}

fn tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    let Value::Object(schema) = schema else {
        unreachable!("schemas are objects")
    };
    Tool::new(name, description, Arc::new(schema))
}

fn tools() -> Vec<Tool> {
    let none = json!({"type": "object", "properties": {}});
    vec![
        tool(
            "echo",
            "Echo the given text back.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        ),
        tool(
            "add",
            "Add two integers.",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
        ),
        tool(
            "lookup",
            "Look up a three-letter code.",
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                "properties": {"code": {"$ref": "#/$defs/code"}}, "required": ["code"],
                "additionalProperties": false,
                "$defs": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}),
        ),
        tool("fail", "Always fails.", none.clone()),
        tool("crash", "Makes the server exit.", none.clone()),
        tool(
            "slow",
            "Waits the given number of seconds.",
            json!({"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]}),
        ),
        tool(
            "huge",
            "Returns that many bytes of text.",
            json!({"type": "object", "properties": {"bytes": {"type": "integer"}}, "required": ["bytes"]}),
        ),
        tool(
            "media",
            "Returns an image and a resource link.",
            none.clone(),
        ),
        tool(
            "spawn_grandchild",
            "Starts a long-running child process.",
            none.clone(),
        ),
        tool(
            "weird.name/with spaces",
            "A name OpenAI would reject.",
            none.clone(),
        ),
        tool(LONG_NAME, "A name longer than 64 characters.", none),
    ]
}

fn text(text: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mcp-test-server", "1.0.0"))
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        self.mark(
            "cancel-reason",
            notification.reason.as_deref().unwrap_or("(none)"),
        );
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let name = request.name.to_string();
        self.mark(&format!("started-{name}"), "");
        match name.as_str() {
            "echo" => text(format!("echo: {}", args["text"].as_str().unwrap_or("?"))),
            "add" => {
                let (a, b) = (args["a"].as_i64(), args["b"].as_i64());
                match (a, b) {
                    (Some(a), Some(b)) => text((a + b).to_string()),
                    _ => Err(ErrorData::invalid_params("a and b must be integers", None)),
                }
            }
            "lookup" => text(format!(
                "{} is a fine code",
                args["code"].as_str().unwrap_or("?")
            )),
            "fail" => {
                Ok(CallToolResult::error(vec![ContentBlock::text("the thing failed")]).into())
            }
            "crash" => {
                eprintln!("crashing now, as asked");
                std::process::exit(1);
            }
            "slow" => {
                let seconds = args["seconds"].as_f64().unwrap_or(1.0);
                tokio::select! {
                    () = context.ct.cancelled() => {
                        self.mark("cancelled-slow", "");
                        text("cancelled")
                    }
                    () = tokio::time::sleep(Duration::from_secs_f64(seconds)) => text("done"),
                }
            }
            "huge" => {
                let bytes = args["bytes"].as_u64().unwrap_or(0);
                text("x".repeat(usize::try_from(bytes).unwrap_or(0)))
            }
            "media" => Ok(CallToolResult::success(vec![
                ContentBlock::image("aGVsbG8gd29ybGQh", "image/png"),
                ContentBlock::text("and a picture"),
            ])
            .into()),
            "spawn_grandchild" => {
                let child = std::process::Command::new("sleep").arg("1000").spawn();
                match child {
                    Ok(child) => {
                        self.mark("grandchild.pid", &child.id().to_string());
                        std::mem::forget(child);
                        text("started")
                    }
                    Err(e) => {
                        Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]).into())
                    }
                }
            }
            other if other == LONG_NAME || other == "weird.name/with spaces" => {
                text(format!("called {other}"))
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

struct Options {
    http: bool,
    marks: Option<PathBuf>,
    slow_start: Option<f64>,
    fail_start: bool,
}

fn options() -> Options {
    let mut options = Options {
        http: false,
        marks: None,
        slow_start: None,
        fail_start: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stdio" => options.http = false,
            "--http" => options.http = true,
            "--marks" => options.marks = args.next().map(PathBuf::from),
            "--slow-start" => options.slow_start = args.next().and_then(|s| s.parse().ok()),
            "--fail-start" => options.fail_start = true,
            other => {
                eprintln!("mcp_test_server: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    options
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = options();
    let server = TestServer {
        marks: options.marks.clone(),
    };
    server.mark("pid", &std::process::id().to_string());
    if let Some(dir) = &options.marks {
        use std::io::Write;
        let mut starts = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("starts"))?;
        writeln!(starts, "start")?;
    }
    if options.fail_start {
        eprintln!("boom: cannot open the database at /nowhere/db.sqlite");
        std::process::exit(3);
    }
    if let Some(seconds) = options.slow_start {
        tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    }
    if options.http {
        serve_http(server).await
    } else {
        server
            .serve(rmcp::transport::stdio())
            .await?
            .waiting()
            .await?;
        Ok(())
    }
}

async fn serve_http(server: TestServer) -> Result<(), Box<dyn std::error::Error>> {
    let marks = server.marks.clone();
    let service: StreamableHttpService<TestServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("http://{}/mcp", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let (service, marks) = (service.clone(), marks.clone());
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request: hyper::Request<_>| {
                let service = service.clone();
                if let Some(dir) = &marks {
                    let header = |name: &str| {
                        request
                            .headers()
                            .get(name)
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("-")
                            .to_string()
                    };
                    let seen = format!("{} {}\n", header("authorization"), header("x-team"));
                    let partial = dir.join(".headers.partial");
                    if std::fs::write(&partial, seen).is_ok() {
                        let _ = std::fs::rename(&partial, dir.join("headers"));
                    }
                }
                async move { Ok::<_, Infallible>(service.handle(request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                .await;
        });
    }
}
