//! A cancellation flag shared between the Ctrl-C handler, the inner loop and running tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

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

    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Resolves once [`CancelToken::cancel`] has been called (at once if it already was).
    pub async fn cancelled(&self) {
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
pub struct InterruptGuard {
    task: Option<tokio::task::JoinHandle<()>>,
}

impl InterruptGuard {
    /// Watches for SIGINT and cancels `token` on the first one. Must be called inside a Tokio
    /// runtime. If the listener cannot be registered, nothing is watched (the default SIGINT
    /// action then ends the process, which is still an interrupt).
    pub fn watch(token: &CancelToken) -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut interrupts) = signal(SignalKind::interrupt()) else {
            return Self { task: None };
        };
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
        }
    }
}
