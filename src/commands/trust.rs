//! `agent trust` (SPEC §2.2): records the workspace in the user config's
//! `trusted_workspaces` ([`crate::config::trust::add_trusted`]), after which the project
//! config's `allow` rules and loosening settings apply.

use super::Outcome;
use crate::cli::RunArgs;
use crate::config::PermissionSettings;
use crate::config::trust::add_trusted;
use crate::exit::Exit;

/// Trusts the workspace of `args` (`-C DIR` or the current directory).
///
/// # Errors
/// [`crate::exit::Error::Config`] when the configuration cannot be read or the user config
/// cannot be updated.
pub(crate) fn run(args: &RunArgs) -> Outcome {
    let sources = super::sources(args)?;
    let workspace = &sources.paths.workspace;
    if add_trusted(&sources.paths.user_file(), workspace)? {
        crate::outln!("trusted {}", workspace.display());
    } else {
        crate::outln!("already trusted: {}", workspace.display());
    }
    let allows = PermissionSettings::project_allows(&sources);
    if !allows.is_empty() {
        crate::outln!("project allow rules now apply: {}", allows.join(", "));
    }
    Ok(Exit::Done)
}
