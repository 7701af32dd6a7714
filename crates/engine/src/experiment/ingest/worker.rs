//! The loading clients run on a few OS threads of their own — as many as the host has cores,
//! at most one per client — each with its own single-threaded tokio runtime holding its
//! clients and their connections' I/O tasks: a round trip then costs no hop between threads,
//! whatever else the process does (the TUI drawing, the progress ticker) cannot delay a
//! client's next statement, and 16 clients on 2 cores take 2 threads, not 16 that the kernel
//! must switch between — the way `pgbench -j` multiplexes its connections.
//!
//! A client opens its session and prepares its statements, reports `Ready`, waits for the
//! trial's `Go` (so all start on one clock), loads, and reports `Done`. Whatever happens to
//! it, its last message is `NotReady`, `Done` or, should the thread die, `Gone`.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::client::{
    Batches, Canceller, Job, LoadError, LoadResult, Loader, connect_session, latency_histogram,
    run_load,
};
use super::kinds::SyncCommit;
use super::meter::Meter;
use super::payload::PayloadGen;
use super::pq_loader::{self, PqLoader};
use crate::server::Target;
use crate::sql::settings::SessionSettings;

/// What a client needs to start, all owned (it lives on another thread).
pub(crate) struct ClientSetup {
    pub target: Arc<Target>,
    /// `RunCtx::session_settings`.
    pub session: SessionSettings,
    pub sync: SyncCommit,
    pub job: Job,
    pub payload: Arc<PayloadGen>,
}

/// The start signal: the trial's clock and time limit.
#[derive(Clone)]
pub(crate) struct Go {
    pub meter: Arc<Meter>,
    pub deadline: Option<Instant>,
}

/// A client's reports to the trial, tagged with its index.
pub(crate) enum ClientMsg {
    /// Session open, statements prepared: waiting for `Go`.
    Ready,
    /// Could not get ready (or was stopped first).
    NotReady(LoadError),
    Done(LoadResult),
    /// The thread ended without a final report (a bug: it panicked).
    Gone,
}

pub(crate) type Reports = mpsc::UnboundedSender<(usize, ClientMsg)>;

/// Sends a client's reports; sends `Gone` if dropped before a final one.
struct Reporter {
    index: usize,
    tx: Reports,
    finished: bool,
}

impl Reporter {
    fn send(&mut self, msg: ClientMsg) {
        if matches!(msg, ClientMsg::NotReady(_) | ClientMsg::Done(_)) {
            self.finished = true;
        }
        let _ = self.tx.send((self.index, msg));
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.tx.send((self.index, ClientMsg::Gone));
        }
    }
}

/// Start a group of clients on one thread of their own. Reports arrive on `reports`; each
/// loads when `go` carries a value and stops when `stop` is cancelled.
pub(crate) fn start(
    setups: Vec<ClientSetup>,
    stop: CancellationToken,
    go: watch::Receiver<Option<Go>>,
    reports: Reports,
) -> Result<(), String> {
    let first = setups.first().map_or(0, |s| s.job.index);
    std::thread::Builder::new()
        .name(format!("pglab-ingest-{}", first + 1))
        .spawn(move || {
            let mut reporters: Vec<Reporter> = setups
                .iter()
                .map(|s| Reporter {
                    index: s.job.index,
                    tx: reports.clone(),
                    finished: false,
                })
                .collect();
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    for r in &mut reporters {
                        r.send(ClientMsg::NotReady(LoadError::Failed(format!(
                            "cannot start a runtime for client {}: {e}",
                            r.index + 1
                        ))));
                    }
                    return;
                }
            };
            rt.block_on(crate::server::pq_async::run_all(
                setups
                    .into_iter()
                    .zip(reporters.iter_mut())
                    .map(|(setup, reporter)| {
                        client_main(setup, stop.clone(), go.clone(), reporter)
                    }),
            ));
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start a thread for client {}: {e}", first + 1))
}

async fn client_main(
    setup: ClientSetup,
    stop: CancellationToken,
    mut go: watch::Receiver<Option<Go>>,
    reporter: &mut Reporter,
) {
    let ClientSetup {
        target,
        session,
        sync,
        job,
        payload,
    } = setup;
    let who = format!("client {} of {}", job.index + 1, job.of);
    let ready = tokio::select! {
        r = async {
            if pq_loader::wanted(job.method)? {
                return PqLoader::open(&target, &session, sync, job, payload)
                    .await
                    .map(AnyLoader::Pq);
            }
            // A pipelined client writes without reading the replies: it keeps tokio's own
            // socket, which never blocks the thread on a full buffer. A lone client keeps it
            // too: measured (insert, sync off, 4 alternating runs) it ran 11.6k rows/s lean
            // against 15.1k on tokio's socket, whose extra wakeup after each write keeps the
            // thread awake until the reply; with 4 clients lean ran 53.7k against 45.6k.
            let lean = !job.pipeline && job.of > 1;
            let session = connect_session(&target, &session, sync, lean).await?;
            Loader::prepare(session, job, payload).await.map(AnyLoader::Tokio)
        } => r.map_err(|e| LoadError::Failed(format!("{who}: {e}"))),
        _ = stop.cancelled() => Err(LoadError::Stopped),
    };
    let loader = match ready {
        Ok(l) => l,
        Err(e) => {
            reporter.send(ClientMsg::NotReady(e));
            return;
        }
    };
    reporter.send(ClientMsg::Ready);
    let start = tokio::select! {
        g = go.wait_for(Option::is_some) => g.ok().and_then(|g| g.clone()),
        _ = stop.cancelled() => None,
    };
    let result = match start {
        Some(Go { meter, deadline }) => run_load(loader, meter, stop, target, deadline).await,
        None => LoadResult {
            rows: 0,
            commits: 0,
            latency_us: latency_histogram(),
            error: Some(LoadError::Stopped),
        },
    };
    reporter.send(ClientMsg::Done(result));
}

/// The client's loader: libpq for the statement methods, tokio-postgres for `copy` (or for
/// all with `PGLAB_LOADER=tokio`).
enum AnyLoader {
    Tokio(Loader),
    Pq(PqLoader),
}

impl Batches for AnyLoader {
    fn job(&self) -> &Job {
        match self {
            AnyLoader::Tokio(l) => l.job(),
            AnyLoader::Pq(l) => l.job(),
        }
    }

    fn canceller(&self, target: &Arc<Target>) -> Canceller {
        match self {
            AnyLoader::Tokio(l) => l.canceller(target),
            AnyLoader::Pq(l) => l.canceller(target),
        }
    }

    async fn batch(&mut self, first: i64, n: u64) -> Result<u64, String> {
        match self {
            AnyLoader::Tokio(l) => l.batch(first, n).await,
            AnyLoader::Pq(l) => l.batch(first, n).await,
        }
    }
}
