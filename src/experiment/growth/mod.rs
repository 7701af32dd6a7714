//! growth: an association table on its way to a billion rows (the third founding
//! experiment), and the question behind it — store every (version, content) pair
//! (`snapshot`) or only the differences (`ranges`)?
//!
//! Each step grows every design's table fast (COPY, indexes dropped and rebuilt or kept),
//! then measures the write of one new version, the read of one version and the sizes. Steps
//! that would not fit the disk (or lie beyond the fill limit) are not run: they are
//! projected along the growth each design's measurements showed, with intervals, and marked
//! as such (see [`crate::measure::fit`]).

pub(crate) mod cache;
mod churn;
mod copy;
mod cost;
mod fill;
mod key;
mod kinds;
mod measure;
mod project;
mod report;
mod schema;
mod sharding;
mod spec;
mod step;
mod verdicts;

pub use cost::{DEFAULT_MAX_WAL, wal_allowance};
pub use key::KeyShape;
pub use kinds::{Design, GrowMode, IndexKind, WriteMethod};
pub use project::project_rest;
pub use report::{
    DesignFit, FillBaseline, GrowStats, GrowthReport, GrowthStep, GrowthSummary, StepProjection,
};
pub use sharding::ShardComparison;
pub use spec::{DESIGNS, FIELDS, GrowthSpec, INDEXES};
pub use verdicts::{DesignComparison, StepEstimate, Timed};

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio_postgres::Client;

use self::cache::ColdCache;
use self::copy::FillError;
use self::fill::{DesignState, Watcher};
use self::schema::{ContentTable, TableDef};
use self::step::StepMeasure;
use super::event::{ResultLayout, RunEvent, Sample, TrialRef};
use super::lab::{RunCtx, RunError};
use super::whatif::round_blocks;
use crate::measure::units::{format_bytes_short, format_count};

/// The results table and chart: as the original's table, the write of one version against
/// the versions the table holds, one series per design; the reads and sizes beside it. The
/// summary compares the designs at each step (the engine's verdicts, in each sample's
/// findings), not the steps of a design.
pub fn layout() -> ResultLayout {
    let seconds = |name: &str| super::event::MeasureDef {
        name: name.into(),
        unit: "s".into(),
    };
    ResultLayout {
        x_label: "versions".into(),
        x_unit: "count".into(),
        x_log: true,
        y_label: "write of one version".into(),
        y_unit: "s".into(),
        y_log: true,
        y_better: crate::measure::verdict::Better::Lower,
        columns: [
            "design",
            "versions",
            "rows",
            "write",
            "read",
            "read cold",
            "table",
            "indexes",
            "projected",
        ]
        .map(String::from)
        .to_vec(),
        y_name: "write".into(),
        measures: vec![seconds("read"), seconds("read cold")],
        compare: super::event::Compare::Series,
        summary_columns: ["rows", "table", "indexes"].map(String::from).to_vec(),
        ..Default::default()
    }
}

/// The chart point and table row of a step; `findings` are the verdicts the step decided.
pub fn sample_of(spec: &GrowthSpec, s: &GrowthStep, findings: Vec<String>) -> Sample {
    let opt = |v: Option<f64>| v.map(verdicts::ms).unwrap_or_else(|| "–".into());
    let combo = spec.set.combos().get(s.combo).cloned().unwrap_or_default();
    let mut cells: Vec<String> = vec![
        s.design.as_str().into(),
        format_count(s.versions as f64),
        format_count(s.rows as f64),
        opt(s.write_seconds),
        opt(s.read_seconds),
        opt(s.read_cold_seconds),
        format_bytes_short(s.table_bytes as f64),
        format_bytes_short(s.index_total() as f64),
        if s.projected {
            crate::measure::fit::reach_words(s.reach.unwrap_or(f64::INFINITY))
        } else {
            "no".into()
        },
    ];
    if !spec.set.is_empty() {
        cells.push(crate::experiment::whatif::combo_label(&combo));
    }
    Sample {
        series: crate::experiment::whatif::with_combo(s.design.as_str(), &combo),
        x: s.versions as f64,
        y: s.write_seconds.unwrap_or(f64::NAN),
        projected: s.projected,
        cells,
        settings: crate::experiment::whatif::combo_label(&combo),
        values: s.write_repeats.clone(),
        measures: vec![s.read_repeats.clone(), s.read_cold_repeats.clone()],
        findings,
    }
}

/// The verdicts of ranges against snapshot that the steps just measured (one step, one
/// combination of swept settings, every design) decide: the findings the report will give.
fn step_findings(spec: &GrowthSpec, steps: &[GrowthStep]) -> Vec<String> {
    let labels: Vec<String> = spec
        .set
        .combos()
        .iter()
        .map(crate::experiment::whatif::combo_label)
        .collect();
    verdicts::comparisons(steps, &labels, &spec.decision.rules())
        .into_iter()
        .map(|c| c.finding)
        .collect()
}

/// Why measuring stopped before the last step.
enum Stop {
    FillLimit(u64),
    Disk { versions: u64, need: u64, free: u64 },
    DiskFull(String),
}

/// What the run learned about the server along the way.
#[derive(Default)]
struct Findings {
    confounders: Vec<String>,
    cold: bool,
    checkpoint_denied: bool,
}

pub async fn run(
    ctx: &RunCtx,
    spec: &GrowthSpec,
    report: &mut GrowthReport,
) -> Result<(), RunError> {
    let mut found = Findings::default();
    let result = run_steps(ctx, spec, report, &mut found).await;
    report.steps.sort_by_key(|s| (s.versions, s.design));
    report.summarize(&found.confounders, found.cold);
    // The findings the report gives, as notes (the TUI's run pane, the headless progress).
    for f in report.summary.findings.clone() {
        ctx.note(f).await;
    }
    result
}

async fn run_steps(
    ctx: &RunCtx,
    spec: &GrowthSpec,
    report: &mut GrowthReport,
    found: &mut Findings,
) -> Result<(), RunError> {
    let total = spec.samples();
    ctx.emit
        .send(RunEvent::Started {
            run_id: ctx.run_id.clone(),
            description: format!(
                "growth · {} · {} units × {} versions · churn {}% · write by {} · {} indexes",
                spec.designs
                    .iter()
                    .map(|d| d.as_str())
                    .collect::<Vec<_>>()
                    .join(" vs "),
                format_count(spec.units as f64),
                spec.steps
                    .iter()
                    .map(|s| format_count(*s as f64))
                    .collect::<Vec<_>>()
                    .join("/"),
                spec.churn_pct,
                spec.write_method.as_str(),
                spec.grow_mode.as_str()
            ),
            trials: total,
            layout: crate::experiment::whatif::layout_with(layout(), &spec.set),
        })
        .await;
    let (mut client, mut watcher) = sessions(ctx).await?;
    let combos = spec.set.combo_count();

    ctx.emit.phase(None, "creating tables").await;
    let mut content = ContentTable::create(ctx, &client).await?;
    let mut states = Vec::new();
    for &d in &spec.designs {
        let def = TableDef::new(ctx, spec, d);
        def.create(ctx, &client).await?;
        states.push(DesignState::new(def, spec));
    }
    let mut relnames: Vec<String> = states.iter().map(|s| s.def.relname.clone()).collect();
    relnames.push(content.relname.clone());

    let cold = match ColdCache::probe(ctx, &client, &content.qualified).await {
        Ok(c) => Some(c),
        Err(why) => {
            let s = format!(
                "cold reads not measured ({why}): reads are warm only (the version is read once untimed first)"
            );
            ctx.note(s.clone()).await;
            found.confounders.push(s);
            None
        }
    };
    found.cold = cold.is_some();
    if cold.is_some() {
        found.confounders.push(
            "cold reads drop the OS page cache of the table and its indexes; pages still in shared_buffers stay warm (PostgreSQL 15 empties them only by a restart)".into(),
        );
    }
    let local_free = || {
        crate::experiment::preflight::free_space(
            ctx.opts.local_data_dir.as_deref(),
            ctx.opts.disk_budget,
        )
    };
    report.free_bytes = local_free();
    let known_free = report.free_bytes.is_some();
    if !known_free {
        ctx.note("free disk space is unknown (the server is not on this host): every step up to the fill limit runs; a full disk stops the growth and the rest is projected").await;
    }
    let max_wal = ctx
        .server
        .setting("max_wal_size")
        .and_then(|s| s.bytes())
        .unwrap_or(DEFAULT_MAX_WAL);

    let mut stop: Option<Stop> = None;
    let mut sample_no = 0;
    'steps: for (step_no, &target) in spec.steps.iter().enumerate() {
        ctx.check()?;
        if let Some(limit) = spec.fill_limit
            && target > limit
        {
            stop = Some(Stop::FillLimit(limit));
            break;
        }
        let current = states.iter().map(|s| s.versions()).max().unwrap_or(0);
        let usage = measure::total_bytes(ctx, &client, &relnames).await?;
        let fits: Vec<DesignFit> = spec
            .designs
            .iter()
            .filter_map(|&d| project::fit_design(report, d, spec.rows(d, target)))
            .collect();
        let need = project::disk_needed(spec, report, &fits, target, current, max_wal);
        // A budget counts what the run already holds; the filesystem's free space already
        // has it taken off.
        let free = match ctx.opts.disk_budget {
            Some(_) => local_free().map(|f| f.saturating_sub(usage)),
            None => local_free(),
        };
        if let Some(free) = free
            && need.saturating_sub(usage) > free
        {
            stop = Some(Stop::Disk {
                versions: target,
                need,
                free: free + usage,
            });
            break;
        }
        content
            .ensure(
                ctx,
                &client,
                content_ids(
                    spec,
                    target.max(current)
                        + combos as u64 * spec.repeat.most(spec.decision.max_repeat) as u64,
                ),
            )
            .await?;
        let read_rng = ChaCha8Rng::seed_from_u64(
            spec.seed ^ (step_no as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        );
        // Every combination of swept settings measures the same step, reading the same
        // versions; the order of the restart blocks alternates direction from step to step,
        // so a step starts where the last one ended. The growth runs under the first of them
        // (its timings are recorded with that combination's step).
        let mut order: Vec<usize> = (0..combos).collect();
        order.sort_by_key(|&c| (ctx.whatif.plan.block_of(c), c));
        if step_no % 2 == 1 {
            order.reverse();
        }
        if !ctx.whatif.plan.is_empty() {
            if let crate::experiment::whatif::Entered::Restarted { .. } =
                ctx.enter_combo(order[0]).await?
            {
                (client, watcher) = sessions(ctx).await?;
            } else {
                ctx.whatif
                    .plan
                    .session_settings(order[0])
                    .apply(&client)
                    .await
                    .map_err(|e| ctx.error(e))?;
            }
        }
        // Grow every design first, then one CHECKPOINT, then measure them by rounds.
        let mut trials = Vec::new();
        let mut grows = Vec::new();
        for st in states.iter_mut() {
            sample_no += 1;
            let trial = Some(TrialRef {
                index: sample_no,
                total,
                label: format!(
                    "{} · {} versions",
                    st.design().as_str(),
                    format_count(target as f64)
                ),
            });
            let grow = match fill::grow(
                ctx,
                &client,
                watcher.as_ref(),
                spec,
                st,
                target,
                trial.clone(),
            )
            .await
            {
                Ok(g) => g,
                Err(FillError::DiskFull(why)) => {
                    stop = Some(Stop::DiskFull(why));
                    break 'steps;
                }
                Err(FillError::Run(e)) => return Err(e),
            };
            trials.push(trial);
            grows.push(grow);
        }
        let checkpointed = checkpoint(ctx, &client, found).await?;
        // Writes, then reads, by rounds; in every round each combination takes its turn
        // (restart blocks ABAB…, or rotating with three or more), so no value's repeats all
        // fall in one block. A combination's sizes are read when it first gets its turn.
        let blocks = ctx.whatif.plan.blocks(combos);
        let mut distinct: Vec<usize> = Vec::new();
        for &c in &order {
            if !distinct.contains(&blocks[c]) {
                distinct.push(blocks[c]);
            }
        }
        let mut m: Vec<Option<(StepMeasure, BTreeMap<String, String>)>> =
            (0..combos).map(|_| None).collect();
        for reading in [false, true] {
            let mut round = 1;
            loop {
                let mut any = false;
                for b in round_blocks(&distinct, round as usize - 1) {
                    for &c in order.iter().filter(|&&c| blocks[c] == b) {
                        let started = m[c].as_ref().map(|(s, _)| s);
                        let who = if reading {
                            StepMeasure::readers(started, spec, round)
                        } else {
                            StepMeasure::writers(started, spec, round)
                        };
                        if who.is_empty() {
                            continue;
                        }
                        any = true;
                        if combos > 1 {
                            if let crate::experiment::whatif::Entered::Restarted { .. } =
                                ctx.enter_combo(c).await?
                            {
                                (client, watcher) = sessions(ctx).await?;
                            }
                            ctx.whatif
                                .plan
                                .session_settings(c)
                                .apply(&client)
                                .await
                                .map_err(|e| ctx.error(e))?;
                        }
                        if m[c].is_none() {
                            let shown = ctx.shown_settings(&client).await?;
                            let sm =
                                StepMeasure::start(ctx, &client, &states, read_rng.clone()).await?;
                            m[c] = Some((sm, shown));
                        }
                        let Some((sm, _)) = m[c].as_mut() else {
                            continue;
                        };
                        if reading {
                            sm.read(ctx, &client, &states, cold.as_ref(), (&who, round), &trials)
                                .await?;
                        } else {
                            sm.write(ctx, &client, spec, &mut states, (&who, round), &trials)
                                .await?;
                        }
                    }
                }
                if !any {
                    break;
                }
                round += 1;
            }
        }
        // The step is the one its first combination measured: later ones started after a
        // few more versions were written, but they answer for the same step. The growth ran
        // under the first, whose step carries its figures.
        let mut grows = Some(grows);
        let mut at_versions: Option<Vec<(u64, u64)>> = None;
        for &c in &order {
            let Some((sm, shown)) = m[c].take() else {
                continue;
            };
            let steps = sm.finish(
                spec,
                &states,
                grows
                    .take()
                    .unwrap_or_else(|| vec![None; spec.designs.len()]),
            );
            let first = at_versions
                .get_or_insert_with(|| steps.iter().map(|s| (s.versions, s.rows)).collect());
            let mut steps = steps;
            for (i, s) in steps.iter_mut().enumerate() {
                if let Some(&(v, r)) = first.get(i) {
                    (s.versions, s.rows, s.pairs) = (v, r, v * spec.units);
                }
                s.combo = c;
                s.settings = shown.clone();
                s.checkpoint = Some(checkpointed);
            }
            // The step's verdicts travel with its last design's sample.
            let mut findings = Some(step_findings(spec, &steps));
            let last = steps.len().saturating_sub(1);
            for (i, s) in steps.into_iter().enumerate() {
                let f = if i == last {
                    findings.take().unwrap_or_default()
                } else {
                    Vec::new()
                };
                ctx.emit.sample(sample_of(spec, &s, f)).await;
                report.steps.push(s);
            }
        }
        if report.same_content() == Some(false) {
            ctx.note(format!(
                "the designs returned different content at {target} versions: this is a bug in pglab"
            ))
            .await;
        }
    }

    // Everything not measured is projected from what was.
    let usage = measure::total_bytes(ctx, &client, &relnames).await?;
    let budget = match ctx.opts.disk_budget {
        Some(_) => local_free(),
        None => local_free().map(|f| f + usage),
    };
    let measured_max = states.iter().map(|s| s.versions()).max().unwrap_or(0);
    let projected = project::project_rest(report, measured_max, max_wal, budget);
    for s in &projected {
        ctx.emit.sample(sample_of(spec, s, Vec::new())).await;
    }
    let projected_any = !projected.is_empty();
    let fits = report.fit.clone();
    if projected_any {
        let why = match &stop {
            Some(Stop::FillLimit(l)) => format!(
                "steps beyond {} versions are projected, not measured (fill-limit)",
                format_count(*l as f64)
            ),
            Some(Stop::Disk {
                versions,
                need,
                free,
            }) => format!(
                "{} versions would need about {} with WAL and sort space but only {} is free: that step and later ones are projected, not run",
                format_count(*versions as f64),
                format_bytes_short(*need as f64),
                format_bytes_short(*free as f64)
            ),
            Some(Stop::DiskFull(e)) => format!(
                "the server's disk filled up while growing ({e}): the remaining steps are projected"
            ),
            None => "the target rows are projected, not measured".into(),
        };
        ctx.note(why).await;
        found.confounders.push(
            "projections carry each design's measured steps along the shape they showed (sizes linear in rows; times flat unless growth was shown, then logarithmic or linear, whichever fits better), with intervals: no shape can foresee a jump such as the original's at 10000 versions, when the indexes outgrew memory".into(),
        );
        if let Some(f) = fits.iter().find(|f| f.design == Design::Ranges)
            && f.read
                .is_some_and(|t| t.shape == crate::measure::fit::Shape::Flat)
        {
            found.confounders.push(
                "ranges reads scan every range added before the version read, so their time grows with the number of ranges; the measured steps were too small to show it, so the projection stays flat at their median: read the projected ranges reads as a floor, not an estimate".into(),
            );
        }
        let ram = ctx.host.total_memory;
        for s in report.steps.iter().filter(|s| s.projected) {
            if ram > 0 && s.index_total() > ram {
                found.confounders.push(format!(
                    "{} at {} versions: the projected indexes ({}) exceed this host's memory ({}), so writes will wait on disk and likely take much longer than projected",
                    s.design.as_str(),
                    format_count(s.versions as f64),
                    format_bytes_short(s.index_total() as f64),
                    format_bytes_short(ram as f64)
                ));
                break;
            }
        }
    }

    if spec.baseline {
        fill::baseline(ctx, &client, spec, report, local_free()).await?;
    }
    Ok(())
}

/// The run's session and the one that watches it grow (None when no second session opens).
async fn sessions(ctx: &RunCtx) -> Result<(Client, Option<Watcher>), RunError> {
    let client = ctx.session().await?;
    let watcher = match ctx.session().await {
        Ok(w) => {
            let pid: i32 = client
                .query_one("SELECT pg_backend_pid()", &[])
                .await
                .map_err(|e| ctx.error(e))?
                .get(0);
            Some(Watcher { client: w, pid })
        }
        Err(_) => None,
    };
    Ok((client, watcher))
}

/// Content ids any version up to `versions` refers to.
fn content_ids(spec: &GrowthSpec, versions: u64) -> i64 {
    if versions == 0 {
        0
    } else {
        (spec.units + spec.churn_per_version() * (versions - 1)) as i64
    }
}

/// `CHECKPOINT` after a fill so its writes do not land in the measurements, when the run
/// takes one (`ctx.checkpoint`: on pglab's sandbox, or when asked) and the role may (said
/// once when it may not). True when one was taken.
async fn checkpoint(ctx: &RunCtx, client: &Client, found: &mut Findings) -> Result<bool, RunError> {
    if found.checkpoint_denied {
        return Ok(false);
    }
    if !ctx.checkpoint.take {
        found.checkpoint_denied = true;
        if let Some(c) = &ctx.checkpoint.confounder {
            ctx.note(c.clone()).await;
            found.confounders.push(c.clone());
        }
        return Ok(false);
    }
    match ctx
        .cancellable(client, client.batch_execute("CHECKPOINT"))
        .await
    {
        Ok(()) => Ok(true),
        Err(RunError::Cancelled) => Err(RunError::Cancelled),
        Err(RunError::Failed(why)) => {
            found.checkpoint_denied = true;
            let s = format!(
                "CHECKPOINT after growing was not possible ({why}; it needs superuser or pg_checkpoint): write timings may include checkpoint I/O"
            );
            ctx.note(s.clone()).await;
            found.confounders.push(s);
            Ok(false)
        }
    }
}
