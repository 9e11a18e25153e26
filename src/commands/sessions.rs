//! `agent sessions`: every saved session, most recently active first (SPEC §8.3).

use super::Outcome;
use crate::cli::RunArgs;
use crate::exit::Exit;

/// Lists the sessions in `$AGENT_HOME/sessions`.
///
/// # Errors
/// [`crate::exit::Error::Config`] when the configuration cannot be read.
pub(crate) fn run(args: &RunArgs) -> Outcome {
    let sources = super::sources(args)?;
    let dir = sources.paths.sessions_dir();
    let list = crate::session::list(&dir);
    if list.is_empty() {
        crate::outln!("no saved sessions in {}", dir.display());
    } else {
        crate::out!("{}", crate::session::list::render(&list));
    }
    Ok(Exit::Done)
}
