//! query: the DBA's own statements as an experiment. Each statement (or a pgbench-style
//! script, in throughput mode) runs under every combination of the swept server settings
//! (`--set`, through the what-if machinery) and the candidate indexes (`--index`: none, then
//! each candidate). Per combination one untimed `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`
//! gives the plan, its fingerprint, the spill, the buffers and JIT's time; the timed trials
//! run the plain statement (wall time at the client, rows returned), interleaved across the
//! combinations round by round, `repeat` times or until the statistics core has decided. In
//! throughput mode a trial is `duration` seconds of N clients in a loop: transactions/s and
//! latency percentiles.
//!
//! Safety: on any server that is not pglab's sandbox a run writes nothing (no lab schema; see
//! `docs/production.md`): every statement is checked on PostgreSQL's own parse tree against an
//! allow-list of reads before anything runs, every execution is a `READ ONLY` transaction
//! (`--writes rollback`: one that is rolled back), the setup may only make temporary tables on
//! the measuring session (with `--writes rollback`), candidate indexes are only hypothetical
//! (HypoPG), `cache = cold` (restarts) is refused, and belts (timeouts, `--max-temp`) hold
//! every trial. Statements that would end or change pglab's transaction are refused
//! everywhere.

pub(crate) mod all_cancelled;
pub(crate) mod batch;
pub(crate) mod belts;
pub(crate) mod bench;
pub(crate) mod candidate;
pub(crate) mod cold;
pub(crate) mod data;
pub(crate) mod estimate;
mod eta;
pub(crate) mod exec;
mod experiment;
pub(crate) mod expr;
mod facts;
mod fields;
pub(crate) mod free_slots;
mod gate;
pub(crate) mod guard;
pub(crate) mod indexes;
pub mod kept_warm;
pub(crate) mod loadgen;
pub(crate) mod per_second;
pub mod plan;
pub(crate) mod pqsession;
pub(crate) mod precheck;
pub(crate) mod production;
pub(crate) mod protocol;
#[cfg(test)]
mod record_schema_tests;
pub(crate) mod replay_skip;
mod report;
pub(crate) mod rounds;
pub(crate) mod same_plan;
mod samples;
pub mod script;
pub(crate) mod session;
pub(crate) mod setup;
pub(crate) mod setup_foreign;
mod spec;
mod spec_values;
pub mod sqltext;
pub(crate) mod standby;
pub(crate) mod standby_reads;
pub(crate) mod standbys;
pub mod summary;
pub(crate) mod sync_levels;
pub(crate) mod throughput;
pub(crate) mod variants;
pub(crate) mod visible;
pub(crate) mod words;

pub use fields::FIELDS;
pub use report::{
    ComboInfo, ComboPlan, IndexCandidate, Latency, QueryReport, QueryTrial, clients_name,
    statements_digest,
};
#[cfg(any(test, feature = "fixtures"))]
pub use spec::test_spec;
pub use spec::{Cache, QuerySpec, Writes};
pub(crate) use standby_reads::StandbyReadTrial;
pub(crate) use summary::UnitSummary;

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt;

use super::lab::event::{ResultLayout, RunEvent};
use super::lab::whatif::combo_label;
use super::lab::{RunCtx, RunError};
use crate::measure::verdict::Better;
use bench::Bench;
use guard::TxMode;
use standbys::Standbys;
use visible::Visible;

/// What makes a query run write on a server pglab did not start (None: it only reads, so
/// it runs on a standby, in a read-only database, as a role with SELECT only).
pub(crate) fn writes_on_foreign(spec: &QuerySpec) -> Option<&'static str> {
    if spec.writes == Writes::Rollback {
        Some("--writes rollback")
    } else if !spec.setup_sql.trim().is_empty() {
        Some("--setup")
    } else {
        None
    }
}

/// The statement timeout a query run applies when none is given.
pub(crate) const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(300);

/// How the results are drawn: time (or transactions/s) per combination, one series per
/// statement (or client count).
pub fn layout(spec: &QuerySpec, combos: &[ComboInfo]) -> ResultLayout {
    let (y_label, y_unit, better, columns): (&str, &str, Better, &[&str]) = if spec.throughput() {
        (
            "transactions/s",
            "tps",
            Better::Higher,
            &[
                "clients",
                "combination",
                "rep",
                "tps",
                "p50 ms",
                "p95 ms",
                "p99 ms",
            ],
        )
    } else {
        (
            "seconds",
            "s",
            Better::Lower,
            &["statement", "combination", "rep", "time", "rows"],
        )
    };
    let mut columns: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    if spec.on_standby.is_some() {
        columns.push("cancelled".into());
    }
    ResultLayout {
        x_label: "combination".into(),
        x_unit: String::new(),
        x_log: false,
        y_label: y_label.into(),
        y_unit: y_unit.into(),
        y_log: false,
        y_better: better,
        columns,
        x_names: combos.iter().map(|c| c.label.clone()).collect(),
        ..ResultLayout::default()
    }
}

/// Every combination of the spec, labelled: `work_mem=64MB · index 1`.
pub fn combos(spec: &QuerySpec) -> Vec<ComboInfo> {
    let settings = spec.set.combos();
    let mut out = Vec::new();
    for v in 0..spec.index_values() {
        for (sc, set) in settings.iter().enumerate() {
            let mut parts = Vec::new();
            if !set.is_empty() {
                parts.push(combo_label(set));
            }
            if !spec.index.is_empty() {
                parts.push(if v == 0 {
                    "no index".to_string()
                } else {
                    format!("index {v}")
                });
            }
            out.push(ComboInfo {
                combo: out.len(),
                label: if parts.is_empty() {
                    "as configured".into()
                } else {
                    parts.join(" · ")
                },
                index_value: v,
                settings: spec.set.combos().get(sc).cloned().unwrap_or_default(),
            });
        }
    }
    out
}

/// The combination matching the server's own settings without a candidate index.
fn current_combo(ctx: &RunCtx, spec: &QuerySpec) -> Option<usize> {
    let plan = &ctx.whatif.plan;
    spec.set.combos().iter().position(|combo| {
        combo.iter().all(|(name, value)| {
            plan.settings
                .iter()
                .find(|s| &s.name == name)
                .and_then(|s| s.info.as_ref())
                .is_some_and(|info| {
                    info.normalize(value)
                        .is_some_and(|want| info.same(&info.setting, &want))
                })
        })
    })
}

fn describe(spec: &QuerySpec, mode: TxMode, total: usize) -> String {
    let what = match (&spec.script, spec.statements.len()) {
        (Some(_), _) => format!("script {}", spec.script_file),
        (None, 1) => spec.statements[0].name.clone(),
        (None, n) => format!("{n} statements"),
    };
    let mut parts = vec![what];
    if !spec.set.is_empty() {
        parts.push(format!("set {}", spec.set.text()));
    }
    if !spec.index.is_empty() {
        parts.push(format!(
            "{} index candidate{}",
            spec.index.len(),
            if spec.index.len() == 1 { "" } else { "s" }
        ));
    }
    if spec.throughput() {
        let clients: Vec<String> = spec.client_counts().iter().map(|c| c.to_string()).collect();
        parts.push(format!(
            "clients {} × {} · protocol {}",
            clients.join(","),
            crate::measure::units::format_seconds(spec.duration_s),
            spec.protocol.as_str()
        ));
    } else {
        parts.push(format!("cache {}", spec.cache.as_str()));
    }
    parts.extend(standby_reads::describe(spec));
    // A throughput trial lasts its duration: the run's length, said before it starts.
    let load = if spec.throughput() {
        format!(
            ", {} {} of load",
            if spec.repeat.is_auto() {
                "at most"
            } else {
                "at least"
            },
            crate::measure::units::format_seconds(spec.duration_s * total as f64)
        )
    } else {
        String::new()
    };
    parts.push(format!(
        "×{} → {}{total} trials{load}",
        spec.repeat.text(),
        if spec.repeat.is_auto() { "≤" } else { "" }
    ));
    parts.push(mode.describe().to_string());
    parts.join(" · ")
}

/// On the sandbox: which imported tables the statements read (a note each) and any statement
/// that joins a sample with other data (a confounder).
async fn data_notes(ctx: &RunCtx, report: &QueryReport, confounders: &mut Vec<String>) {
    let Ok(c) = ctx.target.connect().await else {
        return;
    };
    let Ok(records) = crate::sql::imported::imported_tables(&c).await else {
        return;
    };
    let (notes, warnings) = data::of(report, &records);
    for n in notes {
        ctx.note(n).await;
    }
    confounders.extend(warnings);
}

pub(crate) async fn run(
    ctx: &RunCtx,
    spec: &QuerySpec,
    report: &mut QueryReport,
) -> Result<(), RunError> {
    let on_sandbox = ctx.target.is_sandbox() && ctx.opts.sandbox.is_some();
    let mode = TxMode::of(spec.writes, on_sandbox);
    report.transactions = mode.describe().to_string();
    report.combos = combos(spec);
    report.current_combo = current_combo(ctx, spec);
    if let Ok(c) = ctx.target.connect().await {
        report.current_settings = super::lab::whatif::apply::shown(&c, &ctx.whatif.names())
            .await
            .unwrap_or_default();
    }
    let total = spec.trials();
    ctx.emit
        .send(RunEvent::Started {
            run_id: ctx.run_id.clone(),
            description: describe(spec, mode, total),
            trials: total,
            layout: layout(spec, &report.combos),
        })
        .await;
    if let Some(n) = throughput::length_sentence(spec) {
        ctx.note(n).await;
    }
    standby::note(ctx).await;
    match mode {
        TxMode::ReadOnly => {
            ctx.note("statements run in READ ONLY transactions: the server refuses any write (--writes rollback measures DML in a transaction that is rolled back)").await
        }
        TxMode::Rollback => {
            ctx.note(format!(
                "every execution runs in a transaction that is rolled back; {}",
                guard::ROLLBACK_CAVEAT
            ))
            .await
        }
        TxMode::Plain => {}
    }
    if spec.throughput() {
        ctx.note(spec.protocol.sentence()).await;
    } else {
        ctx.note(protocol::SINGLE_NOTE).await;
    }
    let mut confounders = Vec::new();
    let standbys = Standbys::for_run(ctx, spec).await?;
    let how = (mode, on_sandbox, &standbys);
    let result = AssertUnwindSafe(body(ctx, spec, report, how, &mut confounders))
        .catch_unwind()
        .await;
    // Built candidates go on every path (their trials are over, or the run is — a panic
    // too, which goes on after them), and the standbys back at their own distance.
    visible::put_back(ctx, report).await;
    standbys.put_back(ctx).await;
    let result = result.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    if on_sandbox {
        data_notes(ctx, report, &mut confounders).await;
    }
    report.summarize(&confounders);
    report
        .summary
        .findings
        .extend(standby_reads::findings(report));
    for f in report.summary.findings.clone() {
        ctx.note(f).await;
    }
    result
}

/// The run's work after its description: the checks, the setup, the candidates resolved,
/// then each index value's blocks in turn, in `mode`, on pglab's sandbox or not, with the
/// run's standbys beside it.
async fn body(
    ctx: &RunCtx,
    spec: &QuerySpec,
    report: &mut QueryReport,
    (mode, on_sandbox, standbys): (TxMode, bool, &Standbys),
    confounders: &mut Vec<String>,
) -> Result<(), RunError> {
    let problems = precheck::check_spec(spec, on_sandbox);
    if !problems.is_empty() {
        return Err(RunError::Failed(problems.join("; ")));
    }
    if spec.on_standby.is_some() {
        return standby_reads::body(ctx, spec, report).await;
    }
    let bench = run_setup(ctx, spec, report, mode, on_sandbox).await?;
    check_on_server(ctx, spec, report, on_sandbox).await?;
    report.interleaved = visible::interleaves(ctx, spec, report, confounders).await;
    let mut bench = match bench {
        Some(b) => b,
        None => Bench::open(ctx, spec, mode).await?,
    };
    bench.standbys = Some(standbys);
    if report.interleaved {
        let session = ctx.session().await?;
        for c in report.indexes.iter_mut() {
            indexes::build(ctx, &session, c).await?;
        }
        bench.visible = Some(Visible::start(ctx, &report.indexes).await?);
    }
    let settings_blocks = ctx.whatif.plan.blocks(spec.set.combo_count());
    let blocks = rounds::blocks(spec, &settings_blocks, report.interleaved);
    let groups = if report.interleaved {
        vec![blocks]
    } else {
        rounds::by_index_value(spec, blocks)
    };
    for group in groups {
        run_group(ctx, spec, report, &mut bench, &group, confounders).await?;
    }
    if let Some(n) = bench.rewarm_note() {
        ctx.note(n).await;
    }
    report.warm = bench.warm_count;
    if spec.repeat.is_auto() {
        note_undecided(ctx, spec, report).await;
    }
    Ok(())
}

/// Run the setup: on the sandbox on a session of its own (None: the measuring session is
/// opened later); elsewhere on the measuring session, returned.
async fn run_setup<'a>(
    ctx: &'a RunCtx,
    spec: &'a QuerySpec,
    report: &mut QueryReport,
    mode: TxMode,
    on_sandbox: bool,
) -> Result<Option<Bench<'a>>, RunError> {
    if on_sandbox {
        report.setup = setup::run(ctx, &spec.setup_sql, spec.keep_setup).await?;
        Ok(None)
    } else {
        // On a server pglab did not start the setup's temporary tables live in the
        // measuring session: it is opened first, and the setup runs on it.
        let mut b = Bench::open(ctx, spec, mode).await?;
        report.setup = b.setup_foreign(&spec.setup_sql).await?;
        Ok(Some(b))
    }
}

/// On a control session: the checks that need the server, then the candidate indexes
/// resolved.
async fn check_on_server(
    ctx: &RunCtx,
    spec: &QuerySpec,
    report: &mut QueryReport,
    on_sandbox: bool,
) -> Result<(), RunError> {
    let control = ctx.session().await?;
    // The setup's temporary tables are not seen from here: a statement naming them was
    // checked before the setup and is planned on the measuring session next.
    let setup_ran = on_sandbox || spec.setup_sql.trim().is_empty();
    let problems =
        precheck::check_on_server(&control, spec, &ctx.opts.schema, on_sandbox, setup_ran).await;
    if !problems.is_empty() {
        return Err(RunError::Failed(problems.join("; ")));
    }
    report.indexes = indexes::resolve(ctx, &control, &spec.index, on_sandbox).await?;
    Ok(())
}

/// One index value's blocks (candidates interleaved: every value's): its candidate built (a
/// hypothetical one only gets its plans), the warm-ups that size the trials, its rounds, then
/// the candidate dropped.
async fn run_group(
    ctx: &RunCtx,
    spec: &QuerySpec,
    report: &mut QueryReport,
    bench: &mut Bench<'_>,
    group: &[Vec<usize>],
    confounders: &[String],
) -> Result<(), RunError> {
    let interleaved = report.interleaved;
    let v = spec.split_combo(group[0][0]).0;
    if v > 0 && !interleaved {
        let cand = report.indexes[v - 1].clone();
        if cand.hypothetical() {
            return hypothetical_plans(report, bench, group, &cand).await;
        }
        if cand.build_seconds.is_none() {
            let session = ctx.session().await?;
            indexes::build(ctx, &session, &mut report.indexes[v - 1]).await?;
        }
    }
    let family = rounds::family(report, if interleaved { spec.index.len() } else { v });
    calibrate(report, bench, group).await?;
    run_rounds(report, bench, group, &family, confounders).await?;
    if v > 0 && !interleaved {
        let c = &mut report.indexes[v - 1];
        if indexes::drop(ctx, c).await {
            ctx.note(format!("index {} dropped after its trials", c.value))
                .await;
        }
    }
    Ok(())
}

/// Before the first trial (statement mode): every combination of the group entered once —
/// its plans and its warm-up — and each statement's batch fixed from the warm-ups.
async fn calibrate(
    report: &mut QueryReport,
    bench: &mut Bench<'_>,
    group: &[Vec<usize>],
) -> Result<(), RunError> {
    if report.params.throughput() || !report.sizing.is_empty() {
        return Ok(());
    }
    for &c in group.iter().flatten() {
        bench.enter(report, c).await?;
    }
    bench.fix_sizing(report).await;
    Ok(())
}

/// A hypothetical candidate's combinations: their plans under it, no trials.
async fn hypothetical_plans(
    report: &mut QueryReport,
    bench: &mut Bench<'_>,
    group: &[Vec<usize>],
    cand: &IndexCandidate,
) -> Result<(), RunError> {
    let sql = candidate::Candidate::parse(&cand.sql)
        .map_err(RunError::Failed)?
        .hypothetical_sql();
    for &c in group.iter().flatten() {
        bench.hypothetical(report, c, &sql).await?;
    }
    Ok(())
}

/// The group's rounds until none is planned: each trial in its combination (entered when it
/// changes), the summary after each.
async fn run_rounds(
    report: &mut QueryReport,
    bench: &mut Bench<'_>,
    group: &[Vec<usize>],
    family: &[usize],
    confounders: &[String],
) -> Result<(), RunError> {
    let mut r = 1;
    loop {
        let planned = rounds::group_round(report, group, family, r);
        if planned.is_empty() {
            break;
        }
        let mut entered = None;
        for p in planned {
            if entered != Some(p.combo) {
                bench.enter(report, p.combo).await?;
                entered = Some(p.combo);
            }
            bench.trial(report, p).await?;
            if report.interleaved {
                crate::fault::point("query-interleaved-trial");
            }
            report.summarize(confounders);
        }
        r += 1;
    }
    Ok(())
}

/// With repeat auto: a note when max-repeat ended the run with statements still undecided.
async fn note_undecided(ctx: &RunCtx, spec: &QuerySpec, report: &QueryReport) {
    let undecided = report
        .summary
        .units
        .iter()
        .filter(|u| !u.finding.undecided.is_empty())
        .count();
    if undecided > 0 {
        ctx.note(format!(
            "repeat auto ended at max-repeat {} with {undecided} statement{} still undecided",
            spec.decision.max_repeat,
            if undecided == 1 { "" } else { "s" }
        ))
        .await;
    }
}
