//! `[model]` and `--coach`: how the loop treats the model (SPEC §3.5).
//!
//! Precedence: `--coach`, then the project file, then the user file. Neither key loosens
//! anything the user's words or the rules decide, so a project file may set both without
//! trust.

use super::coach::CoachSetting;
use super::guard;
use crate::cli::CoachArg;
use crate::config::{Config, ConfigError};

/// The loop's settings for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopSettings {
    pub coach: CoachSetting,
    /// Identical calls in a row before the repeated-call guard speaks up (`None`: off).
    pub repeat_limit: Option<u32>,
}

impl Default for LoopSettings {
    fn default() -> Self {
        Self {
            coach: CoachSetting::Auto,
            repeat_limit: Some(guard::DEFAULT_LIMIT),
        }
    }
}

impl LoopSettings {
    /// The settings of `config`.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the file and the bad `coach` value.
    pub fn for_config(config: &Config) -> Result<Self, ConfigError> {
        let files = [
            (&config.project.model, config.project_file()),
            (&config.user.model, config.user_file()),
        ];
        let mut coach = match config.run.coach {
            Some(CoachArg::Auto) => Some(CoachSetting::Auto),
            Some(CoachArg::On) => Some(CoachSetting::On),
            Some(CoachArg::Off) => Some(CoachSetting::Off),
            None => None,
        };
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
            .unwrap_or(guard::DEFAULT_LIMIT);
        Ok(Self {
            coach: coach.unwrap_or_default(),
            repeat_limit: (limit > 0).then_some(limit),
        })
    }
}
