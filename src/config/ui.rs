//! What the face needs to know about the user's terminal and choices: `--json`, `--yes`,
//! the colour environment (`NO_COLOR`, `TERM`, `COLORTERM`), and where the REPL keeps its
//! input history.

use std::path::PathBuf;

use super::Sources;

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
}

impl UiSettings {
    /// The face's settings of `sources`.
    pub(crate) fn resolve(sources: &Sources) -> Self {
        Self {
            json: sources.flags.json,
            yes: sources.flags.yes,
            colors: ColorEnv::from_lookup(|k| sources.env.get(k)),
            history_file: sources.paths.history_file(),
        }
    }
}
