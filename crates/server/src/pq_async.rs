//! A libpq connection driven without blocking from a single-threaded tokio runtime: the
//! ingest loader's reading and writing loop (see `experiment::ingest::pq_loader` for why
//! libpq, and the measurements behind these choices). The query experiment's load generator
//! drives its sockets itself, as pgbench does (`experiment::query::loadgen`).
//!
//! Readiness: the socket is registered for readability only (a write wakes no one; see
//! `server::lean`). libpq reads once per `PQconsumeInput` and cannot say whether it drained
//! the socket, so when libpq still waits for more after a read, a one-byte `MSG_PEEK` decides
//! whether to sleep until the next edge. Over TLS the socket can be drained while OpenSSL
//! still holds decrypted bytes of the reply, so there a wait for readability lasts at most
//! 1 ms before libpq is asked again. Should the socket's send buffer be full (a very large statement), the
//! client looks for room every 200 µs without blocking its thread, reading what the server
//! sends meanwhile.

use std::future::Future;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use super::libpq::{self, PqConn, PqResult};

/// A non-blocking libpq connection and its socket, watched by the current runtime.
pub struct AsyncPq {
    /// A descriptor of the connection's socket of our own (libpq closes its own when the
    /// connection drops), watched for readability.
    fd: AsyncFd<OwnedFd>,
    /// TLS in use (see `read`).
    tls: bool,
    pub conn: PqConn,
}

impl AsyncPq {
    /// Watch `conn` (already in non-blocking mode) from the current runtime.
    pub fn new(conn: PqConn) -> Result<AsyncPq, String> {
        let own = conn
            .socket()
            .map_err(|e| format!("cannot watch the connection's socket: {e}"))?;
        // SAFETY: the AsyncFd owns the descriptor (a dup of libpq's), so it stays open and the
        // same for the AsyncFd's whole life, whatever libpq does with its own.
        let fd = unsafe { AsyncFd::register_with_interest(own, Interest::READABLE) }
            .map_err(|e| format!("cannot watch the connection's socket: {e}"))?;
        Ok(AsyncPq {
            tls: conn.tls(),
            fd,
            conn,
        })
    }

    /// A failed libpq call said as a sentence (a lost connection named as such).
    pub(crate) fn failure(&self, e: String) -> String {
        self.conn.failure(&e)
    }

    /// Read what the server has sent once the socket is readable (or was left readable).
    pub(crate) async fn read(&mut self) -> Result<(), String> {
        let waited = if self.tls {
            tokio::time::timeout(Duration::from_millis(1), self.fd.readable())
                .await
                .ok()
        } else {
            Some(self.fd.readable().await)
        };
        let mut guard = match waited {
            Some(Ok(g)) => Some(g),
            Some(Err(e)) => return Err(format!("waiting for the server: {e}")),
            // TLS: ask libpq again even without a new edge.
            None => None,
        };
        if let Err(e) = self.conn.consume_input() {
            return Err(self.failure(e));
        }
        if let Some(g) = guard.as_mut()
            && self.conn.is_busy()
            && libpq::drained(g.get_inner().as_raw_fd())
        {
            g.clear_ready();
        }
        Ok(())
    }

    /// The next result, waiting for it; `None` ends the current statement's results.
    pub async fn next_result(&mut self) -> Result<Option<PqResult>, String> {
        while self.conn.is_busy() {
            self.read().await?;
        }
        Ok(self.conn.next_result())
    }

    /// Send everything queued. Should the socket be full, wait for room without blocking the
    /// thread (the other clients on it go on, and a stop still reaches this one), reading
    /// what the server sends meanwhile so neither side waits on the other; the socket is
    /// watched for readability only, so this looks every 200 µs.
    pub async fn flush(&mut self) -> Result<(), String> {
        loop {
            match self.conn.flush() {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => return Err(self.failure(e)),
            }
            let (writable, readable) = libpq::poll_now(self.fd.get_ref().as_raw_fd())
                .map_err(|e| format!("waiting to send to the server: {e}"))?;
            if readable && let Err(e) = self.conn.consume_input() {
                return Err(self.failure(e));
            }
            if !writable && !readable {
                tokio::time::sleep(Duration::from_micros(200)).await;
            }
        }
    }
}

/// Drive the clients of one thread to their ends, polling only those that were woken (a
/// `join_all` of a few futures polls every one of them on each wake: 8 clients a thread
/// made every reply cost 8 polls).
pub async fn run_all<F: Future<Output = ()>>(clients: impl IntoIterator<Item = F>) {
    let mut all: FuturesUnordered<F> = clients.into_iter().collect();
    while all.next().await.is_some() {}
}

/// Threads for `clients` libpq clients driven in non-blocking mode (both load generators):
/// one per core, as `pgbench -j` would be given, never more than the clients.
pub fn client_threads(clients: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    clients.clamp(1, cores.max(1))
}
