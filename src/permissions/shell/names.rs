//! Which shell variables a command line may set without a prompt.
//!
//! Setting a variable can change what later commands run: `PATH` picks the program,
//! `LD_PRELOAD` injects code, `GIT_EXTERNAL_DIFF` / `PAGER` / `BASH_ENV` name programs to run,
//! `IFS` re-splits words. Bash also exports an assignment to any variable already in the
//! environment, and we cannot know which uppercase names the user's environment holds. So an
//! assignment is prompt-free only for names that are conventionally shell-local (they contain
//! a lowercase letter: `f`, `file_list`) or that are on a short list of well-known harmless
//! settings (colour, locale, Rust/Python diagnostics). Everything else is at least `ask`.

/// Uppercase names that only change formatting or diagnostics.
const HARMLESS: &[&str] = &[
    "CI",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "TERM",
    "COLUMNS",
    "LINES",
    "TZ",
    "LANG",
    "LANGUAGE",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "RUST_LOG",
    "CARGO_TERM_COLOR",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "PYTHONHASHSEED",
];

/// `None` when assigning `name` is harmless, else the reason it is at least `ask`.
pub(crate) fn assignment_hazard(name: &str) -> Option<String> {
    if name.contains('[') {
        return Some(format!(
            "assigns the array element `{name}`, whose index bash evaluates as arithmetic"
        ));
    }
    let local = name.chars().any(|c| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if local || HARMLESS.contains(&name) || name.starts_with("LC_") {
        return None;
    }
    Some(format!(
        "sets the environment variable `{name}`, which can change what programs run"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(assignment_hazard("f"), None);
        assert_eq!(assignment_hazard("file_list"), None);
        assert_eq!(assignment_hazard("RUST_BACKTRACE"), None);
        assert_eq!(assignment_hazard("LC_ALL"), None);
        assert!(assignment_hazard("PATH").is_some());
        assert!(assignment_hazard("LD_PRELOAD").is_some());
        assert!(assignment_hazard("GIT_EXTERNAL_DIFF").is_some());
        assert!(assignment_hazard("a[$(rm x)]").is_some());
        assert!(assignment_hazard("X").is_some());
    }
}
