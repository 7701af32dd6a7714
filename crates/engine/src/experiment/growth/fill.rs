//! Growing a design's table from one step to the next as fast as the server allows: binary
//! COPY of the generated versions (indexes dropped and rebuilt, or kept in place), then
//! `VACUUM (ANALYZE)` so every step is measured on a settled table.

use std::time::{Duration, Instant};

use tokio_postgres::Client;

use super::churn::{Churn, Delta};
use super::copy::{CopyStream, FillError, guarded};
use super::key::Key;
use super::kinds::{Design, GrowMode};
use super::report::{FillBaseline, GrowStats, GrowthReport};
use super::schema::{TableDef, columns, run_table_name};
use super::spec::GrowthSpec;
use crate::experiment::lab::event::{Progress, TrialRef};
use crate::experiment::lab::{RunCtx, RunError};
use crate::measure::units::format_bytes_short;

/// A design's table and where its content stream stands.
pub(crate) struct DesignState {
    pub def: TableDef,
    pub churn: Churn,
    /// Rows in the table, as the server counted them while they were written.
    pub rows: u64,
    /// Whether the indexes are in place.
    pub indexed: bool,
}

impl DesignState {
    pub(crate) fn new(def: TableDef, spec: &GrowthSpec) -> DesignState {
        DesignState {
            def,
            churn: Churn::new(spec.units, spec.churn_per_version(), spec.seed),
            rows: 0,
            indexed: true,
        }
    }
    pub(crate) fn design(&self) -> Design {
        self.def.design
    }
    pub(crate) fn versions(&self) -> u64 {
        self.churn.version() as u64
    }
}

/// Extra connection and pid used to watch index builds in `pg_stat_progress_create_index`.
pub(crate) struct Watcher {
    pub client: Client,
    pub pid: i32,
}

/// Grow `st` to `target` versions. None when it is already there.
pub(crate) async fn grow(
    ctx: &RunCtx,
    client: &Client,
    watcher: Option<&Watcher>,
    spec: &GrowthSpec,
    st: &mut DesignState,
    target: u64,
    trial: Option<TrialRef>,
) -> Result<Option<GrowStats>, FillError> {
    let from = st.versions();
    if from >= target {
        return Ok(None);
    }
    let started = Instant::now();
    let mut index_seconds = 0.0;
    let rebuild = spec.grow_mode == GrowMode::Rebuild && !st.def.indexes.is_empty();
    if rebuild && st.indexed {
        ctx.emit.phase(trial.clone(), "dropping indexes").await;
        let t = Instant::now();
        for i in st.def.indexes.iter().rev() {
            guarded(ctx, client, client.batch_execute(&i.drop)).await?;
        }
        st.indexed = false;
        index_seconds += t.elapsed().as_secs_f64();
    }
    let expected = spec.rows(st.design(), target) - spec.rows(st.design(), from);
    let phase = format!("growing to {target} versions");
    ctx.emit.phase(trial.clone(), phase.clone()).await;
    let t = Instant::now();
    let added = match st.design().base() {
        Design::Snapshot => copy_snapshot(ctx, client, st, target, phase, expected, &trial).await?,
        _ => copy_ranges(ctx, client, st, target, phase, expected, &trial).await?,
    };
    let copy_seconds = t.elapsed().as_secs_f64();
    st.rows += added;
    if !st.indexed {
        let t = Instant::now();
        build_indexes(ctx, client, watcher, st, &trial).await?;
        index_seconds += t.elapsed().as_secs_f64();
    }
    ctx.emit.phase(trial.clone(), "VACUUM (ANALYZE)").await;
    let t = Instant::now();
    guarded(
        ctx,
        client,
        client.batch_execute(&format!("VACUUM (ANALYZE) {}", st.def.qualified)),
    )
    .await?;
    let vacuum_seconds = t.elapsed().as_secs_f64();
    let seconds = started.elapsed().as_secs_f64();
    let rate = |secs: f64| if secs > 0.0 { added as f64 / secs } else { 0.0 };
    Ok(Some(GrowStats {
        mode: spec.grow_mode,
        from_versions: from,
        rows: added,
        seconds,
        copy_seconds,
        index_seconds,
        vacuum_seconds,
        copy_rows_per_second: rate(copy_seconds),
        rows_per_second: rate(seconds),
    }))
}

/// Create the table's indexes (after a rebuild-mode fill), watching their progress.
async fn build_indexes(
    ctx: &RunCtx,
    client: &Client,
    watcher: Option<&Watcher>,
    st: &mut DesignState,
    trial: &Option<TrialRef>,
) -> Result<(), FillError> {
    let n = st.def.indexes.len();
    for (k, i) in st.def.indexes.iter().enumerate() {
        let phase = format!("building index {} ({}/{n})", i.name, k + 1);
        ctx.emit.phase(trial.clone(), phase.clone()).await;
        let started = Instant::now();
        let build = guarded(ctx, client, client.batch_execute(&i.create));
        tokio::pin!(build);
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        loop {
            tokio::select! {
                r = &mut build => { r?; break; }
                _ = tick.tick() => {
                    let fraction = match watcher {
                        Some(w) => index_progress(w).await,
                        None => None,
                    };
                    ctx.emit.progress(Progress {
                        trial: trial.clone(),
                        phase: phase.clone(),
                        fraction,
                        elapsed_s: started.elapsed().as_secs_f64(),
                        rate: None,
                        rate_unit: String::new(),
                    });
                }
            }
        }
    }
    st.indexed = true;
    Ok(())
}

/// How far the watched session's index build is (scan by blocks, load by tuples).
async fn index_progress(w: &Watcher) -> Option<f64> {
    let row = w
        .client
        .query_opt(
            "SELECT phase, blocks_done, blocks_total, tuples_done, tuples_total
               FROM pg_stat_progress_create_index WHERE pid = $1",
            &[&w.pid],
        )
        .await
        .ok()??;
    let phase: String = row.get(0);
    let frac = |done: i64, total: i64| (total > 0).then(|| done as f64 / total as f64);
    if phase.contains("scanning") {
        frac(row.get(1), row.get(2))
    } else if phase.contains("loading") {
        frac(row.get(3), row.get(4))
    } else {
        None
    }
}

/// COPY every (version, content) pair of versions `from+1..=target`.
async fn copy_snapshot(
    ctx: &RunCtx,
    client: &Client,
    st: &mut DesignState,
    target: u64,
    phase: String,
    expected: u64,
    trial: &Option<TrialRef>,
) -> Result<u64, FillError> {
    let mut copy = CopyStream::start(
        ctx,
        client,
        &st.def.qualified,
        st.def.copy_columns(),
        phase,
        expected,
        trial.clone(),
    )
    .await?;
    let mut delta = Delta::default();
    let shape = st.def.shape;
    while st.versions() < target {
        st.churn.advance(&mut delta);
        let v = shape.version(delta.version);
        for &c in st.churn.alive() {
            copy.row(&[Some(v), Some(shape.content(c))]).await?;
        }
    }
    copy.finish(client).await
}

/// Rows a ranges fill writes: units added in the window (with their removal when it falls in
/// the window too) and removals of units added before it.
#[derive(Debug, Default)]
pub(crate) struct RangesWindow {
    /// First content id added in the window.
    pub first_new: i64,
    /// (version_added, version_removed) per new id from `first_new`.
    pub new_rows: Vec<(i64, Option<i64>)>,
    /// Units added before the window and removed in it: (content, version_removed).
    pub old_removed: (Vec<i64>, Vec<i64>),
}

/// Advance `churn` to `target`, collecting what a ranges table must record.
pub(crate) fn ranges_window(churn: &mut Churn, target: u64) -> RangesWindow {
    let mut w = RangesWindow {
        first_new: churn.next_id(),
        ..RangesWindow::default()
    };
    let mut delta = Delta::default();
    while (churn.version() as u64) < target {
        churn.advance(&mut delta);
        let v = delta.version;
        for &r in &delta.removed {
            if r >= w.first_new {
                w.new_rows[(r - w.first_new) as usize].1 = Some(v);
            } else {
                w.old_removed.0.push(r);
                w.old_removed.1.push(v);
            }
        }
        for &a in &delta.added {
            debug_assert_eq!(a - w.first_new, w.new_rows.len() as i64);
            w.new_rows.push((v, None));
        }
    }
    w
}

/// Units removed per UPDATE statement.
const UPDATE_CHUNK: usize = 1_000_000;

async fn copy_ranges(
    ctx: &RunCtx,
    client: &Client,
    st: &mut DesignState,
    target: u64,
    phase: String,
    expected: u64,
    trial: &Option<TrialRef>,
) -> Result<u64, FillError> {
    let w = ranges_window(&mut st.churn, target);
    let mut copy = CopyStream::start(
        ctx,
        client,
        &st.def.qualified,
        st.def.copy_columns(),
        phase,
        expected,
        trial.clone(),
    )
    .await?;
    let shape = st.def.shape;
    for (i, (added, removed)) in w.new_rows.iter().enumerate() {
        let content = shape.content(w.first_new + i as i64);
        copy.row(&[Some(content), Some(Key::Int(*added)), removed.map(Key::Int)])
            .await?;
    }
    let n = copy.finish(client).await?;
    let sql = format!(
        "UPDATE {} t SET version_removed = u.v FROM unnest($1::{}[], $2::int8[]) AS u(c, v)
          WHERE t.content = u.c AND t.version_removed IS NULL",
        st.def.qualified,
        shape.sql_type()
    );
    let (cs, vs) = &w.old_removed;
    for (c, v) in cs.chunks(UPDATE_CHUNK).zip(vs.chunks(UPDATE_CHUNK)) {
        let c: Vec<Key> = c.iter().map(|&c| shape.content(c)).collect();
        let v = v.to_vec();
        guarded(ctx, client, client.execute(&sql, &[&c, &v])).await?;
    }
    Ok(n)
}

/// Time a plain COPY of the snapshot rows of versions `from+1..=to` into an unindexed table
/// (the reference for the fill rate). Returns (rows, seconds).
pub(crate) async fn plain_copy(
    ctx: &RunCtx,
    client: &Client,
    spec: &GrowthSpec,
    table: &str,
    from: u64,
    to: u64,
) -> Result<(u64, f64), FillError> {
    let mut churn = Churn::new(spec.units, spec.churn_per_version(), spec.seed);
    churn.skip_to(from as i64);
    let expected = spec.pairs(to - from);
    let started = Instant::now();
    let mut copy = CopyStream::start(
        ctx,
        client,
        table,
        "version, content",
        "baseline: plain COPY into an unindexed table".into(),
        expected,
        None,
    )
    .await?;
    let mut delta = Delta::default();
    let shape = spec.key_shape;
    while (churn.version() as u64) < to {
        churn.advance(&mut delta);
        let v = shape.version(delta.version);
        for &c in churn.alive() {
            copy.row(&[Some(v), Some(shape.content(c))]).await?;
        }
    }
    let n = copy.finish(client).await?;
    Ok((n, started.elapsed().as_secs_f64()))
}

/// Time a plain COPY of the largest snapshot fill into an unindexed table, for the fill-rate
/// ratio.
pub(crate) async fn baseline(
    ctx: &RunCtx,
    client: &Client,
    spec: &GrowthSpec,
    report: &mut GrowthReport,
    free: Option<u64>,
) -> Result<(), RunError> {
    let Some((grow, heap_per_row)) = report
        .measured(Design::Snapshot)
        .filter_map(|s| {
            let g = s.grow.clone()?;
            let per_row = s.table_bytes as f64 / s.rows.max(1) as f64;
            Some((g, per_row))
        })
        .max_by_key(|(g, _)| g.rows)
    else {
        ctx.note("baseline skipped: it needs a measured snapshot growth")
            .await;
        return Ok(());
    };
    let need = (grow.rows as f64 * heap_per_row * 1.2) as u64;
    if let Some(free) = free
        && need > free
    {
        ctx.note(format!(
            "baseline skipped: it needs about {} and only {} is free",
            format_bytes_short(need as f64),
            format_bytes_short(free as f64)
        ))
        .await;
        return Ok(());
    }
    let relname = run_table_name(&ctx.run_id, "plain");
    let table = ctx.table(&relname);
    ctx.emit
        .phase(None, "baseline: plain COPY into an unindexed table")
        .await;
    ctx.create_marked(
        client,
        &relname,
        &format!(
            "CREATE TABLE {table} ({}) WITH (autovacuum_enabled = off)",
            columns(Design::Snapshot, spec.key_shape)
        ),
        "growth baseline table",
    )
    .await?;
    // Start from a clean slate, as the growth did (a refusal was already noted), when the
    // run takes checkpoints at all.
    if ctx.checkpoint.take {
        let _ = ctx
            .cancellable(client, client.batch_execute("CHECKPOINT"))
            .await;
    }
    let to = grow.from_versions + grow.rows / spec.units.max(1);
    let (rows, secs) = plain_copy(ctx, client, spec, &table, grow.from_versions, to)
        .await
        .map_err(|e| e.into_run())?;
    ctx.cancellable(client, client.batch_execute(&format!("DROP TABLE {table}")))
        .await?;
    let rate = rows as f64 / secs.max(1e-9);
    report.baseline = Some(FillBaseline {
        design: Design::Snapshot,
        rows,
        seconds: secs,
        rows_per_second: rate,
        growth_copy_rows_per_second: grow.copy_rows_per_second,
        growth_rows_per_second: grow.rows_per_second,
        copy_ratio: grow.copy_rows_per_second / rate,
        total_ratio: grow.rows_per_second / rate,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// The ranges rows of two windows describe the same versions as the snapshot stream.
    #[test]
    fn ranges_windows_match_snapshots() {
        let (units, k, seed) = (50, 4, 9);
        let mut snap = Churn::new(units, k, seed);
        let mut expected: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
        let mut d = Delta::default();
        for _ in 0..30 {
            snap.advance(&mut d);
            expected.insert(d.version, snap.alive().iter().copied().collect());
        }
        let mut ranges = Churn::new(units, k, seed);
        let mut rows: BTreeMap<i64, (i64, Option<i64>)> = BTreeMap::new();
        for target in [1, 12, 30] {
            let w = ranges_window(&mut ranges, target);
            for (c, v) in w.old_removed.0.iter().zip(&w.old_removed.1) {
                let r = rows.get_mut(c).unwrap();
                assert!(r.1.is_none());
                r.1 = Some(*v);
            }
            for (i, r) in w.new_rows.iter().enumerate() {
                rows.insert(w.first_new + i as i64, *r);
            }
        }
        assert_eq!(rows.len() as u64, units + k * 29);
        for (v, set) in expected {
            let got: BTreeSet<i64> = rows
                .iter()
                .filter(|(_, (a, r))| *a <= v && r.is_none_or(|r| r > v))
                .map(|(c, _)| *c)
                .collect();
            assert_eq!(got, set, "version {v}");
        }
    }
}
