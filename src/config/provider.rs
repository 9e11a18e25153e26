//! Endpoint behaviour as data: `[provider]` in the user's config.toml (§2.2, §11).
//!
//! ```toml
//! [provider]
//! headers = { "HTTP-Referer" = "https://example.org", "X-Title" = "agent" }
//! connect_timeout_secs = 10     # establishing a connection
//! idle_timeout_secs = 120       # silence (no byte) before a request counts as failed
//! max_attempts = 5              # per request, including the first
//! max_retry_wait_secs = 60      # cap on one wait, also on Retry-After
//! text_tool_calls = "auto"      # or "off": never read tool calls written as text
//! stream = true                 # false: never try streaming
//! send_reasoning = "tool-calls" # or "all", "off": where reasoning_content is sent back
//! tool_call_content = "auto"    # or "null", "empty": content of tool-only assistant messages
//! extra_body = { usage = { include = true } }   # merged into every request body
//! ```
//!
//! Only the user file counts ([`ProviderSettings::resolve`]): a project file (which comes
//! with a possibly hostile repository) must not redirect headers or request bodies; its
//! `[provider]` is ignored with a warning ([`super::Sources::ignored_in_project`]).
//! `extra_body` may not replace the fields the client owns (`model`, `messages`, `tools`,
//! `stream`, `stream_options`).

use std::collections::BTreeMap;
use std::time::Duration;

use super::BadValue;
use super::file::ProviderSection;
use super::{ConfigError, Sources};

/// Request fields `extra_body` may not set.
pub(crate) const RESERVED_BODY_FIELDS: &[&str] =
    &["model", "messages", "tools", "stream", "stream_options"];

/// Whether tool calls written as text are read (§11, `text_tool_calls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TextToolCalls {
    #[default]
    Auto,
    Off,
}

/// Which assistant messages carry their reasoning back to the server as `reasoning_content`
/// (`[provider] send_reasoning`).
///
/// DeepSeek's thinking mode and Kimi's thinking models reject a history whose tool-calling
/// assistant messages lost their `reasoning_content` (HTTP 400); for messages without tool
/// calls they ignore it. So the default sends it on messages with tool calls only, which also
/// keeps every request's prefix unchanged. A server that rejects the field (Groq: "property
/// 'reasoning_content' is unsupported") is detected by its 400 and the field is dropped for the
/// rest of the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SendReasoning {
    /// On assistant messages that have tool calls (default).
    #[default]
    ToolCalls,
    /// On every assistant message that has reasoning.
    All,
    /// Never.
    Off,
}

/// How tool-only assistant messages are sent (`[provider] tool_call_content`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolCallContent {
    /// `content: null` until a server rejects it with a 400, then `""` for the session.
    #[default]
    Auto,
    /// Always `content: null`.
    Null,
    /// Always `content: ""`.
    Empty,
}

/// Endpoint behaviour taken from `[provider]` in config.toml.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    pub headers: BTreeMap<String, String>,
    pub connect_timeout: Duration,
    /// Longest silence (no byte received) before a request fails.
    pub idle_timeout: Duration,
    /// Attempts per request, including the first.
    pub max_attempts: u32,
    /// Cap on one wait between attempts (also caps `Retry-After`).
    pub max_retry_wait: Duration,
    pub text_tool_calls: TextToolCalls,
    /// Try streaming first (a server that rejects it is asked again without).
    pub stream: bool,
    /// Ask for usage in streams (`stream_options.include_usage`); dropped for the session
    /// when the server rejects `stream_options`.
    pub stream_usage: bool,
    pub send_reasoning: SendReasoning,
    pub tool_call_content: ToolCallContent,
    /// JSON fields merged into every request body.
    pub extra_body: serde_json::Map<String, serde_json::Value>,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        Self {
            headers: BTreeMap::new(),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            max_attempts: 5,
            max_retry_wait: Duration::from_secs(60),
            text_tool_calls: TextToolCalls::Auto,
            stream: true,
            stream_usage: true,
            send_reasoning: SendReasoning::ToolCalls,
            tool_call_content: ToolCallContent::Auto,
            extra_body: serde_json::Map::new(),
        }
    }
}

impl ProviderSettings {
    /// `[provider]` from the user config (never the project file).
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the key and the bad value.
    pub(crate) fn resolve(sources: &Sources) -> Result<Self, ConfigError> {
        Self::from_section(&sources.user.provider).map_err(|bad| ConfigError::Invalid(bad.0))
    }

    /// Settings from a `[provider]` section; absent fields take the defaults above.
    ///
    /// # Errors
    /// A message naming the key, the bad value and the accepted values.
    pub(crate) fn from_section(section: &ProviderSection) -> Result<Self, BadValue> {
        let defaults = Self::default();
        let secs = Duration::from_secs;
        Ok(Self {
            headers: section.headers.clone(),
            connect_timeout: seconds(
                "connect_timeout_secs",
                section.connect_timeout_secs,
                defaults.connect_timeout,
            )?,
            idle_timeout: seconds(
                "idle_timeout_secs",
                section.idle_timeout_secs,
                defaults.idle_timeout,
            )?
            .max(secs(1)),
            max_attempts: section
                .max_attempts
                .unwrap_or(defaults.max_attempts)
                .clamp(1, 100),
            max_retry_wait: seconds(
                "max_retry_wait_secs",
                section.max_retry_wait_secs,
                defaults.max_retry_wait,
            )?,
            text_tool_calls: choice(
                "text_tool_calls",
                section.text_tool_calls.as_deref(),
                &[("auto", TextToolCalls::Auto), ("off", TextToolCalls::Off)],
            )?,
            stream: section.stream.unwrap_or(defaults.stream),
            stream_usage: defaults.stream_usage,
            send_reasoning: choice(
                "send_reasoning",
                section.send_reasoning.as_deref(),
                &[
                    ("tool-calls", SendReasoning::ToolCalls),
                    ("all", SendReasoning::All),
                    ("off", SendReasoning::Off),
                ],
            )?,
            tool_call_content: choice(
                "tool_call_content",
                section.tool_call_content.as_deref(),
                &[
                    ("auto", ToolCallContent::Auto),
                    ("null", ToolCallContent::Null),
                    ("empty", ToolCallContent::Empty),
                ],
            )?,
            extra_body: extra_body(section.extra_body.as_ref())?,
        })
    }
}

/// Longest time a `*_secs` key may give: a day. Far larger values overflow the deadline
/// arithmetic (`Instant + Duration`) and would only ever mean "wait forever".
pub(crate) const MAX_SECS: u64 = 86_400;

/// A `*_secs` value as a duration; `default` when absent.
fn seconds(key: &str, value: Option<u64>, default: Duration) -> Result<Duration, BadValue> {
    match value {
        None => Ok(default),
        Some(secs) if secs <= MAX_SECS => Ok(Duration::from_secs(secs)),
        Some(secs) => Err(format!(
            "[provider] {key} = `{secs}` is too large; use at most {MAX_SECS} seconds (a day)"
        )
        .into()),
    }
}

/// One of `options` by name; the first option when absent.
fn choice<T: Copy>(key: &str, value: Option<&str>, options: &[(&str, T)]) -> Result<T, BadValue> {
    let Some(value) = value else {
        return options
            .first()
            .map(|(_, v)| *v)
            .ok_or_else(|| format!("[provider] {key} has no options").into());
    };
    options
        .iter()
        .find(|(name, _)| *name == value)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<String> = options.iter().map(|(n, _)| format!("`{n}`")).collect();
            BadValue(format!(
                "[provider] {key} = `{value}`; expected {}",
                names.join(" or ")
            ))
        })
}

fn extra_body(
    table: Option<&toml::Table>,
) -> Result<serde_json::Map<String, serde_json::Value>, BadValue> {
    let Some(table) = table else {
        return Ok(serde_json::Map::new());
    };
    if let Some(key) = table
        .keys()
        .find(|k| RESERVED_BODY_FIELDS.contains(&k.as_str()))
    {
        return Err(format!(
            "[provider] extra_body sets `{key}`, which the client owns; remove it (for streaming use `stream = false`)"
        ).into());
    }
    match serde_json::to_value(table) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        _ => Err("[provider] extra_body must be a table of JSON-compatible values".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn section(toml: &str) -> ProviderSection {
        #[derive(serde::Deserialize)]
        struct File {
            provider: ProviderSection,
        }
        toml::from_str::<File>(toml)
            .map(|f| f.provider)
            .unwrap_or_default()
    }

    #[test]
    fn defaults() {
        let settings = ProviderSettings::from_section(&ProviderSection::default());
        let settings = settings.unwrap_or_default();
        assert_eq!(settings.connect_timeout, Duration::from_secs(10));
        assert_eq!(settings.idle_timeout, Duration::from_secs(120));
        assert_eq!(settings.max_attempts, 5);
        assert_eq!(settings.send_reasoning, SendReasoning::ToolCalls);
        assert_eq!(settings.tool_call_content, ToolCallContent::Auto);
        assert!(settings.stream && settings.stream_usage);
    }

    #[test]
    fn every_field() {
        let parsed = ProviderSettings::from_section(&section(
            "[provider]\nheaders = { X-Title = \"agent\" }\nconnect_timeout_secs = 3\nidle_timeout_secs = 0\nmax_attempts = 0\nmax_retry_wait_secs = 0\ntext_tool_calls = \"off\"\nstream = false\nsend_reasoning = \"all\"\ntool_call_content = \"empty\"\nextra_body = { usage = { include = true } }\n",
        ));
        let Ok(settings) = parsed else {
            panic!("{parsed:?}");
        };
        assert_eq!(
            settings.headers.get("X-Title").map(String::as_str),
            Some("agent")
        );
        assert_eq!(settings.connect_timeout, Duration::from_secs(3));
        assert_eq!(
            settings.idle_timeout,
            Duration::from_secs(1),
            "at least 1 s"
        );
        assert_eq!(settings.max_attempts, 1, "at least 1");
        assert_eq!(settings.max_retry_wait, Duration::ZERO);
        assert_eq!(settings.text_tool_calls, TextToolCalls::Off);
        assert!(!settings.stream);
        assert_eq!(settings.send_reasoning, SendReasoning::All);
        assert_eq!(settings.tool_call_content, ToolCallContent::Empty);
        assert_eq!(
            settings.extra_body["usage"],
            serde_json::json!({"include": true})
        );
    }

    #[test]
    fn bad_values_are_named() {
        let error = |toml: &str| {
            ProviderSettings::from_section(&section(toml))
                .err()
                .map(|bad| bad.0)
        };
        assert_eq!(
            error("[provider]\nsend_reasoning = \"yes\"\n"),
            Some(
                "[provider] send_reasoning = `yes`; expected `tool-calls` or `all` or `off`".into()
            )
        );
        assert_eq!(
            error("[provider]\nextra_body = { stream = false }\n"),
            Some("[provider] extra_body sets `stream`, which the client owns; remove it (for streaming use `stream = false`)".into())
        );
        for key in [
            "connect_timeout_secs",
            "idle_timeout_secs",
            "max_retry_wait_secs",
        ] {
            assert_eq!(
                error(&format!("[provider]\n{key} = 18446744073709551615\n")),
                Some(format!(
                    "[provider] {key} = `18446744073709551615` is too large; use at most 86400 seconds (a day)"
                ))
            );
        }
    }
}
