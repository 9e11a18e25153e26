//! HTTP client for chat-completions: streaming with fallback, retries, error classification.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::StatusCode;
use serde_json::Value;

use super::sse::{Accumulator, SseParser};
use super::text_calls;
use super::types::{Completion, Message, Role};
use super::wire::{self, RawCompletion, WireOptions};
use super::{ChatRequest, ModelError, ProviderSettings, StreamEvent, TextToolCalls};
use crate::config::Endpoint;

/// Largest error body read from a failed response, in bytes.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// How long to wait for the rest of a stream after its `finish_reason`.
const AFTER_FINISH_WAIT: Duration = Duration::from_secs(5);

/// A chat-completions client for one endpoint.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    endpoint: Endpoint,
    settings: ProviderSettings,
}

/// What one attempt produced.
enum Attempt {
    Done(RawCompletion),
    /// Worth another attempt after `delay` (server hint) or the backoff.
    Retry {
        reason: String,
        retry_after: Option<Duration>,
        error: ModelError,
    },
    /// The server rejected `stream: true`.
    StreamingRejected,
    Fatal(ModelError),
}

impl Client {
    /// # Errors
    /// [`ModelError::Setup`] when a configured header is invalid or TLS cannot initialise.
    pub fn new(endpoint: Endpoint, settings: ProviderSettings) -> Result<Self, ModelError> {
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &settings.headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ModelError::Setup(format!("header `{name}`: {e}")))?;
            let value = reqwest::header::HeaderValue::from_str(value)
                .map_err(|e| ModelError::Setup(format!("header `{name}`: {e}")))?;
            headers.insert(name, value);
        }
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .connect_timeout(settings.connect_timeout)
            .read_timeout(settings.idle_timeout)
            .user_agent(concat!("agent/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ModelError::Setup(e.to_string()))?;
        Ok(Self {
            http,
            endpoint,
            settings,
        })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Sends `request` and returns the whole answer, reporting text as it arrives.
    ///
    /// Retries 429/5xx/529, connection errors and interrupted streams with exponential
    /// backoff (honouring `Retry-After`), up to `max_attempts`.
    ///
    /// # Errors
    /// The last [`ModelError`] once attempts are used up, or at once for errors that a retry
    /// cannot fix (400/401/403/404, context length exceeded).
    pub async fn complete(
        &self,
        request: &ChatRequest,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, ModelError> {
        let mut stream = self.settings.stream;
        let mut attempt = 1;
        loop {
            let outcome = self.attempt(request, stream, on_event).await;
            match outcome {
                Attempt::Done(raw) => return Ok(self.completion(raw, request)),
                Attempt::StreamingRejected if stream => {
                    stream = false;
                    on_event(StreamEvent::StreamingDisabled);
                }
                Attempt::StreamingRejected => {
                    return Err(ModelError::InvalidResponse(
                        "the server rejected the request".into(),
                    ));
                }
                Attempt::Fatal(error) => return Err(error),
                Attempt::Retry {
                    reason,
                    retry_after,
                    error,
                } => {
                    if attempt >= self.settings.max_attempts {
                        return Err(error);
                    }
                    let delay = retry_delay(attempt, retry_after, self.settings.max_retry_wait);
                    attempt += 1;
                    on_event(StreamEvent::Retrying {
                        attempt,
                        max_attempts: self.settings.max_attempts,
                        delay,
                        reason,
                    });
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    async fn attempt(
        &self,
        request: &ChatRequest,
        stream: bool,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Attempt {
        let options = WireOptions {
            model: self.endpoint.model.clone(),
            stream,
            empty_content_for_tool_calls: false,
            extra_body: self.settings.extra_body.clone(),
        };
        let body = wire::request_body(request, &options);
        let url = format!("{}/chat/completions", self.endpoint.base_url);
        let mut builder = self.http.post(&url).json(&body);
        if !self.endpoint.api_key.is_empty() {
            builder = builder.bearer_auth(&self.endpoint.api_key);
        }
        let response = match builder.send().await {
            Ok(response) => response,
            Err(error) => return self.transport_error(&url, &error),
        };
        let status = response.status();
        if !status.is_success() {
            return classify_status(status, response, stream).await;
        }
        if stream {
            self.read_stream(response, on_event).await
        } else {
            match response.text().await {
                Ok(text) => match wire::parse_response(&text) {
                    Ok(raw) => {
                        if !raw.content.is_empty() {
                            on_event(StreamEvent::Text(raw.content.clone()));
                        }
                        Attempt::Done(raw)
                    }
                    Err(message) => Attempt::Fatal(ModelError::InvalidResponse(message)),
                },
                Err(error) => self.transport_error(&url, &error),
            }
        }
    }

    async fn read_stream(
        &self,
        response: reqwest::Response,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Attempt {
        let mut parser = SseParser::new();
        let mut accumulator = Accumulator::new();
        let mut bytes = response.bytes_stream();
        loop {
            // After a finish_reason only a usage chunk and [DONE] may follow; a server that
            // then keeps the connection open is not waited on for the full idle timeout.
            let wait = if accumulator.is_complete() {
                AFTER_FINISH_WAIT.min(self.settings.idle_timeout)
            } else {
                self.settings.idle_timeout
            };
            let events = match tokio::time::timeout(wait, bytes.next()).await {
                Err(_) if accumulator.is_complete() => break,
                Err(_) => {
                    return interrupted(format!(
                        "no data from the model server for {} s",
                        wait.as_secs()
                    ));
                }
                Ok(None) => {
                    let events = parser.finish();
                    for event in &events {
                        for shown in accumulator.apply(event) {
                            on_event(shown);
                        }
                    }
                    break;
                }
                Ok(Some(Err(error))) => {
                    return interrupted(format!("the answer stream broke: {error}"));
                }
                Ok(Some(Ok(chunk))) => parser.push(&chunk),
            };
            for event in &events {
                for shown in accumulator.apply(event) {
                    on_event(shown);
                }
            }
            if let Some(message) = accumulator.stream_error() {
                return Attempt::Fatal(ModelError::InvalidResponse(message.to_string()));
            }
            if accumulator.saw_done() {
                break;
            }
        }
        match accumulator.finish() {
            Some(raw) => Attempt::Done(raw),
            None => interrupted("the answer stream ended before it was complete".into()),
        }
    }

    fn transport_error(&self, url: &str, error: &reqwest::Error) -> Attempt {
        let message = error_chain(error);
        let error = if error.is_connect() {
            ModelError::Connect {
                url: url.to_string(),
                message,
            }
        } else if error.is_timeout() {
            ModelError::Interrupted(format!("the model server did not answer in time ({message})"))
        } else {
            ModelError::Interrupted(format!("request to {url} failed: {message}"))
        };
        Attempt::Retry {
            reason: error.to_string(),
            retry_after: None,
            error,
        }
    }

    fn completion(&self, raw: RawCompletion, request: &ChatRequest) -> Completion {
        let mut message = Message {
            content: Some(raw.content),
            reasoning_content: (!raw.reasoning.is_empty()).then_some(raw.reasoning),
            tool_calls: raw.tool_calls,
            ..Message::assistant("")
        };
        message.role = Role::Assistant;
        if message.tool_calls.is_empty()
            && self.settings.text_tool_calls == TextToolCalls::Auto
            && !request.tools.is_empty()
        {
            let offered: Vec<&str> = request.tools.iter().map(|t| t.name).collect();
            if let Some(calls) = text_calls::extract(message.text_content(), &offered) {
                message.tool_calls = calls;
                message.content = None;
            }
        }
        Completion {
            message,
            finish_reason: raw.finish_reason,
            usage: raw.usage,
        }
    }
}

fn interrupted(reason: String) -> Attempt {
    Attempt::Retry {
        reason: reason.clone(),
        retry_after: None,
        error: ModelError::Interrupted(reason),
    }
}

async fn classify_status(status: StatusCode, response: reqwest::Response, stream: bool) -> Attempt {
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    let body = read_capped(response).await;
    let message = serde_json::from_str::<Value>(&body)
        .map(|v| wire::error_message(&v))
        .unwrap_or_else(|_| body.trim().chars().take(500).collect());
    let code = status.as_u16();
    if is_context_length_error(code, &body) {
        return Attempt::Fatal(ModelError::ContextLengthExceeded { message });
    }
    if stream && code == 400 && body.to_lowercase().contains("stream") {
        return Attempt::StreamingRejected;
    }
    let hint = match code {
        401 | 403 => Some("check API_KEY"),
        404 => Some("check MODEL and BASE_URL"),
        _ => None,
    };
    let error = ModelError::Status {
        status: code,
        message: if message.is_empty() {
            status.canonical_reason().unwrap_or("error").to_string()
        } else {
            message
        },
        hint,
    };
    if matches!(code, 408 | 429 | 500 | 502 | 503 | 504 | 529) {
        Attempt::Retry {
            reason: format!("the server answered {code}"),
            retry_after,
            error,
        }
    } else {
        Attempt::Fatal(error)
    }
}

async fn read_capped(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= MAX_ERROR_BODY {
            body.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// Whether an error response says the prompt exceeds the context window, in the wordings of
/// OpenAI, Anthropic-compatible proxies, vLLM, llama.cpp and Ollama.
pub fn is_context_length_error(status: u16, body: &str) -> bool {
    if !matches!(status, 400 | 413 | 422 | 500) {
        return false;
    }
    let lower = body.to_lowercase();
    [
        "context_length_exceeded",
        "context length",
        "context window",
        "maximum context",
        "too many tokens",
        "prompt is too long",
        "longer than this model allows",
        "exceeds the available context size",
        "exceed_context_size",
        "input is too long",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// `Retry-After` as seconds or an HTTP date.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let when = httpdate_to_unix(value)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs();
    Some(Duration::from_secs(when.saturating_sub(now)))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) into Unix seconds.
fn httpdate_to_unix(value: &str) -> Option<u64> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: u64 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as u64
        + 1;
    let year: u64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    // Days from civil (Howard Hinnant's algorithm).
    let (y, mo) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + m * 60 + s)
}

/// Backoff before attempt `attempt + 1`: the server's `Retry-After` when given, else
/// 1 s · 2^(attempt-1) with ±25 % jitter; capped at `max`.
pub fn retry_delay(attempt: u32, retry_after: Option<Duration>, max: Duration) -> Duration {
    if let Some(delay) = retry_after {
        return delay.min(max);
    }
    let base = Duration::from_secs(1u64 << attempt.saturating_sub(1).min(10));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let jitter = 0.75 + f64::from(nanos % 1000) / 2000.0;
    base.mul_f64(jitter).min(max)
}

fn error_chain(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        message = format!("{message}: {inner}");
        source = inner.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"), Some(Duration::ZERO));
        assert_eq!(httpdate_to_unix("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn backoff_is_capped() {
        let max = Duration::from_secs(60);
        assert_eq!(retry_delay(1, Some(Duration::from_secs(600)), max), max);
        let first = retry_delay(1, None, max);
        assert!(first >= Duration::from_millis(750) && first <= Duration::from_millis(1250));
    }

    #[test]
    fn context_length_wordings() {
        assert!(is_context_length_error(400, r#"{"error":{"code":"context_length_exceeded"}}"#));
        assert!(is_context_length_error(400, "Request is longer than this model allows."));
        assert!(!is_context_length_error(429, "context length"));
        assert!(!is_context_length_error(400, "bad request"));
    }
}
