//! Process lifetime for confined commands (issue 15, point 4): nothing a command starts
//! outlives the call, the agent's SIGKILL, or the OOM killer, `setsid` included.
//!
//! With namespaces (the normal case) the helper forks an init for the command's PID
//! namespace. The init has `PR_SET_PDEATHSIG(SIGKILL)`, and the helper has the same towards
//! the agent (set by the agent before `exec`), so when the agent dies for any reason the
//! helper dies, the init dies, and the kernel kills every process of the namespace: a process
//! cannot leave its PID namespace, whatever it does with sessions, process groups or double
//! forks.
//!
//! The init ([`Supervisor`]) forks the shell's process (which confines itself and execs
//! `bash`), reaps orphans while it runs, and forwards SIGTERM, SIGINT and SIGHUP to every
//! process of the namespace (so a timeout or interrupt also reaches `setsid` daemons). When the
//! shell exits, whatever is left gets SIGTERM, then SIGKILL after the grace period, and the
//! init exits with the shell's code; the helper exits with the init's. If anything was left,
//! one byte ([`BACKGROUND_STOPPED`]) is written to the status descriptor so the agent can tell
//! the model.
//!
//! Without namespaces (Landlock only) the helper is the supervisor itself: it becomes a child
//! subreaper (orphans are reparented to it, so the command's processes stay its descendants),
//! finds descendants through `/proc`, and treats its parent's death (the agent sets
//! `PR_SET_PDEATHSIG(SIGTERM)` then) as the signal to kill them all. That covers the agent's
//! SIGKILL, but not a SIGKILL of the helper itself; the shell's own process has
//! `PR_SET_PDEATHSIG(SIGKILL)` towards the helper.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use super::policy::Policy;

/// Byte written to the status descriptor when processes were still running after the shell
/// exited and had to be stopped.
pub(crate) const BACKGROUND_STOPPED: u8 = b'B';

/// Tick while waiting for left-over processes to exit.
const TICK: Duration = Duration::from_millis(10);

/// The last of SIGTERM, SIGINT, SIGHUP received and not yet handled.
static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    PENDING.store(signal, Ordering::SeqCst);
}

/// How the supervisor reaches every process of the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// The supervisor is PID 1 of the command's namespace: `kill(-1, ...)`.
    Namespace,
    /// The supervisor is a subreaper: its descendants, found in `/proc`.
    Descendants,
}

/// Runs `exec_shell` in a child and supervises it under `policy` (in new namespaces when the
/// policy asks for them); returns the exit code for the helper (the shell's, `128 + signal`
/// when it was killed). `exec_shell` runs in the child and returns only on failure.
pub(crate) fn run(policy: &Policy, exec_shell: &dyn Fn(bool) -> i32) -> i32 {
    if policy.namespaces {
        return namespace_init(policy, exec_shell);
    }
    // SAFETY: prctl/getppid have no memory effects.
    let parent = unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        libc::getppid()
    };
    Supervisor {
        reach: Reach::Descendants,
        parent: Some(parent),
        policy,
    }
    .run(exec_shell)
}

/// In the helper: starts the namespace's init ([`super::namespaces::spawn_init`]), which
/// sets up its mounts and supervises the shell, and waits for it.
fn namespace_init(policy: &Policy, exec_shell: &dyn Fn(bool) -> i32) -> i32 {
    let mut guard = [0; 2];
    // SAFETY: pipe2 fills two descriptors.
    if unsafe { libc::pipe2(guard.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return super::protocol::fail(
            super::protocol::SETUP_FAILED,
            &format!("cannot create a pipe: {}", std::io::Error::last_os_error()),
        );
    }
    let pid = match super::namespaces::spawn_init() {
        Ok(pid) => pid,
        Err(message) => {
            return super::protocol::fail(
                super::protocol::SETUP_FAILED,
                &format!("{message}; the command did not run"),
            );
        }
    };
    if pid == 0 {
        // SAFETY: prctl and close/poll on our own descriptors.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            libc::close(guard[1]);
            // The helper died before the death signal was armed: do not run orphaned.
            if hung_up(guard[0]) {
                libc::_exit(super::protocol::SETUP_FAILED);
            }
            libc::close(guard[0]);
        }
        let code = match super::namespaces::setup(policy) {
            Ok(()) => Supervisor {
                reach: Reach::Namespace,
                parent: None,
                policy,
            }
            .run(exec_shell),
            Err(message) => super::protocol::fail(
                super::protocol::SETUP_FAILED,
                &format!("{message}; the command did not run"),
            ),
        };
        // SAFETY: leaving the forked init without running the helper's exit path twice.
        unsafe { libc::_exit(code) }
    }
    // SAFETY: closing our copy of the read end; ignoring the signals the agent sends to the
    // whole group, which the init handles (the helper only relays the init's exit).
    unsafe {
        libc::close(guard[0]);
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
    let code = wait_for(pid);
    // SAFETY: our write end, kept open until the init is gone.
    unsafe { libc::close(guard[1]) };
    code
}

/// Whether the other end of pipe `fd` is closed.
fn hung_up(fd: i32) -> bool {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the call.
    unsafe { libc::poll(&mut poll, 1, 0) > 0 && poll.revents & libc::POLLHUP != 0 }
}

/// Waits for child `pid` and returns its exit code.
fn wait_for(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    loop {
        // SAFETY: waitpid on our own child with a valid status pointer.
        let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
        if waited == pid {
            return exit_code(status);
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return super::protocol::SETUP_FAILED;
        }
    }
}

fn exit_code(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        super::protocol::SETUP_FAILED
    }
}

/// Runs the shell and stops everything else when it is done.
struct Supervisor<'p> {
    reach: Reach,
    /// The agent's pid, watched in the Landlock-only case.
    parent: Option<libc::pid_t>,
    policy: &'p Policy,
}

impl Supervisor<'_> {
    fn run(&self, exec_shell: &dyn Fn(bool) -> i32) -> i32 {
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            install(signal);
        }
        // SAFETY: fork in a single-threaded process.
        let shell = unsafe { libc::fork() };
        if shell < 0 {
            return super::protocol::fail(
                super::protocol::SETUP_FAILED,
                &format!("cannot fork: {}", std::io::Error::last_os_error()),
            );
        }
        if shell == 0 {
            let code = exec_shell(self.reach == Reach::Descendants);
            // SAFETY: exec failed; leave the forked child at once.
            unsafe { libc::_exit(code) }
        }
        let code = self.wait_for_shell(shell);
        if self.stop_the_rest()
            && let Some(fd) = self.policy.status_fd
        {
            // SAFETY: one byte from a local buffer to a descriptor the agent gave us.
            let byte = [BACKGROUND_STOPPED];
            unsafe { libc::write(fd, byte.as_ptr().cast(), 1) };
        }
        code
    }

    /// Reaps children (orphans included) until the shell exits; forwards signals meanwhile.
    fn wait_for_shell(&self, shell: libc::pid_t) -> i32 {
        loop {
            let mut status = 0;
            // SAFETY: waitpid for any child with a valid status pointer.
            let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
            if pid == shell {
                return exit_code(status);
            }
            if pid < 0 {
                match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINTR) => self.handle_signal(),
                    _ => return super::protocol::SETUP_FAILED,
                }
            }
        }
    }

    /// Forwards a received signal to every process of the command; when the agent is gone
    /// (Landlock-only case), kills them all and exits.
    fn handle_signal(&self) {
        let signal = PENDING.swap(0, Ordering::SeqCst);
        if let Some(parent) = self.parent
            // SAFETY: getppid has no memory effects.
            && unsafe { libc::getppid() } != parent
        {
            self.kill_all();
            // SAFETY: the agent is gone; nothing is left to report to.
            unsafe { libc::_exit(128 + libc::SIGKILL) };
        }
        if signal != 0 {
            self.signal_all(signal);
        }
    }

    /// Stops what is still running after the shell exited: SIGTERM, SIGKILL after the grace
    /// period. Returns whether anything was left.
    fn stop_the_rest(&self) -> bool {
        if !reap_and_check() {
            return false;
        }
        self.signal_all(libc::SIGTERM);
        let deadline = Instant::now() + self.policy.grace;
        while Instant::now() < deadline {
            if !reap_and_check() {
                return true;
            }
            self.handle_signal();
            std::thread::sleep(TICK);
        }
        self.kill_all();
        true
    }

    /// SIGKILL to everything, repeated until no child is left (a process forking in a loop
    /// keeps adding orphans).
    fn kill_all(&self) {
        while reap_and_check() {
            self.signal_all(libc::SIGKILL);
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn signal_all(&self, signal: libc::c_int) {
        match self.reach {
            // SAFETY: from PID 1 of a namespace, kill(-1) reaches every other process in it.
            Reach::Namespace => unsafe {
                libc::kill(-1, signal);
            },
            Reach::Descendants => {
                // SAFETY: getpid has no memory effects.
                let me = unsafe { libc::getpid() };
                for pid in descendants(me) {
                    // SAFETY: kill(2) of a process we found below us.
                    unsafe { libc::kill(pid, signal) };
                }
            }
        }
    }
}

/// Installs `on_signal` for `signal` without `SA_RESTART`, so a blocking `waitpid` returns.
fn install(signal: libc::c_int) {
    // SAFETY: a zeroed sigaction is valid; the handler only stores to an atomic.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, std::ptr::null_mut());
    }
}

/// Reaps every exited child; returns whether live children remain.
fn reap_and_check() -> bool {
    loop {
        let mut status = 0;
        // SAFETY: non-blocking waitpid for any child.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        match pid {
            0 => return true,
            p if p > 0 => {}
            _ => {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return false;
            }
        }
    }
}

/// Every live descendant of `root`, from `/proc/PID/task/TID/children` (or a scan of `/proc`
/// where the kernel does not offer that file).
fn descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
    let mut found = Vec::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        let Some(children) = children_of(pid) else {
            return scan_descendants(root);
        };
        for child in children {
            if !found.contains(&child) {
                found.push(child);
                queue.push(child);
            }
        }
    }
    found
}

/// The children of `pid` listed by the kernel, `None` without `CONFIG_PROC_CHILDREN`.
fn children_of(pid: libc::pid_t) -> Option<Vec<libc::pid_t>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut children = Vec::new();
    for task in tasks.flatten() {
        let text = match std::fs::read_to_string(task.path().join("children")) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(_) => continue,
        };
        children.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<libc::pid_t>().ok()),
        );
    }
    Some(children)
}

/// Descendants of `root` from the parent ids of every process in `/proc`.
fn scan_descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
    let mut parents = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
            let ppid = stat
                .rfind(')')
                .and_then(|at| stat[at + 1..].split_whitespace().nth(1))
                .and_then(|p| p.parse::<libc::pid_t>().ok());
            if let Some(ppid) = ppid {
                parents.push((pid, ppid));
            }
        }
    }
    let mut found: Vec<libc::pid_t> = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, _) in parents.iter().filter(|(_, p)| *p == parent) {
            if !found.contains(pid) {
                found.push(*pid);
                frontier.push(*pid);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_of_a_process_tree() -> std::io::Result<()> {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .spawn()?;
        let pid = i32::try_from(child.id()).unwrap_or(0);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut found = Vec::new();
        while Instant::now() < deadline {
            found = descendants(pid);
            if found.len() == 2 {
                break;
            }
            std::thread::sleep(TICK);
        }
        let scanned = scan_descendants(pid);
        child.kill()?;
        for pid in &found {
            // SAFETY: killing the test's own grandchildren.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        child.wait()?;
        assert_eq!(found.len(), 2, "{found:?}");
        let mut scanned = scanned;
        scanned.sort_unstable();
        found.sort_unstable();
        assert_eq!(scanned, found);
        Ok(())
    }
}
