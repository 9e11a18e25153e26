//! Kernel features some tests need, with visible skips, and a home directory full of fake
//! secrets.
//!
//! A test that needs Landlock or user namespaces calls [`landlock`] or [`namespaces`] first;
//! without the feature it prints `SKIPPED: <test>: <reason>` straight to the process's stderr
//! (not the test harness's captured output, so the skip shows in `cargo test`) and returns
//! early. With `AGENT_TEST_REQUIRE_SANDBOX=1` in the environment a missing feature fails the
//! test instead: CI on machines that have the features sets it, so nothing is skipped there.

use std::io::Write;
use std::path::{Path, PathBuf};

use agent::permissions::defaults::{FILES, SECRET_LOCATIONS};
use agent::sandbox::{NamespaceStatus, SandboxStatus, probe, probe_namespaces};

/// Environment variable that turns a skip into a failure.
pub(crate) const REQUIRE_ENV: &str = "AGENT_TEST_REQUIRE_SANDBOX";

/// Reports a skipped test on the real stderr, or fails it under [`REQUIRE_ENV`].
pub(crate) fn skip(reason: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    assert!(
        std::env::var_os(REQUIRE_ENV).is_none(),
        "{test} needs {reason}, and {REQUIRE_ENV} is set"
    );
    let _ = writeln!(std::io::stderr(), "SKIPPED: {test}: {reason}");
}

/// Whether Landlock is usable; reports the skip when not.
pub(crate) fn landlock() -> bool {
    match probe() {
        SandboxStatus::Available { .. } => true,
        SandboxStatus::Unavailable { reason } => {
            skip(&format!("Landlock, unavailable on this kernel: {reason}"));
            false
        }
    }
}

/// Whether Landlock and user namespaces are usable; reports the skip when not.
pub(crate) fn namespaces() -> bool {
    if !landlock() {
        return false;
    }
    match probe_namespaces() {
        NamespaceStatus::Available => true,
        NamespaceStatus::Unavailable { reason } => {
            skip(&format!("user namespaces, unavailable here: {reason}"));
            false
        }
    }
}

/// The text every fake secret holds, with its location.
pub(crate) const FAKE: &str = "FAKE-SECRET";

/// One secret location created under a fake home.
#[derive(Debug, Clone)]
pub(crate) struct Secret {
    /// As in `SECRET_LOCATIONS` (`~/.ssh`, `$AGENT_HOME/env`).
    pub location: &'static str,
    /// Relative to the home directory.
    pub relative: PathBuf,
    /// A file holding the secret: the location itself, or a file inside it.
    pub file: PathBuf,
}

/// Creates every built-in secret location under `home` (with `agent_home` for
/// `$AGENT_HOME/env`): directories get a `secret` file; every file holds
/// `FAKE_SECRET_VALUE="FAKE-SECRET <location>"` (a valid env-file line, so the agent still
/// starts with a fake `$AGENT_HOME/env`).
pub(crate) fn fake_secrets(home: &Path, agent_home: &Path) -> Vec<Secret> {
    SECRET_LOCATIONS
        .iter()
        .map(|location| {
            let (base, rest) = match location.strip_prefix("$AGENT_HOME/") {
                Some(rest) => (agent_home, rest),
                None => (home, location.trim_start_matches("~/")),
            };
            let path = base.join(rest);
            let directory = FILES
                .iter()
                .any(|(_, pattern, _, _)| *pattern == format!("{location}/**"));
            let file = if directory {
                std::fs::create_dir_all(&path).expect("secret dir");
                path.join("secret")
            } else {
                path.clone()
            };
            std::fs::create_dir_all(file.parent().expect("parent")).expect("secret parent");
            let line = format!("FAKE_SECRET_VALUE=\"{FAKE} {location}\"\n");
            std::fs::write(&file, line).expect("secret file");
            Secret {
                location,
                relative: path.strip_prefix(home).unwrap_or(&path).to_path_buf(),
                file,
            }
        })
        .collect()
}
