//! The model endpoint: `BASE_URL`, `API_KEY` and `MODEL` (SPEC §2.1), from flags, then the
//! process environment, then `$AGENT_HOME/env`.

use std::path::PathBuf;

use super::ConfigError;

/// Endpoint settings after precedence, before the required ones are checked.
#[derive(Debug, Clone, Default)]
pub struct EndpointSettings {
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<String>,
    pub(crate) model: Option<String>,
    /// The env file consulted, for error messages.
    pub(crate) env_file: PathBuf,
}

/// A usable endpoint: base URL and model are present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Base URL without a trailing slash, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// Bearer token; empty for local servers that need none.
    pub api_key: String,
    pub model: String,
}

impl EndpointSettings {
    /// The endpoint, or an error naming the first missing variable and the env file.
    ///
    /// # Errors
    /// [`ConfigError::Missing`] for a missing or empty `BASE_URL` or `MODEL`;
    /// [`ConfigError::Invalid`] for a `BASE_URL` that is not an http(s) URL.
    pub(crate) fn require(&self) -> Result<Endpoint, ConfigError> {
        let missing = |name, flag| ConfigError::Missing {
            name,
            flag,
            env_file: self.env_file.clone(),
        };
        let base_url =
            non_empty(&self.base_url).ok_or_else(|| missing("BASE_URL", "--base-url"))?;
        let model = non_empty(&self.model).ok_or_else(|| missing("MODEL", "--model"))?;
        check_base_url(base_url)?;
        Ok(Endpoint {
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key: self.api_key.clone().unwrap_or_default(),
            model: model.to_string(),
        })
    }
}

/// A `BASE_URL` without a scheme (`localhost:8080/v1`) or with another one is a
/// configuration error at once, not five retried "builder error"s and exit 1.
fn check_base_url(base_url: &str) -> Result<(), ConfigError> {
    match reqwest::Url::parse(base_url) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => Ok(()),
        _ => Err(ConfigError::Invalid(format!(
            "BASE_URL `{base_url}` is not an http(s) URL; write it like `http://127.0.0.1:8080/v1`"
        ))),
    }
}

fn non_empty(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_must_be_http_or_https() {
        for good in ["http://127.0.0.1:8080/v1", "https://api.openai.com/v1"] {
            assert!(check_base_url(good).is_ok(), "{good}");
        }
        for bad in [
            "localhost:8080/v1",
            "127.0.0.1:8080/v1",
            "not a url",
            "ftp://x/v1",
        ] {
            let message = check_base_url(bad).err().map(|e| e.to_string());
            assert_eq!(
                message,
                Some(format!(
                    "BASE_URL `{bad}` is not an http(s) URL; write it like `http://127.0.0.1:8080/v1`"
                ))
            );
        }
    }
}
