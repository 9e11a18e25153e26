//! `[model]`, `--coach` and `--max-turns`: how the loop treats the model (SPEC §3.2, §3.5).
//!
//! Precedence: the flag, then the project file, then the user file. Neither `[model]` key
//! loosens anything the user's words or the rules decide, so a project file may set both
//! without trust.

use super::BadValue;
use super::{ConfigError, Sources};

/// Default number of model calls per user turn (§3.2).
pub const DEFAULT_MAX_TURNS: u32 = 100;
/// Identical calls with identical results in a row before the model is told (§3.5).
pub(crate) const DEFAULT_REPEAT_LIMIT: u32 = 3;

/// The `[model] coach` setting (and `--coach`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CoachSetting {
    /// On only with evidence that the model needs it (see the module doc).
    #[default]
    Auto,
    On,
    Off,
}

impl CoachSetting {
    /// Parses `auto`, `on` or `off`.
    ///
    /// # Errors
    /// A message naming the bad value and the accepted ones.
    pub(crate) fn parse(value: &str) -> Result<Self, BadValue> {
        match value {
            "auto" => Ok(Self::Auto),
            "on" => Ok(Self::On),
            "off" => Ok(Self::Off),
            other => Err(format!(
                "`[model] coach = \"{other}\"` is not a coach setting; use \"auto\", \"on\" or \"off\""
            ).into()),
        }
    }
}

/// The loop's settings for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopSettings {
    pub(crate) coach: CoachSetting,
    /// Identical calls in a row before the repeated-call guard speaks up (`None`: off).
    pub(crate) repeat_limit: Option<u32>,
    /// Model calls allowed in one user turn (`--max-turns`, at least 1).
    pub(crate) max_turns: u32,
}

impl Default for LoopSettings {
    fn default() -> Self {
        Self {
            coach: CoachSetting::Auto,
            repeat_limit: Some(DEFAULT_REPEAT_LIMIT),
            max_turns: DEFAULT_MAX_TURNS,
        }
    }
}

impl LoopSettings {
    /// The settings of `sources`.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the file and the bad `coach` value.
    pub(crate) fn resolve(sources: &Sources) -> Result<Self, ConfigError> {
        let files = [
            (&sources.project.model, sources.paths.project_file()),
            (&sources.user.model, sources.paths.user_file()),
        ];
        let mut coach = sources.flags.coach;
        for (section, path) in &files {
            if let (None, Some(value)) = (coach, section.coach.as_deref()) {
                coach = Some(CoachSetting::parse(value).map_err(|message| {
                    ConfigError::Invalid(format!("{}: {message}", path.display()))
                })?);
            }
        }
        let limit = files
            .iter()
            .find_map(|(section, _)| section.max_identical_calls)
            .unwrap_or(DEFAULT_REPEAT_LIMIT);
        Ok(Self {
            coach: coach.unwrap_or_default(),
            repeat_limit: (limit > 0).then_some(limit),
            max_turns: sources.flags.max_turns.unwrap_or(DEFAULT_MAX_TURNS).max(1),
        })
    }
}
