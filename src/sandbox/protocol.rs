//! The helper's protocol with the agent: its exit codes and the one error line it prints
//! when the command did not run. A leaf, shared by [`super::helper`], [`super::supervise`]
//! and [`super::exec`] (which reads the line back).

/// Exit code when the sandbox could not be applied and the command did not run (as `env`
/// and `timeout` use 125 for their own failures).
pub(crate) const SETUP_FAILED: i32 = 125;
/// Exit code when the program could not be executed (as shells use 127).
pub(crate) const EXEC_FAILED: i32 = 127;
/// Start of the helper's own error line on stderr.
pub(crate) const ERROR_PREFIX: &str = "agent: sandbox error:";

/// Writes the helper's error line to stderr (its protocol with the agent, which recognises
/// [`ERROR_PREFIX`]; a closed stderr is ignored); returns `code`.
pub(crate) fn fail(code: i32, message: &str) -> i32 {
    use std::io::Write;
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{ERROR_PREFIX} {message}");
    let _ = stderr.flush();
    code
}
