//! `[checkpoints]` in the user's `config.toml` → how checkpoints behave (issue 16), resolved
//! once (the `checkpoints` module keeps them).
//!
//! Rules: only the user file may set it: a repository must not be able to switch off the
//! user's undo or make it keep gigabytes. A project file's `[checkpoints]` is ignored with a
//! warning, trusted or not. `git` is looked up on the `PATH` of the agent's environment.

use super::Sources;
use super::file::CheckpointsSection;

/// Files over 10 MB are not captured by default.
pub(crate) const DEFAULT_MAX_FILE_BYTES: u64 = 10_000_000;
/// Snapshots of the last 100 turns are kept by default...
pub(crate) const DEFAULT_KEEP: usize = 100;
/// ...and none older than 14 days.
pub(crate) const DEFAULT_KEEP_DAYS: u64 = 14;

/// How checkpoints behave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointSettings {
    /// The `PATH` value `git` is looked up on (the agent's environment).
    pub search_path: Option<String>,
    /// The project file's `[checkpoints]`, ignored: the line saying so.
    pub warnings: Vec<String>,
    /// Snapshot before each turn's first change (default true).
    pub enabled: bool,
    /// Larger files are not captured, in bytes.
    pub max_file_bytes: u64,
    /// Turns whose snapshots are kept (newest first); at least 1.
    pub keep: usize,
    /// Snapshots older than this many days are pruned.
    pub keep_days: u64,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        Self::from_section(&CheckpointsSection::default())
    }
}

impl CheckpointSettings {
    /// The settings of `section`, defaults filled in.
    pub(crate) fn from_section(section: &CheckpointsSection) -> Self {
        Self {
            search_path: None,
            warnings: Vec::new(),
            enabled: section.enabled.unwrap_or(true),
            max_file_bytes: section.max_file_bytes.unwrap_or(DEFAULT_MAX_FILE_BYTES),
            keep: section.keep.unwrap_or(DEFAULT_KEEP).max(1),
            keep_days: section.keep_days.unwrap_or(DEFAULT_KEEP_DAYS),
        }
    }

    /// The user file's settings, with a warning when the project file has a section.
    pub(crate) fn resolve(sources: &Sources) -> Self {
        let mut settings = Self::from_section(&sources.user.checkpoints);
        if sources.project.checkpoints != CheckpointsSection::default() {
            settings.warnings.push(format!(
                "ignoring [checkpoints] in the project config {}: only {} may set it",
                sources.paths.project_file().display(),
                sources.paths.user_file().display()
            ));
        }
        settings.search_path = sources.env.get("PATH").map(str::to_string);
        settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Flags, Sources};

    #[test]
    fn only_the_user_file_sets_them_and_git_is_found_on_the_agents_path()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (home, ws) = (dir.path().join("home"), dir.path().join("ws"));
        std::fs::create_dir_all(ws.join(".agents"))?;
        std::fs::create_dir_all(&home)?;
        std::fs::write(
            home.join("config.toml"),
            "[checkpoints]\nkeep = 7\nmax_file_bytes = 1000\n",
        )?;
        std::fs::write(
            ws.join(".agents/config.toml"),
            "[checkpoints]\nenabled = false\n",
        )?;
        let env = crate::config::sources::tests::env_with(
            &[
                ("AGENT_HOME", &home.display().to_string()),
                ("PATH", "/opt/git/bin:/usr/bin"),
            ],
            &ws,
        );
        let settings = CheckpointSettings::resolve(&Sources::load(Flags::default(), env)?);
        assert!(settings.enabled, "a project switched checkpoints off");
        assert_eq!((settings.keep, settings.max_file_bytes), (7, 1000));
        assert_eq!(
            settings.search_path.as_deref(),
            Some("/opt/git/bin:/usr/bin")
        );
        assert_eq!(settings.warnings.len(), 1);
        assert!(
            settings.warnings[0].starts_with("ignoring [checkpoints] in the project config"),
            "{:?}",
            settings.warnings
        );
        Ok(())
    }

    #[test]
    fn defaults_and_floors() {
        let settings = CheckpointSettings::default();
        assert!(settings.enabled);
        assert_eq!(settings.max_file_bytes, 10_000_000);
        assert_eq!((settings.keep, settings.keep_days), (100, 14));
        let section = CheckpointsSection {
            enabled: Some(false),
            keep: Some(0),
            ..CheckpointsSection::default()
        };
        let settings = CheckpointSettings::from_section(&section);
        assert!(!settings.enabled);
        assert_eq!(settings.keep, 1);
    }
}
