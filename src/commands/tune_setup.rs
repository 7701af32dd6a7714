//! `pglab tune` before the search: the workload (an experiment, a preset, a preset file) with
//! its parameter overrides, the settings to search, the host's hardware for the prior. Every
//! bad input is one sentence and exit 2.

use std::time::Duration;

use color_eyre::eyre::Result;

use crate::cli::TuneArgs;
use crate::experiment::{ExperimentKind, ExperimentSpec, ParamText};
use crate::session::{Ctx, EXIT_USAGE, user_error};
use crate::tune::candidates::{self, Hardware};

/// The smallest budget worth starting: a round and a confirmation need some seconds.
pub const MIN_BUDGET: Duration = Duration::from_secs(10);

fn usage(msg: impl Into<String>) -> color_eyre::eyre::Report {
    user_error(EXIT_USAGE, msg)
}

/// `--budget`: a duration of at least [`MIN_BUDGET`].
pub fn budget(text: &str) -> Result<Duration> {
    let d =
        crate::measure::units::parse_duration(text).map_err(|e| usage(format!("--budget: {e}")))?;
    if d < MIN_BUDGET {
        return Err(usage(format!(
            "--budget {text} is too short to measure anything: give at least 10s (e.g. --budget 15min)"
        )));
    }
    Ok(d)
}

/// `--workload` and `--param`: the workload's spec (its own settings sweep removed: the tune
/// chooses the settings) and a sentence when there was one.
pub fn workload(
    ctx: &Ctx,
    args: &TuneArgs,
    name: &str,
) -> Result<(ExperimentSpec, Option<String>)> {
    if name.ends_with(".sql") {
        return Err(usage(format!(
            "--workload {name}: SQL workloads need the query experiment, which this pglab does not have yet; give an experiment (ingest, index-build, growth) or a preset"
        )));
    }
    let (kind, mut params) = if let Some(k) = ExperimentKind::parse(name) {
        (k, ParamText::new())
    } else if name.ends_with(".toml") || name.contains('/') {
        let text = std::fs::read_to_string(name)
            .map_err(|e| usage(format!("--workload {name}: cannot read it ({e})")))?;
        let p = crate::preset::parse(&text, name, None)
            .map_err(|e| usage(format!("--workload {name}: {e}")))?;
        (p.experiment, p.params)
    } else {
        let p = crate::preset::load(&ctx.paths, name).map_err(|e| {
            usage(format!(
                "--workload {name}: {e} (or name an experiment: ingest, index-build, growth)"
            ))
        })?;
        (p.experiment, p.params)
    };
    for kv in &args.params {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(usage(format!(
                "--param {kv}: write KEY=VALUE, e.g. --param rows=20k"
            )));
        };
        params.insert(k.trim().to_string(), v.trim().to_string());
    }
    let dropped_set = params.remove("set").filter(|s| !s.trim().is_empty());
    let spec = kind.parse_spec(&params).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|(k, e)| format!("{k}: {e}")).collect();
        usage(format!("--workload {name}: {}", lines.join("; ")))
    })?;
    let note = dropped_set.map(|s| {
        format!(
            "the workload's own settings sweep ({s}) is left out: the tune chooses the settings"
        )
    });
    Ok((spec, note))
}

/// `--settings`: auto (the kind's list) or names, each checked for a sentence of its own.
pub fn settings(kind: ExperimentKind, text: &str, durability: bool) -> Result<Vec<String>> {
    if text.trim() == "auto" {
        return Ok(candidates::auto_settings(kind, durability)
            .into_iter()
            .map(String::from)
            .collect());
    }
    let own: &[(&str, &str)] = match kind {
        ExperimentKind::Ingest => &[("synchronous_commit", "sync-commit")],
        ExperimentKind::IndexBuild => &[
            ("maintenance_work_mem", "mwm"),
            ("max_parallel_maintenance_workers", "workers"),
        ],
        ExperimentKind::Growth => &[],
    };
    let mut out: Vec<String> = Vec::new();
    for raw in text.split(',') {
        let name = raw.trim().to_ascii_lowercase();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(usage(format!(
                "--settings: '{}' is not a setting name; write e.g. --settings shared_buffers,max_wal_size or auto",
                raw.trim()
            )));
        }
        if let Some((_, field)) = own.iter().find(|(n, _)| *n == name) {
            return Err(usage(format!(
                "--settings: {name} is {kind}'s own parameter: set it with --param {field}=…"
            )));
        }
        if candidates::durability_loss(&name).is_some() && !durability {
            return Err(usage(format!(
                "--settings: {name} trades durability for speed; add --allow-durability-tradeoff to search it"
            )));
        }
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// The host as the prior sees it: memory (the cgroup limit when lower), cores, and whether
/// the disk answers like an SSD (a 1 s fsync probe in pglab's own directory on the server's
/// device, when there is one). Also the fsync rate measured, when it was.
pub async fn hardware(
    probe_dir: Option<std::path::PathBuf>,
    max_connections: u64,
) -> (Hardware, String, Option<f64>) {
    let host = tokio::task::spawn_blocking(|| crate::host::HostSnapshot::read(None))
        .await
        .unwrap_or_else(|_| crate::host::HostSnapshot::read(None));
    let ram = host
        .cgroup
        .as_ref()
        .and_then(|c| c.memory_max)
        .map_or(host.total_memory, |m| m.min(host.total_memory));
    let (ssd, disk, ops) = match probe_dir {
        Some(dir) => {
            let spec = crate::host::probe::FsyncSpec {
                dir,
                duration: Duration::from_secs(1),
                block_bytes: 0,
            };
            let cancel = tokio_util::sync::CancellationToken::new();
            let r = tokio::task::spawn_blocking(move || {
                crate::host::probe::fsync_latency(&spec, &cancel, &mut |_| {})
            })
            .await;
            match r {
                Ok(Ok(f)) => (
                    f.ops_per_s >= 1000.0,
                    format!("fsync {:.0}/s", f.ops_per_s),
                    Some(f.ops_per_s),
                ),
                _ => (true, "disk not probed (taken as an SSD)".to_string(), None),
            }
        }
        None => (
            true,
            "disk not probed: no directory of pglab's on the server's device (taken as an SSD)"
                .to_string(),
            None,
        ),
    };
    let hw = Hardware {
        ram,
        cores: host.logical_cores.max(1),
        ssd,
        max_connections,
    };
    let text = format!(
        "{} · {} cores · {} RAM · {disk}",
        host.hostname,
        hw.cores,
        crate::measure::units::format_bytes(ram)
    );
    (hw, text, ops)
}
