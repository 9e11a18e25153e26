//! Context and memory (SPEC §7.2, §7.3, §8.1, §8.2): keeping long sessions inside the model's
//! context window, and what the model is told about the project.
//!
//! - [`tokens`]: the token estimate and the per-model context-window table.
//! - [`prune`]: old tool results replaced by stubs, in rare large steps.
//! - [`compact`]: older history summarized into a handoff note.
//! - [`manager`]: decides, before each request, whether to prune or compact, and recovers
//!   from context-length errors.
//! - [`overflow`]: which part of a rejected request did not fit, and the fix to suggest.
//! - [`instructions`]: AGENTS.md files and the skills listing for the system prompt.
//! - [`skills`]: skill discovery (`SKILL.md` with frontmatter).

pub mod compact;
pub mod instructions;
pub mod manager;
pub mod memory;
pub mod overflow;
pub mod prune;
pub mod skill_tool;
pub mod skills;
pub mod tokens;

pub use manager::{ContextManager, HistoryEdit};
pub use memory::Memory;

use crate::config::file::ContextSection;

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
    /// only lower the window, the thresholds and the number of kept results, §2.2).
    ///
    /// # Errors
    /// A message naming the file, key and value of a bad setting.
    pub fn for_config(config: &crate::config::Config, model: &str) -> Result<Self, String> {
        let user = Self::resolve(&config.user.context, model)
            .map_err(|e| format!("{}: {e}", config.user_file().display()))?;
        let project = &config.project.context;
        Self::resolve(project, model)
            .map_err(|e| format!("{}: {e}", config.project_file().display()))?;
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
    pub fn resolve(section: &ContextSection, model: &str) -> Result<Self, String> {
        let share = |key: &str, value: Option<f64>, default: f64| match value {
            None => Ok(default),
            Some(v) if v > 0.0 && v <= 1.0 => Ok(v),
            Some(v) => Err(format!(
                "[context] {key} = `{v}` is not a share of the window; use a number in (0, 1], e.g. {default}"
            )),
        };
        let window = match section.context_window {
            Some(w) if w < 1024 => {
                return Err(format!(
                    "[context] context_window = `{w}` is too small; give the model's window in tokens (at least 1024)"
                ));
            }
            Some(w) => w,
            None => tokens::model_window(model).unwrap_or(DEFAULT_WINDOW),
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
                    ));
                }
                Some(chars) => chars,
                None => DEFAULT_MAX_OUTPUT_CHARS,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn config_beats_table_beats_default() {
        let section = ContextSection::default();
        assert_eq!(
            ContextSettings::resolve(&section, "x").map(|s| s.window),
            Ok(DEFAULT_WINDOW)
        );
        assert_eq!(
            ContextSettings::resolve(&section, "claude-sonnet-4").map(|s| s.window),
            Ok(200_000)
        );
        let section = ContextSection {
            context_window: Some(16_384),
            compact_at: Some(0.9),
            ..ContextSection::default()
        };
        let settings = ContextSettings::resolve(&section, "claude-sonnet-4");
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
            ContextSettings::resolve(&section, "m"),
            Err("[context] prune_at = `50` is not a share of the window; use a number in (0, 1], e.g. 0.5".into())
        );
        let section = ContextSection {
            max_output_chars: Some(0),
            ..ContextSection::default()
        };
        assert_eq!(
            ContextSettings::resolve(&section, "m"),
            Err(
                "[context] max_output_chars = `0` is too small; use at least 1000 characters"
                    .into()
            )
        );
    }
}
