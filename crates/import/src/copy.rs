//! Moving a table's rows: the source's `COPY … TO STDOUT` bytes go straight into the
//! sandbox's `COPY … FROM STDIN`, in chunks, through memory only (no file, no decoding: the
//! binary format written by one PostgreSQL is read by the other as it is). Rows are counted
//! from the stream: the server sends one CopyData message per row, and in binary format one
//! more for the trailer.

use std::time::Instant;

use bytes::BytesMut;
use futures_util::{SinkExt, StreamExt};
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use super::ImportError;
use crate::server::Target;
use crate::server::error::describe_query_error;

/// Bytes gathered before one message goes to the sandbox.
const CHUNK: usize = 256 * 1024;

/// How often progress is reported.
const EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// What one COPY moved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moved {
    pub rows: u64,
    pub bytes: u64,
    pub seconds: f64,
}

/// Where the rows come from and go to, and how to stop them.
pub struct Ends<'a> {
    pub source: &'a Client,
    pub source_target: &'a Target,
    pub sandbox: &'a Client,
    pub sandbox_target: &'a Target,
    pub cancel: &'a CancellationToken,
}

/// Run `copy_out` on the source and feed its bytes to `copy_in` on the sandbox. `progress`
/// gets (rows, bytes, seconds) every [`EVERY`]. A cancel asks both servers to stop.
pub async fn stream(
    ends: &Ends<'_>,
    copy_out: &str,
    copy_in: &str,
    binary: bool,
    progress: impl FnMut(Moved),
) -> Result<Moved, ImportError> {
    let src_token = ends.source.cancel_token();
    let dst_token = ends.sandbox.cancel_token();
    let work = pump(ends, copy_out, copy_in, binary, progress);
    tokio::pin!(work);
    tokio::select! {
        r = &mut work => r,
        _ = ends.cancel.cancelled() => {
            ends.source_target.cancel_query(&src_token).await;
            ends.sandbox_target.cancel_query(&dst_token).await;
            let _ = tokio::time::timeout(std::time::Duration::from_secs(10), &mut work).await;
            Err(ImportError::Cancelled)
        }
    }
}

/// The copy itself: start both COPYs, forward the bytes in chunks, check the counts agree.
async fn pump(
    ends: &Ends<'_>,
    copy_out: &str,
    copy_in: &str,
    binary: bool,
    mut progress: impl FnMut(Moved),
) -> Result<Moved, ImportError> {
    let failed = |what: &str, e: tokio_postgres::Error| {
        ImportError::Failed(format!("{what}: {}", describe_query_error(&e)))
    };
    let started = Instant::now();
    let sink = ends
        .sandbox
        .copy_in::<_, bytes::Bytes>(copy_in)
        .await
        .map_err(|e| failed("the sandbox", e))?;
    let out = ends
        .source
        .copy_out(copy_out)
        .await
        .map_err(|e| failed("the source", e))?;
    tokio::pin!(sink);
    tokio::pin!(out);
    let mut buf = BytesMut::with_capacity(CHUNK * 2);
    let (mut messages, mut bytes) = (0u64, 0u64);
    let mut last = Instant::now();
    while let Some(chunk) = out.next().await {
        let chunk = chunk.map_err(|e| failed("reading the source", e))?;
        messages += 1;
        bytes += chunk.len() as u64;
        buf.extend_from_slice(&chunk);
        if buf.len() >= CHUNK {
            sink.send(buf.split().freeze())
                .await
                .map_err(|e| failed("writing to the sandbox", e))?;
            if last.elapsed() >= EVERY {
                last = Instant::now();
                progress(Moved {
                    rows: rows_of(messages, binary),
                    bytes,
                    seconds: started.elapsed().as_secs_f64(),
                });
            }
        }
    }
    if !buf.is_empty() {
        sink.send(buf.freeze())
            .await
            .map_err(|e| failed("writing to the sandbox", e))?;
    }
    let loaded = sink
        .finish()
        .await
        .map_err(|e| failed("loading into the sandbox", e))?;
    let sent = rows_of(messages, binary);
    if loaded != sent {
        return Err(ImportError::Failed(format!(
            "the source sent {sent} rows but the sandbox loaded {loaded}"
        )));
    }
    Ok(Moved {
        rows: loaded,
        bytes,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Rows in a stream of `messages` CopyData messages: one per row; in binary format the
/// header rides with the first row and the trailer is a message of its own.
fn rows_of(messages: u64, binary: bool) -> u64 {
    if binary {
        messages.saturating_sub(1)
    } else {
        messages
    }
}
