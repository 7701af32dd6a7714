//! The sandbox's standbys in `pglab sandbox start|status`: `--standbys N` and `--standby-rtt`
//! checked and applied after the primary started, and each standby's state and lag (from the
//! primary's `pg_stat_replication`) in the status.

use std::time::Duration;

use color_eyre::eyre::Result;

use crate::cli::StartArgs;
use crate::measure::units::parse_duration;
use crate::server::replication::{self, ReplicaLag};
use crate::server::{Sandbox, Standby, Target, standby};
use crate::session::{EXIT_USAGE, user_error};

/// The longest emulated round trip: beyond it a "standby" is on another continent, and
/// `wal_sender_timeout` (60 s) is still far away.
const MAX_RTT: Duration = Duration::from_secs(1);

/// `--standby-rtt` as a duration (a sentence for a bad one).
pub fn parse_rtt(a: &StartArgs) -> Result<Option<Duration>> {
    let Some(text) = &a.standby_rtt else {
        return Ok(None);
    };
    let d =
        parse_duration(text).map_err(|e| user_error(EXIT_USAGE, format!("--standby-rtt: {e}")))?;
    if d > MAX_RTT {
        return Err(user_error(
            EXIT_USAGE,
            format!(
                "--standby-rtt {text}: at most 1s (a round trip, e.g. 2ms for a nearby data centre)"
            ),
        ));
    }
    if a.standbys == Some(0) && !d.is_zero() {
        return Err(user_error(
            EXIT_USAGE,
            "--standby-rtt with --standbys 0: there is no standby to put at a distance; give --standbys 1 or more",
        ));
    }
    Ok(Some(d))
}

/// After the primary started on `port`: the standbys asked for (or the ones it has), as the
/// lines `sandbox start` prints.
pub fn start(
    sb: &Sandbox,
    port: u16,
    n: Option<u32>,
    rtt: Option<Duration>,
) -> Result<String, String> {
    if n.is_none() && rtt.is_some() && Standby::existing(sb).is_empty() {
        return Err(
            "--standby-rtt: the sandbox has no standby to put at a distance; add --standbys 1"
                .into(),
        );
    }
    let up = match n {
        Some(n) => standby::ensure(sb, port, n, rtt),
        None if rtt.is_some() => Standby::existing(sb)
            .iter()
            .map(|s| s.start(port, rtt))
            .collect(),
        None => standby::resume(sb, port),
    }
    .map_err(|e| e.to_string())?;
    Ok(up
        .iter()
        .map(|u| {
            format!(
                "\nstandby {} streaming from it, port {}{}",
                u.name,
                u.port,
                match u.rtt {
                    Some(r) => format!(
                        ", at an emulated {} round trip (a relay on 127.0.0.1: latency only, no bandwidth limit, no loss)",
                        fmt_rtt(r)
                    ),
                    None => ", on the same host (no emulated distance)".into(),
                }
            )
        })
        .collect())
}

fn fmt_rtt(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms.fract() == 0.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// "standby …" lines for `sandbox status` (empty without standbys): each one's state, its
/// distance, and its lag as the running primary reports it.
pub async fn listing(sb: &Sandbox) -> String {
    let standbys = Standby::existing(sb);
    if standbys.is_empty() {
        return String::new();
    }
    let lags = match sb.live_postmaster() {
        Some((_, port)) => read_lags(sb, port).await,
        None => Err("the sandbox is stopped".into()),
    };
    let mut out = String::new();
    for s in &standbys {
        let state = match s.node.live_postmaster() {
            Some((pid, port)) => format!("running, pid {pid}, port {port}"),
            None => "stopped".into(),
        };
        let distance = match s.rtt() {
            Some(r) => format!(
                ", emulated RTT {}{}",
                fmt_rtt(r),
                if s.relay().running().is_some() {
                    ""
                } else {
                    " (its relay is not running: the next start restarts it)"
                }
            ),
            None => String::new(),
        };
        let lag = match &lags {
            Ok(l) => match l.iter().find(|l| l.application_name == s.name()) {
                Some(l) => format!("\n  replication: {}", l.line()),
                None => "\n  replication: not connected to the sandbox".into(),
            },
            Err(e) => format!("\n  replication: unknown ({e})"),
        };
        out.push_str(&format!(
            "standby {}: {state}{distance}\n  directory: {}{lag}\n",
            s.name(),
            s.node.root.display()
        ));
    }
    out
}

async fn read_lags(sb: &Sandbox, port: u16) -> Result<Vec<ReplicaLag>, String> {
    let target = Target::new(sb.conn_params(port), true).map_err(|e| e.to_string())?;
    let c = target.connect().await.map_err(|e| e.to_string())?;
    replication::read(&c).await.map_err(|e| e.to_string())
}
