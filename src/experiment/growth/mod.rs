//! growth: an association table on its way to a billion rows (the third founding
//! experiment), and the question behind it — store every (version, content) pair
//! (`snapshot`) or only the differences (`ranges`)?
//!
//! Each step grows every design's table fast (COPY, indexes dropped and rebuilt or kept),
//! then measures the write of one new version, the read of one version and the sizes. Steps
//! that would not fit the disk (or lie beyond the fill limit) are not run: they are
//! projected by least-squares fits and marked as such.

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
pub use report::{DesignFit, FillBaseline, GrowStats, GrowthReport, GrowthStep, GrowthSummary};
pub use spec::{DESIGNS, FIELDS, GrowthSpec, INDEXES};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio_postgres::Client;

use self::cache::ColdCache;
use self::copy::FillError;
use self::fill::{DesignState, Watcher};
use self::schema::{ContentTable, TableDef};
use super::event::{ResultLayout, RunEvent, Sample, TrialRef};
use super::lab::{RunCtx, RunError};
use crate::measure::units::{format_bytes_short, format_count};

/// The results table and chart: as the original's table, write time against rows.
pub fn layout() -> ResultLayout {
    ResultLayout {
        x_label: "rows (version × content pairs)".into(),
        x_unit: "rows".into(),
        x_log: true,
        y_label: "write of one version (s)".into(),
        y_unit: "seconds".into(),
        y_log: true,
        y_better: crate::measure::verdict::Better::Lower,
        columns: [
            "design",
            "versions",
            "rows",
            "write s",
            "read ms",
            "table MB",
            "index MB",
            "projected",
        ]
        .map(String::from)
        .to_vec(),
        x_names: Vec::new(),
    }
}

fn mb(bytes: u64) -> String {
    let m = bytes as f64 / (1024.0 * 1024.0);
    if m < 100.0 {
        format!("{m:.1}")
    } else {
        format!("{m:.0}")
    }
}

/// The chart point and table row of a step.
pub fn sample_of(spec: &GrowthSpec, s: &GrowthStep) -> Sample {
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map(f).unwrap_or_else(|| "–".into());
    let combo = spec.set.combos().get(s.combo).cloned().unwrap_or_default();
    let mut cells: Vec<String> = vec![
        s.design.as_str().into(),
        s.versions.to_string(),
        format_count(s.rows as f64),
        opt(s.write_seconds, &|w| format!("{w:.2}")),
        opt(s.read_seconds, &|r| format!("{:.1}", r * 1000.0)),
        mb(s.table_bytes),
        mb(s.index_total()),
        if s.projected { "yes" } else { "no" }.into(),
    ];
    if !spec.set.is_empty() {
        cells.push(crate::experiment::whatif::combo_label(&combo));
    }
    Sample {
        series: crate::experiment::whatif::with_combo(s.design.as_str(), &combo),
        x: s.pairs as f64,
        y: s.write_seconds.unwrap_or(f64::NAN),
        projected: s.projected,
        cells,
        settings: crate::experiment::whatif::combo_label(&combo),
    }
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
            .filter_map(|&d| project::fit_design(report, d, spec.pairs(target)))
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
        // versions; restart blocks stay together and alternate direction from step to step,
        // so each step costs one restart fewer. The growth runs under the first of them (its
        // timings are recorded with that combination's step).
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
                client
                    .batch_execute(&ctx.whatif.plan.session_sql(order[0]))
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
        checkpoint(ctx, &client, found).await?;
        let mut grows = Some(grows);
        let mut at_versions: Option<Vec<(u64, u64)>> = None;
        for c in order {
            if let crate::experiment::whatif::Entered::Restarted { .. } = ctx.enter_combo(c).await?
            {
                (client, watcher) = sessions(ctx).await?;
            } else if combos > 1 {
                client
                    .batch_execute(&ctx.whatif.plan.session_sql(c))
                    .await
                    .map_err(|e| ctx.error(e))?;
            }
            let shown = ctx.shown_settings(&client).await?;
            let mut rng = read_rng.clone();
            let steps = step::measure(
                ctx,
                &client,
                spec,
                &mut states,
                grows
                    .take()
                    .unwrap_or_else(|| vec![None; spec.designs.len()]),
                cold.as_ref(),
                &mut rng,
                &trials,
            )
            .await?;
            // The step is the one its first combination measured: later ones wrote a few
            // versions more, but they answer for the same step.
            let first = at_versions
                .get_or_insert_with(|| steps.iter().map(|s| (s.versions, s.rows)).collect());
            for (i, mut s) in steps.into_iter().enumerate() {
                if let Some(&(v, r)) = first.get(i) {
                    (s.versions, s.rows, s.pairs) = (v, r, v * spec.units);
                }
                s.combo = c;
                s.settings = shown.clone();
                ctx.emit.sample(sample_of(spec, &s)).await;
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
    let points = spec.points();
    let last_point = points.last().copied().unwrap_or(0);
    let fits: Vec<DesignFit> = spec
        .designs
        .iter()
        .filter_map(|&d| project::fit_design(report, d, spec.pairs(last_point)))
        .collect();
    let usage = measure::total_bytes(ctx, &client, &relnames).await?;
    let budget = match ctx.opts.disk_budget {
        Some(_) => local_free(),
        None => local_free().map(|f| f + usage),
    };
    let measured_max = states.iter().map(|s| s.versions()).max().unwrap_or(0);
    let mut projected_any = false;
    for &v in &points {
        let need = project::disk_needed(spec, report, &fits, v, measured_max.min(v), max_wal);
        for &d in &spec.designs {
            if report.measured(d).any(|s| s.versions == v) {
                continue;
            }
            let fit = fits.iter().find(|f| f.design == d);
            let mut step = project::project_step(spec, report, fit, d, v);
            step.disk_needed_bytes = Some(need);
            step.fits_disk = budget.map(|b| need <= b);
            ctx.emit.sample(sample_of(spec, &step)).await;
            report.steps.push(step);
            projected_any = true;
        }
    }
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
            "projections are linear least-squares fits of size and time against rows: they cannot foresee a jump such as the original's at 10000 versions, when the indexes outgrew memory".into(),
        );
        if let Some(f) = fits.iter().find(|f| f.design == Design::Ranges)
            && f.read_model == "mean"
        {
            found.confounders.push(
                "ranges reads scan every range added before the version read, so their time grows with the number of ranges; the measured steps were too small to show it, and the projection carries their mean forward".into(),
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
    report.fit = fits;

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

/// `CHECKPOINT` after a fill so its writes do not land in the measurements; needs superuser
/// or pg_checkpoint (said once when missing).
async fn checkpoint(ctx: &RunCtx, client: &Client, found: &mut Findings) -> Result<(), RunError> {
    if found.checkpoint_denied {
        return Ok(());
    }
    match ctx
        .cancellable(client, client.batch_execute("CHECKPOINT"))
        .await
    {
        Ok(()) => Ok(()),
        Err(RunError::Cancelled) => Err(RunError::Cancelled),
        Err(RunError::Failed(why)) => {
            found.checkpoint_denied = true;
            let s = format!(
                "CHECKPOINT after growing was not possible ({why}; it needs superuser or pg_checkpoint): write timings may include checkpoint I/O"
            );
            ctx.note(s.clone()).await;
            found.confounders.push(s);
            Ok(())
        }
    }
}
