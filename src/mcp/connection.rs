//! The MCP protocol itself, through the `rmcp` crate. Every `rmcp` type used by the agent
//! is in this file: `rmcp` releases often, and an upgrade should touch nothing else.
//!
//! What leaves this file is plain data: tools as [`RemoteTool`] (name, description, input
//! schema as JSON) and results as the JSON of MCP's `CallToolResult`, read by
//! [`super::content`]. A [`Caller`] makes calls; one abandoned before its answer (Ctrl-C,
//! timeout) is cancelled on the server with `notifications/cancelled`.

use super::McpError;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    Implementation, ServerResult,
};
use rmcp::service::{ClientInitializeError, PeerRequestOptions, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::SseRetryPolicy;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::{Peer, ServiceError, ServiceExt};
use serde_json::Value;
use tokio::process::{ChildStdin, ChildStdout};

use crate::tools::Args;

/// A tool as the server lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RemoteTool {
    /// The server's own name for it.
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    /// The JSON Schema of its arguments (an object schema).
    pub(crate) input_schema: Value,
}

/// Why a call was abandoned before its answer; the server is told
/// (`notifications/cancelled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The user pressed Ctrl-C.
    Interrupted,
    /// `tool_timeout_sec` passed.
    TimedOut,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Called {
    /// The server answered (the JSON of MCP's `CallToolResult`) or the request failed.
    Answer(Result<Value, RequestError>),
    /// Abandoned, and the cancellation was sent.
    Stopped(Stop),
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RequestError {
    /// The server answered with an error (unknown tool, invalid arguments, its own failure);
    /// the connection is fine.
    Server(String),
    /// The connection is gone: the server exited or the endpoint stopped answering.
    Closed(String),
}

/// An open connection to one server.
pub(crate) struct Connection {
    service: RunningService<RoleClient, ClientConfig>,
}

/// Makes calls on a connection; cheap to clone, usable while the connection lives.
#[derive(Clone)]
pub(crate) struct Caller {
    peer: Peer<RoleClient>,
}

/// Who we are, in `initialize`.
fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("agent", env!("CARGO_PKG_VERSION")),
    )
}

impl Connection {
    /// Initializes a session over the stdio pipes of a started server.
    ///
    /// # Errors
    /// What went wrong, in a few words (the server closed the pipe, answered nonsense).
    pub(crate) async fn over_pipes(
        stdout: ChildStdout,
        stdin: ChildStdin,
    ) -> Result<Self, McpError> {
        let service = client_config()
            .serve((stdout, stdin))
            .await
            .map_err(init_error)?;
        Ok(Self { service })
    }

    /// Initializes a session with a streamable HTTP endpoint.
    ///
    /// # Errors
    /// What went wrong: a header that is not valid, the endpoint unreachable or refusing.
    pub(crate) async fn over_http(
        url: &str,
        headers: &[(String, String)],
        bearer_token: Option<&str>,
    ) -> Result<Self, McpError> {
        let mut custom = HashMap::new();
        for (name, value) in headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("`{name}` is not a valid HTTP header name"))?;
            let value = reqwest::header::HeaderValue::from_str(value)
                .map_err(|_| format!("the value of the header `{name}` is not valid"))?;
            custom.insert(name, value);
        }
        let mut config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
        config.retry_config = Arc::new(Reconnect);
        if let Some(token) = bearer_token {
            config = config.auth_header(token);
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        let service = client_config().serve(transport).await.map_err(init_error)?;
        Ok(Self { service })
    }

    /// Every tool the server offers (all pages).
    ///
    /// # Errors
    /// A [`RequestError`].
    pub(crate) async fn list_tools(&self) -> Result<Vec<RemoteTool>, RequestError> {
        let tools = self.service.list_all_tools().await.map_err(request_error)?;
        Ok(tools
            .iter()
            .filter_map(|tool| serde_json::to_value(tool).ok())
            .map(|json| RemoteTool {
                name: json["name"].as_str().unwrap_or_default().to_string(),
                description: json["description"]
                    .as_str()
                    .or_else(|| json["title"].as_str())
                    .map(str::to_string),
                input_schema: json
                    .get("inputSchema")
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({"type": "object"})),
            })
            .collect())
    }

    pub(crate) fn caller(&self) -> Caller {
        Caller {
            peer: self.service.peer().clone(),
        }
    }

    /// Whether the connection has ended (the server went away).
    pub(crate) fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    /// Ends the session: for stdio the server's stdin is closed; for HTTP the session is
    /// deleted. Waits at most `wait`.
    pub(crate) async fn close(mut self, wait: Duration) {
        let _ = self.service.close_with_timeout(wait).await;
    }
}

impl Caller {
    /// Calls `tool` (the server's own name) with `args` until the server answers or `stop`
    /// resolves; then `notifications/cancelled` is sent, and awaited, before this returns (so
    /// it reaches the server even when the agent exits right after).
    pub(crate) async fn call(
        &self,
        tool: &str,
        args: Args,
        stop: impl std::future::Future<Output = Stop>,
    ) -> Called {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let sent = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await;
        let mut handle = match sent {
            Ok(handle) => handle,
            Err(error) => return Called::Answer(Err(request_error(error))),
        };
        tokio::select! {
            answer = &mut handle.rx => Called::Answer(match answer {
                Ok(Ok(result)) => call_result(&result),
                Ok(Err(error)) => Err(request_error(error)),
                Err(_) => Err(RequestError::Closed("the connection closed".into())),
            }),
            stop = stop => {
                let reason = match stop {
                    Stop::Interrupted => "interrupted by the user",
                    Stop::TimedOut => "timed out",
                };
                let _ = handle.cancel(Some(reason.to_string())).await;
                Called::Stopped(stop)
            }
        }
    }
}

/// The JSON of a `tools/call` answer (an empty result reads as a result without content).
fn call_result(result: &ServerResult) -> Result<Value, RequestError> {
    match result {
        ServerResult::InputRequiredResult(_) => Err(RequestError::Server(
            "the server asked for more input (MCP input_required), which agent does not support"
                .into(),
        )),
        ServerResult::CreateTaskResult(_) => Err(RequestError::Server(
            "the server started a task (MCP tasks), which agent does not support".into(),
        )),
        other => serde_json::to_value(other)
            .map_err(|e| RequestError::Server(format!("unreadable result: {e}"))),
    }
}

/// How often a broken HTTP response stream is resumed: 3 times, 0.25, 0.5 and 1 s apart. Then
/// the call fails as "connection closed" (`rmcp`'s default retries for ever, so a server that
/// died would hold the call until `tool_timeout_sec`).
#[derive(Debug)]
struct Reconnect;

impl SseRetryPolicy for Reconnect {
    fn retry(&self, attempts: usize) -> Option<Duration> {
        let attempts = u32::try_from(attempts).ok().filter(|a| *a < 3)?;
        Some(Duration::from_millis(250 << attempts))
    }
}

/// `initialize` failed: what happened, without `rmcp`'s type names.
fn init_error(error: ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, context } => {
            format!(
                "{} (while trying to {context})",
                chain(error.error.as_ref())
            )
        }
        ClientInitializeError::ConnectionClosed(what) => {
            format!("the connection closed before the server answered ({what})")
        }
        ClientInitializeError::JsonRpcError(data) => {
            format!("the server refused to initialize: {}", data.message)
        }
        other => other.to_string(),
    }
}

/// An error and its deepest cause, when the cause says something new
/// (`error sending request for url (...): Connection refused (os error 111)`).
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    // The HTTP client's error is held without being its `source`.
    if let Some(StreamableHttpError::Client(client)) =
        error.downcast_ref::<StreamableHttpError<reqwest::Error>>()
    {
        return chain(client);
    }
    let mut text = error.to_string();
    let mut deepest = None;
    let mut source = error.source();
    while let Some(cause) = source {
        deepest = Some(cause.to_string());
        source = cause.source();
    }
    if let Some(cause) = deepest.filter(|c| !text.contains(c.as_str())) {
        text = format!("{text}: {cause}");
    }
    text
}

fn request_error(error: ServiceError) -> RequestError {
    match error {
        ServiceError::McpError(data) => RequestError::Server(data.message.to_string()),
        ServiceError::TransportClosed => RequestError::Closed("the connection closed".into()),
        ServiceError::TransportSend(error) => RequestError::Closed(chain(error.error.as_ref())),
        ServiceError::Cancelled { reason } => {
            RequestError::Closed(reason.unwrap_or_else(|| "the connection was cancelled".into()))
        }
        other => RequestError::Server(other.to_string()),
    }
}
