//! A query run on a hot standby: said on screen, with how far its replay lags, since what
//! the standby answers is the primary's data as of its replay.

use crate::experiment::lab::RunCtx;
use crate::measure::units::{format_bytes, format_seconds};

/// Say that the target is a standby and how far behind it replays (nothing on a primary).
pub(crate) async fn note(ctx: &RunCtx) {
    if !ctx.server.in_recovery {
        return;
    }
    let lag = match ctx.target.connect().await {
        Ok(c) => crate::server::replication::standby_lag(&c).await,
        Err(_) => None,
    };
    let how = match lag {
        Some(l) => format!(
            "replay is {} behind the WAL it has received{}",
            l.replay_behind_bytes
                .map_or("an unknown amount".into(), |b| format_bytes(b.max(0) as u64)),
            l.last_replayed_s.map_or(String::new(), |s| format!(
                ", and the last transaction it replayed committed {} ago on the primary (on an idle primary that is no lag)",
                format_seconds(s.max(0.0))
            ))
        ),
        None => "its replay lag could not be read".into(),
    };
    ctx.note(format!(
        "the target is a hot standby (pg_is_in_recovery()): pglab only reads here, and the timings are the standby's; {how}"
    ))
    .await;
}
