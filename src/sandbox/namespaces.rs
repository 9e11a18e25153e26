//! User, mount and PID namespaces for confined commands (issue 15): what Landlock alone cannot
//! do. Secret locations are hidden (an empty, unreadable directory or file is mounted over
//! them), protected paths inside writable directories are made read-only, and the command
//! runs in its own PID namespace so that nothing it starts outlives it (see
//! [`super::supervise`]).
//!
//! Order in the helper, which is still single-threaded: `unshare(USER | NS | PID)`, write the
//! uid/gid maps (the caller's own ids map to themselves; as root every id maps to itself),
//! make every mount a slave (nothing done here propagates back to the host), bind the pinned
//! and read-only paths onto themselves (parents first; read-only ones are remounted with
//! `MS_RDONLY` and the flags the kernel locked on the original mount), then hide the secret
//! locations with binds from a small read-only tmpfs staged over [`STAGING`] and detached
//! again, and enter the working directory again so it resolves through the new mounts. The
//! PID namespace takes effect for the next child, which [`super::supervise`]
//! forks as its init; that child mounts a fresh `/proc` ([`mount_proc`]).
//!
//! A command cannot undo the mounts: Landlock forbids any change of the mount topology to a
//! sandboxed process (`mount`, `umount`, `pivot_root`, `move_mount`), the seccomp filter
//! refuses the mount system calls too, and in a nested user namespace the mounts are locked.
//!
//! Why own code over `libc` and not `bwrap`: bubblewrap is not installed on many systems (and
//! is absent here), a setuid `bwrap` behaves differently from an unprivileged one, and it
//! would cost one more `exec` per command on top of the helper's. The helper already runs our
//! own code before the command; doing the same dozen system calls there keeps one code path,
//! no extra process start, and errors we can explain. What we take from bubblewrap is the
//! design: user namespace first, then the mount namespace, identity id maps, read-only bind
//! mounts with the locked flags kept, a PID namespace whose init dies with its parent.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::NamespaceStatus;
use super::policy::Policy;

/// Directories a staging tmpfs is tried on, in order: the first that holds none of the paths
/// to hide. Nothing runs while it is mounted, and it is detached right after.
pub(crate) const STAGING: &[&str] = &["/proc", "/dev", "/sys"];

/// The uid and gid map lines for the calling user: the caller's ids map to themselves, and
/// for root every id (so files of every owner keep their owner inside).
struct IdMaps {
    uid: libc::uid_t,
    uid_single: CString,
    gid_single: CString,
}

const FULL_MAP: &[u8] = b"0 0 4294967295\n";

impl IdMaps {
    fn current() -> Self {
        // SAFETY: getuid/getgid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let line = |id: u32| CString::new(format!("{id} {id} 1\n")).unwrap_or_default();
        Self {
            uid,
            uid_single: line(uid),
            gid_single: line(gid),
        }
    }

    /// Writes the maps of the calling process, which just entered a new user namespace: its
    /// own ids only (all a process may map for itself). Async-signal-safe (only `open`,
    /// `write`, `close` on prepared buffers).
    fn write_own(&self) -> io::Result<()> {
        // A process must give up setgroups(2) before it may write its own gid map.
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/uid_map", self.uid_single.as_bytes())?;
        write_file(c"/proc/self/gid_map", self.gid_single.as_bytes())
    }

    /// As root, outside: writes every id onto itself for `child`, which just entered a new
    /// user namespace, so files of every owner keep their owner inside (a process can map
    /// only its own id for itself). Falls back to the child's own ids where the parent
    /// namespace does not map them all (root inside a container).
    fn write_for(&self, child: libc::pid_t) -> io::Result<()> {
        let path = |name: &str| c_path(Path::new(&format!("/proc/{child}/{name}")));
        let (uid_map, gid_map) = (path("uid_map")?, path("gid_map")?);
        if write_file(&uid_map, FULL_MAP).is_ok() && write_file(&gid_map, FULL_MAP).is_ok() {
            return Ok(());
        }
        write_file(&path("setgroups")?, b"deny")?;
        write_file(&uid_map, self.uid_single.as_bytes())?;
        write_file(&gid_map, self.gid_single.as_bytes())
    }
}

/// Writes `data` to `path` in one `write`. Async-signal-safe.
fn write_file(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: open/write/close on a NUL-terminated path and a buffer that outlive the calls.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        let error = io::Error::last_os_error();
        libc::close(fd);
        if usize::try_from(written).ok() != Some(data.len()) {
            return Err(error);
        }
    }
    Ok(())
}

const NAMESPACES: libc::c_int = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID;

/// Whether user, mount and PID namespaces work for this user: a throw-away child creates
/// them, writes its id maps, makes its mounts slaves, and its own child (the new PID
/// namespace's init) mounts `/proc` and a tmpfs. Touches no state of this process. About a
/// millisecond; run once per session.
pub(crate) fn probe() -> NamespaceStatus {
    use std::os::unix::process::CommandExt;
    let maps = IdMaps::current();
    let mut command = std::process::Command::new("/");
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the closure runs in the forked child before exec and makes only
    // async-signal-safe system calls on buffers prepared before the fork; it never returns
    // normally (it exits), so nothing is executed.
    unsafe {
        command.pre_exec(move || {
            probe_in_child(&maps)?;
            libc::_exit(0)
        });
    }
    let outcome = command.spawn().and_then(|mut child| child.wait());
    match outcome {
        Ok(status) if status.success() => NamespaceStatus::Available,
        Ok(status) => NamespaceStatus::Unavailable {
            reason: format!(
                "the namespace probe failed ({}): cannot mount inside a new PID namespace",
                describe_exit(status.code())
            ),
        },
        Err(error) => NamespaceStatus::Unavailable {
            reason: format!("cannot create user namespaces ({error}){HINT}"),
        },
    }
}

const HINT: &str = "; unprivileged user namespaces may be turned off (sysctl \
    kernel.unprivileged_userns_clone, user.max_user_namespaces, or \
    kernel.apparmor_restrict_unprivileged_userns), or this already runs inside a sandbox";

fn describe_exit(code: Option<i32>) -> String {
    match code {
        Some(code) => io::Error::from_raw_os_error(code).to_string(),
        None => "killed".to_string(),
    }
}

/// The probe's steps, in the forked child. Async-signal-safe.
fn probe_in_child(maps: &IdMaps) -> io::Result<()> {
    // SAFETY: raw system calls with constant, NUL-terminated arguments.
    unsafe {
        // The agent is not dumpable (`super::shield_agent_process`), which makes this child's
        // `/proc/self` files root's: an unprivileged child could not write its id maps.
        libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
        if libc::unshare(NAMESPACES) != 0 {
            return Err(io::Error::last_os_error());
        }
        maps.write_own()?;
        let slave = libc::MS_REC | libc::MS_SLAVE;
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            slave,
            std::ptr::null(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        let pid = libc::fork();
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            let proc_ok = libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                flags,
                std::ptr::null(),
            ) == 0;
            let tmpfs_ok = proc_ok
                && libc::mount(
                    c"tmpfs".as_ptr(),
                    c"/proc".as_ptr(),
                    c"tmpfs".as_ptr(),
                    flags,
                    c"size=4k".as_ptr().cast(),
                ) == 0;
            let code = if tmpfs_ok {
                0
            } else {
                io::Error::last_os_error().raw_os_error().unwrap_or(1) & 0x7f
            };
            libc::_exit(code);
        }
        let mut status = 0;
        if libc::waitpid(pid, &mut status, 0) != pid {
            return Err(io::Error::last_os_error());
        }
        if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
            libc::_exit(if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status).max(1)
            } else {
                1
            });
        }
    }
    Ok(())
}

/// Starts the command's init in new user, mount and PID namespaces (`clone(2)` with the
/// namespace flags: the child is PID 1 of its namespace) and writes its id maps. Call it only
/// in the single-threaded helper. Returns the child's pid in the parent and `0` in the child,
/// which must then call [`setup`].
///
/// # Errors
/// A message for the parent when the namespaces cannot be created.
pub(crate) fn spawn_init() -> Result<libc::pid_t, String> {
    let maps = IdMaps::current();
    let mut sync = [0; 2];
    // SAFETY: pipe2 fills two descriptors.
    if unsafe { libc::pipe2(sync.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!(
            "cannot create a pipe: {}",
            io::Error::last_os_error()
        ));
    }
    let flags = libc::c_ulong::try_from(NAMESPACES | libc::SIGCHLD).unwrap_or(0);
    // SAFETY: clone(2) without a new stack behaves like fork(2) in this single-threaded
    // process; the child gets the namespaces.
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    let pid = libc::pid_t::try_from(pid).unwrap_or(-1);
    if pid < 0 {
        return Err(format!(
            "cannot create namespaces: {}",
            io::Error::last_os_error()
        ));
    }
    if pid == 0 {
        // SAFETY: our own pipe ends.
        unsafe { libc::close(sync[1]) };
        let result = if maps.uid == 0 {
            // Wait until the parent wrote the maps (or gave up and closed the pipe).
            let mut byte = [0u8; 1];
            // SAFETY: a one-byte read into a local buffer.
            let read = unsafe { libc::read(sync[0], byte.as_mut_ptr().cast(), 1) };
            if read == 1 { Ok(()) } else { maps.write_own() }
        } else {
            maps.write_own()
        };
        // SAFETY: our own pipe end.
        unsafe { libc::close(sync[0]) };
        result.map_err(|e| format!("cannot write the user namespace's id maps: {e}"))?;
        return Ok(0);
    }
    // SAFETY: our own pipe end.
    unsafe { libc::close(sync[0]) };
    if maps.uid == 0 && maps.write_for(pid).is_ok() {
        // SAFETY: a one-byte write from a local buffer to our pipe.
        unsafe { libc::write(sync[1], [1u8].as_ptr().cast(), 1) };
    }
    // SAFETY: our own pipe end.
    unsafe { libc::close(sync[1]) };
    Ok(pid)
}

/// In the init, right after [`spawn_init`]: sets up the mounts of `policy` and a fresh
/// `/proc`, and enters the working directory again.
///
/// # Errors
/// A message naming the step and path that failed; the command must not run then.
pub(crate) fn setup(policy: &Policy) -> Result<(), String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    mount(
        None,
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_SLAVE,
        None,
    )
    .map_err(|e| format!("cannot make mounts private: {e}"))?;
    for (path, read_only) in ordered_binds(policy) {
        bind_in_place(&path, read_only).map_err(|e| {
            format!(
                "cannot {} `{}`: {e}",
                if read_only { "make read-only" } else { "pin" },
                path.display()
            )
        })?;
    }
    hide(&policy.hidden)?;
    mount_proc().map_err(|e| format!("cannot mount /proc for the PID namespace: {e}"))?;
    // The working directory still points into the mounts as they were; entering it again
    // goes through the new ones (else `.git/config` relative to it would skip the read-only
    // bind of the workspace).
    std::env::set_current_dir(&cwd)
        .map_err(|e| format!("cannot enter `{}` again: {e}", cwd.display()))
}

/// Pinned paths (bound onto themselves, still writable: a mount point cannot be renamed or
/// removed) and read-only paths, parents before children.
fn ordered_binds(policy: &Policy) -> Vec<(PathBuf, bool)> {
    let mut binds: Vec<(PathBuf, bool)> = policy
        .pinned
        .iter()
        .map(|p| (p.clone(), false))
        .chain(policy.read_only.iter().map(|p| (p.clone(), true)))
        .collect();
    binds.sort_by(|(a, _), (b, _)| (a.components().count(), a).cmp(&(b.components().count(), b)));
    let mut merged: Vec<(PathBuf, bool)> = Vec::with_capacity(binds.len());
    for (path, read_only) in binds {
        match merged.last_mut() {
            Some(last) if last.0 == path => last.1 |= read_only,
            _ => merged.push((path, read_only)),
        }
    }
    merged
}

/// Binds `path` onto itself (with the mounts below it); remounts it read-only if asked.
fn bind_in_place(path: &Path, read_only: bool) -> io::Result<()> {
    mount(Some(path), path, None, libc::MS_BIND | libc::MS_REC, None)?;
    if read_only {
        remount_read_only(path)?;
    }
    Ok(())
}

/// Remounts the bind mount at `path` read-only, keeping the flags the kernel locked on the
/// original mount (a user namespace may not clear `nosuid`, `nodev`, `noexec`, atime flags).
fn remount_read_only(path: &Path) -> io::Result<()> {
    let c_path = c_path(path)?;
    // SAFETY: a zeroed statvfs is a valid value; statvfs fills it from a NUL-terminated path.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut stat) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let kept = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ]
    .iter()
    .filter(|(st, _)| stat.f_flag & *st != 0)
    .fold(0, |flags, (_, ms)| flags | *ms);
    let flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | kept;
    mount(None, path, None, flags, None)
}

/// Mounts an empty, unreadable, read-only directory or file over each of `hidden`.
fn hide(hidden: &[PathBuf]) -> Result<(), String> {
    if hidden.is_empty() {
        return Ok(());
    }
    let stage = STAGING
        .iter()
        .map(Path::new)
        .find(|dir| dir.is_dir() && !hidden.iter().any(|h| h.starts_with(dir)))
        .ok_or("no directory to stage the empty mounts on")?;
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    mount(
        Some(Path::new("tmpfs")),
        stage,
        Some("tmpfs"),
        flags,
        Some("size=4k,mode=0700"),
    )
    .map_err(|e| format!("cannot mount a tmpfs on `{}`: {e}", stage.display()))?;
    let result = stage_and_bind(stage, hidden);
    // A fresh /proc is mounted on top next; elsewhere the staging tmpfs is detached (slower:
    // unmounting waits for the kernel's RCU grace period). The binds stay either way.
    if stage != Path::new("/proc") {
        let target = c_path(stage).map_err(|e| e.to_string())?;
        // SAFETY: umount2(2) on a NUL-terminated path.
        unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    }
    result
}

fn stage_and_bind(stage: &Path, hidden: &[PathBuf]) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    let dir = stage.join("empty-dir");
    let file = stage.join("empty-file");
    let staged = std::fs::DirBuilder::new()
        .mode(0o000)
        .create(&dir)
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o000)
                .open(&file)
                .map(drop)
        })
        .and_then(|()| std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o000)));
    staged.map_err(|e| format!("cannot prepare the empty mounts: {e}"))?;
    let read_only = libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
    mount(None, stage, None, read_only | libc::MS_NOEXEC, None)
        .map_err(|e| format!("cannot make the empty mounts read-only: {e}"))?;
    for path in hidden {
        let source = match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => &dir,
            Ok(_) => &file,
            // Gone since the session started: nothing to hide.
            Err(_) => continue,
        };
        mount(Some(source), path, None, libc::MS_BIND, None)
            .map_err(|e| format!("cannot hide `{}`: {e}", path.display()))?;
    }
    Ok(())
}

/// Mounts a fresh `/proc` for the PID namespace the caller is the init of, so process ids
/// seen by commands (`ps`, `kill`, `/proc/PID`) are those of their own namespace.
///
/// # Errors
/// The kernel's refusal (for example when `/proc` is partly masked by a container runtime).
pub(crate) fn mount_proc() -> io::Result<()> {
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    mount(
        Some(Path::new("proc")),
        Path::new("/proc"),
        Some("proc"),
        flags,
        None,
    )
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))
}

fn c_str(text: &str) -> io::Result<CString> {
    c_path(Path::new(OsStr::new(text)))
}

/// mount(2) with optional source, file-system type and data.
fn mount(
    source: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> io::Result<()> {
    let source = source.map(c_path).transpose()?;
    let target = c_path(target)?;
    let fstype = fstype.map(c_str).transpose()?;
    let data = data.map(c_str).transpose()?;
    let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is null or a NUL-terminated string alive for the call.
    let result = unsafe {
        libc::mount(
            ptr(&source),
            target.as_ptr(),
            ptr(&fstype),
            flags,
            ptr(&data).cast(),
        )
    };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn binds_are_ordered_parents_first_and_read_only_wins() {
        let policy = Policy {
            pinned: vec!["/w".into(), "/w/.git".into(), "/w/a/.git".into()],
            read_only: vec![
                "/w/.git/hooks".into(),
                "/w/.git".into(),
                "/w/.agents".into(),
            ],
            ..Policy::default()
        };
        assert_eq!(
            ordered_binds(&policy),
            vec![
                (PathBuf::from("/w"), false),
                (PathBuf::from("/w/.agents"), true),
                (PathBuf::from("/w/.git"), true),
                (PathBuf::from("/w/.git/hooks"), true),
                (PathBuf::from("/w/a/.git"), false),
            ]
        );
    }
}
