//! [`GovernanceError`]: what can go wrong while loading roles and budget settings. Every
//! variant ends the run with exit code 2 before the first model call (a configuration error),
//! or, at run time (`/role NAME`), is shown to the user and the session goes on.

use std::path::PathBuf;

/// A role or budget configuration error. Messages are lowercase, quote the bad value in
/// backticks and end with the fix.
#[derive(Debug, thiserror::Error)]
pub enum GovernanceError {
    #[error("unknown role `{name}`; available: {}", available.join(", "))]
    UnknownRole {
        name: String,
        available: Vec<String>,
    },
    #[error(
        "role `{name}` in {} inherits unknown role `{parent}`; available: {}",
        path.display(),
        available.join(", ")
    )]
    UnknownParent {
        name: String,
        parent: String,
        path: PathBuf,
        available: Vec<String>,
    },
    #[error(
        "invalid role name `{name}` in {}; use 1 to 64 letters, digits, `_` or `-`",
        path.display()
    )]
    BadName { name: String, path: PathBuf },
    #[error("role inheritance cycle `{}`; remove one of these `inherits`", cycle.join(" -> "))]
    Cycle { cycle: Vec<String> },
    #[error(
        "project role `{name}` in {} shadows the built-in role `{name}`; rename it",
        path.display()
    )]
    ShadowsBuiltin { name: String, path: PathBuf },
    #[error(
        "project role `{name}` in {} would replace your role `{name}` in {}; rename it, or run \
         `agent trust` if you trust this workspace",
        path.display(),
        user_path.display()
    )]
    ShadowsUserRole {
        name: String,
        path: PathBuf,
        user_path: PathBuf,
    },
    #[error(
        "project role `{name}` in {} inherits the privileged role `{privileged}`; run `agent trust` \
         if you trust this workspace, or inherit a less privileged role",
        path.display()
    )]
    UntrustedInherit {
        name: String,
        privileged: String,
        path: PathBuf,
    },
    #[error("role `{name}` is defined twice, in {} and {}; remove one", first.display(), second.display())]
    Duplicate {
        name: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("invalid tool glob `{pattern}` in {}: {message}; fix the pattern", path.display())]
    BadGlob {
        pattern: String,
        path: PathBuf,
        message: String,
    },
    #[error("invalid limit in {}: {message}", path.display())]
    BadLimit { path: PathBuf, message: String },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Toml { path: PathBuf, message: String },
    #[error("invalid [budget] setting: {0}")]
    Budget(String),
}
