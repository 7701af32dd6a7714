//! The ingest summary from hand-made trials: ties, clear differences, too few trials and the
//! knee in each of its cases.

use super::*;
use crate::experiment::ingest::report::{FsyncRef, LatencyMs, StopReason, decay_pct};
use crate::experiment::ingest::spec::IngestSpec;
use crate::experiment::lab::field::ParamText;

/// Relative noise of five trials, small enough for clear verdicts at 5 a side.
pub(super) const NOISE: [f64; 5] = [0.99, 1.0, 1.01, 0.995, 1.005];
/// Six trials: five settings at once (10 pairs, each at 99.5%) need six each to decide.
const NOISE6: [f64; 6] = [0.99, 1.0, 1.01, 0.995, 1.005, 1.0];

fn spec() -> IngestSpec {
    IngestSpec::parse(&crate::experiment::ExperimentKind::Ingest.defaults()).unwrap()
}

/// A trial of `rps` rows/s (1000 rows by one client, no latency timed), for tests here and of
/// the report's charts.
pub(crate) fn trial(
    method: Method,
    batch: u64,
    sync: SyncCommit,
    rps: f64,
    repeat: u32,
) -> IngestTrial {
    IngestTrial {
        combo: 0,
        checkpoints_during: None,
        settings: Default::default(),
        repeat,
        checkpoint: true,
        method,
        batch,
        clients: 1,
        synchronous_commit: sync,
        pipeline: false,
        rows: 1000,
        client_rows: vec![1000],
        rows_counted: 1000,
        rows_before: 0,
        seconds: 1000.0 / rps,
        rows_per_s: rps,
        latency_ms: LatencyMs::default(),
        wal_bytes: 100_000,
        wal_bytes_per_row: 100.0,
        commits: 1000 / batch,
        commits_per_s: rps / batch as f64,
        series: vec![],
        decay_pct: None,
        table_bytes: 0,
        stopped_by: StopReason::Rows,
        fsync_fraction: None,
        client_cpu_s: 0.1,
        client_cpu_share: 0.05,
        host_cpu_share: Some(0.5),
        distribution: Default::default(),
        stall_seconds: 0,
        worst_second: None,
        replicas: vec![],
        fault: None,
        host: None,
    }
}

/// A report whose configurations have `noise.len()` trials each around the given medians,
/// interleaved by rounds as a run makes them.
pub(crate) fn report(configs: &[(Method, u64, SyncCommit, f64)], noise: &[f64]) -> IngestReport {
    let mut r = IngestReport::new(&spec());
    for (round, x) in noise.iter().enumerate() {
        for &(m, b, s, rps) in configs {
            r.trials.push(trial(m, b, s, rps * x, round as u32 + 1));
        }
    }
    r.summarize(&[]);
    r
}

fn copy_curve(points: &[(u64, f64)]) -> Vec<(Method, u64, SyncCommit, f64)> {
    points
        .iter()
        .map(|&(b, rps)| (Method::Copy, b, SyncCommit::On, rps))
        .collect()
}

#[test]
fn a_plateau_ties_and_the_knee_is_its_smallest_batch() {
    let r = report(
        &copy_curve(&[
            (1, 700.0),
            (16, 9000.0),
            (64, 18_500.0),
            (256, 19_000.0),
            (1024, 18_800.0),
        ]),
        &NOISE6,
    );
    let s = &r.summary;
    assert_eq!(s.configs.len(), 5);
    let c = &s.configs[3];
    assert_eq!(
        (c.batch, c.rows_per_s.n, c.rows_per_s.median),
        (256, 6, 19_000.0)
    );
    assert!(
        c.rows_per_s.ci_low <= c.rows_per_s.median && c.rows_per_s.median <= c.rows_per_s.ci_high
    );
    assert!(
        (c.rows_per_s.level - 62.0 / 64.0).abs() < 1e-9,
        "6 trials reach 96.9%"
    );
    let g = &s.groups[0];
    assert_eq!(g.question, Question::Batch);
    assert_eq!(g.verdict, Some(Verdict::NoSignificantDifference));
    assert_eq!(g.best.as_deref(), Some("256"));
    assert_eq!(g.winner, None);
    assert_eq!(g.equivalent, ["64", "256", "1024"]);
    assert_eq!(g.recommendation.as_deref(), Some("64"));
    assert_eq!(g.settings[0].verdict, Some(Verdict::Slower));
    assert!(g.settings[2].equivalent && !g.settings[1].equivalent);
    let k = &s.knees[0];
    assert_eq!((k.best_batch, k.knee_batch), (256, Some(64)));
    assert_eq!(k.knee_rows_per_s, Some(18_500.0));
    assert_eq!(
        g.finding,
        "copy, 1 client, sync=on, by batch: 64..1024 are within 5% of the best (no significant difference); 64 is enough, more bought nothing measurable; knee at batch 64"
    );
    assert_eq!(s.best[0].knee_batch, Some(64));
    // No setting is named best or fastest without a verdict behind it ("the best" is only
    // the reference equivalence is shown against).
    assert!(
        !s.findings
            .iter()
            .any(|f| f.contains("fastest") || f.contains("is best") || f.contains("256 best")),
        "no unbacked best: {:?}",
        s.findings
    );
}

#[test]
fn a_clear_difference_names_a_winner() {
    let r = report(
        &[
            (Method::Insert, 1, SyncCommit::Off, 9_000.0),
            (Method::Copy, 500, SyncCommit::Off, 250_000.0),
        ],
        &NOISE,
    );
    let s = &r.summary;
    let g = s
        .groups
        .iter()
        .find(|g| g.question == Question::Method)
        .expect("insert joins the methods at batch 500");
    assert_eq!(g.batch, Some(500));
    assert_eq!(g.verdict, Some(Verdict::Faster));
    assert_eq!(g.winner.as_deref(), Some("copy"));
    assert_eq!(g.settings[0].label, "insert");
    assert_eq!(g.settings[0].verdict, Some(Verdict::Slower));
    assert!(g.settings[0].ratio.unwrap() < 0.05);
    assert!(
        g.finding.starts_with(
            "at batch 500, 1 client, sync=off, by method: copy faster than every other setting (250k ["
        ),
        "{}",
        g.finding
    );
    let json = serde_json::to_value(s).unwrap();
    assert_eq!(json["groups"][0]["verdict"], "faster");
    assert_eq!(json["groups"][0]["settings"][0]["verdict"], "slower");
}

#[test]
fn all_tied_recommends_nothing_and_the_knee_is_the_smallest_batch() {
    let r = report(&copy_curve(&[(16, 20_000.0), (64, 20_100.0)]), &NOISE);
    let g = &r.summary.groups[0];
    assert_eq!(g.verdict, Some(Verdict::NoSignificantDifference));
    assert_eq!(g.recommendation, None);
    assert_eq!(
        g.finding,
        "copy, 1 client, sync=on, by batch: no significant difference between 16 and 64: all within 5% of the best; knee at batch 16"
    );
    let k = &r.summary.knees[0];
    assert_eq!(k.knee_batch, Some(16));
    assert!(
        k.knee_note.contains("smallest is enough"),
        "{}",
        k.knee_note
    );
}

#[test]
fn three_trials_each_are_too_few() {
    // Far apart (700, 9,000, 19,000 rows/s): three trials each decide.
    let r = report(
        &copy_curve(&[(1, 700.0), (16, 9000.0), (256, 19_000.0)]),
        &NOISE[..3],
    );
    assert_eq!(r.summary.groups[0].winner.as_deref(), Some("256"));
    // 10% apart in about 9% spread: open at three each.
    let r = report(
        &copy_curve(&[(1, 700.0), (16, 17_000.0), (256, 19_000.0)]),
        &[0.92, 1.0, 1.09],
    );
    let g = &r.summary.groups[0];
    assert_eq!(g.verdict, Some(Verdict::TooFewTrials));
    assert_eq!((g.winner.clone(), g.recommendation.clone()), (None, None));
    assert_eq!(r.summary.knees[0].knee_batch, None);
    // repeat auto (at most 10): the first look is planned at 5 each (measure::spending);
    // before that every configuration needs another round, at 6 (far apart) none does.
    let plan = verdicts::configurations(&r.trials);
    let rules = r
        .params
        .decision
        .rules_for(crate::experiment::lab::decision::Repeat::Auto);
    assert_eq!(verdicts::undecided(&plan, &r.trials, &rules).len(), 3);
    let r = report(
        &copy_curve(&[(1, 700.0), (16, 9000.0), (256, 19_000.0)]),
        &NOISE6,
    );
    assert!(verdicts::undecided(&plan, &r.trials, &rules).is_empty());
}

#[test]
fn still_rising_at_the_largest_batch_has_no_knee_inside_the_range() {
    let r = report(
        &copy_curve(&[(1, 700.0), (16, 9000.0), (256, 19_000.0)]),
        &NOISE,
    );
    let k = &r.summary.knees[0];
    assert_eq!(k.best_batch, 256);
    assert_eq!(k.knee_batch, None);
    assert!(
        k.knee_note.starts_with("no knee inside the tested range"),
        "{}",
        k.knee_note
    );
    assert!(r.summary.findings[0].contains(
        "no knee inside the tested range: rows/s still rising significantly at batch 256"
    ));
    let json = serde_json::to_value(&r.summary).unwrap();
    assert!(json["knees"][0]["knee_batch"].is_null());
    // A best at the largest batch that ties with the one before it does have a knee.
    let r = report(
        &copy_curve(&[(1, 700.0), (16, 18_900.0), (256, 19_000.0)]),
        &NOISE,
    );
    assert_eq!(r.summary.knees[0].knee_batch, Some(16));
}

#[test]
fn sync_fsync_and_decay_findings() {
    let mut p = crate::experiment::ExperimentKind::Ingest.defaults();
    p.extend(ParamText::from([
        ("method".to_string(), "insert".to_string()),
        ("sync-commit".to_string(), "on,off".to_string()),
    ]));
    let mut r = IngestReport::new(&IngestSpec::parse(&p).unwrap());
    r.fsync = Some(FsyncRef {
        ops_per_s: 3200.0,
        source: "probe".into(),
    });
    for (i, x) in NOISE.iter().enumerate() {
        let mut t = trial(Method::Insert, 1, SyncCommit::On, 740.0 * x, i as u32 + 1);
        if i == 0 {
            t.series = vec![800.0, 790.0, 700.0, 650.0, 500.0, 450.0, 420.0, 400.0];
            t.decay_pct = decay_pct(&t.series);
        }
        r.trials.push(t);
        r.trials.push(trial(
            Method::Insert,
            1,
            SyncCommit::Off,
            7300.0 * x,
            i as u32 + 1,
        ));
    }
    r.apply_fsync();
    assert_eq!(
        r.trials[1].fsync_fraction, None,
        "sync=off waits for no flush"
    );
    r.summarize(&["CHECKPOINT skipped".into()]);
    let all = r.summary.findings.join("\n");
    assert!(all.contains("23% of the disk's 3.20k fsyncs/s"), "{all}");
    assert!(
        all.contains(
            "insert, at batch 1, 1 client, by sync-commit: off faster than every other setting"
        ),
        "{all}"
    );
    assert!(all.contains("fell"), "{all}");
    assert_eq!(r.summary.confounders, ["CHECKPOINT skipped"]);
}

#[test]
fn batch_latency_at_the_flush_time_is_explained_by_the_fsync_probe() {
    let mut p = crate::experiment::ExperimentKind::Ingest.defaults();
    p.insert("method".to_string(), "insert".to_string());
    let mut r = IngestReport::new(&IngestSpec::parse(&p).unwrap());
    r.fsync = Some(FsyncRef {
        ops_per_s: 250.0,
        source: "probe".into(),
    });
    for (i, ms) in [3.98, 4.00, 4.05, 3.99].into_iter().enumerate() {
        let mut t = trial(Method::Insert, 1, SyncCommit::On, 1000.0 / ms, i as u32 + 1);
        t.latency_ms.p50 = ms;
        r.trials.push(t);
    }
    r.summarize(&[]);
    let all = r.summary.findings.join("\n");
    assert!(
        all.contains("a batch (one row and its commit) takes 4.00 ms at the median, about the disk's 4.00 ms per fsync"),
        "{all}"
    );
    // Latencies that have nothing to do with the flush time are not explained by it.
    for t in r.trials.iter_mut() {
        t.latency_ms.p50 = 0.6;
    }
    r.summarize(&[]);
    assert!(!r.summary.findings.join("\n").contains("per fsync"));
}

#[test]
fn a_load_generator_above_a_quarter_of_the_cpu_is_a_confounder() {
    let mut r = IngestReport::new(&spec());
    for (i, share) in [0.05, 0.25, 0.30, 0.45].into_iter().enumerate() {
        let mut t = trial(Method::Insert, 1, SyncCommit::Off, 10_000.0, i as u32 + 1);
        t.client_cpu_share = share;
        r.trials.push(t);
    }
    r.summarize(&[]);
    assert_eq!(
        r.summary.confounders,
        [
            "the load generator used 45% of the CPU (insert, 1 client, sync=off #4, and above 25% in 1 other trial): the server may be faster than shown"
        ]
    );
    // Exactly at the limit is not above it.
    r.trials.truncate(2);
    r.summarize(&["CHECKPOINT skipped".into()]);
    assert_eq!(r.summary.confounders, ["CHECKPOINT skipped"]);
}

#[test]
fn swept_settings_are_a_question_and_their_wal_and_checkpoints_are_stated_with_a_spread() {
    let mut p = crate::experiment::ExperimentKind::Ingest.defaults();
    p.insert("method".into(), "copy".into());
    p.insert("batch".into(), "256".into());
    p.insert("set".into(), "max_wal_size=1GB,16GB".into());
    let mut r = IngestReport::new(&IngestSpec::parse(&p).unwrap());
    for (round, x) in NOISE.iter().enumerate() {
        for combo in 0..2 {
            let mut t = trial(
                Method::Copy,
                256,
                SyncCommit::On,
                100_000.0 * x,
                round as u32 + 1,
            );
            t.combo = combo;
            // 16GB: no checkpoint inside the load and fewer full-page images.
            t.checkpoints_during = Some(if combo == 0 { 3 + round as i64 % 2 } else { 0 });
            t.wal_bytes_per_row = if combo == 0 {
                200.0 + round as f64
            } else {
                150.0
            };
            r.trials.push(t);
        }
    }
    r.summarize(&[]);
    let g = r
        .summary
        .groups
        .iter()
        .find(|g| g.question == Question::Settings)
        .expect("a settings question");
    assert_eq!(g.verdict, Some(Verdict::NoSignificantDifference));
    let f = &r.summary.findings;
    let wal = f.iter().find(|s| s.contains("WAL per row")).unwrap();
    assert!(
        wal.contains("max_wal_size=1GB 202 B [200–204]")
            && wal.contains("max_wal_size=16GB 150 B, -26%"),
        "{wal}"
    );
    let cp = f
        .iter()
        .find(|s| s.starts_with("checkpoints during"))
        .unwrap();
    assert!(
        cp.contains("max_wal_size=1GB: 3–4; max_wal_size=16GB: 0"),
        "{cp}"
    );
}

#[test]
fn small_copies_into_a_distributed_table_name_the_citus_connection_settings() {
    use crate::experiment::ingest::citus_copy::{CACHED, CitusConnections, POOL};
    use crate::experiment::lab::distribute::Distribution;
    let distributed = |mut t: IngestTrial, pool: Option<&str>| {
        t.distribution = Distribution {
            column: Some("id".into()),
            shards: 32,
            nodes: 3,
        };
        t.latency_ms.p50 = 356.0;
        if let Some(p) = pool {
            t.settings.insert(POOL.into(), p.into());
        }
        t
    };
    let mut r = IngestReport::new(&spec());
    r.citus_connections = Some(CitusConnections {
        pool_size: 16,
        cached_per_worker: 1,
    });
    for round in 1..=4 {
        r.trials.push(distributed(
            trial(Method::Copy, 256, SyncCommit::On, 700.0, round),
            Some("16"),
        ));
        r.trials.push(distributed(
            trial(Method::Copy, 256, SyncCommit::On, 14_000.0, round),
            Some("1"),
        ));
        r.trials.push(distributed(
            trial(Method::Values, 256, SyncCommit::On, 4000.0, round),
            None,
        ));
    }
    r.summarize(&[]);
    let c: Vec<&String> = r
        .summary
        .confounders
        .iter()
        .filter(|c| c.contains(POOL))
        .collect();
    assert_eq!(c.len(), 1, "{:#?}", r.summary.confounders);
    assert!(
        c[0].starts_with("copy into a table distributed over 32 shards on 2 workers: each COPY opens a connection per shard, up to citus.max_adaptive_executor_pool_size = 16 per worker, and only citus.max_cached_conns_per_worker = 1 per worker stays open after it, so each COPY of 256 rows (about 8 a shard) sets up about 30 connections (a batch took 356 ms at the median)"),
        "{}",
        c[0]
    );
    assert!(
        c[0].contains(&format!("raising {CACHED} to 16 keeps them instead")),
        "{}",
        c[0]
    );
    // With one connection per worker everywhere, nothing is set up per COPY: no confounder.
    r.citus_connections = Some(CitusConnections {
        pool_size: 1,
        cached_per_worker: 1,
    });
    for t in &mut r.trials {
        t.settings.clear();
    }
    r.summarize(&[]);
    assert!(!r.summary.confounders.iter().any(|c| c.contains(POOL)));
    // A plain table never has it.
    r.citus_connections = None;
    r.summarize(&[]);
    assert!(!r.summary.confounders.iter().any(|c| c.contains(POOL)));
}

/// With a synchronous standby, `on` waits for the standby as well: the disk's wall is read
/// at `local` alone, never from a median over levels (which once said "sync=local: 319
/// commits/s" when local ran 3,174 and on 315).
#[test]
fn the_fsync_wall_is_read_at_one_level_not_a_median_over_levels() {
    let mut p = crate::experiment::ExperimentKind::Ingest.defaults();
    p.extend(ParamText::from([
        ("method".to_string(), "insert".to_string()),
        (
            "sync-commit".to_string(),
            "local,on,remote_apply".to_string(),
        ),
    ]));
    let mut r = IngestReport::new(&IngestSpec::parse(&p).unwrap());
    r.fsync = Some(FsyncRef {
        ops_per_s: 8000.0,
        source: "probe".into(),
    });
    for (i, x) in NOISE.iter().enumerate() {
        for (level, rps) in [
            (SyncCommit::Local, 3200.0),
            (SyncCommit::On, 320.0),
            (SyncCommit::RemoteApply, 315.0),
        ] {
            r.trials
                .push(trial(Method::Insert, 1, level, rps * x, i as u32 + 1));
        }
    }
    r.apply_fsync();
    r.summarize(&[]);
    let all = r.summary.findings.join("\n");
    assert!(
        all.contains("insert, sync=local, 1 client: 3.20k commits/s")
            && all.contains("40% of the disk's 8.00k fsyncs/s"),
        "{all}"
    );
    let report = crate::report::example::with_body(crate::experiment::ReportBody::Ingest(
        Box::new(r.clone()),
    ));
    let advice: Vec<String> = crate::report::ingest_advice::recommendations(&report, &r)
        .into_iter()
        .map(|a| a.text)
        .collect();
    let advice = advice.join("\n");
    assert!(
        advice.contains("one client committed 3200 rows/s"),
        "{advice}"
    );
    assert!(
        !advice.contains("synchronous_commit = off"),
        "off was not measured: {advice}"
    );
}
