//! What the face needs to know about the user's terminal and choices: `--json`, `--yes`,
//! the colour environment (`NO_COLOR`, `TERM`, `COLORTERM`), where the REPL keeps its
//! input history, and how the terminal is notified (`[ui]`, the user file only: a
//! repository may not choose a program to run).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::{ConfigError, Sources};

/// Seconds a turn must take before its end is notified (issue 18).
pub(crate) const DEFAULT_NOTIFY_AFTER: Duration = Duration::from_secs(30);

/// How the user is told that the agent waits for an approval or finished a long turn. Only
/// on a terminal, never with `--json` (issue 18).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Notify {
    /// Nothing.
    Off,
    /// A bell (BEL).
    Bell,
    /// A bell, and a desktop notification escape where the terminal is known to show one:
    /// OSC 9 (iTerm2, WezTerm, Ghostty, Windows Terminal, ConEmu) or OSC 777 (VTE-based
    /// terminals, foot, urxvt).
    #[default]
    Auto,
    /// Runs this program with `sh -c`, the message in `$1`.
    Command(String),
}

/// The desktop notification escape a terminal understands, from its environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum DesktopEscape {
    /// Only the bell is known to work.
    #[default]
    None,
    /// `ESC ] 9 ; message BEL`.
    Osc9,
    /// `ESC ] 777 ; notify ; title ; message BEL`.
    Osc777,
}

impl DesktopEscape {
    /// Reads `TERM_PROGRAM`, `WT_SESSION`, `ConEmuANSI`, `VTE_VERSION` and `TERM` through `get`.
    pub(crate) fn from_lookup<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Self {
        let program = get("TERM_PROGRAM").unwrap_or("");
        let term = get("TERM").unwrap_or("");
        if matches!(program, "iTerm.app" | "WezTerm" | "ghostty")
            || get("WT_SESSION").is_some()
            || get("ConEmuANSI") == Some("ON")
        {
            DesktopEscape::Osc9
        } else if get("VTE_VERSION").is_some()
            || term.starts_with("foot")
            || term.starts_with("rxvt")
        {
            DesktopEscape::Osc777
        } else {
            DesktopEscape::None
        }
    }
}

/// `[ui]`: how the terminal is told that the agent waits or finished (issue 18).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UiSection {
    /// `auto` (default: bell, plus a desktop notification where the terminal has one),
    /// `bell`, `command` (run `notify_command`), or `off`.
    pub(crate) notify: Option<String>,
    /// The program run by `notify = "command"` (`sh -c`, the message in `$1`).
    pub(crate) notify_command: Option<String>,
    /// Seconds a turn must take before its end is notified (default 30).
    pub(crate) notify_after: Option<f64>,
}

/// Checks `[ui]`: a known `notify` value, a command when it is `command`, a threshold.
///
/// # Errors
/// [`ConfigError::Toml`] naming the value and the file.
pub(crate) fn check(section: &UiSection, path: &Path) -> Result<(), ConfigError> {
    let error = |message: String| {
        Err(ConfigError::Toml {
            path: path.to_path_buf(),
            message,
        })
    };
    match section.notify.as_deref() {
        None | Some("auto" | "bell" | "off") => {}
        Some("command")
            if section
                .notify_command
                .as_deref()
                .is_some_and(|c| !c.trim().is_empty()) => {}
        Some("command") => {
            return error(
                "[ui] notify = `command` needs notify_command, the program to run".into(),
            );
        }
        Some(other) => {
            return error(format!(
                "[ui] notify = `{other}` is not a choice; use auto, bell, command or off"
            ));
        }
    }
    if let Some(t) = section
        .notify_after
        .filter(|t| !(t.is_finite() && *t >= 0.0))
    {
        return error(format!(
            "[ui] notify_after = `{t}` is not a duration; use seconds, 0 or more"
        ));
    }
    Ok(())
}

/// What decides plain vs colour output, read from the environment once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ColorEnv {
    /// `NO_COLOR` is set and not empty (no-color.org).
    pub(crate) no_color: bool,
    /// `TERM=dumb`.
    pub(crate) dumb: bool,
    /// `COLORTERM` is `truecolor` or `24bit`.
    pub(crate) truecolor: bool,
}

impl ColorEnv {
    /// Reads `NO_COLOR`, `TERM` and `COLORTERM` through `get`.
    pub(crate) fn from_lookup<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Self {
        Self {
            no_color: get("NO_COLOR").is_some_and(|v| !v.is_empty()),
            dumb: get("TERM") == Some("dumb"),
            truecolor: matches!(get("COLORTERM"), Some("truecolor" | "24bit")),
        }
    }

    /// Colour is wanted at all (a terminal may still be missing).
    pub(crate) fn allows_color(&self) -> bool {
        !self.no_color && !self.dumb
    }
}

/// The face's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct UiSettings {
    /// `--json`: one JSON event per line on stdout.
    pub(crate) json: bool,
    /// `--yes`: approve every `ask` (a `deny` stays a deny).
    pub(crate) yes: bool,
    pub(crate) colors: ColorEnv,
    /// `$AGENT_HOME/history`.
    pub(crate) history_file: PathBuf,
    /// `[ui] notify` of the user file.
    pub(crate) notify: Notify,
    /// `[ui] notify_after`: a turn at least this long is notified when it ends.
    pub(crate) notify_after: Duration,
    pub(crate) escape: DesktopEscape,
}

impl UiSettings {
    /// The face's settings of `sources`.
    pub(crate) fn resolve(sources: &Sources) -> Self {
        Self {
            json: sources.flags.json,
            yes: sources.flags.yes,
            colors: ColorEnv::from_lookup(|k| sources.env.get(k)),
            history_file: sources.paths.history_file(),
            notify: notify(&sources.user.ui),
            notify_after: sources
                .user
                .ui
                .notify_after
                .filter(|t| t.is_finite() && *t >= 0.0)
                .map_or(DEFAULT_NOTIFY_AFTER, Duration::from_secs_f64),
            escape: DesktopEscape::from_lookup(|k| sources.env.get(k)),
        }
    }
}

/// `[ui] notify` as checked by [`check`].
fn notify(section: &UiSection) -> Notify {
    match (section.notify.as_deref(), &section.notify_command) {
        (Some("off"), _) => Notify::Off,
        (Some("bell"), _) => Notify::Bell,
        (Some("command"), Some(command)) => Notify::Command(command.clone()),
        _ => Notify::Auto,
    }
}
