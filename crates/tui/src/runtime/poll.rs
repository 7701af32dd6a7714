//! The background readers: the server about once a second over one session (reconnecting
//! with backoff when it is lost), and the host about once a second off the async threads.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio::time::{MissedTickBehavior, interval, sleep, timeout};
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use crate::host::{HostSampler, HostSnapshot};
use crate::server::{Target, snapshot};
use crate::tui::msg::{Msg, ServerMsg};

/// Server readings and host samples.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);
/// A server reading that takes longer counts as a lost connection.
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);
const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Read the server about once a second; reconnect with backoff when the session is lost.
pub(crate) async fn poll_server(
    target: Arc<Target>,
    mut client: Option<Client>,
    tx: UnboundedSender<Msg>,
    stop: CancellationToken,
) {
    let mut backoff = Duration::from_secs(1);
    let mut every = interval(SAMPLE_EVERY);
    every.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = every.tick() => {}
        }
        if client.as_ref().is_none_or(|c| c.is_closed()) {
            client = match timeout(target.connect_timeout + QUERY_TIMEOUT, target.connect()).await {
                Ok(Ok(c)) => Some(c),
                Ok(Err(e)) => {
                    lost(&tx, e.to_string(), &mut backoff, &stop).await;
                    continue;
                }
                Err(_) => {
                    lost(
                        &tx,
                        "no answer to the connection attempt".into(),
                        &mut backoff,
                        &stop,
                    )
                    .await;
                    continue;
                }
            };
        }
        let Some(c) = &client else { continue };
        match timeout(QUERY_TIMEOUT, snapshot::read(c, &target)).await {
            Ok(Ok(s)) => {
                backoff = Duration::from_secs(1);
                if tx
                    .send(Msg::Server(ServerMsg::Snapshot(Box::new(s))))
                    .is_err()
                {
                    return;
                }
            }
            Ok(Err(e)) => {
                client = None;
                lost(&tx, e.to_string(), &mut backoff, &stop).await;
            }
            Err(_) => {
                client = None;
                lost(
                    &tx,
                    format!(
                        "the server did not answer within {} s",
                        QUERY_TIMEOUT.as_secs()
                    ),
                    &mut backoff,
                    &stop,
                )
                .await;
            }
        }
    }
}

async fn lost(
    tx: &UnboundedSender<Msg>,
    error: String,
    backoff: &mut Duration,
    stop: &CancellationToken,
) {
    tracing::info!("server reading failed: {error}; retrying in {backoff:?}");
    let _ = tx.send(Msg::Server(ServerMsg::Lost {
        error,
        retry_in: *backoff,
    }));
    tokio::select! {
        _ = stop.cancelled() => {}
        _ = sleep(*backoff) => {}
    }
    *backoff = (*backoff * 2).min(BACKOFF_MAX);
}

/// Describe the host once, then sample it about once a second, off the async threads.
pub(crate) async fn sample_host(
    dir: Option<PathBuf>,
    tx: UnboundedSender<Msg>,
    stop: CancellationToken,
) {
    let d = dir.clone();
    let Ok((info, mut sampler)) = tokio::task::spawn_blocking(move || {
        (
            HostSnapshot::read(d.as_deref()),
            HostSampler::new(d.as_deref()),
        )
    })
    .await
    else {
        return;
    };
    let _ = tx.send(Msg::HostInfo(Box::new(info)));
    let mut every = interval(SAMPLE_EVERY);
    every.set_missed_tick_behavior(MissedTickBehavior::Delay);
    every.tick().await;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = every.tick() => {}
        }
        let Ok((s, sample)) = tokio::task::spawn_blocking(move || {
            let sample = sampler.sample();
            (sampler, sample)
        })
        .await
        else {
            return;
        };
        sampler = s;
        if tx.send(Msg::HostSample(sample)).is_err() {
            return;
        }
    }
}
