//! Binary `COPY … FROM STDIN` of int8 or uuid rows, encoded by hand into large chunks (a few bytes
//! per field, no per-row round trip), cancellable between chunks, with live progress.

use std::pin::Pin;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::SinkExt;
use tokio_postgres::{Client, CopyInSink};

use super::key::Key;
use crate::experiment::lab::event::{Progress, TrialRef};
use crate::experiment::lab::{RunCtx, RunError};
use crate::server::cancel::cancel_then_wait;
use crate::server::error::sqlstate;

/// Why growing stopped.
#[derive(Debug)]
pub(crate) enum FillError {
    Run(RunError),
    /// The server's disk filled up (SQLSTATE 53100): later steps are projected instead.
    DiskFull(String),
}

impl From<RunError> for FillError {
    fn from(e: RunError) -> Self {
        FillError::Run(e)
    }
}

impl FillError {
    /// A query error, told apart when it is a full disk.
    pub(crate) fn of(ctx: &RunCtx, e: tokio_postgres::Error) -> FillError {
        if !ctx.cancel.is_cancelled() && sqlstate(&e) == Some("53100") {
            return FillError::DiskFull(crate::server::error::describe_query_error(&e));
        }
        FillError::Run(ctx.error(e))
    }
    pub(crate) fn into_run(self) -> RunError {
        match self {
            FillError::Run(e) => e,
            FillError::DiskFull(s) => RunError::Failed(s),
        }
    }
}

/// Chunk size sent to the server.
const CHUNK: usize = 512 * 1024;
/// Least time between progress events.
const PROGRESS_EVERY: f64 = 0.25;

pub(crate) struct CopyStream<'a> {
    ctx: &'a RunCtx,
    sink: Pin<Box<CopyInSink<Bytes>>>,
    buf: BytesMut,
    pub rows: u64,
    total: u64,
    started: Instant,
    last_progress: f64,
    phase: String,
    trial: Option<TrialRef>,
}

impl<'a> CopyStream<'a> {
    /// Start `COPY table (columns) FROM STDIN (FORMAT binary)`. `total` rows expected (0: no
    /// progress events).
    pub(crate) async fn start(
        ctx: &'a RunCtx,
        client: &Client,
        table: &str,
        columns: &str,
        phase: String,
        total: u64,
        trial: Option<TrialRef>,
    ) -> Result<CopyStream<'a>, FillError> {
        let sql = format!("COPY {table} ({columns}) FROM STDIN (FORMAT binary)");
        let sink = ctx
            .cancellable(client, client.copy_in::<_, Bytes>(&sql))
            .await?;
        let mut buf = BytesMut::with_capacity(CHUNK + 1024);
        buf.put_slice(b"PGCOPY\n\xff\r\n\0");
        buf.put_i32(0);
        buf.put_i32(0);
        Ok(CopyStream {
            ctx,
            sink: Box::pin(sink),
            buf,
            rows: 0,
            total,
            started: Instant::now(),
            last_progress: 0.0,
            phase,
            trial,
        })
    }

    /// Append a row of key fields, int8 or uuid (None is NULL).
    pub(crate) async fn row(&mut self, fields: &[Option<Key>]) -> Result<(), FillError> {
        self.buf.put_i16(fields.len() as i16);
        for f in fields {
            match f {
                Some(k) => k.put_copy_field(&mut self.buf),
                None => self.buf.put_i32(-1),
            }
        }
        self.rows += 1;
        if self.buf.len() >= CHUNK {
            self.flush().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), FillError> {
        let chunk = self.buf.split().freeze();
        let ctx = self.ctx;
        tokio::select! {
            r = self.sink.send(chunk) => r.map_err(|e| FillError::of(ctx, e))?,
            // Dropping the sink aborts the COPY on the server.
            _ = ctx.cancel.cancelled() => return Err(FillError::Run(RunError::Cancelled)),
        }
        self.progress();
        Ok(())
    }

    fn progress(&mut self) {
        if self.total == 0 {
            return;
        }
        let elapsed = self.started.elapsed().as_secs_f64();
        if elapsed - self.last_progress < PROGRESS_EVERY {
            return;
        }
        self.last_progress = elapsed;
        self.ctx.emit.progress(Progress {
            trial: self.trial.clone(),
            phase: self.phase.clone(),
            fraction: Some((self.rows as f64 / self.total as f64).min(1.0)),
            elapsed_s: elapsed,
            rate: (elapsed > 0.0).then(|| self.rows as f64 / elapsed),
            rate_unit: "rows/s".into(),
        });
    }

    /// Send the rest and end the COPY; the rows the server took.
    pub(crate) async fn finish(mut self, client: &Client) -> Result<u64, FillError> {
        self.buf.put_i16(-1);
        self.flush().await?;
        guarded(self.ctx, client, self.sink.as_mut().finish()).await
    }
}

/// Like `RunCtx::cancellable`, but a full disk is told apart from other errors.
pub(crate) async fn guarded<T>(
    ctx: &RunCtx,
    client: &Client,
    fut: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, FillError> {
    if ctx.cancel.is_cancelled() {
        return Err(FillError::Run(RunError::Cancelled));
    }
    let token = client.cancel_token();
    tokio::pin!(fut);
    tokio::select! {
        r = &mut fut => r.map_err(|e| FillError::of(ctx, e)),
        _ = ctx.cancel.cancelled() => {
            // Wait for the server to abort the statement so the session is clean.
            let _ = cancel_then_wait(ctx.target.cancel_query(&token), &mut fut, Duration::from_secs(10)).await;
            Err(FillError::Run(RunError::Cancelled))
        }
    }
}
