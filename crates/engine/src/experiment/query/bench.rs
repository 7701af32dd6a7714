//! The measuring session and what happens on it: entering a combination (its server
//! settings through the what-if machinery, its session settings with `SET`), on the first
//! visit the plans (one untimed `EXPLAIN ANALYZE` per statement) and the warm-up (one untimed
//! execution each), then the timed trials — each one the plain statement, or in throughput
//! mode a few seconds of clients in a loop.

use std::collections::{BTreeMap, BTreeSet};

use super::batch::{self, Sizing};
use super::cold::Cold;
use super::guard::{self, TxMode};
use super::pqsession::PqSession;
use super::report::{QueryReport, QueryTrial};
use super::rounds::Planned;
use super::spec::{Cache, QuerySpec};
use super::standbys::Standbys;
use super::summary::{format_time, format_tps};
use super::throughput;
use super::variants;
use super::visible::Visible;
use crate::experiment::lab::event::{Sample, TrialRef};
use crate::experiment::lab::whatif::Entered;
use crate::experiment::lab::{RunCtx, RunError};

mod plans;
pub(crate) use plans::plan_statements;

/// The measuring state of a run.
pub(crate) struct Bench<'a> {
    ctx: &'a RunCtx,
    spec: &'a QuerySpec,
    mode: TxMode,
    /// The server's block size (for temp bytes).
    block: u64,
    session: PqSession,
    visited: BTreeSet<usize>,
    cold: Option<Cold>,
    /// Trials run so far, and at the most.
    index: usize,
    total: usize,
    /// Statements EXPLAIN does not take (said once).
    no_plan: BTreeSet<String>,
    /// Per statement, the warm-up's time per execution under each combination entered.
    warm: BTreeMap<usize, Vec<f64>>,
    /// Per statement, executions per trial (fixed once every combination was warmed up).
    batch: Vec<u32>,
    /// Candidates interleaved: which one the planner sees.
    pub visible: Option<Visible>,
    /// `cache = warm`: how many times a restart for a swept setting emptied shared_buffers
    /// and the statements ran untimed again before their trials.
    pub rewarmed: u32,
    /// A tune's round: whether the cache is warm now (it read the data since the last
    /// restart), and how the combinations were warmed.
    cache_warm: bool,
    /// Statements this run's warm-ups found slow ([`super::kept_warm::SLOW_S`]).
    slow_seen: BTreeSet<String>,
    pub warm_count: super::kept_warm::WarmCount,
    /// `--standby-rtt`, `--standby-fault`: the standbys moved to each combination's
    /// distance, or faulted during each throughput trial.
    pub standbys: Option<&'a Standbys>,
}

impl<'a> Bench<'a> {
    pub(crate) async fn open(
        ctx: &'a RunCtx,
        spec: &'a QuerySpec,
        mode: TxMode,
    ) -> Result<Bench<'a>, RunError> {
        let mut session = PqSession::open(ctx, mode).await?;
        let block: i64 = session
            .exec(ctx, "SELECT current_setting('block_size')")
            .await?
            .and_then(|b| b.parse().ok())
            .unwrap_or(super::plan::DEFAULT_BLOCK as i64);
        let cold = if spec.cache == Cache::Cold {
            Some(Cold::new(ctx)?)
        } else {
            None
        };
        Ok(Bench {
            ctx,
            spec,
            mode,
            block: block.max(1) as u64,
            session,
            visited: BTreeSet::new(),
            cold,
            index: 0,
            total: spec.trials(),
            no_plan: BTreeSet::new(),
            warm: BTreeMap::new(),
            batch: Vec::new(),
            visible: None,
            rewarmed: 0,
            cache_warm: spec.kept_warm.as_ref().is_some_and(|k| k.warm_at_start),
            slow_seen: BTreeSet::new(),
            warm_count: Default::default(),
            standbys: None,
        })
    }

    /// Run the setup on the measuring session (a server pglab did not start): temporary
    /// tables only, see [`super::setup_foreign`].
    pub(crate) async fn setup_foreign(
        &mut self,
        sql: &str,
    ) -> Result<Option<super::setup::SetupInfo>, RunError> {
        super::setup_foreign::run(self.ctx, &mut self.session, sql).await
    }

    /// Make combination `c` the one in effect on the measuring session (and, candidates
    /// interleaved, its index the only one the planner sees); true when the server restarted
    /// for it (its caches are then cold).
    async fn apply(&mut self, c: usize) -> Result<bool, RunError> {
        let (v, sc) = self.spec.split_combo(c);
        let restarted = matches!(self.ctx.enter_combo(sc).await?, Entered::Restarted { .. });
        if let Some(s) = self.standbys {
            s.follow(self.ctx).await?;
        }
        if restarted {
            self.session = PqSession::open(self.ctx, self.mode).await?;
        }
        if let Some(visible) = self.visible.as_mut()
            && visible.show(self.ctx, v).await?
        {
            // Plans a function of the statement's cached under the last index go too.
            self.session.exec(self.ctx, "DISCARD PLANS").await?;
        }
        self.set_combo().await?;
        Ok(restarted)
    }

    /// The session settings of the combination in effect, on the measuring session.
    async fn set_combo(&mut self) -> Result<(), RunError> {
        let settings = self.ctx.whatif.session_settings();
        self.session.apply(self.ctx, &settings).await
    }

    /// Enter combination `c`; on its first visit take its plans and warm it up.
    pub(crate) async fn enter(
        &mut self,
        report: &mut QueryReport,
        c: usize,
    ) -> Result<(), RunError> {
        let restarted = self.apply(c).await?;
        if restarted {
            self.cache_warm = false;
        }
        let label = report.combo_label(c);
        self.session.label = label.clone();
        if !self.visited.insert(c) {
            // A restart emptied shared_buffers: warm again, so `cache = warm` holds.
            if restarted && self.warms() {
                self.warm_all(&label).await?;
                self.rewarmed += 1;
            }
            return Ok(());
        }
        self.take_plans(report, c, &label).await?;
        if self.warms() {
            self.warm_all(&label).await?;
        }
        Ok(())
    }

    /// Warm every statement up, but those a tune's round knows to be slow while the cache
    /// is warm already ([`super::kept_warm`]); counted.
    async fn warm_all(&mut self, label: &str) -> Result<(), RunError> {
        let mut skipped = false;
        for s in 0..self.spec.statements.len() {
            if self.skips_warm_up(s) {
                skipped = true;
                continue;
            }
            self.warm_up(s, label).await?;
        }
        if skipped {
            self.warm_count.skipped += 1;
        } else {
            self.warm_count.warmups += 1;
        }
        self.cache_warm = true;
        Ok(())
    }

    /// A tune's round on a warm cache: statement `s` is slow enough that its warm-up would
    /// only warm what is warm.
    fn skips_warm_up(&self, s: usize) -> bool {
        self.skips_statement(&self.spec.statements[s].name)
    }

    /// [`Self::skips_warm_up`] by the statement's name.
    fn skips_statement(&self, name: &str) -> bool {
        self.spec.kept_warm.as_ref().is_some_and(|k| {
            k.skips(self.cache_warm, name) || (self.cache_warm && self.slow_seen.contains(name))
        })
    }

    /// Whether a combination's statements run untimed before its trials.
    fn warms(&self) -> bool {
        self.spec.cache == Cache::Warm && !self.spec.throughput()
    }

    /// `cache = warm` across restarts, said once at the end: how the caches were kept warm.
    pub(crate) fn rewarm_note(&self) -> Option<String> {
        (self.rewarmed > 0).then(|| {
            format!(
                "cache warm across restarts: a swept setting restarted the server, which empties shared_buffers, so after each restart the statements ran untimed again before their trials ({} times); the OS page cache was not dropped",
                self.rewarmed
            )
        })
    }

    /// Why statement `s` may not run as a batch: cold caches (a trial is one execution after
    /// a restart), or it writes — as written each execution changes the data the next one
    /// sees, and even rolled back it leaves dead row versions the next one meets, so a batch
    /// would measure a table that grows worse execution by execution.
    fn why_one(&self, s: usize) -> Option<&'static str> {
        if self.spec.cache == Cache::Cold {
            Some("cache=cold: each trial is one execution after a restart")
        } else if guard::is_read(&self.spec.statements[s].sql) {
            None
        } else if self.mode == TxMode::Plain {
            Some("it writes, as written: each execution changes the data the next one sees")
        } else {
            Some(
                "it writes: even rolled back, each execution leaves dead row versions the next one meets",
            )
        }
    }

    /// The untimed warm-up of statement `s`: one execution, then (a statement that may run
    /// as a batch) executions until [`batch::TARGET`] of work, their time per execution kept
    /// to size the batch.
    async fn warm_up(&mut self, s: usize, label: &str) -> Result<(), RunError> {
        let (name, sql) = {
            let st = &self.spec.statements[s];
            (st.name.clone(), st.sql.clone())
        };
        self.ctx
            .emit
            .phase(None, format!("warm-up {name} · {label}"))
            .await;
        let first = self.session.timed(self.ctx, &name, &sql, self.mode).await?;
        if first.seconds >= super::kept_warm::SLOW_S {
            self.slow_seen.insert(name.clone());
        }
        if self.why_one(s).is_some() {
            return Ok(());
        }
        let (mut n, mut total) = if first.seconds >= batch::TARGET {
            (1, first.seconds)
        } else {
            (0, 0.0)
        };
        while !batch::warmed(n, total) {
            total += self
                .session
                .timed(self.ctx, &name, &sql, self.mode)
                .await?
                .seconds;
            n += 1;
        }
        self.warm.entry(s).or_default().push(total / n as f64);
        Ok(())
    }

    /// Fix each statement's executions per trial from the warm-ups so far (every combination
    /// that runs before a candidate's block), said once and recorded. Throughput mode: none.
    pub(crate) async fn fix_sizing(&mut self, report: &mut QueryReport) {
        if self.spec.throughput() || !self.batch.is_empty() {
            return;
        }
        for (s, st) in self.spec.statements.iter().enumerate() {
            let times = self.warm.get(&s).cloned().unwrap_or_default();
            let fastest = times.iter().copied().reduce(f64::min);
            let slowest = times.iter().copied().reduce(f64::max);
            let why = self.why_one(s);
            let executions = match (why, fastest, slowest) {
                (None, Some(f), Some(w)) => batch::executions(f, w),
                _ => 1,
            };
            let sizing = Sizing {
                statement: s,
                name: st.name.clone(),
                executions,
                fastest_s: fastest.filter(|_| why.is_none()),
                slowest_s: slowest.filter(|_| why.is_none()),
                why_one: why.unwrap_or_default().to_string(),
            };
            self.ctx.note(sizing.sentence()).await;
            self.batch.push(executions);
            report.sizing.push(sizing);
        }
    }

    /// One timed trial (the combination already entered).
    pub(crate) async fn trial(
        &mut self,
        report: &mut QueryReport,
        p: Planned,
    ) -> Result<(), RunError> {
        self.ctx.check()?;
        self.index += 1;
        let label = report.combo_label(p.combo);
        let unit = report.unit_names().get(p.unit).cloned().unwrap_or_default();
        let tref = TrialRef {
            index: self.index,
            total: self.total.max(self.index),
            label: format!("{unit} · {label} · #{}", p.repeat),
        };
        // What other processes take beside the trial; not across a cold restart, which
        // replaces the server the reading knows as ours.
        let meter = match self.cold {
            None => Some(crate::host::load::HostMeter::start(
                self.session.backend_pid(self.ctx).await,
            )),
            Some(_) => None,
        };
        let mut trial = if self.spec.throughput() {
            self.throughput_trial(p, &tref).await?
        } else {
            self.statement_trial(report, p, &tref, &label).await?
        };
        trial.host = meter.and_then(crate::host::load::HostMeter::finish);
        self.ctx.emit.sample(sample(&trial, &label)).await;
        report.trials.push(trial);
        Ok(())
    }

    /// A throughput trial: `duration` of the unit's clients in a loop.
    async fn throughput_trial(
        &mut self,
        p: Planned,
        tref: &TrialRef,
    ) -> Result<QueryTrial, RunError> {
        let clients = self.spec.client_counts()[p.unit];
        self.ctx
            .emit
            .phase(Some(tref.clone()), "clients running")
            .await;
        let settings = self
            .session
            .shown(self.ctx, &self.ctx.whatif.names())
            .await?;
        let fault = self.standbys.and_then(|s| s.fault.as_ref());
        let r = throughput::trial(self.ctx, self.spec, (self.mode, fault), clients, tref).await?;
        Ok(r.record(p, clients, settings))
    }

    /// A statement-mode trial: its batch of executions (after a restart, cold), timed.
    async fn statement_trial(
        &mut self,
        report: &mut QueryReport,
        p: Planned,
        tref: &TrialRef,
        label: &str,
    ) -> Result<QueryTrial, RunError> {
        let s = &self.spec.statements[p.unit];
        if let Some(cold) = self.cold.as_mut() {
            self.ctx
                .emit
                .phase(Some(tref.clone()), "cold: restarting the sandbox")
                .await;
            cold.make_cold(self.ctx).await?;
            report.cold_cache = Some(cold.how.clone());
            self.session = PqSession::open(self.ctx, self.mode).await?;
            self.session.label = label.to_string();
            self.set_combo().await?;
        }
        self.ctx.emit.phase(Some(tref.clone()), "executing").await;
        let settings = self
            .session
            .shown(self.ctx, &self.ctx.whatif.names())
            .await?;
        // The consumer's work on the events so far stays out of the timed window.
        self.ctx.emit.settle().await;
        let name = s.name.clone();
        let n = self.batch.get(p.unit).copied().unwrap_or(1).max(1);
        let (mut seconds, mut rows) = (0.0, 0);
        // Value sets in turn, from where the same repeat of every combination starts.
        let first = p.repeat.saturating_sub(1) as usize * n as usize;
        for i in 0..n as usize {
            let sql = variants::nth(&s.sql, &s.variants, first + i).to_string();
            let e = self.session.timed(self.ctx, &name, &sql, self.mode).await?;
            seconds += e.seconds;
            rows = e.rows;
        }
        Ok(QueryTrial {
            statement: p.unit,
            name: s.name.clone(),
            combo: p.combo,
            settings,
            repeat: p.repeat,
            seconds: seconds / n as f64,
            executions: n,
            rows,
            clients: None,
            tps: None,
            transactions: None,
            latency_ms: None,
            client_cpu_s: None,
            cold: self.cold.is_some(),
            load: None,
            host: None,
        })
    }
}

/// A trial as the chart and the results table show it.
pub(crate) fn sample(t: &QueryTrial, label: &str) -> Sample {
    let cells = match (t.tps, t.latency_ms) {
        (Some(tps), Some(l)) => vec![
            t.name.clone(),
            label.to_string(),
            t.repeat.to_string(),
            format_tps(tps),
            format!("{:.2}", l.p50),
            format!("{:.2}", l.p95),
            format!("{:.2}", l.p99),
        ],
        _ => vec![
            t.name.clone(),
            label.to_string(),
            t.repeat.to_string(),
            format_time(t.seconds),
            t.rows.to_string(),
        ],
    };
    Sample {
        series: t.name.clone(),
        x: t.combo as f64,
        y: t.value(),
        projected: false,
        cells,
        ..Sample::default()
    }
}
