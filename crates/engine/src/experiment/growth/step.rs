//! One step measured across the designs, by rounds: the write of one new version, then the
//! read of one version, each design in turn within a round, so that drift of the host over
//! the step spreads over both designs instead of favouring the one measured first. Every
//! design reads the same seeded versions in the same order. A [`StepMeasure`] gathers one
//! combination of swept settings a round at a time, so the combinations take turns round by
//! round too.
//!
//! `repeat = N` takes N rounds of each. `repeat = auto` takes 3, then more rounds of the
//! designs whose comparison (`finding::needs_more`, lower seconds are better) is still
//! undecided, up to `max-repeat` rounds (the verdicts pay for those looks, see
//! `measure::family`); writes and warm reads are decided separately.

use std::collections::BTreeMap;
use std::time::Instant;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use tokio_postgres::Client;

use super::commits::{GrowthFault, StepCommits, WriteTiming};
use super::fill::DesignState;
use super::measure::{digest, read_sql, read_version, sizes, write_version};
use super::report::{GrowStats, GrowthStep, NodeBytes};
use super::spec::GrowthSpec;
use crate::experiment::lab::event::TrialRef;
use crate::experiment::lab::page_cache::{self as cache, ColdCache};
use crate::experiment::lab::{RunCtx, RunError};
use crate::measure::finding::{SettingTrials, needs_more};
use crate::measure::stats::median;
use crate::measure::verdict::Better;

/// What one design gathered at a step.
struct Gathered {
    versions: u64,
    rows: u64,
    table_bytes: u64,
    index_bytes: BTreeMap<String, u64>,
    node_bytes: Vec<NodeBytes>,
    writes: Vec<f64>,
    warm: Vec<f64>,
    cold: Vec<f64>,
    read_versions: Vec<u64>,
    first: Option<Vec<i64>>,
    /// The host beside the design's timed writes and reads, added up.
    host: Option<crate::host::load::TrialHost>,
}

/// What the host did beside `f`, added to `into` (the backend `pid` is the server's).
async fn beside_host<T>(
    into: &mut Option<crate::host::load::TrialHost>,
    pid: Option<i32>,
    f: impl std::future::Future<Output = T>,
) -> T {
    let meter = crate::host::load::HostMeter::start(pid);
    let out = f.await;
    if let Some(h) = meter.finish() {
        *into = Some(into.map_or(h, |a| a.plus(&h)));
    }
    out
}

/// The session's backend pid, for the host reading (None if it cannot be read).
async fn backend_pid(client: &Client) -> Option<i32> {
    client
        .query_one("SELECT pg_catalog.pg_backend_pid()", &[])
        .await
        .ok()
        .map(|r| r.get(0))
}

/// The designs (by index) that get another round of `of`, given the round about to start.
fn next_round(spec: &GrowthSpec, round: u32, of: &[Vec<f64>]) -> Vec<usize> {
    if round <= spec.repeat.initial() {
        return (0..of.len()).collect();
    }
    if !spec.repeat.is_auto() || round > spec.repeat.most(spec.decision.max_repeat) {
        return Vec::new();
    }
    let settings: Vec<SettingTrials> = of
        .iter()
        .enumerate()
        .map(|(i, v)| SettingTrials {
            label: i.to_string(),
            cost_rank: i,
            values: v.clone(),
            ..SettingTrials::default()
        })
        .collect();
    needs_more(
        &settings,
        Better::Lower,
        &spec.decision.rules_for(spec.repeat),
    )
}

/// One combination's measurements at a step, gathered a round at a time, so that the
/// combinations of swept settings can take turns round by round (see `mod.rs`): sizes when
/// it starts, then write rounds, then read rounds, then [`StepMeasure::finish`].
pub(crate) struct StepMeasure {
    got: Vec<Gathered>,
    /// The versions read, drawn once for the step (every design reads the same ones).
    chosen: Vec<u64>,
    read_rng: ChaCha8Rng,
    /// The standbys after this combination's latest writes (see [`StepMeasure::write`]).
    pub replicas: Vec<crate::server::replication::ReplicaLag>,
    /// Every version write of this combination at the step, in the order written.
    pub log: Vec<WriteTiming>,
    /// What a standby fault did beside its first write round.
    pub fault: Option<GrowthFault>,
}

/// The designs a round needs, from what was gathered so far (see [`next_round`]).
fn who(spec: &GrowthSpec, round: u32, of: Option<&[Vec<f64>]>, designs: usize) -> Vec<usize> {
    match of {
        Some(of) => next_round(spec, round, of),
        None => next_round(spec, round, &vec![Vec::new(); designs]),
    }
}

impl StepMeasure {
    /// Start measuring every design at its current size: the sizes (and, distributed, the
    /// rows in the shards, counted one by one). `read_rng` draws the versions to read.
    pub(crate) async fn start(
        ctx: &RunCtx,
        client: &Client,
        states: &[DesignState],
        read_rng: ChaCha8Rng,
    ) -> Result<StepMeasure, RunError> {
        let mut got = Vec::new();
        for st in states.iter() {
            if st.design().distribution().is_some() {
                let n =
                    crate::experiment::lab::distribute::rows_in_shards(client, &st.def.qualified)
                        .await
                        .map_err(|e| ctx.error(e))?;
                if n != st.rows as i64 {
                    return Err(RunError::failed(format!(
                        "{}: the shards hold {n} rows where the step made {}",
                        st.def.relname, st.rows
                    )));
                }
            }
            let (table_bytes, index_bytes, node_bytes) = sizes(ctx, client, &st.def).await?;
            got.push(Gathered {
                versions: st.versions(),
                rows: st.rows,
                table_bytes,
                index_bytes,
                node_bytes,
                writes: Vec::new(),
                warm: Vec::new(),
                cold: Vec::new(),
                read_versions: Vec::new(),
                first: None,
                host: None,
            });
        }
        Ok(StepMeasure {
            got,
            chosen: Vec::new(),
            read_rng,
            replicas: Vec::new(),
            log: Vec::new(),
            fault: None,
        })
    }

    /// The designs write round `round` needs (`None`: a combination not started yet).
    pub(crate) fn writers(this: Option<&StepMeasure>, spec: &GrowthSpec, round: u32) -> Vec<usize> {
        let of: Option<Vec<Vec<f64>>> =
            this.map(|m| m.got.iter().map(|g| g.writes.clone()).collect());
        who(spec, round, of.as_deref(), spec.designs.len())
    }

    /// The designs read round `round` needs (`None`: a combination not started yet).
    pub(crate) fn readers(this: Option<&StepMeasure>, spec: &GrowthSpec, round: u32) -> Vec<usize> {
        let of: Option<Vec<Vec<f64>>> =
            this.map(|m| m.got.iter().map(|g| g.warm.clone()).collect());
        who(spec, round, of.as_deref(), spec.designs.len())
    }

    /// Write one new version of each design in `who` (write round `round`, its turn begun at
    /// `turn`), each write's times logged.
    pub(crate) async fn write(
        &mut self,
        ctx: &RunCtx,
        client: &Client,
        spec: &GrowthSpec,
        states: &mut [DesignState],
        (who, round, turn): (&[usize], u32, Instant),
        trials: &[Option<TrialRef>],
    ) -> Result<(), RunError> {
        for &i in who {
            let phase = format!(
                "writing one version #{round} ({})",
                spec.write_method.as_str()
            );
            ctx.emit.phase(trials[i].clone(), phase).await;
            let pid = backend_pid(client).await;
            let w = beside_host(
                &mut self.got[i].host,
                pid,
                write_version(ctx, client, &mut states[i], spec.write_method),
            )
            .await?;
            self.got[i].writes.push(w.seconds);
            self.log.push(WriteTiming {
                design: states[i].design(),
                round,
                at_s: w.began.saturating_duration_since(turn).as_secs_f64(),
                seconds: w.seconds,
                commit_seconds: w.commit_seconds,
                rows: w.rows,
            });
        }
        // Read-only; none on a server without standbys or for a role that may not see them.
        self.replicas = crate::server::replication::read(client)
            .await
            .unwrap_or_default();
        Ok(())
    }

    /// Read one version with each design in `who` (read round `round`): cold when the page
    /// cache can be dropped, then warm. Every design reads the same versions, all of which
    /// every design holds.
    pub(crate) async fn read(
        &mut self,
        ctx: &RunCtx,
        client: &Client,
        states: &[DesignState],
        cold: Option<&ColdCache>,
        (who, round): (&[usize], u32),
        trials: &[Option<TrialRef>],
    ) -> Result<(), RunError> {
        let have = states
            .iter()
            .map(|s| s.versions())
            .min()
            .unwrap_or(1)
            .max(1);
        for &i in who {
            let st = &states[i];
            // Prepared on this session (a restart between rounds ends the previous one).
            let stmt = client
                .prepare(&read_sql(&st.def))
                .await
                .map_err(|e| ctx.error(e))?;
            // A distributed table's pages are on the workers: the coordinator has nothing to
            // evict.
            let files = match cold.filter(|_| st.design().distribution().is_none()) {
                Some(c) => {
                    let mut rels = vec![st.def.qualified.clone()];
                    rels.extend(st.def.indexes.iter().map(|i| i.qualified.clone()));
                    Some(c.files(client, &rels).await.map_err(RunError::Failed)?)
                }
                None => None,
            };
            let k = self.got[i].read_versions.len();
            while self.chosen.len() <= k {
                self.chosen.push(self.read_rng.random_range(1..=have));
            }
            let v = self.chosen[k];
            ctx.emit
                .phase(trials[i].clone(), format!("reading one version #{round}"))
                .await;
            if let Some(files) = &files {
                let f = files.clone();
                tokio::task::spawn_blocking(move || cache::evict(&f))
                    .await
                    .map_err(|e| RunError::Failed(e.to_string()))?
                    .map_err(RunError::Failed)?;
            }
            let pid = backend_pid(client).await;
            let (secs, ids) = beside_host(
                &mut self.got[i].host,
                pid,
                read_version(ctx, client, &stmt, st.def.version_param(v as i64)),
            )
            .await?;
            if files.is_some() {
                self.got[i].cold.push(secs);
            }
            let (secs, ids2) = beside_host(
                &mut self.got[i].host,
                pid,
                read_version(ctx, client, &stmt, st.def.version_param(v as i64)),
            )
            .await?;
            debug_assert_eq!(ids, ids2);
            self.got[i].warm.push(secs);
            self.got[i].read_versions.push(v);
            if self.got[i].first.is_none() {
                self.got[i].first = Some(ids);
            }
        }
        Ok(())
    }

    /// This combination's commits at the step, with the settings its session showed (None
    /// when it wrote nothing; the step's versions are the caller's to set).
    pub(crate) fn commits(
        &self,
        combo: usize,
        settings: &BTreeMap<String, String>,
    ) -> Option<StepCommits> {
        StepCommits::of(
            (0, combo),
            settings.clone(),
            self.log.clone(),
            self.replicas.clone(),
            self.fault.clone(),
        )
    }

    /// The step of every design, as gathered.
    pub(crate) fn finish(
        self,
        spec: &GrowthSpec,
        states: &[DesignState],
        grows: Vec<Option<GrowStats>>,
    ) -> Vec<GrowthStep> {
        self.got
            .into_iter()
            .zip(states.iter())
            .zip(grows)
            .map(|((g, st), grow)| g.into_step(spec, st, grow))
            .collect()
    }
}

impl Gathered {
    fn into_step(self, spec: &GrowthSpec, st: &DesignState, grow: Option<GrowStats>) -> GrowthStep {
        let g = self;
        let first = g.first.unwrap_or_default();
        let total = g.table_bytes + g.index_bytes.values().sum::<u64>();
        GrowthStep {
            combo: 0,
            settings: Default::default(),
            checkpoint: None,
            design: st.design(),
            versions: g.versions,
            rows: g.rows,
            pairs: spec.pairs(g.versions),
            projected: false,
            write_seconds: median(&g.writes),
            write_repeats: g.writes,
            read_seconds: median(&g.warm),
            read_repeats: g.warm,
            read_cold_seconds: median(&g.cold),
            read_cold_repeats: g.cold,
            read_rows: Some(first.len() as u64),
            read_versions: g.read_versions,
            content_digest: Some(digest(&first)),
            table_bytes: g.table_bytes,
            index_bytes: g.index_bytes,
            node_bytes: g.node_bytes,
            bytes_per_row: (g.rows > 0).then(|| total as f64 / g.rows as f64),
            grow,
            disk_needed_bytes: None,
            fits_disk: None,
            reach: None,
            replicas: Vec::new(),
            host: g.host,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::spec::{ExperimentKind, ExperimentSpec};

    fn spec(repeat: &str, max: &str) -> GrowthSpec {
        let mut p = ExperimentKind::Growth.defaults();
        p.insert("repeat".into(), repeat.into());
        p.insert("max-repeat".into(), max.into());
        match ExperimentKind::Growth.parse_spec(&p) {
            Ok(ExperimentSpec::Growth(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rounds_fixed_and_auto() {
        let s = spec("2", "10");
        assert_eq!(next_round(&s, 2, &[vec![1.0], vec![2.0]]), [0, 1]);
        assert!(next_round(&s, 3, &[vec![1.0; 2], vec![2.0; 2]]).is_empty());
        let s = spec("auto", "5");
        let three = vec![1.0, 1.01, 0.99];
        // 3 against 3 are before auto's first planned look: both designs get a fourth round.
        assert_eq!(next_round(&s, 4, &[three.clone(), three.clone()]), [0, 1]);
        // Clearly apart but before the first planned look (5 each, measure::spending):
        // another round; at 5 each, decided.
        let a = vec![1.0, 1.01, 0.99, 1.0];
        let b = vec![2.0, 2.02, 1.98, 2.0];
        let auto10 = spec("auto", "10");
        assert_eq!(next_round(&auto10, 5, &[a.clone(), b.clone()]), [0, 1]);
        let (mut a, mut b) = (a, b);
        a.push(1.005);
        b.push(2.01);
        assert!(next_round(&auto10, 6, &[a, b]).is_empty());
        // Never past max-repeat.
        assert!(next_round(&s, 6, &[vec![1.0], vec![2.0]]).is_empty());
        // One design: only its minimum of 3.
        assert!(next_round(&s, 4, &[three]).is_empty());
    }
}
