//! `[context]` (SPEC §7.2, §7.3): the context window and the thresholds at which old tool
//! results are pruned and history is compacted, from the user's file, tightened by the
//! project's, with the window of well-known models as the default.

use std::path::PathBuf;

use super::BadValue;
use super::file::ContextSection;
use super::{ConfigError, Sources};

/// Default context window in tokens when config and the model table say nothing (§7.3).
pub const DEFAULT_WINDOW: u64 = 128_000;
/// Default share of the window at which old tool results are pruned.
pub const DEFAULT_PRUNE_AT: f64 = 0.5;
/// Default share of the window at which history is compacted (§7.3).
pub const DEFAULT_COMPACT_AT: f64 = 0.85;
/// Default number of most recent tool results that are never pruned.
pub const DEFAULT_KEEP_RECENT: usize = 4;
/// Default cap on one tool result, in characters (§7.1).
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 30_000;
/// Smallest `max_output_chars`: below it a result cannot hold its own truncation note.
pub const MIN_MAX_OUTPUT_CHARS: usize = 1000;

/// Context limits of one session, resolved from `[context]` and the model table.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextSettings {
    /// Context window in tokens.
    pub window: u64,
    /// Share of the window (0..=1) above which old tool results are pruned.
    pub prune_at: f64,
    /// Share of the window (0..=1) above which history is compacted.
    pub compact_at: f64,
    /// Most recent tool results never pruned.
    pub keep_recent_tool_results: usize,
    /// Cap on one tool result, in characters (§7.1).
    pub max_output_chars: usize,
}

impl Default for ContextSettings {
    fn default() -> Self {
        Self {
            window: DEFAULT_WINDOW,
            prune_at: DEFAULT_PRUNE_AT,
            compact_at: DEFAULT_COMPACT_AT,
            keep_recent_tool_results: DEFAULT_KEEP_RECENT,
            max_output_chars: DEFAULT_MAX_OUTPUT_CHARS,
        }
    }
}

impl ContextSettings {
    /// Settings from the user's `[context]`, tightened by the project's (a project file may
    /// only lower the window, the thresholds and the number of kept results, §2.2; trusted
    /// or not, since none of it loosens anything).
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the file, key and value of a bad setting.
    pub(crate) fn resolve(sources: &Sources, model: &str) -> Result<Self, ConfigError> {
        let invalid =
            |file: PathBuf, e: BadValue| ConfigError::Invalid(format!("{}: {e}", file.display()));
        let user = Self::from_section(&sources.user.context, model)
            .map_err(|e| invalid(sources.paths.user_file(), e))?;
        let project = &sources.project.context;
        Self::from_section(project, model).map_err(|e| invalid(sources.paths.project_file(), e))?;
        Ok(Self {
            window: project
                .context_window
                .map_or(user.window, |w| w.min(user.window)),
            prune_at: project
                .prune_at
                .map_or(user.prune_at, |v| v.min(user.prune_at)),
            compact_at: project
                .compact_at
                .map_or(user.compact_at, |v| v.min(user.compact_at)),
            keep_recent_tool_results: project
                .keep_recent_tool_results
                .map_or(user.keep_recent_tool_results, |v| {
                    v.min(user.keep_recent_tool_results)
                }),
            max_output_chars: project
                .max_output_chars
                .map_or(user.max_output_chars, |v| v.min(user.max_output_chars)),
        })
    }

    /// Settings for `model`: `[context]` values first, then the built-in window table, then
    /// the defaults.
    ///
    /// # Errors
    /// A message naming the bad key and value when a share is outside (0, 1], the window
    /// is under 1,024 tokens or `max_output_chars` under [`MIN_MAX_OUTPUT_CHARS`].
    pub(crate) fn from_section(section: &ContextSection, model: &str) -> Result<Self, BadValue> {
        let share = |key: &str, value: Option<f64>, default: f64| {
            match value {
            None => Ok::<f64, BadValue>(default),
            Some(v) if v > 0.0 && v <= 1.0 => Ok(v),
            Some(v) => Err(format!(
                "[context] {key} = `{v}` is not a share of the window; use a number in (0, 1], e.g. {default}"
            ).into()),
        }
        };
        let window = match section.context_window {
            Some(w) if w < 1024 => {
                return Err(format!(
                    "[context] context_window = `{w}` is too small; give the model's window in tokens (at least 1024)"
                ).into());
            }
            Some(w) => w,
            None => model_window(model).unwrap_or(DEFAULT_WINDOW),
        };
        Ok(Self {
            window,
            prune_at: share("prune_at", section.prune_at, DEFAULT_PRUNE_AT)?,
            compact_at: share("compact_at", section.compact_at, DEFAULT_COMPACT_AT)?,
            keep_recent_tool_results: section
                .keep_recent_tool_results
                .unwrap_or(DEFAULT_KEEP_RECENT),
            max_output_chars: match section.max_output_chars {
                Some(chars) if chars < MIN_MAX_OUTPUT_CHARS => {
                    return Err(format!(
                        "[context] max_output_chars = `{chars}` is too small; use at least {MIN_MAX_OUTPUT_CHARS} characters"
                    ).into());
                }
                Some(chars) => chars,
                None => DEFAULT_MAX_OUTPUT_CHARS,
            },
        })
    }
}

/// Context windows (tokens) of well-known models, matched by substring of the lowercased
/// model name (a provider prefix like `openai/` does not matter); the first match wins, so
/// more specific names come first. Figures are the vendors' published input limits as known
/// in 2026; `[context] context_window` in config.toml overrides them. Local servers run with
/// whatever `-c`/`num_ctx` they were given: set `context_window` for those.
const WINDOWS: &[(&str, u64)] = &[
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 272_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("o4-mini", 200_000),
    ("o3", 200_000),
    ("o1", 200_000),
    ("claude", 200_000),
    ("gemini", 1_048_576),
    ("deepseek", 128_000),
    ("qwen3-coder", 262_144),
    ("qwen2.5-coder", 32_768),
    ("qwen", 32_768),
    ("llama-3", 128_000),
    ("llama3", 128_000),
    ("mistral-large", 128_000),
    ("codestral", 256_000),
    ("devstral", 128_000),
    ("kimi-k2", 131_072),
    ("glm-4", 128_000),
];

/// The built-in context window for `model`, if the table knows it.
pub(crate) fn model_window(model: &str) -> Option<u64> {
    let lower = model.to_lowercase();
    WINDOWS
        .iter()
        .find(|(key, _)| lower.contains(key))
        .map(|(_, window)| *window)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn table_matches_substrings_in_order() {
        assert_eq!(model_window("openai/gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(model_window("GPT-4o-2024-08-06"), Some(128_000));
        assert_eq!(model_window("anthropic/claude-sonnet-4"), Some(200_000));
        assert_eq!(model_window("Qwen2.5-Coder-1.5B-Instruct"), Some(32_768));
        assert_eq!(model_window("mock-model"), None);
    }

    #[test]
    fn config_beats_table_beats_default() {
        let section = ContextSection::default();
        assert_eq!(
            ContextSettings::from_section(&section, "x").map(|s| s.window),
            Ok(DEFAULT_WINDOW)
        );
        assert_eq!(
            ContextSettings::from_section(&section, "claude-sonnet-4").map(|s| s.window),
            Ok(200_000)
        );
        let section = ContextSection {
            context_window: Some(16_384),
            compact_at: Some(0.9),
            ..ContextSection::default()
        };
        let settings = ContextSettings::from_section(&section, "claude-sonnet-4");
        assert_eq!(settings.as_ref().map(|s| s.window), Ok(16_384));
        assert_eq!(settings.map(|s| s.compact_at), Ok(0.9));
    }

    #[test]
    fn bad_values_name_key_and_value() {
        let section = ContextSection {
            prune_at: Some(50.0),
            ..ContextSection::default()
        };
        assert_eq!(
            ContextSettings::from_section(&section, "m"),
            Err("[context] prune_at = `50` is not a share of the window; use a number in (0, 1], e.g. 0.5".into())
        );
        let section = ContextSection {
            max_output_chars: Some(0),
            ..ContextSection::default()
        };
        assert_eq!(
            ContextSettings::from_section(&section, "m"),
            Err(
                "[context] max_output_chars = `0` is too small; use at least 1000 characters"
                    .into()
            )
        );
    }
}
