//! A cancellation flag shared between the Ctrl-C handler, the inner loop and running tools,
//! and what happens when `agent` itself is told to stop.
//!
//! SIGTERM (`timeout`, CI cancelling a job, `kill`) and SIGHUP (the terminal closed) end the
//! running turn the way Ctrl-C does, so the command's whole process group is stopped (TERM,
//! then KILL) and the session records it as interrupted; then the process ends by the same
//! signal with its default action. Without this, a command kept running after `agent` died,
//! still writing to the workspace.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

/// The result text of a tool call that was not run, or was stopped, because the user
/// interrupted the turn (what the model reads).
pub(crate) const INTERRUPTED: &str = "interrupted by user";

/// Cheap to clone; all clones see the same flag. Once cancelled it stays cancelled; each user
/// turn gets a fresh token.
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Resolves once [`CancelToken::cancel`] has been called (at once if it already was).
    pub(crate) async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// Cancels a token when the user presses Ctrl-C (SIGINT), for as long as it is alive.
///
/// The signal listener is registered when the guard is created, not when a task first runs,
/// so a Ctrl-C pressed at any moment after [`InterruptGuard::watch`] returns is seen.
pub(crate) struct InterruptGuard {
    task: Option<tokio::task::JoinHandle<()>>,
}

impl InterruptGuard {
    /// Watches for SIGINT and cancels `token` on the first one. Must be called inside a Tokio
    /// runtime. If the listener cannot be registered, nothing is watched (the default SIGINT
    /// action then ends the process, which is still an interrupt).
    pub(crate) fn watch(token: &CancelToken) -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut interrupts) = signal(SignalKind::interrupt()) else {
            return Self { task: None };
        };
        set_current(Some(token.clone()));
        let token = token.clone();
        let task = tokio::spawn(async move {
            if interrupts.recv().await.is_some() {
                token.cancel();
            }
        });
        Self { task: Some(task) }
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            set_current(None);
            TURN_ENDED.notify_waiters();
        }
    }
}

/// The token of the turn that is running (set by [`InterruptGuard::watch`]).
static CURRENT: Mutex<Option<CancelToken>> = Mutex::new(None);
/// Notified when a watched turn ends.
static TURN_ENDED: Notify = Notify::const_new();
/// The terminating signal received, 0 for none.
static TERMINATED: AtomicI32 = AtomicI32::new(0);

/// Longest wait for a cancelled turn to stop its command (TERM, 2 s, KILL) before exiting.
const UNWIND_WAIT: Duration = Duration::from_secs(5);

fn set_current(token: Option<CancelToken>) {
    let mut current = match CURRENT.lock() {
        Ok(current) => current,
        Err(poisoned) => poisoned.into_inner(),
    };
    *current = token;
}

fn current() -> Option<CancelToken> {
    match CURRENT.lock() {
        Ok(current) => current.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// Watches for SIGTERM and SIGHUP for the rest of the process: cancels the running turn,
/// waits for it to stop (at most [`UNWIND_WAIT`]), then ends the process by that signal.
/// Must be called inside a Tokio runtime; if a listener cannot be registered, that signal
/// keeps its default action.
pub(crate) fn watch_termination() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let mut hup = signal(SignalKind::hangup()).ok();
    if term.is_none() && hup.is_none() {
        return;
    }
    tokio::spawn(async move {
        let signo = tokio::select! {
            Some(()) = recv(&mut term) => libc::SIGTERM,
            Some(()) = recv(&mut hup) => libc::SIGHUP,
        };
        TERMINATED.store(signo, Ordering::SeqCst);
        let ended = TURN_ENDED.notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        if let Some(token) = current() {
            token.cancel();
            let _ = tokio::time::timeout(UNWIND_WAIT, ended).await;
        }
        die_by(signo);
    });
}

async fn recv(signal: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
    match signal {
        Some(signal) => signal.recv().await,
        None => std::future::pending().await,
    }
}

/// After the session ends: if SIGTERM or SIGHUP stopped it, ends the process by that signal
/// (the watcher may not have run before the runtime shut down).
pub(crate) fn exit_if_terminated() {
    let signo = TERMINATED.load(Ordering::SeqCst);
    if signo != 0 {
        die_by(signo);
    }
}

/// Ends the process by `signo` with its default action, so the parent sees the signal.
fn die_by(signo: libc::c_int) -> ! {
    // SAFETY: resetting a disposition and raising a signal have no memory-safety
    // preconditions; the default action of SIGTERM/SIGHUP ends the process.
    unsafe {
        libc::signal(signo, libc::SIG_DFL);
        libc::raise(signo);
    }
    std::process::exit(128 + signo)
}
