//! `pglab probe`: the target and host snapshots, and with `--disk` the two disk probes.
//! This is also how scripts check a server (`--format json`).

use std::path::PathBuf;
use std::time::Instant;

use color_eyre::eyre::Result;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::cli::{OutputFormat, ProbeArgs};
use crate::host::HostSnapshot;
use crate::host::probe::{
    FsyncResult, FsyncSpec, ProbeError, SeqWriteResult, SeqWriteSpec, fsync_latency, seq_write,
};
use crate::host::probe_site::{ServerDevice, SiteKind};
use crate::measure::units::{format_bytes, format_bytes_short, parse_duration, parse_size};
use crate::server::{ServerSnapshot, snapshot};
use crate::session::{Ctx, EXIT_FAILED, EXIT_USAGE, user_error};

#[derive(Debug, Serialize)]
pub struct ProbeReport {
    pub pglab_version: String,
    pub server: ServerSnapshot,
    pub host: HostSnapshot,
    /// False when the server runs on another machine: `host` then describes pglab's machine.
    pub host_is_server: bool,
    pub disk: Option<DiskProbes>,
    pub seconds: f64,
}

#[derive(Debug, Serialize)]
pub struct DiskProbes {
    /// Where the probes wrote (see `host::probe_site`): a directory pglab owns, or the one
    /// named with --probe-dir; never a server's data directory.
    pub dir: PathBuf,
    /// `sandbox`, `data-dir` (pglab's) or `named`.
    pub site: SiteKind,
    /// The filesystem and device of `dir` ("ext4 on /dev/vda").
    pub device: Option<String>,
    /// Whether `dir` is on the server's device: `same`, `other`, `unknown`, `remote`.
    pub server_device: ServerDevice,
    pub seq_write: SeqWriteResult,
    pub fsync: FsyncResult,
}

pub async fn run(ctx: &Ctx, a: ProbeArgs) -> Result<i32> {
    let started = Instant::now();
    if a.disk && ctx.global.observe {
        return Err(user_error(
            EXIT_USAGE,
            "look-only (--observe): the disk probes write and fsync a test file, so they do not run; drop --disk to see the server and host, or --observe to probe the disk",
        ));
    }
    let size = parse_size(&a.disk_size)
        .map_err(|e| user_error(EXIT_USAGE, format!("--disk-size: {e}")))?;
    if size.bytes < 64 * 1024 {
        return Err(user_error(EXIT_USAGE, "--disk-size: at least 64kB"));
    }
    let fsync_time = parse_duration(&a.fsync_time)
        .map_err(|e| user_error(EXIT_USAGE, format!("--fsync-time: {e}")))?;
    let (opened, client) = ctx.open_target().await?;
    let result = probe(ctx, &a, &opened, &client, size.bytes, fsync_time).await;
    drop(client);
    opened.close().await;
    let mut report = result?;
    report.seconds = started.elapsed().as_secs_f64();
    match a.format {
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        _ => print!("{}", text(&report)),
    }
    Ok(0)
}

async fn probe(
    ctx: &Ctx,
    a: &ProbeArgs,
    opened: &crate::server::Opened,
    client: &tokio_postgres::Client,
    size: u64,
    fsync_time: std::time::Duration,
) -> Result<ProbeReport> {
    let server = snapshot::read(client, &opened.target)
        .await
        .map_err(|e| user_error(EXIT_FAILED, e.to_string()))?;
    let host_dir = Ctx::local_data_dir(opened, Some(&server));
    let host = tokio::task::spawn_blocking(move || HostSnapshot::read(host_dir.as_deref())).await?;
    let disk = if a.disk {
        let site = ctx.probe_site(opened, Some(&server));
        if !site.dir.is_dir() {
            return Err(user_error(
                EXIT_USAGE,
                format!(
                    "--probe-dir {}: no such directory (name an existing directory of yours)",
                    site.dir.display()
                ),
            ));
        }
        let dir = site.dir.clone();
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        let d2 = dir.clone();
        let probes = tokio::task::spawn_blocking(move || {
            let mut quiet = |_f: f64| {};
            let sw = seq_write(
                &SeqWriteSpec {
                    dir: d2.clone(),
                    total_bytes: size,
                    block_bytes: 64 * 1024,
                },
                &c2,
                &mut quiet,
            )?;
            let fs = fsync_latency(
                &FsyncSpec {
                    dir: d2,
                    duration: fsync_time,
                    block_bytes: 8192,
                },
                &c2,
                &mut quiet,
            )?;
            Ok::<_, crate::host::probe::ProbeError>((sw, fs))
        });
        let signal = crate::session::shutdown_signal();
        tokio::pin!(probes);
        let joined = tokio::select! {
            r = &mut probes => r,
            _ = signal => { cancel.cancel(); probes.await }
        }?;
        let (seq_write, fsync) = joined.map_err(|e| {
            // No room is the user's to fix (another --probe-dir); the rest is the disk's.
            let code = if matches!(e, ProbeError::NoRoom { .. }) {
                EXIT_USAGE
            } else {
                EXIT_FAILED
            };
            user_error(code, format!("disk probe: {e}"))
        })?;
        Some(DiskProbes {
            dir,
            site: site.kind,
            device: site.device.clone(),
            server_device: site.server_device,
            seq_write,
            fsync,
        })
    } else {
        None
    };
    Ok(ProbeReport {
        pglab_version: env!("CARGO_PKG_VERSION").into(),
        host_is_server: opened.target.location.is_local(),
        server,
        host,
        disk,
        seconds: 0.0,
    })
}

/// The probe as people read it: the target, its settings, the host, and the disk probes
/// when they ran.
fn text(r: &ProbeReport) -> String {
    [
        target_text(&r.server),
        settings_text(&r.server),
        host_text(r),
        disk_probes_text(r),
    ]
    .concat()
}

/// The server: where and which, its database, connections, recovery and role, then its
/// standby lag, replicas and Citus nodes when it has them.
fn target_text(s: &ServerSnapshot) -> String {
    let mut out = String::new();
    let tls = s
        .tls
        .clone()
        .map(|t| format!(" · TLS {t}"))
        .unwrap_or_default();
    out.push_str(&format!(
        "target   {} · PostgreSQL {} · {}{tls}\n",
        s.location.label(),
        s.version,
        s.target
    ));
    let conns: Vec<String> = s
        .connections
        .iter()
        .map(|(k, v)| match k.as_str() {
            crate::server::snapshot::HIDDEN => {
                format!("{v} hidden: needs pg_read_all_stats")
            }
            _ => format!("{v} {k}"),
        })
        .collect();
    out.push_str(&format!(
        "         db {} {} · {} · recovery: {} · role {}{}\n",
        s.database,
        format_bytes(s.database_bytes.max(0) as u64),
        conns_text(s.connections_total(), &conns),
        if s.in_recovery { "yes (standby)" } else { "no" },
        s.user,
        if s.superuser { " (superuser)" } else { "" }
    ));
    if let Some(l) = &s.standby_lag {
        out.push_str(&format!("standby  {}\n", l.words()));
    }
    for r in &s.replicas {
        out.push_str(&format!("replica  {}\n", replica_text(r)));
    }
    if let Some(c) = &s.citus {
        out.push_str(&format!(
            "citus    {} · extension {}\n",
            c.summary(),
            c.extension
        ));
        out.push_str(&format!("nodes    {}\n", c.nodes_line()));
    }
    out
}

/// The server's settings (bar data_directory) wrapped at about 90 columns.
fn settings_text(s: &ServerSnapshot) -> String {
    let mut out = String::new();
    out.push_str("settings ");
    let mut line = 0;
    for (name, v) in &s.settings {
        if name == "data_directory" {
            continue;
        }
        let val = match v.value() {
            Some(set) => set.pretty(),
            None => "(not visible)".into(),
        };
        let item = format!("{name}={val}  ");
        if line + item.len() > 90 {
            out.push_str("\n         ");
            line = 0;
        }
        line += item.len();
        out.push_str(&item);
    }
    out.push('\n');
    out
}

/// The host pglab runs on (said to be another machine than the server's when it is): CPU,
/// memory, load, OS, cgroup limits and its disk.
fn host_text(r: &ProbeReport) -> String {
    let s = &r.server;
    let mut out = String::new();
    let h = &r.host;
    out.push_str(&format!(
        "host     {}{} · {} · {} physical / {} logical cores · RAM {} (available {}) · load {:.2} {:.2} {:.2}\n",
        h.hostname,
        match (&s.citus, r.host_is_server) {
            (Some(c), _) => format!(" ({})", c.host_note()),
            (None, true) => String::new(),
            (None, false) => " (pglab's machine, not the server's)".into(),
        },
        h.cpu_model,
        h.physical_cores.map(|c| c.to_string()).unwrap_or_else(|| "?".into()),
        h.logical_cores,
        format_bytes_short(h.total_memory as f64),
        format_bytes_short(h.available_memory as f64),
        h.load[0],
        h.load[1],
        h.load[2]
    ));
    out.push_str(&format!("         {} · kernel {}", h.os, h.kernel));
    if let Some(c) = &h.cgroup {
        out.push_str(&format!(
            " · cgroup memory {} cpus {}",
            c.memory_max
                .map(format_bytes)
                .unwrap_or_else(|| "unlimited".into()),
            c.cpu_max
                .map(|c| format!("{c:.1}"))
                .unwrap_or_else(|| "unlimited".into())
        ));
    }
    out.push('\n');
    if let Some(d) = &h.disk {
        out.push_str(&format!(
            "disk     {} on {} ({}) · {} free of {}\n",
            d.fs_type,
            d.device,
            d.mount_point.display(),
            format_bytes(d.available_bytes),
            format_bytes(d.total_bytes)
        ));
    }
    out
}

/// With `--disk`: the sequential write and fsync results, where they wrote and what that
/// place means for them.
fn disk_probes_text(r: &ProbeReport) -> String {
    let mut out = String::new();
    if let Some(p) = &r.disk {
        out.push_str(&format!(
            "probe    seq write {:.0} MB/s ({} in {:.2} s, 64 kB writes + fdatasync) · fsync {:.0}/s p50 {:.0} µs p99 {:.0} µs max {:.0} µs · in {}\n",
            p.seq_write.mb_per_s,
            format_bytes(p.seq_write.bytes),
            p.seq_write.seconds,
            p.fsync.ops_per_s,
            p.fsync.p50_us,
            p.fsync.p99_us,
            p.fsync.max_us,
            p.dir.display()
        ));
        let site = crate::host::probe_site::ProbeSite {
            dir: p.dir.clone(),
            kind: p.site,
            device: p.device.clone(),
            server_device: p.server_device,
        };
        if let Some(note) = site.note() {
            out.push_str(&format!("         {note}\n"));
        }
    }
    out
}

/// "conns 3 (2 active, 1 idle)", or "conns 0" with nothing to break down.
fn conns_text(total: i64, parts: &[String]) -> String {
    if parts.is_empty() {
        format!("conns {total}")
    } else {
        format!("conns {total} ({})", parts.join(", "))
    }
}

/// One standby as its primary sees it; a role without `pg_read_all_stats` sees its name only.
fn replica_text(r: &crate::server::replication::ReplicaLag) -> String {
    if r.state.is_empty() {
        format!(
            "{}: its state and lag are hidden from this role (pg_read_all_stats shows them)",
            r.application_name
        )
    } else {
        r.line()
    }
}

#[cfg(test)]
mod tests {
    use super::conns_text;

    #[test]
    fn an_idle_server_has_no_empty_breakdown() {
        assert_eq!(conns_text(0, &[]), "conns 0");
        assert_eq!(
            conns_text(3, &["2 active".into(), "1 idle".into()]),
            "conns 3 (2 active, 1 idle)"
        );
    }
}
