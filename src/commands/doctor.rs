//! `agent doctor`: checks the configured model endpoint and prints what it found.
//!
//! Checks, in order, each printed as one line (`ok`, `warn`, `FAIL`) as soon as it is done:
//! 1. reachable: `GET {BASE_URL}/models` answers (any status; unreachable or 401/403 stops
//!    here);
//! 2. model: `MODEL` is in the list when the server offers one (a `warn` otherwise: llama.cpp
//!    and many proxies serve any name);
//! 3. streaming: a one-word question streams an answer (reports chunks, time to first text,
//!    usage and cached tokens; a server that rejects streaming is a `warn`);
//! 4. tool calling: a tiny probe tool is offered and must be called, natively or as text the
//!    agent reads (`text_tool_calls = "auto"`);
//! 5. every configured MCP server starts and lists its tools (`warn` for a disabled one).
//!
//! Every request is made once (no retries), so a failure shows at once. Exit status: 0 when no
//! check failed, 1 when one did, 2 for a configuration error. The API key is never printed;
//! of configured headers only the names are.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::json;

use super::Outcome;
use crate::agent::CoachSwitch;
use crate::cli::RunArgs;
use crate::config::{LoopSettings, McpSettings, SandboxSettings, Sources};
use crate::exit::{Error, Exit};
use crate::model::models::{self, ModelList};
use crate::model::{
    ChatRequest, Client, Completion, Message, ModelError, ProviderSettings, StreamEvent,
    TextToolCalls, ToolSpec, text_calls,
};

/// Name of the probe tool offered in the tool-calling check.
const PROBE_TOOL: &str = "echo";
/// Longest answer excerpt printed, in characters.
const EXCERPT_CHARS: usize = 80;

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Ok,
    Warn,
    Fail,
}

/// Prints check lines and counts failures.
struct Report {
    failures: usize,
}

impl Report {
    fn line(&mut self, verdict: Verdict, text: &str) {
        let tag = match verdict {
            Verdict::Ok => "ok  ",
            Verdict::Warn => "warn",
            Verdict::Fail => {
                self.failures += 1;
                "FAIL"
            }
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{tag}  {text}");
        let _ = out.flush();
    }
}

/// Runs `agent doctor` with the session flags (`--base-url`, `--model`, `-C`); checks that
/// fail end it with [`Exit::Failure`] after the last line.
///
/// # Errors
/// [`Error::Config`] for a missing endpoint or a bad `[provider]` or `[model]` value,
/// [`Error::Client`] when the client cannot be built, [`Error::Failed`] when the async
/// runtime cannot start.
pub(crate) fn run(args: &RunArgs) -> Outcome {
    let sources = super::sources(args)?;
    let endpoint = sources.endpoint().require()?;
    let settings = ProviderSettings::resolve(&sources)?;
    crate::outln!(
        "agent doctor · {} · model {}",
        endpoint.base_url,
        endpoint.model
    );
    crate::outln!("      {}", settings_line(&settings));
    let loop_settings = LoopSettings::resolve(&sources)?;
    let mcp = McpSettings::resolve(&sources);
    let coach = CoachSwitch::new(loop_settings.coach, &endpoint.model).status();
    crate::outln!("      {}", coach.line());
    crate::outln!("      {}", sandbox_line(&sources));
    let probe_settings = ProviderSettings {
        max_attempts: 1,
        text_tool_calls: TextToolCalls::Off,
        ..settings.clone()
    };
    let client = Client::new(endpoint, probe_settings)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| Error::Failed(format!("cannot start the async runtime: {error}")))?;
    let mut report = Report { failures: 0 };
    runtime.block_on(async {
        if check_models(&client, &mut report).await {
            check_streaming(&client, &mut report).await;
            check_tools(&client, settings.text_tool_calls, &mut report).await;
        }
        check_mcp_servers(&mcp, &mut report).await;
    });
    Ok(match report.failures {
        0 => {
            crate::outln!("all checks passed");
            Exit::Done
        }
        1 => {
            crate::outln!("1 check failed");
            Exit::Failure
        }
        n => {
            crate::outln!("{n} checks failed");
            Exit::Failure
        }
    })
}

/// 5. Each configured MCP server (issue 17): started as a session would, one line each
///    (`ok` ready with its tools, `FAIL` with the reason, `warn` when disabled).
async fn check_mcp_servers(settings: &McpSettings, report: &mut Report) {
    for warning in &settings.warnings {
        report.line(Verdict::Warn, warning);
    }
    let servers = match crate::mcp::McpServers::start(settings) {
        Ok(Some(servers)) => servers,
        Ok(None) => return,
        Err(error) => {
            report.line(Verdict::Fail, &error.to_string());
            return;
        }
    };
    servers.wait_started().await;
    for server in servers.summaries() {
        let name = &server.name;
        match server.state {
            crate::mcp::State::Ready => report.line(
                Verdict::Ok,
                &format!(
                    "mcp server `{name}`: ready, {} tool(s) ({})",
                    server.tools, server.transport
                ),
            ),
            crate::mcp::State::Disabled => report.line(
                Verdict::Warn,
                &format!("mcp server `{name}`: disabled (enabled = false)"),
            ),
            crate::mcp::State::Failed(reason) | crate::mcp::State::Stopped(reason) => report.line(
                Verdict::Fail,
                &format!("mcp server `{name}`: {reason} ({})", server.transport),
            ),
            crate::mcp::State::Starting => report.line(
                Verdict::Fail,
                &format!("mcp server `{name}`: still starting"),
            ),
        }
    }
    servers.shutdown().await;
}

/// What confines shell commands here, and which secret-named variables of this environment
/// commands do not get (names only, never values).
fn sandbox_line(sources: &Sources) -> String {
    use crate::sandbox::{NamespaceStatus, SandboxStatus};
    let landlock = match crate::sandbox::probe() {
        SandboxStatus::Available { abi } => format!("Landlock ABI {abi}"),
        SandboxStatus::Unavailable { reason } => format!("no Landlock ({reason})"),
    };
    let namespaces = match crate::sandbox::probe_namespaces() {
        NamespaceStatus::Available => "namespaces".to_string(),
        NamespaceStatus::Unavailable { reason } => format!("no namespaces ({reason})"),
    };
    let keep = SandboxSettings::env_keep(sources, &mut Vec::new());
    let removed = crate::sandbox::secrets::secret_env_names(
        sources.env.vars.keys().map(String::as_str),
        &keep,
    );
    let removed = match removed.len() {
        0 => "no secret-named variables to remove".to_string(),
        n => format!(
            "{n} secret variable{} removed from commands: {}",
            if n == 1 { "" } else { "s" },
            removed.join(", ")
        ),
    };
    format!("sandbox: {landlock}, {namespaces} · {removed}")
}

/// One line summing up the settings in effect.
fn settings_line(settings: &ProviderSettings) -> String {
    let mut line = format!(
        "settings: connect {} s · idle {} s · {} attempts · retry wait ≤ {} s · stream {} · text tool calls {}",
        settings.connect_timeout.as_secs(),
        settings.idle_timeout.as_secs(),
        settings.max_attempts,
        settings.max_retry_wait.as_secs(),
        if settings.stream { "on" } else { "off" },
        match settings.text_tool_calls {
            TextToolCalls::Auto => "auto",
            TextToolCalls::Off => "off",
        },
    );
    if !settings.headers.is_empty() {
        let names: Vec<&str> = settings.headers.keys().map(String::as_str).collect();
        line.push_str(&format!(" · headers {}", names.join(", ")));
    }
    if !settings.extra_body.is_empty() {
        let keys: Vec<&str> = settings.extra_body.keys().map(String::as_str).collect();
        line.push_str(&format!(" · extra body {}", keys.join(", ")));
    }
    line
}

/// Checks 1 and 2; `false` when the endpoint is unusable (later checks are skipped).
async fn check_models(client: &Client, report: &mut Report) -> bool {
    let started = Instant::now();
    let result = client.list_models().await;
    let took = millis(started.elapsed());
    let model = &client.endpoint().model;
    match result {
        Ok(ModelList::Listed(ids)) => {
            report.line(
                Verdict::Ok,
                &format!("reachable: GET /models answered in {took}"),
            );
            if models::is_listed(&ids, model) {
                report.line(Verdict::Ok, &format!("model `{model}` is listed"));
            } else {
                let shown: Vec<&str> = ids.iter().take(5).map(String::as_str).collect();
                let more = if ids.len() > 5 { ", …" } else { "" };
                report.line(
                    Verdict::Warn,
                    &format!(
                        "model `{model}` is not among the {} listed ({}{more}); some servers accept any name, the next check decides",
                        ids.len(),
                        shown.join(", ")
                    ),
                );
            }
            true
        }
        Ok(ModelList::NotOffered(status)) => {
            report.line(
                Verdict::Ok,
                &format!("reachable: GET /models answered {status} in {took} (no model list offered; fine)"),
            );
            true
        }
        Err(error @ (ModelError::Connect { .. } | ModelError::Status { .. })) => {
            report.line(Verdict::Fail, &format!("reachable: {error}"));
            false
        }
        Err(error) => {
            report.line(Verdict::Warn, &format!("GET /models: {error}"));
            true
        }
    }
}

/// What the events of one request showed.
#[derive(Debug, Default)]
struct Observed {
    text_events: usize,
    first_text: Option<Duration>,
    streaming_disabled: bool,
}

async fn ask(
    client: &Client,
    request: &ChatRequest,
) -> (Result<Completion, ModelError>, Observed, Duration) {
    let started = Instant::now();
    let mut observed = Observed::default();
    let mut on_event = |event: StreamEvent| match event {
        StreamEvent::Text(_) => {
            observed.text_events += 1;
            observed.first_text.get_or_insert_with(|| started.elapsed());
        }
        StreamEvent::StreamingDisabled => observed.streaming_disabled = true,
        _ => {}
    };
    let result = client.complete(request, &mut on_event).await;
    (result, observed, started.elapsed())
}

/// Check 3.
async fn check_streaming(client: &Client, report: &mut Report) {
    let request = ChatRequest {
        messages: vec![Message::user("Reply with the single word: ok")],
        tools: Vec::new(),
    };
    let (result, observed, took) = ask(client, &request).await;
    let completion = match result {
        Ok(completion) => completion,
        Err(error) => {
            report.line(Verdict::Fail, &format!("answering: {error}"));
            return;
        }
    };
    let text = completion.message.text_content().trim().to_string();
    let usage = match completion.usage {
        Some(usage) => {
            let cached = usage
                .cached_tokens
                .map(|c| format!(", {c} cached"))
                .unwrap_or_default();
            format!(
                "usage reported ({} in / {} out{cached})",
                usage.prompt_tokens, usage.completion_tokens
            )
        }
        None => "usage not reported (shown as unknown)".to_string(),
    };
    if text.is_empty() {
        report.line(
            Verdict::Warn,
            &format!(
                "answering: the model returned an empty answer in {}; {usage}",
                millis(took)
            ),
        );
    } else if observed.streaming_disabled || !client.settings().stream {
        let why = if observed.streaming_disabled {
            "the server rejected streaming; answers work without it (set `stream = false` in [provider] to skip the first try)"
        } else {
            "streaming is off in [provider]"
        };
        report.line(
            Verdict::Warn,
            &format!(
                "answering: `{}` in {}; {why}; {usage}",
                excerpt(&text),
                millis(took)
            ),
        );
    } else {
        let first = observed.first_text.map_or_else(|| "-".to_string(), millis);
        report.line(
            Verdict::Ok,
            &format!(
                "streaming: `{}` in {} chunk(s), first text after {first}, done in {}; {usage}",
                excerpt(&text),
                observed.text_events,
                millis(took)
            ),
        );
    }
}

/// Check 4.
async fn check_tools(client: &Client, text_tool_calls: TextToolCalls, report: &mut Report) {
    let request = ChatRequest {
        messages: vec![Message::user(format!(
            "Call the `{PROBE_TOOL}` tool with text \"ping\". Do not write anything else."
        ))],
        tools: vec![probe_tool()],
    };
    let (result, _, took) = ask(client, &request).await;
    let completion = match result {
        Ok(completion) => completion,
        Err(error) => {
            report.line(Verdict::Fail, &format!("tool calling: {error}"));
            return;
        }
    };
    let message = &completion.message;
    if let Some(call) = message.tool_calls.first() {
        let arguments = crate::model::types::parse_arguments(&call.arguments);
        let ok =
            call.name == PROBE_TOOL && arguments.as_ref().is_ok_and(|a| a.contains_key("text"));
        let verdict = if ok { Verdict::Ok } else { Verdict::Warn };
        report.line(
            verdict,
            &format!(
                "tool calling: native call `{}` with arguments `{}` in {}",
                call.name,
                excerpt(&call.arguments),
                millis(took)
            ),
        );
        return;
    }
    let text = message.text_content();
    if text_calls::extract(text, &[PROBE_TOOL]).is_some() {
        if text_tool_calls == TextToolCalls::Auto {
            report.line(
                Verdict::Ok,
                "tool calling: the model writes tool calls as text; the agent reads them (text_tool_calls = \"auto\"), and with coach = \"auto\" the first such call turns the coach on",
            );
        } else {
            report.line(
                Verdict::Fail,
                "tool calling: the model writes tool calls as text, which text_tool_calls = \"off\" ignores; set it to \"auto\"",
            );
        }
        return;
    }
    report.line(
        Verdict::Fail,
        &format!(
            "tool calling: the model answered without calling the probe tool (`{}`); it may not support tool calling: start llama-server with --jinja, or choose a model with tool support",
            excerpt(text)
        ),
    );
}

fn probe_tool() -> ToolSpec {
    ToolSpec {
        name: PROBE_TOOL,
        description: "Echo the given text back.",
        parameters: json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to echo."}},
            "required": ["text"],
        }),
    }
}

/// The first line of `text`, at most [`EXCERPT_CHARS`] characters.
fn excerpt(text: &str) -> String {
    crate::ui::terminal::one_line(text.trim(), EXCERPT_CHARS)
}

fn millis(duration: Duration) -> String {
    format!("{} ms", duration.as_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_line_names_headers_not_values() {
        let mut settings = ProviderSettings::default();
        settings.headers.insert("X-Secret".into(), "s3cr3t".into());
        settings
            .extra_body
            .insert("usage".into(), json!({"include": true}));
        let line = settings_line(&settings);
        assert!(line.contains("headers X-Secret"), "{line}");
        assert!(line.contains("extra body usage"), "{line}");
        assert!(!line.contains("s3cr3t"), "{line}");
        assert!(
            line.starts_with("settings: connect 10 s · idle 120 s · 5 attempts"),
            "{line}"
        );
    }
}
