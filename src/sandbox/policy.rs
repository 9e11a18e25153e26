//! The policy for one confined command and its encoding as helper arguments:
//! `--mode workspace-write|read-only [--network] [--write DIR]... -- PROGRAM ARGS...`.
//!
//! Invariants: a policy never has mode `off` (unconfined commands do not use the helper);
//! writable directories are absolute and canonical (symlinks resolved) so that path checks in
//! [`crate::sandbox::diagnose`] compare like with like; directories that do not exist are left
//! out (less access, never more).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::{ExecSettings, SandboxMode};

/// Device nodes every confined shell may open for writing (`> /dev/null`, `2>/dev/tty`), in
/// both modes. `/dev/tty` fails anyway: commands run without a controlling terminal.
pub(crate) const DEVICE_NODES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// Directories writable in workspace-write mode besides the workspace and writable roots.
pub(crate) const TEMP_DIRS: &[&str] = &["/tmp", "/dev/shm"];

/// What one confined command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// [`SandboxMode::WorkspaceWrite`] or [`SandboxMode::ReadOnly`].
    pub(crate) mode: SandboxMode,
    /// TCP connect/bind and other sockets allowed.
    pub(crate) network: bool,
    /// Canonical directories where anything may be written (empty in read-only mode).
    pub(crate) writable: Vec<PathBuf>,
}

/// A malformed helper command line (a bug in the caller, or someone typing `__sandbox`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PolicyError {
    #[error("unknown sandbox option `{0}`; expected --mode, --network, --write or --")]
    UnknownOption(String),
    #[error("sandbox mode `{0}` is not one of workspace-write, read-only")]
    BadMode(String),
    #[error("`{0}` needs a value")]
    MissingValue(&'static str),
    #[error("writable directory `{0}` is not an absolute path")]
    RelativePath(String),
    #[error("no command after `--`")]
    NoCommand,
}

impl Policy {
    /// The policy for a command run under `settings` in `workspace`.
    pub(crate) fn for_command(settings: &ExecSettings, workspace: &Path) -> Self {
        let mut writable = Vec::new();
        if settings.mode == SandboxMode::WorkspaceWrite {
            let roots = std::iter::once(workspace.to_path_buf())
                .chain(TEMP_DIRS.iter().map(PathBuf::from))
                .chain(settings.writable_roots.iter().cloned());
            for root in roots {
                if let Ok(root) = root.canonicalize()
                    && root.is_dir()
                    && !writable.contains(&root)
                {
                    writable.push(root);
                }
            }
        }
        Self {
            mode: settings.mode,
            network: settings.network,
            writable,
        }
    }

    /// Whether a write to `path` (absolute, symlinks resolved) is allowed by this policy.
    pub(crate) fn allows_write(&self, path: &Path) -> bool {
        DEVICE_NODES.iter().any(|node| path == Path::new(node))
            || self.writable.iter().any(|root| path.starts_with(root))
    }

    /// The helper's arguments before `--`.
    pub(crate) fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--mode".into(), self.mode.name().into()];
        if self.network {
            args.push("--network".into());
        }
        for dir in &self.writable {
            args.push("--write".into());
            args.push(dir.clone().into_os_string());
        }
        args
    }

    /// Parses helper arguments into the policy and the command after `--`.
    ///
    /// # Errors
    /// A [`PolicyError`] for anything but the shape written by [`Policy::to_args`].
    pub(crate) fn parse(args: &[OsString]) -> Result<(Self, Vec<OsString>), PolicyError> {
        let mut policy = Self {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
            writable: Vec::new(),
        };
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            match arg.to_str() {
                Some("--") => {
                    let command: Vec<OsString> = iter.cloned().collect();
                    if command.is_empty() {
                        return Err(PolicyError::NoCommand);
                    }
                    return Ok((policy, command));
                }
                Some("--network") => policy.network = true,
                Some("--mode") => {
                    let value = iter.next().ok_or(PolicyError::MissingValue("--mode"))?;
                    policy.mode = parse_mode(value)?;
                }
                Some("--write") => {
                    let value = iter.next().ok_or(PolicyError::MissingValue("--write"))?;
                    let dir = PathBuf::from(value);
                    if !dir.is_absolute() {
                        return Err(PolicyError::RelativePath(dir.display().to_string()));
                    }
                    policy.writable.push(dir);
                }
                _ => {
                    return Err(PolicyError::UnknownOption(
                        arg.to_string_lossy().into_owned(),
                    ));
                }
            }
        }
        Err(PolicyError::NoCommand)
    }
}

fn parse_mode(value: &OsStr) -> Result<SandboxMode, PolicyError> {
    match value.to_str() {
        Some("workspace-write") => Ok(SandboxMode::WorkspaceWrite),
        Some("read-only") => Ok(SandboxMode::ReadOnly),
        _ => Err(PolicyError::BadMode(value.to_string_lossy().into_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn args_round_trip() {
        let policy = Policy {
            mode: SandboxMode::WorkspaceWrite,
            network: true,
            writable: vec![PathBuf::from("/w s"), PathBuf::from("/tmp")],
        };
        let mut args = policy.to_args();
        args.extend(os(&["--", "bash", "-c", "echo --mode"]));
        let (parsed, command) = Policy::parse(&args).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed, policy);
        assert_eq!(command, os(&["bash", "-c", "echo --mode"]));
    }

    #[test]
    fn bad_args_are_errors() {
        let cases: &[(&[&str], PolicyError)] = &[
            (
                &["--mode", "off", "--", "x"],
                PolicyError::BadMode("off".into()),
            ),
            (
                &["--write", "rel", "--", "x"],
                PolicyError::RelativePath("rel".into()),
            ),
            (&["--mode"], PolicyError::MissingValue("--mode")),
            (
                &["--net", "--", "x"],
                PolicyError::UnknownOption("--net".into()),
            ),
            (&["--mode", "read-only", "--"], PolicyError::NoCommand),
            (&["--mode", "read-only"], PolicyError::NoCommand),
        ];
        for (args, expected) in cases {
            assert_eq!(
                Policy::parse(&os(args)).err().as_ref(),
                Some(expected),
                "{args:?}"
            );
        }
    }

    #[test]
    fn read_only_has_no_writable_dirs() {
        let settings = ExecSettings {
            mode: SandboxMode::ReadOnly,
            ..ExecSettings::default()
        };
        let policy = Policy::for_command(&settings, Path::new("/"));
        assert!(policy.writable.is_empty());
        assert!(policy.allows_write(Path::new("/dev/null")));
        assert!(!policy.allows_write(Path::new("/tmp/x")));
    }

    #[test]
    fn workspace_write_includes_workspace_tmp_and_roots() -> std::io::Result<()> {
        let workspace = tempfile::tempdir()?;
        let extra = tempfile::tempdir()?;
        let settings = ExecSettings {
            writable_roots: vec![extra.path().to_path_buf(), PathBuf::from("/does/not/exist")],
            ..ExecSettings::default()
        };
        let policy = Policy::for_command(&settings, workspace.path());
        let ws = workspace.path().canonicalize()?;
        assert_eq!(policy.writable[0], ws);
        assert!(policy.writable.contains(&PathBuf::from("/tmp")));
        assert!(policy.writable.contains(&extra.path().canonicalize()?));
        assert!(!policy.writable.iter().any(|p| p.starts_with("/does")));
        assert!(policy.allows_write(&ws.join("a/b")));
        assert!(!policy.allows_write(Path::new("/etc/passwd")));
        Ok(())
    }
}
