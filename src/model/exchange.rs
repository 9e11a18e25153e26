//! One HTTP attempt at a chat completion, and what it came to.
//!
//! An [`Attempt`] is `Done` only for a complete answer: a stream that ended with a
//! `finish_reason` (other than `error`) or `[DONE]`, or a whole JSON body. Everything else is
//! classified for the client: worth a retry (timeouts, broken or cut streams, 429/5xx/529,
//! error objects inside a 200), something the client can adjust and resend at once (streaming,
//! `stream_options`, `null` content or `reasoning_content` rejected), or fatal (other 4xx,
//! context length). While streaming, text goes through the [`Holdback`] gate before it is
//! shown (while it holds, [`StreamEvent::Held`] reports how much, at a modest rate);
//! reasoning is shown as it arrives. The response is read with a cap
//! ([`MAX_RESPONSE_BYTES`]) and an idle timeout per read.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use reqwest::header::CONTENT_TYPE;
use serde_json::Value;

use super::accumulate::{Accumulator, StreamError};
use super::classify;
use super::holdback::Holdback;
use super::retry;
use super::sse::SseParser;
use super::wire::{self, RawCompletion};
use super::{ModelError, StreamEvent};

/// Largest response read, in bytes (bounds memory whatever the server sends).
pub(crate) const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;
/// Largest error body read from a failed response, in bytes.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// How long to wait for the rest of a stream after its `finish_reason` (usage, `[DONE]`).
const AFTER_FINISH_WAIT: Duration = Duration::from_secs(5);

/// A change to the request that the server asked for by rejecting it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Adjustment {
    /// Ask without `stream: true`.
    NoStreaming,
    /// Ask without `stream_options`.
    NoStreamUsage,
    /// Send `""` instead of `null` content in tool-only assistant messages.
    EmptyContent,
    /// Stop sending `reasoning_content`.
    NoReasoning,
}

/// What one attempt produced.
#[derive(Debug)]
pub(crate) enum Attempt {
    /// A complete answer; the gate may still hold text (decided by the caller).
    Done(RawCompletion, Holdback),
    /// Worth another attempt after the server's hint or the backoff.
    Retry {
        reason: String,
        retry_after: Option<Duration>,
        error: ModelError,
    },
    /// The server rejected something the client can change; `error` if it cannot.
    Adjust(Adjustment, ModelError),
    Fatal(ModelError),
}

/// What the request contained, for recognising rejections of it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sent {
    pub(crate) stream: bool,
    pub(crate) stream_usage: bool,
    /// Some assistant message went out with `content: null`.
    pub(crate) null_content: bool,
    /// Some assistant message went out with `reasoning_content`.
    pub(crate) reasoning: bool,
}

/// One attempt's fixed inputs.
pub(crate) struct Exchange<'a> {
    pub(crate) http: &'a reqwest::Client,
    pub(crate) url: &'a str,
    pub(crate) api_key: &'a str,
    pub(crate) idle_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) sent: Sent,
    /// Hold back text that may be a tool call written as text.
    pub(crate) gate_text: bool,
}

impl Exchange<'_> {
    /// Sends `body` and reads the answer, reporting text and reasoning as they arrive.
    pub(crate) async fn run(
        &self,
        body: Vec<u8>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Attempt {
        let mut builder = self
            .http
            .post(self.url)
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        if !self.api_key.is_empty() {
            builder = builder.bearer_auth(self.api_key);
        }
        let wait = self.connect_timeout + self.idle_timeout;
        let response = match tokio::time::timeout(wait, builder.send()).await {
            Ok(Ok(response)) => response,
            Ok(Err(error)) => return self.transport_error(&error),
            Err(_) => {
                return interrupted(format!(
                    "no answer from the model server within {} s",
                    wait.as_secs()
                ));
            }
        };
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry::retry_after_from_headers(response.headers());
            let body = self
                .read_body(response, MAX_ERROR_BODY, true)
                .await
                .unwrap_or_default();
            return classify_status(status, retry_after, &body, self.sent);
        }
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("json"));
        let mut gate = Holdback::new(self.gate_text);
        if self.sent.stream && !is_json {
            return self
                .read_stream(response, &mut gate, on_event)
                .await
                .finish(gate);
        }
        match self.read_body(response, MAX_RESPONSE_BYTES, false).await {
            Ok(body) => whole_body(&body, gate, on_event),
            Err(attempt) => attempt,
        }
    }

    /// Reads a whole body with the idle timeout per read, up to `cap` bytes: an error body is
    /// cut there (`truncate`), an answer over the cap is an error.
    async fn read_body(
        &self,
        mut response: reqwest::Response,
        cap: usize,
        truncate: bool,
    ) -> Result<String, Attempt> {
        let mut body = Vec::new();
        loop {
            match tokio::time::timeout(self.idle_timeout, response.chunk()).await {
                Err(_) => return Err(idle(self.idle_timeout)),
                Ok(Err(error)) if error.is_timeout() => return Err(idle(self.idle_timeout)),
                Ok(Err(error)) => {
                    return Err(interrupted(format!(
                        "the answer broke off: {}",
                        error_chain(&error)
                    )));
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => {
                    body.extend_from_slice(&chunk);
                    if body.len() > cap {
                        if !truncate {
                            return Err(too_large());
                        }
                        body.truncate(cap);
                        break;
                    }
                }
            }
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    async fn read_stream(
        &self,
        response: reqwest::Response,
        gate: &mut Holdback,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> StreamEnd {
        let mut parser = SseParser::new();
        let mut accumulator = Accumulator::new();
        let mut bytes = response.bytes_stream();
        let mut total = 0usize;
        let mut ended = false;
        loop {
            let complete = accumulator.is_complete();
            let wait = if complete {
                AFTER_FINISH_WAIT.min(self.idle_timeout)
            } else {
                self.idle_timeout
            };
            let events = match tokio::time::timeout(wait, bytes.next()).await {
                Err(_) if complete => break,
                Err(_) => return StreamEnd::Failed(idle(self.idle_timeout)),
                Ok(Some(Err(_))) if complete => break,
                Ok(Some(Err(error))) if error.is_timeout() => {
                    return StreamEnd::Failed(idle(self.idle_timeout));
                }
                Ok(Some(Err(error))) => {
                    return StreamEnd::Failed(interrupted(format!(
                        "the answer stream broke: {}",
                        error_chain(&error)
                    )));
                }
                Ok(None) => {
                    ended = true;
                    parser.finish()
                }
                Ok(Some(Ok(chunk))) => {
                    total += chunk.len();
                    if total > MAX_RESPONSE_BYTES {
                        return StreamEnd::Failed(too_large());
                    }
                    parser.push(&chunk)
                }
            };
            for event in &events {
                for shown in accumulator.apply(event) {
                    show(shown, gate, on_event);
                }
                if let Some(error) = accumulator.stream_error() {
                    return StreamEnd::Failed(embedded_error(error));
                }
            }
            if accumulator.saw_done() || ended {
                break;
            }
        }
        StreamEnd::Finished(accumulator)
    }

    fn transport_error(&self, error: &reqwest::Error) -> Attempt {
        let message = error_chain(error);
        let error = if error.is_connect() {
            ModelError::Connect {
                url: self.url.to_string(),
                message,
            }
        } else if error.is_timeout() {
            return idle(self.idle_timeout);
        } else {
            ModelError::Interrupted(format!("the request to {} failed: {message}", self.url))
        };
        Attempt::Retry {
            reason: error.to_string(),
            retry_after: None,
            error,
        }
    }
}

/// How reading a stream ended.
enum StreamEnd {
    Finished(Accumulator),
    Failed(Attempt),
}

impl StreamEnd {
    fn finish(self, gate: Holdback) -> Attempt {
        match self {
            StreamEnd::Failed(attempt) => attempt,
            StreamEnd::Finished(accumulator) => match accumulator.finish() {
                Some(raw) => Attempt::Done(raw, gate),
                None => interrupted("the answer stream ended before it was complete".into()),
            },
        }
    }
}

fn show(event: StreamEvent, gate: &mut Holdback, on_event: &mut (dyn FnMut(StreamEvent) + Send)) {
    match event {
        StreamEvent::Text(text) => {
            if let Some(text) = gate.push(&text) {
                on_event(StreamEvent::Text(text));
            } else if let Some(chars) = gate.progress(Instant::now()) {
                on_event(StreamEvent::Held { chars });
            }
        }
        other => on_event(other),
    }
}

/// A whole JSON answer (non-streaming, or a server that ignored `stream: true`); an SSE body
/// sent with a JSON content type is parsed as a stream.
fn whole_body(
    body: &str,
    mut gate: Holdback,
    on_event: &mut (dyn FnMut(StreamEvent) + Send),
) -> Attempt {
    if body.trim_start().starts_with("data:") {
        let (events, raw) = super::accumulate::parse_stream(body.as_bytes());
        for event in events {
            show(event, &mut gate, on_event);
        }
        return match raw {
            Some(raw) => Attempt::Done(raw, gate),
            None => interrupted("the answer stream ended before it was complete".into()),
        };
    }
    let parsed = wire::parse_response(body);
    if parsed.is_err() && body.trim_start().starts_with('{') && body.trim().contains('\n') {
        // Several JSON objects, one a line (NDJSON sent for a stream request).
        let (events, raw) = super::accumulate::parse_stream(body.as_bytes());
        if let Some(raw) = raw {
            for event in events {
                show(event, &mut gate, on_event);
            }
            return Attempt::Done(raw, gate);
        }
    }
    match parsed {
        Ok(raw) => {
            if !raw.reasoning.is_empty() {
                on_event(StreamEvent::Reasoning(raw.reasoning.clone()));
            }
            show(StreamEvent::Text(raw.content.clone()), &mut gate, on_event);
            Attempt::Done(raw, gate)
        }
        Err(error) => match serde_json::from_str::<Value>(body) {
            Ok(value) if value.get("error").is_some_and(|e| !e.is_null()) => {
                let embedded = value.get("error").unwrap_or(&Value::Null);
                embedded_error(&StreamError {
                    message: error.to_string(),
                    body: body.chars().take(4096).collect(),
                    status: classify::embedded_status(embedded),
                })
            }
            _ => Attempt::Fatal(ModelError::InvalidResponse(error.to_string())),
        },
    }
}

/// An error object inside a 200 answer: context length is fatal (compaction), a named 4xx
/// other than 408/429 is fatal, anything else is retried.
fn embedded_error(error: &StreamError) -> Attempt {
    if classify::is_context_length_error(200, &error.body) {
        return Attempt::Fatal(ModelError::ContextLengthExceeded {
            message: error.message.clone(),
        });
    }
    match error.status {
        Some(status) if (400..500).contains(&status) && !retry::is_retryable_status(status) => {
            Attempt::Fatal(ModelError::Status {
                status,
                message: error.message.clone(),
                hint: classify::hint(status, &error.body),
            })
        }
        _ => interrupted(format!(
            "the model server reported an error: {}",
            error.message
        )),
    }
}

/// Classifies an error status (see the module doc).
pub(crate) fn classify_status(
    status: reqwest::StatusCode,
    retry_after: Option<Duration>,
    body: &str,
    sent: Sent,
) -> Attempt {
    let code = status.as_u16();
    let message = classify::error_text(body, status.canonical_reason().unwrap_or("error"));
    if classify::is_context_length_error(code, body) {
        return Attempt::Fatal(ModelError::ContextLengthExceeded { message });
    }
    let error = ModelError::Status {
        status: code,
        message,
        hint: classify::hint(code, body),
    };
    let adjustment = if sent.null_content && classify::rejects_null_content(code, body) {
        Some(Adjustment::EmptyContent)
    } else if sent.reasoning && classify::rejects_reasoning_field(code, body) {
        Some(Adjustment::NoReasoning)
    } else if sent.stream && sent.stream_usage && classify::rejects_stream_options(code, body) {
        Some(Adjustment::NoStreamUsage)
    } else if sent.stream && classify::rejects_streaming(code, body) {
        Some(Adjustment::NoStreaming)
    } else {
        None
    };
    if let Some(adjustment) = adjustment {
        return Attempt::Adjust(adjustment, error);
    }
    if retry::is_retryable_status(code) && !classify::is_quota_exhausted(code, body) {
        Attempt::Retry {
            reason: format!("the server answered {code}"),
            retry_after,
            error,
        }
    } else {
        Attempt::Fatal(error)
    }
}

fn interrupted(reason: String) -> Attempt {
    Attempt::Retry {
        reason: reason.clone(),
        retry_after: None,
        error: ModelError::Interrupted(reason),
    }
}

fn idle(timeout: Duration) -> Attempt {
    interrupted(format!(
        "no data from the model server for {} s (idle_timeout_secs)",
        timeout.as_secs()
    ))
}

fn too_large() -> Attempt {
    Attempt::Fatal(ModelError::InvalidResponse(format!(
        "the answer is larger than {} MiB",
        MAX_RESPONSE_BYTES / (1024 * 1024)
    )))
}

/// The error and its sources, joined with `: ` (reqwest's own message is terse).
pub(crate) fn error_chain(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        let text = inner.to_string();
        if !message.contains(&text) {
            message = format!("{message}: {text}");
        }
        source = inner.source();
    }
    message
}
