//! The chat-completions client: one request from start to a complete answer.
//!
//! [`Client::complete`] runs [`Exchange`] attempts until one gives a complete answer:
//! - retryable failures (see [`super::retry`]) wait (backoff with jitter, or `Retry-After`,
//!   capped) and try again, up to `max_attempts`, reporting `StreamEvent::Retrying` first;
//!   the last failure is returned as [`ModelError::RetriesExhausted`];
//! - rejections the client can repair change the request for the rest of the session and
//!   resend at once, each at most once: streaming rejected → non-streaming
//!   (`StreamEvent::StreamingDisabled`), `stream_options` rejected → dropped, `content: null`
//!   rejected → `""`, `reasoning_content` rejected → not sent;
//! - anything else is returned at once.
//!
//! The complete answer becomes a [`Completion`]: a tool call written as text (when no native
//! call came) is converted; held-back text is shown if it was not a call (or, from
//! [`Client::complete_keeping_held`], returned for the caller to decide); every call gets a
//! non-empty id unique within the session (`call` + 5 base-36 characters, 9 alphanumerics,
//! which Mistral's chat template requires) where the server sent none or repeated one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::exchange::{self, Adjustment, Attempt, Exchange, Sent};
use super::holdback::Holdback;
use super::models::{self, ModelList};
use super::retry::{self, Sleeper};
use super::text_calls;
use super::types::{Completion, Message, Role, ToolCall};
use super::wire::{self, MessageOptions, RawCompletion, WireOptions};
use super::{
    ChatRequest, ModelError, ProviderSettings, SendReasoning, StreamEvent, TextToolCalls,
    ToolCallContent,
};
use crate::config::Endpoint;

/// A chat-completions client for one endpoint and one session. Clones share the session's
/// adjustments and id counter.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    endpoint: Endpoint,
    settings: ProviderSettings,
    session: Arc<SessionState>,
    sleeper: Arc<dyn Sleeper>,
}

/// What the client learned about the server during the session.
#[derive(Debug, Default)]
struct SessionState {
    no_streaming: AtomicBool,
    no_stream_usage: AtomicBool,
    empty_content: AtomicBool,
    no_reasoning: AtomicBool,
    next_id: AtomicU64,
}

impl Client {
    /// # Errors
    /// [`ModelError::Setup`] when a configured header is invalid or TLS cannot initialise.
    pub fn new(endpoint: Endpoint, settings: ProviderSettings) -> Result<Self, ModelError> {
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &settings.headers {
            let header = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ModelError::Setup(format!("header name `{name}`: {e}")))?;
            let value = reqwest::header::HeaderValue::from_str(value)
                .map_err(|e| ModelError::Setup(format!("value of header `{name}`: {e}")))?;
            headers.insert(header, value);
        }
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .connect_timeout(settings.connect_timeout)
            .read_timeout(settings.idle_timeout)
            .user_agent(concat!("agent/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ModelError::Setup(exchange::error_chain(&e)))?;
        let start = retry::random_u64();
        let mut endpoint = endpoint;
        endpoint.base_url = base_url(&endpoint.base_url);
        Ok(Self {
            http,
            endpoint,
            settings,
            session: Arc::new(SessionState {
                next_id: AtomicU64::new(start),
                ..SessionState::default()
            }),
            sleeper: retry::tokio_sleeper(),
        })
    }

    /// The same client waiting between attempts through `sleeper` (tests observe the waits).
    pub fn with_sleeper(mut self, sleeper: Arc<dyn Sleeper>) -> Self {
        self.sleeper = sleeper;
        self
    }

    pub(crate) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Uses `model` for the following requests (`/model NAME`).
    pub(crate) fn set_model(&mut self, model: &str) {
        self.endpoint.model = model.to_string();
    }

    pub(crate) fn settings(&self) -> &ProviderSettings {
        &self.settings
    }

    /// Sends `request` and returns the complete answer, reporting text, reasoning, retries
    /// and adjustments as they happen (see the module doc).
    ///
    /// # Errors
    /// [`ModelError::RetriesExhausted`] once attempts are used up; at once for errors a
    /// retry cannot fix (400/401/403/404, [`ModelError::ContextLengthExceeded`]).
    pub async fn complete(
        &self,
        request: &ChatRequest,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, ModelError> {
        self.complete_with(request, on_event, Held::Show).await
    }

    /// As [`Client::complete`], except for text held back as a possible tool call written as
    /// text that the strict reader did not take as calls: it is not shown but returned in
    /// [`Completion::held_text`], for a caller that may still read the reply as calls (the
    /// inner loop, whose coach reads almost-JSON calls) to show or not.
    ///
    /// # Errors
    /// As [`Client::complete`].
    pub async fn complete_keeping_held(
        &self,
        request: &ChatRequest,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, ModelError> {
        self.complete_with(request, on_event, Held::Return).await
    }

    async fn complete_with(
        &self,
        request: &ChatRequest,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        held: Held,
    ) -> Result<Completion, ModelError> {
        let max_attempts = self.settings.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            let (body, sent) = self.body(request);
            let url = format!("{}/chat/completions", self.endpoint.base_url);
            let exchange = Exchange {
                http: &self.http,
                url: &url,
                api_key: &self.endpoint.api_key,
                idle_timeout: self.settings.idle_timeout,
                connect_timeout: self.settings.connect_timeout,
                sent,
                gate_text: self.reads_text_calls(request),
            };
            match exchange.run(body, on_event).await {
                Attempt::Done(raw, gate) => {
                    return Ok(self.completion(raw, gate, request, held, on_event));
                }
                Attempt::Adjust(adjustment, error) => {
                    if !self.adjust(adjustment, on_event) {
                        return Err(error);
                    }
                }
                Attempt::Fatal(error) => return Err(error),
                Attempt::Retry {
                    reason,
                    retry_after,
                    error,
                } => {
                    if attempt >= max_attempts {
                        return Err(match attempt {
                            1 => error,
                            attempts => ModelError::RetriesExhausted {
                                attempts,
                                last: Box::new(error),
                            },
                        });
                    }
                    let delay = retry::retry_delay(
                        attempt,
                        retry_after,
                        self.settings.max_retry_wait,
                        retry::random_jitter(),
                    );
                    attempt += 1;
                    on_event(StreamEvent::Retrying {
                        attempt,
                        max_attempts,
                        delay,
                        reason,
                    });
                    self.sleeper.sleep(delay).await;
                }
            }
        }
    }

    /// `GET {BASE_URL}/models`.
    ///
    /// # Errors
    /// [`ModelError::Connect`] when unreachable, [`ModelError::Status`] for 401/403 and other
    /// errors, [`ModelError::InvalidResponse`] for a 200 without a list.
    pub(crate) async fn list_models(&self) -> Result<ModelList, ModelError> {
        let url = format!("{}/models", self.endpoint.base_url);
        let mut builder = self.http.get(&url);
        if !self.endpoint.api_key.is_empty() {
            builder = builder.bearer_auth(&self.endpoint.api_key);
        }
        let wait = self.settings.connect_timeout + self.settings.idle_timeout;
        let response = match tokio::time::timeout(wait, builder.send()).await {
            Ok(Ok(response)) => response,
            Ok(Err(error)) if error.is_connect() => {
                return Err(ModelError::Connect {
                    url,
                    message: exchange::error_chain(&error),
                });
            }
            Ok(Err(error)) => return Err(ModelError::Interrupted(exchange::error_chain(&error))),
            Err(_) => {
                return Err(ModelError::Interrupted(format!(
                    "no answer within {} s",
                    wait.as_secs()
                )));
            }
        };
        let status = response.status().as_u16();
        let body = tokio::time::timeout(wait, response.text()).await;
        let body = body.ok().and_then(Result::ok).unwrap_or_default();
        match status {
            200..=299 => models::parse_model_ids(&body)
                .map(ModelList::Listed)
                .ok_or_else(|| {
                    ModelError::InvalidResponse("the /models answer holds no model list".into())
                }),
            401 | 403 => Err(ModelError::Status {
                status,
                message: super::classify::error_text(&body, "unauthorized"),
                hint: Some("check API_KEY"),
            }),
            _ => Ok(ModelList::NotOffered(status)),
        }
    }

    /// Whether tool calls written as text may be taken as calls (`text_tool_calls` is `auto`,
    /// the default; `off` keeps every reply's text as text).
    pub(crate) fn text_tool_calls_enabled(&self) -> bool {
        self.settings.text_tool_calls == TextToolCalls::Auto
    }

    fn reads_text_calls(&self, request: &ChatRequest) -> bool {
        self.settings.text_tool_calls == TextToolCalls::Auto && !request.tools.is_empty()
    }

    /// The request body as it goes out now, and what it contains.
    fn body(&self, request: &ChatRequest) -> (Vec<u8>, Sent) {
        let stream = self.settings.stream && !self.session.no_streaming.load(Ordering::Relaxed);
        let messages = MessageOptions {
            empty_content_for_tool_calls: match self.settings.tool_call_content {
                ToolCallContent::Auto => self.session.empty_content.load(Ordering::Relaxed),
                ToolCallContent::Null => false,
                ToolCallContent::Empty => true,
            },
            reasoning: if self.session.no_reasoning.load(Ordering::Relaxed) {
                SendReasoning::Off
            } else {
                self.settings.send_reasoning
            },
        };
        let options = WireOptions {
            model: self.endpoint.model.clone(),
            stream,
            usage_in_stream: self.settings.stream_usage
                && !self.session.no_stream_usage.load(Ordering::Relaxed),
            messages,
            extra_body: self.settings.extra_body.clone(),
        };
        let body = wire::request_body(request, &options);
        let sent = Sent {
            stream,
            stream_usage: options.usage_in_stream,
            null_content: sends_null_content(&body),
            reasoning: sends_reasoning(&body),
        };
        (serde_json::to_vec(&body).unwrap_or_default(), sent)
    }

    /// Applies a session adjustment; `false` when it was already applied or is ruled out by
    /// config (the rejection is then an error).
    fn adjust(
        &self,
        adjustment: Adjustment,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> bool {
        let flag = match adjustment {
            Adjustment::NoStreaming => &self.session.no_streaming,
            Adjustment::NoStreamUsage => &self.session.no_stream_usage,
            Adjustment::EmptyContent
                if self.settings.tool_call_content == ToolCallContent::Auto =>
            {
                &self.session.empty_content
            }
            Adjustment::EmptyContent => return false,
            Adjustment::NoReasoning => &self.session.no_reasoning,
        };
        let first = !flag.swap(true, Ordering::Relaxed);
        if first && adjustment == Adjustment::NoStreaming {
            on_event(StreamEvent::StreamingDisabled);
        }
        first
    }

    fn completion(
        &self,
        raw: RawCompletion,
        mut gate: Holdback,
        request: &ChatRequest,
        show: Held,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Completion {
        let mut message = Message {
            content: (!raw.content.is_empty()).then_some(raw.content),
            reasoning_content: (!raw.reasoning.is_empty()).then_some(raw.reasoning),
            tool_calls: raw.tool_calls,
            ..Message::assistant("")
        };
        message.role = Role::Assistant;
        let held = gate.take_held();
        let mut text_call = false;
        if message.tool_calls.is_empty() && self.reads_text_calls(request) {
            let offered: Vec<&str> = request.tools.iter().map(|t| t.name).collect();
            if let Some(calls) = text_calls::extract(message.text_content(), &offered) {
                message.tool_calls = calls;
                message.content = None;
                text_call = true;
            }
        }
        let held = if text_call { String::new() } else { held };
        let held_text = match show {
            Held::Show => {
                if !held.is_empty() {
                    on_event(StreamEvent::Text(held));
                }
                String::new()
            }
            Held::Return => held,
        };
        self.assign_ids(&mut message.tool_calls);
        Completion {
            message,
            finish_reason: raw.finish_reason,
            usage: raw.usage,
            calls_from_text: text_call,
            held_text,
        }
    }

    /// Gives calls without an id, or with an id already used in this message, a fresh one.
    fn assign_ids(&self, calls: &mut [ToolCall]) {
        let mut seen: Vec<String> = Vec::with_capacity(calls.len());
        for call in calls {
            if call.id.trim().is_empty() || seen.contains(&call.id) {
                let n = self.session.next_id.fetch_add(1, Ordering::Relaxed);
                call.id = synthesized_id(n);
            }
            seen.push(call.id.clone());
        }
    }
}

/// What becomes of held-back text that is not a call, when the reply is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// Shown as [`StreamEvent::Text`].
    Show,
    /// Returned in [`Completion::held_text`].
    Return,
}

/// The base URL without a trailing `/` or a pasted `/chat/completions` (users copy the full
/// endpoint from provider docs).
pub(crate) fn base_url(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    url.strip_suffix("/chat/completions")
        .unwrap_or(url)
        .to_string()
}

/// `call` + 5 base-36 digits of `n` (mod 36^5): 9 alphanumerics.
pub(crate) fn synthesized_id(n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut n = n % 36u64.pow(5);
    let mut digits = [b'0'; 5];
    for digit in digits.iter_mut().rev() {
        *digit = DIGITS[(n % 36) as usize];
        n /= 36;
    }
    format!("call{}", String::from_utf8_lossy(&digits))
}

fn assistant_messages(body: &serde_json::Value) -> impl Iterator<Item = &serde_json::Value> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "assistant")
}

fn sends_null_content(body: &serde_json::Value) -> bool {
    assistant_messages(body).any(|m| m["content"].is_null())
}

fn sends_reasoning(body: &serde_json::Value) -> bool {
    assistant_messages(body).any(|m| m.get("reasoning_content").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn base_urls_are_normalised() {
        assert_eq!(base_url("http://h/v1/"), "http://h/v1");
        assert_eq!(
            base_url("https://api.x.com/v1/chat/completions"),
            "https://api.x.com/v1"
        );
        assert_eq!(base_url(" http://h:8080/v1 "), "http://h:8080/v1");
    }

    #[test]
    fn synthesized_ids_are_nine_alphanumerics() {
        assert_eq!(synthesized_id(0), "call00000");
        assert_eq!(synthesized_id(35), "call0000z");
        assert_eq!(synthesized_id(36u64.pow(5) + 1), "call00001");
        let id = synthesized_id(u64::MAX);
        assert!(
            id.len() == 9 && id.chars().all(|c| c.is_ascii_alphanumeric()),
            "{id}"
        );
    }

    #[test]
    fn ids_are_filled_and_deduplicated() {
        let client = Client::new(
            Endpoint {
                base_url: "http://127.0.0.1:9/v1".into(),
                api_key: String::new(),
                model: "m".into(),
            },
            ProviderSettings::default(),
        );
        let Ok(client) = client else {
            panic!("client");
        };
        let call = |id: &str| ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: "{}".into(),
        };
        let mut calls = vec![call(""), call("a"), call("a"), call("  ")];
        client.assign_ids(&mut calls);
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids[1], "a");
        assert!(ids.iter().all(|id| !id.trim().is_empty()));
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 4, "{ids:?}");
    }
}
