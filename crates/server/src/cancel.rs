//! Cancelling a statement in flight: ask the server to cancel it, then wait a while for
//! the statement to end. Dropping the statement's future instead would leave the backend
//! working and the session blocked; waiting lets the server abort it so the session is
//! clean for what follows.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::server::libpq::PqCancel;

/// Send the cancel request (`cancel`), then wait up to `grace` for `running` (the
/// statement's future, or the task running it) to end: its output, or None if it did not
/// end in time.
pub async fn cancel_then_wait<F: Future>(
    cancel: impl Future<Output = ()>,
    running: F,
    grace: Duration,
) -> Option<F::Output> {
    cancel.await;
    tokio::time::timeout(grace, running).await.ok()
}

/// Ask the server to cancel through libpq, off the async thread: `PQcancel` blocks (it
/// opens a connection of its own).
pub async fn pq_cancel(c: &Arc<PqCancel>) -> Result<(), String> {
    let c = c.clone();
    match tokio::task::spawn_blocking(move || c.cancel()).await {
        Ok(r) => r,
        Err(e) => Err(e.to_string()),
    }
}
