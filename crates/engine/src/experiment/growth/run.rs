//! A growth run, step by step: announce it, create the tables, then for each step check the
//! room it needs, grow every design, measure writes and reads by rounds under every
//! combination of swept settings, and record the step; what was not measured is projected.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio_postgres::Client;

use super::copy::FillError;
use super::fill::{self, DesignState, Watcher};
use super::projection_notes::{Stop, projection_confounders, why_projected};
use super::report::{DesignFit, GrowStats, GrowthReport};
use super::rounds::{Measured, combo_order};
use super::schema::{ContentTable, TableDef};
use super::spec::GrowthSpec;
use super::{DEFAULT_MAX_WAL, layout, measure, project, sample_of, step_findings};
use crate::experiment::lab::event::{RunEvent, TrialRef};
use crate::experiment::lab::page_cache::ColdCache;
use crate::experiment::lab::standby_beside;
use crate::experiment::lab::standby_fault::Injector;
use crate::experiment::lab::standby_rtt::{self, Distance};
use crate::experiment::lab::whatif::Entered;
use crate::experiment::lab::{RunCtx, RunError};
use crate::measure::units::format_count;

/// What the run learned about the server along the way.
#[derive(Default)]
struct Findings {
    confounders: Vec<String>,
    cold: bool,
    checkpoint_denied: bool,
}

/// Each design's trial and how it grew to the step.
type Grown = (Vec<Option<TrialRef>>, Vec<Option<GrowStats>>);

pub(crate) async fn run(
    ctx: &RunCtx,
    spec: &GrowthSpec,
    report: &mut GrowthReport,
) -> Result<(), RunError> {
    let mut found = Findings::default();
    let distance = Distance::for_run(ctx, &spec.set)?;
    let fault = standby_beside::fault_beside(ctx, spec.fault, super::fault::WORDS).await?;
    let beside = (distance.as_ref(), fault.as_ref());
    let result = run_steps(ctx, spec, report, &mut found, beside).await;
    // The faulted standby first: it comes back at the distance in force, then all go home.
    standby_beside::put_back(ctx, fault.as_ref()).await;
    standby_rtt::put_back(ctx, distance.as_ref()).await;
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
    (distance, fault): (Option<&Distance>, Option<&Injector>),
) -> Result<(), RunError> {
    announce(ctx, spec).await;
    let mut lab = Growth::prepare(ctx, spec, report, found).await?;
    (lab.distance, lab.fault) = (distance, fault);
    let mut stop = None;
    for (step_no, &target) in spec.steps.iter().enumerate() {
        ctx.check()?;
        stop = lab.room_for(report, target).await?;
        if stop.is_none() {
            stop = lab.step(report, found, step_no, target).await?;
        }
        if stop.is_some() {
            break;
        }
    }
    lab.project_the_rest(report, found, stop.as_ref()).await?;
    if spec.baseline {
        fill::baseline(ctx, &lab.client, spec, report, lab.local_free()).await?;
    }
    Ok(())
}

/// The run's first event: what is compared, how, over which steps.
async fn announce(ctx: &RunCtx, spec: &GrowthSpec) {
    let designs: Vec<&str> = spec.designs.iter().map(|d| d.as_str()).collect();
    let steps: Vec<String> = spec.steps.iter().map(|s| format_count(*s as f64)).collect();
    ctx.emit
        .send(RunEvent::Started {
            run_id: ctx.run_id.clone(),
            description: format!(
                "growth · {} · {} units × {} versions · churn {}% · write by {} · {} indexes",
                designs.join(" vs "),
                format_count(spec.units as f64),
                steps.join("/"),
                spec.churn_pct,
                spec.write_method.as_str(),
                spec.grow_mode.as_str()
            ),
            trials: spec.samples(),
            layout: crate::experiment::lab::whatif::layout_with(layout(), &spec.set),
        })
        .await;
}

/// What a run holds from step to step: its sessions, its tables and how each design stands.
pub(super) struct Growth<'a> {
    pub(super) ctx: &'a RunCtx,
    pub(super) spec: &'a GrowthSpec,
    pub(super) client: Client,
    pub(super) watcher: Option<Watcher>,
    pub(super) content: ContentTable,
    pub(super) states: Vec<DesignState>,
    /// Every table of the run, for the disk it takes.
    pub(super) relnames: Vec<String>,
    pub(super) cold: Option<ColdCache>,
    pub(super) max_wal: u64,
    /// Samples announced so far (the progress's trial numbers).
    pub(super) sample_no: usize,
    /// `--standby-rtt`: the standbys, moved to each combination's distance.
    pub(super) distance: Option<&'a Distance>,
    /// `--standby-fault`: beside each combination's first write round of a step.
    pub(super) fault: Option<&'a Injector>,
}

impl<'a> Growth<'a> {
    /// Open the sessions, create the tables, and learn what the server allows: cold reads,
    /// the free disk, `max_wal_size`.
    async fn prepare(
        ctx: &'a RunCtx,
        spec: &'a GrowthSpec,
        report: &mut GrowthReport,
        found: &mut Findings,
    ) -> Result<Growth<'a>, RunError> {
        let (client, watcher) = sessions(ctx).await?;
        ctx.emit.phase(None, "creating tables").await;
        let content = ContentTable::create(ctx, &client).await?;
        let mut states = Vec::new();
        for &d in &spec.designs {
            let def = TableDef::new(ctx, spec, d);
            def.create(ctx, &client).await?;
            states.push(DesignState::new(def, spec));
        }
        let mut relnames: Vec<String> = states.iter().map(|s| s.def.relname.clone()).collect();
        relnames.push(content.relname.clone());
        let cold = cold_cache(ctx, &client, &content, found).await;
        let max_wal = ctx
            .server
            .setting("max_wal_size")
            .and_then(|s| s.bytes())
            .unwrap_or(DEFAULT_MAX_WAL);
        let lab = Growth {
            ctx,
            spec,
            client,
            watcher,
            content,
            states,
            relnames,
            cold,
            max_wal,
            sample_no: 0,
            distance: None,
            fault: None,
        };
        report.free_bytes = lab.local_free();
        if report.free_bytes.is_none() {
            ctx.note("free disk space is unknown (the server is not on this host): every step up to the fill limit runs; a full disk stops the growth and the rest is projected").await;
        }
        Ok(lab)
    }

    /// Free space on the server's disk as this host sees it (or the run's disk budget).
    fn local_free(&self) -> Option<u64> {
        crate::experiment::lab::preflight::free_space(
            self.ctx.opts.local_data_dir.as_deref(),
            self.ctx.opts.disk_budget,
        )
    }

    /// The versions the largest design holds.
    fn current(&self) -> u64 {
        self.states.iter().map(|s| s.versions()).max().unwrap_or(0)
    }

    /// Why the step to `target` versions is not run (the fill limit, or the disk it would
    /// need), or None when it is.
    async fn room_for(&self, report: &GrowthReport, target: u64) -> Result<Option<Stop>, RunError> {
        let (ctx, spec) = (self.ctx, self.spec);
        if let Some(limit) = spec.fill_limit
            && target > limit
        {
            return Ok(Some(Stop::FillLimit(limit)));
        }
        let usage = measure::total_bytes(ctx, &self.client, &self.relnames).await?;
        let fits: Vec<DesignFit> = spec
            .designs
            .iter()
            .filter_map(|&d| project::fit_design(report, d, spec.rows(d, target)))
            .collect();
        let need = project::disk_needed(spec, report, &fits, target, self.current(), self.max_wal);
        // A budget counts what the run already holds; the filesystem's free space already
        // has it taken off.
        let free = match ctx.opts.disk_budget {
            Some(_) => self.local_free().map(|f| f.saturating_sub(usage)),
            None => self.local_free(),
        };
        Ok(match free {
            Some(free) if need.saturating_sub(usage) > free => Some(Stop::Disk {
                versions: target,
                need,
                free: free + usage,
            }),
            _ => None,
        })
    }

    /// One step: grow every design to `target` versions, checkpoint, measure writes and
    /// reads under every combination, record what they found. Some(stop) when the disk
    /// filled up while growing.
    async fn step(
        &mut self,
        report: &mut GrowthReport,
        found: &mut Findings,
        step_no: usize,
        target: u64,
    ) -> Result<Option<Stop>, RunError> {
        let (ctx, spec) = (self.ctx, self.spec);
        let combos = spec.set.combo_count();
        let most = combos as u64 * spec.repeat.most(spec.decision.max_repeat) as u64;
        let ids = content_ids(spec, target.max(self.current()) + most);
        self.content.ensure(ctx, &self.client, ids).await?;
        let read_rng = ChaCha8Rng::seed_from_u64(
            spec.seed ^ (step_no as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        );
        let order = combo_order(ctx, combos, step_no);
        self.enter_first(order[0]).await?;
        // Grow every design first, then one CHECKPOINT, then measure them by rounds.
        let (trials, grows) = match self.grow_designs(target).await? {
            Ok(grown) => grown,
            Err(why) => return Ok(Some(Stop::DiskFull(why))),
        };
        let checkpointed = checkpoint(ctx, &self.client, found).await?;
        let measured = self.measure(&order, read_rng, &trials).await?;
        self.record(report, &order, measured, grows, checkpointed)
            .await;
        if report.same_content() == Some(false) {
            ctx.note(format!(
                "the designs returned different content at {target} versions: this is a bug in pglab"
            ))
            .await;
        }
        Ok(None)
    }

    /// The growth runs under the step's first combination of swept settings.
    async fn enter_first(&mut self, combo: usize) -> Result<(), RunError> {
        let ctx = self.ctx;
        if ctx.whatif.plan.is_empty() {
            return Ok(());
        }
        if let Entered::Restarted { .. } = self.enter_combo(combo).await? {
            (self.client, self.watcher) = sessions(ctx).await?;
        } else {
            ctx.whatif
                .plan
                .session_settings(combo)
                .apply(&self.client)
                .await
                .map_err(|e| ctx.error(e))?;
        }
        Ok(())
    }

    /// Grow every design to `target` versions: each design's trial and how it grew, or
    /// Err(why) when the disk filled up.
    async fn grow_designs(&mut self, target: u64) -> Result<Result<Grown, String>, RunError> {
        let (ctx, spec) = (self.ctx, self.spec);
        let mut trials = Vec::new();
        let mut grows = Vec::new();
        for st in self.states.iter_mut() {
            self.sample_no += 1;
            let trial = Some(TrialRef {
                index: self.sample_no,
                total: spec.samples(),
                label: format!(
                    "{} · {} versions",
                    st.design().as_str(),
                    format_count(target as f64)
                ),
            });
            let watcher = self.watcher.as_ref();
            match fill::grow(ctx, &self.client, watcher, spec, st, target, trial.clone()).await {
                Ok(g) => grows.push(g),
                Err(FillError::DiskFull(why)) => return Ok(Err(why)),
                Err(FillError::Run(e)) => return Err(e),
            }
            trials.push(trial);
        }
        Ok(Ok((trials, grows)))
    }

    /// Turn each combination's measurements into the step's records and samples. The step
    /// is the one its first combination measured: later ones started after a few more
    /// versions were written, but they answer for the same step. The growth ran under the
    /// first, whose step carries its figures.
    async fn record(
        &self,
        report: &mut GrowthReport,
        order: &[usize],
        mut measured: Vec<Measured>,
        grows: Vec<Option<GrowStats>>,
        checkpointed: bool,
    ) {
        let spec = self.spec;
        let mut grows = Some(grows);
        let mut at_versions: Option<Vec<(u64, u64)>> = None;
        for &c in order {
            let Some((sm, shown)) = measured[c].take() else {
                continue;
            };
            let grown = grows
                .take()
                .unwrap_or_else(|| vec![None; spec.designs.len()]);
            let replicas = sm.replicas.clone();
            let mut commits = sm.commits(c, &shown);
            let mut steps = sm.finish(spec, &self.states, grown);
            let first = at_versions
                .get_or_insert_with(|| steps.iter().map(|s| (s.versions, s.rows)).collect());
            for (i, s) in steps.iter_mut().enumerate() {
                if let Some(&(v, r)) = first.get(i) {
                    (s.versions, s.rows, s.pairs) = (v, r, v * spec.units);
                }
                s.combo = c;
                s.settings = shown.clone();
                s.replicas = replicas.clone();
                s.checkpoint = Some(checkpointed);
            }
            if let (Some(cm), Some(s)) = (commits.as_mut(), steps.first()) {
                cm.versions = s.versions;
            }
            report.commits.extend(commits);
            // The step's verdicts travel with its last design's sample.
            let mut findings = Some(step_findings(spec, &steps));
            let last = steps.len().saturating_sub(1);
            for (i, s) in steps.into_iter().enumerate() {
                let f = if i == last {
                    findings.take().unwrap_or_default()
                } else {
                    Vec::new()
                };
                self.ctx.emit.sample(sample_of(spec, &s, f)).await;
                report.steps.push(s);
            }
        }
    }

    /// Everything not measured is projected from what was, with why it was not measured
    /// and what the projections cannot see.
    async fn project_the_rest(
        &self,
        report: &mut GrowthReport,
        found: &mut Findings,
        stop: Option<&Stop>,
    ) -> Result<(), RunError> {
        let ctx = self.ctx;
        let usage = measure::total_bytes(ctx, &self.client, &self.relnames).await?;
        let budget = match ctx.opts.disk_budget {
            Some(_) => self.local_free(),
            None => self.local_free().map(|f| f + usage),
        };
        let projected = project::project_rest(report, self.current(), self.max_wal, budget);
        for s in &projected {
            ctx.emit.sample(sample_of(self.spec, s, Vec::new())).await;
        }
        if !projected.is_empty() {
            ctx.note(why_projected(stop)).await;
            found
                .confounders
                .extend(projection_confounders(report, ctx.host.total_memory));
        }
        Ok(())
    }
}

/// Cold reads when the OS page cache of the tables can be dropped; said when it cannot.
async fn cold_cache(
    ctx: &RunCtx,
    client: &Client,
    content: &ContentTable,
    found: &mut Findings,
) -> Option<ColdCache> {
    let cold = match ColdCache::probe(ctx, client, &content.qualified).await {
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
    cold
}

/// The run's session and the one that watches it grow (None when no second session opens).
pub(super) async fn sessions(ctx: &RunCtx) -> Result<(Client, Option<Watcher>), RunError> {
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
        Err(why) => {
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
