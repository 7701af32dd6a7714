//! A tune before the search, for either front end: the budget, the workload (an experiment,
//! a preset, a preset file) with its parameter overrides, the settings to search, the host's
//! hardware for the prior, and the fresh state. Every bad input is one sentence (`Err`), the
//! caller's to show.

use std::time::Duration;

use tokio_postgres::Client;

use super::candidates::{self, GivenHardware, Hardware};
use super::output::MeasuredOn;
use super::phase::TunePhase;
use super::state::{STATE_VERSION, TuneState};
use crate::experiment::lab::whatif::Reach;
use crate::experiment::{ExperimentKind, ExperimentSpec, ParamText};
use crate::paths::Paths;
use crate::server::ServerSnapshot;

/// The smallest budget worth starting: a round and a confirmation need some seconds.
pub(crate) const MIN_BUDGET: Duration = Duration::from_secs(10);

type Result<T> = std::result::Result<T, String>;

fn usage(msg: impl Into<String>) -> String {
    msg.into()
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
    paths: &Paths,
    name: &str,
    overrides: &[String],
) -> Result<(ExperimentSpec, Option<String>)> {
    let (kind, mut params) = if let Some(k) = ExperimentKind::parse(name) {
        (k, ParamText::new())
    } else if name.ends_with(".sql") {
        // The DBA's statements, `-- name:` comments and all: the query experiment's `file`.
        if !std::path::Path::new(name).is_file() {
            return Err(usage(format!(
                "--workload {name}: no such file; give a .sql file of statements, a preset or an experiment"
            )));
        }
        let mut p = ParamText::new();
        p.insert("file".to_string(), name.to_string());
        (ExperimentKind::Query, p)
    } else if name.ends_with(".toml") || name.contains('/') {
        let text = std::fs::read_to_string(name)
            .map_err(|e| usage(format!("--workload {name}: cannot read it ({e})")))?;
        let p = crate::preset::parse(&text, name, None)
            .map_err(|e| usage(format!("--workload {name}: {e}")))?;
        (p.experiment, p.params)
    } else {
        let p = crate::preset::load(paths, name).map_err(|e| {
            usage(format!(
                "--workload {name}: {e} (or name an experiment: ingest, index-build, growth)"
            ))
        })?;
        (p.experiment, p.params)
    };
    for kv in overrides {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(usage(format!(
                "--param {kv}: write KEY=VALUE, e.g. --param rows=20k"
            )));
        };
        params.insert(k.trim().to_string(), v.trim().to_string());
    }
    let mut spec = kind.parse_spec(&params).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|(k, e)| format!("{k}: {e}")).collect();
        usage(format!("--workload {name}: {}", lines.join("; ")))
    })?;
    let notes = normalise(&mut spec);
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    Ok((spec, note))
}

/// What a tune changes in a workload before it races settings on it, one sentence each: its
/// own settings sweep is left out (the tune chooses the settings); a query's candidate indexes
/// are left out (a tune searches settings on the tables as they are); a query's setup runs
/// once and is kept for every round (each round is a run). Both front ends go through it (in
/// [`new_state`]); a second call finds nothing to say.
pub(crate) fn normalise(spec: &mut ExperimentSpec) -> Vec<String> {
    let mut notes = Vec::new();
    if !spec.settings().is_empty() {
        notes.push(format!(
            "the workload's own settings sweep ({}) is left out: the tune chooses the settings",
            spec.settings().text()
        ));
        spec.set_settings(crate::experiment::lab::whatif::SettingsSweep::default());
    }
    if let ExperimentSpec::Query(q) = spec {
        if !q.index.is_empty() {
            notes.push(format!(
                "the workload's candidate indexes ({}) are left out: a tune searches settings on the tables as they are (measure candidates with pglab run query --index)",
                q.index.join("; ")
            ));
            q.index.clear();
        }
        if !q.setup_sql.is_empty() && !q.keep_setup {
            q.keep_setup = true;
            notes.push(
                "the workload's setup runs once and is kept for every round (pglab clean --datasets drops it)".into(),
            );
        }
    }
    notes
}

/// A query workload checked before anything is measured, as `pglab run query` checks it:
/// the statements parse on the server, no cold cache off the sandbox, no DML on a real
/// server without `writes rollback` — one sentence each, instead of a failed first round
/// that `--resume` would only repeat. `client` gets its own search path back after.
async fn precheck(
    client: &Client,
    spec: &ExperimentSpec,
    schema: &str,
    on_sandbox: bool,
) -> std::result::Result<(), SetupError> {
    let ExperimentSpec::Query(q) = spec else {
        return Ok(());
    };
    let mut problems = crate::experiment::query::precheck::check_spec(q, on_sandbox);
    if problems.is_empty() {
        problems = crate::experiment::query::precheck::check_on_server(
            client, q, schema, on_sandbox, false,
        )
        .await;
        client
            .batch_execute("RESET search_path")
            .await
            .map_err(|e| SetupError::Failed(e.to_string()))?;
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(SetupError::Nothing(format!(
            "the workload cannot run here: {}",
            problems.join("; ")
        )))
    }
}

/// The rules a tune's races and confirmation compare by: the workload's confidence and
/// smallest effect for a fixed count — the race spends its own error over its looks
/// (`race.rs`), so a workload's `repeat auto` must not add a second correction for the same
/// looks.
pub(crate) fn rules(spec: &ExperimentSpec) -> crate::measure::rules::Rules {
    spec.rules().fixed()
}

/// `--settings`: auto (the kind's list) or names, each checked for a sentence of its own.
pub fn settings(kind: ExperimentKind, text: &str, durability: bool) -> Result<Vec<String>> {
    if text.trim() == "auto" {
        return Ok(candidates::auto_settings(kind, durability)
            .into_iter()
            .map(String::from)
            .collect());
    }
    let own = kind.info().own_settings;
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

/// The target's hardware for the prior: what the DBA gave (`--ram`, `--cores`, `--storage`),
/// the rest read on this host when the server runs here (memory the cgroup limit when lower;
/// the disk an SSD when a 1 s fsync probe in pglab's own directory on the server's device
/// reaches 1000/s). The text says where each figure came from. Also the fsync rate measured.
pub async fn hardware(
    probe_dir: Option<std::path::PathBuf>,
    max_connections: u64,
    given: GivenHardware,
) -> (Hardware, String, Option<f64>) {
    let host = tokio::task::spawn_blocking(|| crate::host::HostSnapshot::read(None))
        .await
        .unwrap_or_else(|_| crate::host::HostSnapshot::read(None));
    let here = if given.local {
        "this host's, the server's"
    } else {
        "this host's, NOT the server's (it runs elsewhere)"
    };
    let ram_here = host
        .cgroup
        .as_ref()
        .and_then(|c| c.memory_max)
        .map_or(host.total_memory, |m| m.min(host.total_memory));
    let (ram, ram_from) = given.ram.map_or((ram_here, here), |r| (r, "--ram"));
    let (cores, cores_from) = given
        .cores
        .map_or((host.logical_cores.max(1), here), |c| (c, "--cores"));
    let (ssd, disk, ops) = match given.ssd {
        Some(ssd) => (
            ssd,
            format!("{} (--storage)", if ssd { "SSD" } else { "HDD" }),
            None,
        ),
        None => probe_disk(probe_dir.filter(|_| given.local)).await,
    };
    let hw = Hardware {
        ram,
        cores,
        ssd,
        max_connections,
    };
    let text = format!(
        "{} · {} cores ({cores_from}) · {} RAM ({ram_from}) · {disk}",
        if given.local {
            // The machine by what it is, its name beside: "vm" alone says nothing.
            if host.cpu_model.is_empty() || host.cpu_model == "unknown" {
                format!("this machine (host name {})", host.hostname)
            } else {
                format!(
                    "this machine ({}, host name {})",
                    host.cpu_model, host.hostname
                )
            }
        } else {
            "the server's host".to_string()
        },
        hw.cores,
        crate::measure::units::format_bytes(ram)
    );
    (hw, text, ops)
}

/// Whether the server's disk answers like an SSD: a 1 s fsync probe in `dir`, pglab's own
/// directory on the server's device, when there is one.
async fn probe_disk(dir: Option<std::path::PathBuf>) -> (bool, String, Option<f64>) {
    let Some(dir) = dir else {
        return (
            true,
            "disk not probed: no directory of pglab's on the server's device (taken as an SSD; --storage hdd says otherwise)".to_string(),
            None,
        );
    };
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

/// The sandbox's sampled imports, said once: memory settings found on a sample may not hold
/// for the whole table (a sort or hash that fits in memory on a 10 % sample can spill on all
/// of it), so a result on them is a lead to measure again, not an answer.
async fn sampled_note(client: &Client) -> Option<String> {
    let sampled: Vec<String> = crate::sql::imported::imported_tables(client)
        .await
        .ok()?
        .into_iter()
        .filter_map(|r| {
            r.sample
                .map(|s| format!("{} ({}% sample, {} rows)", r.table, s.percent, r.rows))
        })
        .collect();
    (!sampled.is_empty()).then(|| {
        format!(
            "the sandbox holds sampled imports: {}; where the workload reads them, work_mem, maintenance_work_mem and shared_buffers found here may not carry to the whole tables (what fits in memory on a sample can spill on all of it): measure the chosen values on the whole data before applying them",
            sampled.join(", ")
        )
    })
}

/// The memory settings in effect, for the worst-case line.
async fn server_memory(
    client: &Client,
) -> std::result::Result<super::memory::ServerMemory, String> {
    let names: Vec<String> = [
        "work_mem",
        "hash_mem_multiplier",
        "max_connections",
        "shared_buffers",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let v = crate::experiment::lab::whatif::apply::shown(client, &names)
        .await
        .map_err(|e| format!("cannot read the memory settings: {e}"))?;
    let get = |n: &str| v.get(n).cloned().unwrap_or_default();
    Ok(super::memory::ServerMemory {
        work_mem: get("work_mem"),
        hash_mem_multiplier: get("hash_mem_multiplier").parse().unwrap_or(2.0),
        max_connections: get("max_connections").parse().unwrap_or(100),
        shared_buffers: get("shared_buffers"),
    })
}

/// What a fresh tune is given.
pub struct Fresh {
    pub workload: String,
    pub spec: ExperimentSpec,
    /// A sentence about the workload (its own settings sweep left out), when there is one.
    pub note: Option<String>,
    pub settings: Vec<String>,
    pub budget: Duration,
    /// The target's hardware as given, and whether it runs on this machine.
    pub hardware: GivenHardware,
}

/// Why a fresh tune cannot start.
pub(crate) enum SetupError {
    /// Nothing to search here (bad input: exit 2 headless).
    Nothing(String),
    /// The server could not be read.
    Failed(String),
}

/// The note a tune on a hot standby carries: what it measured, and how far behind it was.
fn standby_note(server: &ServerSnapshot) -> String {
    let lag = server
        .standby_lag
        .map(|l| format!(" ({})", l.words()))
        .unwrap_or_default();
    format!(
        "the target is a hot standby{lag}: the workload's reads were timed there, with the standby's cache and its replay running beside them; settings tuned here are the standby's, and may not carry to the primary"
    )
}

/// The state of a fresh tune on the server behind `client`: the host read (and its disk
/// probed in `probe_dir`, pglab's own directory on the server's device), the prior, the
/// candidates checked against the server.
pub(crate) async fn new_state(
    client: &Client,
    server: &ServerSnapshot,
    target: &str,
    on_sandbox: bool,
    probe_dir: Option<std::path::PathBuf>,
    schema: &str,
    fresh: Fresh,
) -> std::result::Result<TuneState, SetupError> {
    let Fresh {
        workload,
        mut spec,
        note,
        settings,
        budget,
        hardware: given,
    } = fresh;
    let normalised = normalise(&mut spec);
    let named = settings
        != candidates::auto_settings(spec.kind(), false)
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>();
    precheck(client, &spec, schema, on_sandbox).await?;
    let reach = Reach::of(on_sandbox, server.citus.is_some());
    let (hw, host_text) = read_host(server, probe_dir, given, &mut spec).await;
    let pg = candidates::pgtune(&hw);
    let planned = super::plan::plan(client, &settings, reach, &hw, &pg)
        .await
        .map_err(SetupError::Failed)?;
    let memory = server_memory(client).await.map_err(SetupError::Failed)?;
    let (formula, formula_notes) = super::plan::formula(client, reach, &pg)
        .await
        .map_err(SetupError::Failed)?;
    let mut notes: Vec<String> = note.into_iter().collect();
    notes.extend(normalised);
    notes.extend(planned.notes);
    notes.extend(formula_notes);
    notes.extend(server_notes(client, server, on_sandbox).await);
    if planned.settings.is_empty() {
        return Err(SetupError::Nothing(format!(
            "nothing to search on this server: {}",
            notes.join("; ")
        )));
    }
    let measured_on = measured_on(server, target, on_sandbox, host_text, &workload, &spec);
    let mut st = TuneState {
        version: STATE_VERSION,
        id: super::state::new_id(),
        workload,
        measured_on,
        spec,
        target: target.to_string(),
        on_sandbox,
        budget_s: budget.as_secs_f64(),
        spent_s: 0.0,
        hardware: hw,
        pgtune: pg.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        formula,
        memory,
        plan_nodes: None,
        max_memory: None,
        phase: TunePhase::search(&planned.settings),
        screen: None,
        plan: planned.settings,
        decisions: Vec::new(),
        pace: Default::default(),
        cache: Default::default(),
        plans: None,
        named,
        path: Vec::new(),
        trials: 0,
        experiment_trials: 0,
        runs: Vec::new(),
        sampled: Vec::new(),
        notes,
    };
    if super::plan_phase::reads_plans(&st) {
        st.phase = TunePhase::Plans;
    }
    Ok(st)
}

/// The target's [`hardware`] (with the server's `max_connections`) and the text saying where
/// each figure came from; an ingest workload keeps the fsync rate measured.
async fn read_host(
    server: &ServerSnapshot,
    probe_dir: Option<std::path::PathBuf>,
    given: GivenHardware,
    spec: &mut ExperimentSpec,
) -> (Hardware, String) {
    let max_conn = server
        .setting("max_connections")
        .and_then(|s| s.value.parse().ok())
        .unwrap_or(100);
    let (hw, host_text, fsync_ops) = hardware(probe_dir, max_conn, given).await;
    // ingest compares insert commits with the disk's fsync rate: measured once here rather
    // than by every round's run.
    if let ExperimentSpec::Ingest(s) = spec
        && s.fsync_ops_per_s.is_none()
    {
        s.fsync_ops_per_s = fsync_ops;
    }
    (hw, host_text)
}

/// The notes the server itself calls for: the sandbox's sampled imports, a hot standby.
async fn server_notes(client: &Client, server: &ServerSnapshot, on_sandbox: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if on_sandbox {
        notes.extend(sampled_note(client).await);
    }
    if server.in_recovery {
        // What a tune measures on a standby is the standby's reads, and only those.
        notes.push(standby_note(server));
    }
    notes
}

/// The tables a workload reads: a query's statements', an index-build's own table (and its
/// sample); None for generated data, which a pass's description names.
fn workload_tables(spec: &ExperimentSpec) -> Option<String> {
    match spec {
        ExperimentSpec::Query(q) => {
            let t = q.tables();
            (!t.is_empty()).then(|| format!("tables {}", t.join(", ")))
        }
        ExperimentSpec::IndexBuild(b) => b.table.as_ref().map(|t| match t.sample {
            Some(p) => format!("table {} ({}% samples)", t.table, p),
            None => format!("table {}", t.table),
        }),
        _ => None,
    }
}

/// The script's "measured on" line: the host, the server, a pass's data and the workload.
fn measured_on(
    server: &ServerSnapshot,
    target: &str,
    on_sandbox: bool,
    host: String,
    workload: &str,
    spec: &ExperimentSpec,
) -> MeasuredOn {
    let pass = super::rounds::round_spec(spec, &[], None, false);
    let pass = format!("a pass: {}", pass.estimate().items().join(", "));
    // The header names the workload's tables: a pass's trial count alone names no data.
    let data = match workload_tables(spec) {
        Some(t) => format!("{t}; {pass}"),
        None => pass,
    };
    MeasuredOn {
        host,
        server: format!(
            "PostgreSQL {}, {}{}",
            server.version,
            if on_sandbox {
                "pglab's sandbox"
            } else {
                target
            },
            if server.in_recovery {
                " (a hot standby)"
            } else {
                ""
            }
        ),
        data,
        // One line: a query's SQL among the parameters keeps its words, not its breaks.
        workload: format!(
            "{workload} ({})",
            spec.spec_key()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::workload_tables;
    use crate::experiment::ExperimentKind;
    use crate::experiment::lab::spec::spec_of as spec;

    /// The tune header names the workload's tables, not only a pass's trial count.
    #[test]
    fn the_header_names_the_workloads_tables() {
        let q = spec(
            ExperimentKind::Query,
            &[(
                "sql",
                "SELECT * FROM orders o JOIN sales.customers c ON c.id = o.customer_id WHERE o.id IN (SELECT id FROM orders)",
            )],
        );
        assert_eq!(
            workload_tables(&q).as_deref(),
            Some("tables orders, sales.customers")
        );
        let ib = spec(
            ExperimentKind::IndexBuild,
            &[("table", "public.ev"), ("column", "k"), ("sample", "10%")],
        );
        assert_eq!(
            workload_tables(&ib).as_deref(),
            Some("table public.ev (10% samples)")
        );
        let generated = spec(ExperimentKind::IndexBuild, &[("rows", "10k")]);
        assert_eq!(workload_tables(&generated), None);
    }
}
