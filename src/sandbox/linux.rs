//! Landlock confinement, applied by the helper to itself just before it execs the shell.
//!
//! Rules (the kernel enforces them on the helper and everything it starts):
//! - read and execute everywhere (`/` with the read rights);
//! - all file-system rights under each writable directory of the [`Policy`];
//! - write (not ioctl) on the [`DEVICE_NODES`];
//! - with network off: TCP bind and connect refused on every port (Landlock ABI ≥ 4);
//! - signals only to processes inside the same sandbox (ABI ≥ 6), so a command cannot kill the
//!   agent or the user's other programs;
//! - ioctl on device files refused unless listed (ABI ≥ 5), which stops `TIOCSTI` keystroke
//!   injection into a terminal;
//! - no-new-privileges (set by `landlock_restrict_self`), then the seccomp filter of
//!   [`super::seccomp`].
//!
//! The ruleset is built best-effort for the running kernel; anything less than an enforced
//! ruleset with no-new-privileges is an error, and the helper then refuses to run the command.

use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

use super::policy::{DEVICE_NODES, Policy};
use super::{SandboxMode, SandboxStatus};

/// The newest Landlock ABI this code was written and tested against (kernel ABI 7 here).
const TARGET_ABI: ABI = ABI::V6;

/// `landlock_create_ruleset` flag asking for the ABI version.
const CREATE_RULESET_VERSION: libc::c_uint = 1;

/// Why the helper could not confine itself.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfineError {
    #[error("landlock: {0}")]
    Landlock(#[from] landlock::RulesetError),
    #[error("cannot open `/` for the read rule: {0}")]
    Root(#[from] landlock::PathFdError),
    #[error("the kernel did not enforce the Landlock ruleset ({0:?})")]
    NotEnforced(RulesetStatus),
    #[error("cannot set no-new-privileges")]
    NoNewPrivs,
    #[error("seccomp: {0}")]
    Seccomp(#[from] super::seccomp::FilterError),
}

/// Landlock availability, from `landlock_create_ruleset(NULL, 0, VERSION)`.
pub(crate) fn probe() -> SandboxStatus {
    // SAFETY: with a null attribute pointer and the VERSION flag the kernel only returns the
    // ABI version (or an error); no memory is read or written and no state changes.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if version > 0 {
        return SandboxStatus::Available {
            abi: u32::try_from(version).unwrap_or(u32::MAX),
        };
    }
    let error = std::io::Error::last_os_error();
    let reason = match error.raw_os_error() {
        Some(libc::EOPNOTSUPP) => {
            "Landlock is built into this kernel but disabled (add `landlock` to the `lsm=` boot parameter)".to_string()
        }
        Some(libc::ENOSYS) => "this kernel has no Landlock support (needs Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK)".to_string(),
        _ => format!("Landlock probe failed: {error}"),
    };
    SandboxStatus::Unavailable { reason }
}

/// Confines the calling process (the helper) according to `policy`, then installs the seccomp
/// filter. Irreversible; call it only in the helper, right before exec.
///
/// # Errors
/// [`ConfineError`] when any part cannot be applied; the caller must not run the command.
pub(crate) fn confine(policy: &Policy, abi: u32) -> Result<(), ConfineError> {
    let fs_all = AccessFs::from_all(TARGET_ABI);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(fs_all)?
        .scope(Scope::Signal)?;
    let tcp_confined = !policy.network && abi >= 4;
    if tcp_confined {
        ruleset = ruleset.handle_access(AccessNet::from_all(TARGET_ABI))?;
    }
    let mut created = ruleset.create()?.add_rule(PathBeneath::new(
        PathFd::new("/")?,
        AccessFs::from_read(TARGET_ABI),
    ))?;
    if policy.mode == SandboxMode::WorkspaceWrite {
        for dir in &policy.writable {
            if let Some(fd) = open(dir) {
                created = created.add_rule(PathBeneath::new(fd, fs_all))?;
            }
        }
    }
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate;
    for node in DEVICE_NODES {
        if let Some(fd) = open(Path::new(node)) {
            created = created.add_rule(PathBeneath::new(fd, device))?;
        }
    }
    let status = created.restrict_self()?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(ConfineError::NotEnforced(status.ruleset));
    }
    if !status.no_new_privs {
        return Err(ConfineError::NoNewPrivs);
    }
    super::seccomp::install(policy.network, tcp_confined).map_err(ConfineError::from)
}

/// Opens a rule target; a path that vanished is skipped (less access, never more).
fn open(path: &Path) -> Option<PathFd> {
    PathFd::new(path).ok()
}
