//! Small wrappers over the system calls [`super::exec`] needs: signalling a process group,
//! asking whether a group still has members, a pidfd for the shell's exit, and `poll(2)`.
//! Each wrapper is one call; none of them panics.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// Sends `signal` to every process in group `pgid`.
pub(crate) fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Whether any live process is still in group `pgid`.
///
/// `kill(-pgid, 0)` also succeeds while only zombies are left: members orphaned when the
/// shell died wait for init to reap them, which on some systems (a VM's minimal init) takes
/// seconds. So when the group answers, `/proc` decides: a group of zombies is gone.
pub(crate) fn group_alive(pgid: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    // SAFETY: signal 0 only checks for existence and permission.
    let result = unsafe { libc::kill(-pgid, 0) };
    let answers =
        result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    answers && live_member(pgid).unwrap_or(true)
}

/// Whether `/proc` lists a process of group `pgid` that is not a zombie; `None` when `/proc`
/// cannot be read.
fn live_member(pgid: i32) -> Option<bool> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
        let Some(rest) = stat.rfind(')').map(|at| &stat[at + 1..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let group = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
        if group == Some(pgid) && state != Some("Z") {
            return Some(true);
        }
    }
    Some(false)
}

/// A descriptor that becomes readable when process `pid` exits (Linux ≥ 5.3), or `None`.
pub(crate) fn pidfd(pid: u32) -> Option<OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: pidfd_open(2) takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0u32) };
        let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0)?;
        // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
        Some(unsafe { OwnedFd::from_raw_fd(fd) })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// Makes reads from `fd` return `WouldBlock` instead of waiting.
pub(crate) fn set_nonblocking(fd: &impl AsRawFd) -> std::io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl(2) on a descriptor we own, reading then setting its status flags.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Asks for a pipe buffer of `bytes` (fewer wake-ups for chatty commands); failures are
/// ignored, the default 64 KiB works too.
pub(crate) fn grow_pipe(fd: &impl AsRawFd, bytes: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: F_SETPIPE_SZ on a pipe descriptor we own; the result is only a size.
    unsafe {
        libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, bytes);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (fd, bytes);
}

/// Waits until one of `fds` is readable (or hung up) or `timeout` passes. Returns which
/// descriptors are ready, in order.
pub(crate) fn wait_readable(fds: &[i32], timeout: Duration) -> Vec<bool> {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|fd| libc::pollfd {
            fd: *fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let millis = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: `polls` is a valid array of `polls.len()` pollfd structures for the call.
    let ready = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, millis) };
    if ready <= 0 {
        return vec![false; fds.len()];
    }
    polls.iter().map(|p| p.revents != 0).collect()
}

/// Makes the calling (forked, not yet exec'd) child the leader of a new session and process
/// group, without a controlling terminal. Async-signal-safe: one system call.
pub(crate) fn new_session() -> std::io::Result<()> {
    // SAFETY: setsid(2) has no memory effects; called between fork and exec.
    if unsafe { libc::setsid() } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Asks for `signal` when the parent (the agent, pid `parent`) dies, and fails when it is
/// already gone. For the forked child before exec; async-signal-safe.
pub(crate) fn die_with_parent(signal: i32, parent: u32) -> std::io::Result<()> {
    // SAFETY: prctl(2) and getppid(2) with integer arguments, no memory effects.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if u32::try_from(libc::getppid()).ok() != Some(parent) {
            return Err(std::io::Error::other("the agent exited"));
        }
    }
    Ok(())
}

/// Duplicates `fd` onto `target` without close-on-exec (when `fd` already is `target`, only
/// clears the flag: `dup2` would leave it). Async-signal-safe.
pub(crate) fn dup_to(fd: i32, target: i32) -> std::io::Result<()> {
    // SAFETY: dup2(2)/fcntl(2) on descriptors of this process.
    let result = unsafe {
        if fd == target {
            libc::fcntl(fd, libc::F_SETFD, 0)
        } else {
            libc::dup2(fd, target)
        }
    };
    if result < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
