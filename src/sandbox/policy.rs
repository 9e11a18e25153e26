//! The policy for one confined command and its encoding as helper arguments:
//! `--mode workspace-write|read-only [--network] [--write DIR]... [--namespaces] [--hide PATH]...
//! [--read-only PATH]... [--pin PATH]... [--grace-ms N] [--status-fd N] -- PROGRAM ARGS...`.
//!
//! Invariants: a policy never has mode `off` (unconfined commands do not use the helper);
//! writable directories are absolute and canonical (symlinks resolved) so that path checks in
//! [`crate::sandbox::diagnose`] compare like with like; directories that do not exist are left
//! out (less access, never more). `hidden`, `read_only` and `pinned` are only set together with
//! `namespaces` (the mounts need a mount namespace); they are absolute and canonical too.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// Grace between SIGTERM and SIGKILL for processes still running when the shell exits, when
/// none is given.
pub(crate) const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// What one confined command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// [`SandboxMode::WorkspaceWrite`] or [`SandboxMode::ReadOnly`].
    pub(crate) mode: SandboxMode,
    /// TCP connect/bind and other sockets allowed.
    pub(crate) network: bool,
    /// Canonical directories where anything may be written (empty in read-only mode).
    pub(crate) writable: Vec<PathBuf>,
    /// Run in new user, mount and PID namespaces ([`super::namespaces`]).
    pub namespaces: bool,
    /// Secret locations mounted over with an empty, unreadable directory or file.
    pub(crate) hidden: Vec<PathBuf>,
    /// Paths inside writable directories that are made read-only.
    pub(crate) read_only: Vec<PathBuf>,
    /// Directories bound onto themselves so they cannot be renamed or removed (a `.git` and
    /// the directories leading to it), still writable.
    pub(crate) pinned: Vec<PathBuf>,
    /// Grace between SIGTERM and SIGKILL for processes left when the shell exits.
    pub(crate) grace: Duration,
    /// Descriptor the helper writes [`super::supervise::BACKGROUND_STOPPED`] to, when given.
    pub(crate) status_fd: Option<i32>,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
            writable: Vec::new(),
            namespaces: false,
            hidden: Vec::new(),
            read_only: Vec::new(),
            pinned: Vec::new(),
            grace: DEFAULT_GRACE,
            status_fd: None,
        }
    }
}

/// A malformed helper command line (a bug in the caller, or someone typing `__sandbox`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PolicyError {
    #[error(
        "unknown sandbox option `{0}`; expected --mode, --network, --write, --namespaces, --hide, --read-only, --pin, --grace-ms, --status-fd or --"
    )]
    UnknownOption(String),
    #[error("sandbox mode `{0}` is not one of workspace-write, read-only")]
    BadMode(String),
    #[error("`{0}` needs a value")]
    MissingValue(&'static str),
    #[error("path `{0}` is not absolute")]
    RelativePath(String),
    #[error("`{0}` needs a number, not `{1}`")]
    NotANumber(&'static str, String),
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
        let namespaces = settings.isolates();
        let writes = namespaces && settings.mode == SandboxMode::WorkspaceWrite;
        let inside = |paths: &[PathBuf]| -> Vec<PathBuf> {
            paths
                .iter()
                .filter(|p| writable.iter().any(|root| p.starts_with(root)))
                .cloned()
                .collect()
        };
        Self {
            mode: settings.mode,
            network: settings.network,
            namespaces,
            hidden: if namespaces {
                settings.hidden.clone()
            } else {
                Vec::new()
            },
            read_only: if writes {
                inside(&settings.read_only)
            } else {
                Vec::new()
            },
            pinned: if writes {
                inside(&settings.pinned)
            } else {
                Vec::new()
            },
            grace: settings.kill_grace,
            status_fd: None,
            writable,
        }
    }

    /// Whether a write to `path` (absolute, symlinks resolved) is allowed by this policy.
    pub(crate) fn allows_write(&self, path: &Path) -> bool {
        if self.protects(path).is_some() {
            return false;
        }
        DEVICE_NODES.iter().any(|node| path == Path::new(node))
            || self.writable.iter().any(|root| path.starts_with(root))
    }

    /// The read-only path `path` is at or under, if any.
    pub(crate) fn protects(&self, path: &Path) -> Option<&Path> {
        self.read_only
            .iter()
            .find(|p| path.starts_with(p))
            .map(PathBuf::as_path)
    }

    /// The hidden secret location `path` is at or under, if any.
    pub(crate) fn hides(&self, path: &Path) -> Option<&Path> {
        self.hidden
            .iter()
            .find(|p| path.starts_with(p))
            .map(PathBuf::as_path)
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
        if self.namespaces {
            args.push("--namespaces".into());
        }
        let lists = [
            ("--hide", &self.hidden),
            ("--read-only", &self.read_only),
            ("--pin", &self.pinned),
        ];
        for (flag, paths) in lists {
            for path in paths {
                args.push(flag.into());
                args.push(path.clone().into_os_string());
            }
        }
        if self.grace != DEFAULT_GRACE {
            args.push("--grace-ms".into());
            args.push(self.grace.as_millis().to_string().into());
        }
        if let Some(fd) = self.status_fd {
            args.push("--status-fd".into());
            args.push(fd.to_string().into());
        }
        args
    }

    /// Parses helper arguments into the policy and the command after `--`.
    ///
    /// # Errors
    /// A [`PolicyError`] for anything but the shape written by [`Policy::to_args`].
    pub(crate) fn parse(args: &[OsString]) -> Result<(Self, Vec<OsString>), PolicyError> {
        let mut policy = Self::default();
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
                Some("--namespaces") => policy.namespaces = true,
                Some(flag @ ("--write" | "--hide" | "--read-only" | "--pin")) => {
                    let path = absolute(iter.next(), flag_name(flag))?;
                    match flag {
                        "--write" => policy.writable.push(path),
                        "--hide" => policy.hidden.push(path),
                        "--read-only" => policy.read_only.push(path),
                        _ => policy.pinned.push(path),
                    }
                }
                Some("--grace-ms") => {
                    let millis = number(iter.next(), "--grace-ms")?;
                    policy.grace = Duration::from_millis(millis);
                }
                Some("--status-fd") => {
                    let fd = number(iter.next(), "--status-fd")?;
                    let fd = i32::try_from(fd)
                        .map_err(|_| PolicyError::NotANumber("--status-fd", fd.to_string()))?;
                    policy.status_fd = Some(fd);
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

fn flag_name(flag: &str) -> &'static str {
    match flag {
        "--write" => "--write",
        "--hide" => "--hide",
        "--read-only" => "--read-only",
        _ => "--pin",
    }
}

fn absolute(value: Option<&OsString>, flag: &'static str) -> Result<PathBuf, PolicyError> {
    let path = PathBuf::from(value.ok_or(PolicyError::MissingValue(flag))?);
    if !path.is_absolute() {
        return Err(PolicyError::RelativePath(path.display().to_string()));
    }
    Ok(path)
}

fn number(value: Option<&OsString>, flag: &'static str) -> Result<u64, PolicyError> {
    let value = value.ok_or(PolicyError::MissingValue(flag))?;
    value
        .to_str()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| PolicyError::NotANumber(flag, value.to_string_lossy().into_owned()))
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
            namespaces: true,
            hidden: vec![PathBuf::from("/h/.ssh")],
            read_only: vec![
                PathBuf::from("/w s/.git/hooks"),
                PathBuf::from("/w s/.agents"),
            ],
            pinned: vec![PathBuf::from("/w s/.git")],
            grace: Duration::from_millis(300),
            status_fd: Some(3),
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
            (&["--hide"], PolicyError::MissingValue("--hide")),
            (
                &["--grace-ms", "soon", "--", "x"],
                PolicyError::NotANumber("--grace-ms", "soon".into()),
            ),
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
