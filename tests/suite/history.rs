//! The history: concurrent appends from two processes, torn and corrupt records, finding and
//! filtering runs, export round trips, no passwords, and comparisons of two runs (fixtures
//! for every verdict and experiment, the command's formats, and real runs on the sandbox).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use pglab::experiment::growth::GrowthReport;
use pglab::experiment::index_build::Order;
use pglab::experiment::ingest::IngestReport;
use pglab::experiment::{
    ExperimentKind, ExperimentSpec, ParamText, ReportBody, RunEvent, RunOptions, RunReport,
};
use pglab::history::compare::{Role, Side};
use pglab::history::{self, HistoryFilter};
use pglab::measure::verdict::Verdict;
use pglab::report::example;

const CHILD_ENV: &str = "PGLAB_TEST_HISTORY_CHILD";
const WRITER_ENV: &str = "PGLAB_TEST_HISTORY_WRITER";
const PER_WRITER: usize = 40;

fn temp(tag: &str) -> PathBuf {
    common::temp_dir(tag)
}

/// A report whose line is large (~70 kB), far past what a single small write would cover.
fn big_report(id: &str) -> RunReport {
    let mut r = example::cybertec_10m(id);
    r.notes = (0..300)
        .map(|i| format!("note {i}: {}", "x".repeat(200)))
        .collect();
    r
}

/// Not a test of its own: the body of the writer processes that
/// `appends_from_two_processes_lose_nothing` starts (a no-op when run normally).
#[test]
fn history_writer_child() {
    let (Ok(path), Ok(writer)) = (std::env::var(CHILD_ENV), std::env::var(WRITER_ENV)) else {
        return;
    };
    for i in 0..PER_WRITER {
        let r = big_report(&format!("{writer}-{i:03}"));
        history::append(Path::new(&path), &r).expect("append");
    }
}

#[test]
fn appends_from_two_processes_lose_nothing() {
    let dir = temp("concurrent");
    let path = dir.join("history.jsonl");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = ["a", "b"]
        .iter()
        .map(|w| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "history::history_writer_child",
                    "--test-threads=1",
                ])
                .env(CHILD_ENV, &path)
                .env(WRITER_ENV, w)
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawn writer")
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a writer failed");
    }
    let (runs, warnings) = history::read(&path);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(runs.len(), 2 * PER_WRITER);
    for w in ["a", "b"] {
        for i in 0..PER_WRITER {
            let id = format!("{w}-{i:03}");
            assert!(runs.iter().any(|r| r.run_id == id), "{id} lost");
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_truncated_last_line_is_skipped_and_the_next_append_survives() {
    let dir = temp("torn");
    let path = dir.join("history.jsonl");
    history::append(&path, &example::cybertec_10m("r1")).unwrap();
    history::append(&path, &example::cybertec_10m("r2")).unwrap();
    let whole = serde_json::to_string(&example::cybertec_10m("r3")).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&whole.as_bytes()[..whole.len() / 2]);
    std::fs::write(&path, &bytes).unwrap();

    let (runs, warnings) = history::read(&path);
    assert_eq!(
        runs.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(),
        ["r1", "r2"]
    );
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].line, 3);
    assert!(
        warnings[0].to_string().contains("line 3"),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].message.contains("truncated"), "{}", warnings[0]);

    // The next record starts on a line of its own: only the torn one is lost.
    history::append(&path, &example::cybertec_10m("r4")).unwrap();
    let (runs, warnings) = history::read(&path);
    assert_eq!(
        runs.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(),
        ["r1", "r2", "r4"]
    );
    assert_eq!(warnings.len(), 1);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_corrupt_record_is_skipped_with_its_line() {
    let dir = temp("corrupt");
    let path = dir.join("history.jsonl");
    history::append(&path, &example::cybertec_10m("r1")).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"run_id\": \"nope\"}\n"))
        .unwrap();
    history::append(&path, &example::cybertec_10m("r3")).unwrap();
    let (runs, warnings) = history::read(&path);
    assert_eq!(runs.len(), 2);
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].line, 2);
    assert!(!warnings[0].message.contains("truncated"));
    // A missing file is an empty history, not an error.
    let (runs, warnings) = history::read(&dir.join("none.jsonl"));
    assert!(runs.is_empty() && warnings.is_empty());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn runs_are_found_by_id_prefix_and_last() {
    let runs = vec![
        example::cybertec_10m("20260301T100000Z-aaaa"),
        example::cybertec_10m("20260301T100000Z-aabb"),
        example::cybertec_10m("20260302T090000Z-cccc"),
    ];
    let id = |q: &str| history::find(&runs, q).map(|r| r.run_id.clone());
    assert_eq!(id("last").unwrap(), "20260302T090000Z-cccc");
    assert_eq!(id("last~2").unwrap(), "20260301T100000Z-aaaa");
    assert!(id("last~3").is_err());
    assert_eq!(id("20260302").unwrap(), "20260302T090000Z-cccc");
    assert_eq!(
        id("20260301T100000Z-aabb").unwrap(),
        "20260301T100000Z-aabb"
    );
    let e = id("20260301T100000Z-aa").unwrap_err().to_string();
    assert!(e.contains("matches 2 runs"), "{e}");
    let e = id("2027").unwrap_err().to_string();
    assert!(e.contains("no run '2027'"), "{e}");
    assert!(history::find(&[], "last").is_err());
}

#[test]
fn filters_select_by_experiment_preset_target_and_time() {
    let mut a = example::cybertec_10m("a");
    let mut b = example::cybertec_10m("b");
    b.preset = Some("mine".into());
    b.target = "me@db1:5432/sales".into();
    b.started_at += chrono::Duration::days(10);
    a.preset = None;
    let runs = vec![a, b];
    let ids = |f: &HistoryFilter| {
        f.apply(&runs)
            .iter()
            .map(|r| r.run_id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&HistoryFilter::default()), ["a", "b"]);
    let f = HistoryFilter {
        preset: Some("mine".into()),
        ..Default::default()
    };
    assert_eq!(ids(&f), ["b"]);
    let f = HistoryFilter {
        target: Some("db1".into()),
        ..Default::default()
    };
    assert_eq!(ids(&f), ["b"]);
    let f = HistoryFilter {
        since: Some(runs[0].started_at + chrono::Duration::days(1)),
        ..Default::default()
    };
    assert_eq!(ids(&f), ["b"]);
    let f = HistoryFilter {
        experiment: Some(ExperimentKind::Ingest),
        ..Default::default()
    };
    assert!(ids(&f).is_empty());
}

/// `pglab` with its files in `dir` (no server is needed for history commands).
fn pglab(dir: &Path) -> Command {
    let mut c = Command::new(common::TestLab::bin());
    c.env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"));
    c
}

#[test]
fn export_round_trips() {
    let dir = temp("export");
    let path = dir.join("data").join("history.jsonl");
    let originals = vec![
        example::cybertec_10m("r1"),
        example::index_build(
            "r2",
            200_000,
            &[
                (Order::Sorted, 0, "1MB", &[0.21]),
                (Order::Random, 2, "64MB", &[0.35]),
            ],
        ),
    ];
    for r in &originals {
        history::append(&path, r).unwrap();
    }
    let out = pglab(&dir)
        .args(["history", "export", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back: Vec<RunReport> = serde_json::from_slice(&out.stdout).expect("export is JSON");
    assert_eq!(back, originals);

    let out = pglab(&dir)
        .args(["history", "export", "--format", "csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8(out.stdout).unwrap();
    let trials = 30 + 2;
    assert_eq!(csv.lines().count(), 1 + trials, "{csv}");
    assert!(csv.starts_with("run_id,experiment,started_at,preset,outcome,"));

    let out = pglab(&dir).args(["history", "list"]).output().unwrap();
    let list = String::from_utf8(out.stdout).unwrap();
    assert!(list.contains("r1") && list.contains("r2"), "{list}");
    // The result column is the run's decision (the headline the report and JSON carry).
    assert!(
        list.contains("sorted: not decided yet: the best is among"),
        "{list}"
    );

    let out = pglab(&dir)
        .args(["history", "show", "r2", "--format", "csv"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 3);

    let out = pglab(&dir)
        .args(["history", "list", "--since", "yesterday"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--since"));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_history_never_holds_a_password() {
    use pglab::server::{Target, conninfo};
    let dir = temp("secret");
    let path = dir.join("history.jsonl");
    let env: std::collections::BTreeMap<&str, &str> = Default::default();
    // Nothing listens on port 1: the run fails at connect and is recorded as failed.
    let params = conninfo::resolve(
        Some("postgresql://lab:s3cret-pw@127.0.0.1:1/db?connect_timeout=2&sslmode=disable"),
        &env,
    )
    .unwrap();
    let target = std::sync::Arc::new(Target::new(params, false).unwrap());
    let spec = ExperimentKind::IndexBuild
        .parse_spec(&Default::default())
        .unwrap();
    let opts = RunOptions {
        recorder: Some(pglab::history::recorder(path.clone())),
        ..RunOptions::default()
    };
    let mut h = pglab::experiment::spawn(target, spec, opts);
    let mut last = None;
    while let Some(ev) = h.events.recv().await {
        last = Some(ev);
    }
    assert!(matches!(last, Some(RunEvent::Failed { .. })), "{last:?}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("127.0.0.1"), "{text}");
    assert!(
        !text.contains("s3cret-pw"),
        "the password reached the history: {text}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

// ---- history compare -------------------------------------------------------------------

/// Five trials around 1 with ±2% noise, two different draws (A/A-like).
const NOISE: [f64; 5] = [0.98, 1.01, 1.0, 0.99, 1.02];
const NOISE2: [f64; 5] = [1.01, 0.99, 1.02, 1.0, 0.98];

fn scaled(base: f64, noise: &[f64]) -> Vec<f64> {
    noise.iter().map(|x| base * x).collect()
}

/// An index-build run at 1M rows measuring sorted and random at 64MB, `by` times `base`.
fn two_settings(id: &str, rows: u64, noise: &[f64], by: f64) -> RunReport {
    let sorted = scaled(0.8 * by, noise);
    let random = scaled(1.3 * by, noise);
    example::index_build(
        id,
        rows,
        &[
            (Order::Sorted, 0, "64MB", &sorted),
            (Order::Random, 0, "64MB", &random),
        ],
    )
}

#[test]
fn compare_identical_parameters_finds_no_significant_difference() {
    let base = two_settings("base", 1_000_000, &NOISE, 1.0);
    let cand = two_settings("cand", 1_000_000, &NOISE2, 1.0);
    let c = history::compare(&base, &cand).unwrap();
    assert!(c.differences.is_empty(), "{:?}", c.differences);
    assert!(c.not_comparable.is_empty());
    assert_eq!(c.settings.len(), 2);
    for s in &c.settings {
        assert_eq!(s.verdict, Some(Verdict::NoSignificantDifference), "{s:?}");
        let (b, k) = (s.baseline.unwrap(), s.candidate.unwrap());
        assert_eq!((b.n, k.n), (5, 5));
        assert!((b.median - k.median).abs() < 1e-9);
        let (lo, hi) = (s.ratio_low.unwrap(), s.ratio_high.unwrap());
        assert!(lo < 1.0 && 1.0 < hi, "{lo} {hi}");
    }
    assert_eq!(c.settings[0].setting, "sorted · 0 workers · 64MB");
    // Two settings compared: the line says what chance alone gives.
    assert_eq!(
        c.verdict,
        "candidate vs baseline: no significant difference on 2 of 2 settings; 2 settings compared at 95% each: when nothing changed, chance alone calls about 0.1 of them faster or slower (at least one in up to 10% of such compares)"
    );
    // The rules are the candidate's own.
    assert_eq!((c.rules.confidence, c.rules.min_effect), (0.95, 0.05));
    assert_eq!(c.rules_from, "the candidate run");
}

#[test]
fn compare_different_row_counts_is_not_comparable_with_the_reason() {
    let base = two_settings("base", 200_000, &NOISE, 1.0);
    let cand = two_settings("cand", 2_000_000, &NOISE2, 10.0);
    let c = history::compare(&base, &cand).unwrap();
    assert_eq!(c.not_comparable, ["rows 200k vs 2M"]);
    assert_eq!(c.counts.not_comparable, 2);
    for s in &c.settings {
        assert_eq!(s.verdict, Some(Verdict::NotComparable));
        // Both sides' numbers are still there.
        assert!(s.baseline.is_some() && s.candidate.is_some());
        assert!((s.ratio.unwrap() - 10.0).abs() < 0.2, "{s:?}");
    }
    assert!(
        c.verdict.starts_with("not comparable: rows 200k vs 2M"),
        "{}",
        c.verdict
    );
    assert!(!c.verdict.contains("slower"), "{}", c.verdict);
    let text = pglab::report::comparison::render(&c, pglab::report::Format::Table);
    assert!(text.contains("Not comparable"), "{text}");
    assert!(text.contains("rows") && text.contains("200k") && text.contains("2M"));
    assert!(text.contains("8.0 s") && text.contains("800 ms"), "{text}");

    // A server setting is a condition too, unless it is what is compared (--vary).
    let base = two_settings("base", 1_000_000, &NOISE, 1.0);
    let mut cand = two_settings("cand", 1_000_000, &NOISE2, 0.5);
    if let Some(s) = cand.server.as_mut() {
        s.settings.insert("shared_buffers".into(), "2GB".into());
    }
    let c = history::compare(&base, &cand).unwrap();
    assert_eq!(c.not_comparable, ["shared_buffers 128MB vs 2GB"]);
    let opts = history::CompareOptions {
        vary: vec!["shared_buffers".into()],
        ..Default::default()
    };
    let c = history::compare_with(&base, &cand, &opts).unwrap();
    assert!(c.not_comparable.is_empty());
    assert_eq!(c.differences[0].role, Role::Setting);
    assert_eq!(c.counts.faster, 2, "{}", c.verdict);
    // A name the runs do not differ in is said, not silently ignored.
    let opts = history::CompareOptions {
        vary: vec!["work_mem".into()],
        ..Default::default()
    };
    let c = history::compare_with(&base, &cand, &opts).unwrap();
    assert!(!c.not_comparable.is_empty());
    assert_eq!(
        c.notes,
        ["--vary work_mem: the two runs do not differ in it"]
    );
    // A different host is a condition; another hostname alone is not.
    let mut cand = two_settings("cand", 1_000_000, &NOISE2, 1.0);
    cand.host.hostname = "lab2".into();
    assert!(
        history::compare(&base, &cand)
            .unwrap()
            .not_comparable
            .is_empty()
    );
    cand.host.total_memory *= 2;
    cand.host.logical_cores = 8;
    let c = history::compare(&base, &cand).unwrap();
    assert_eq!(
        c.not_comparable,
        ["logical_cores 2 vs 8", "total_memory 8.0 GB vs 16.0 GB"]
    );
}

#[test]
fn compare_one_trial_a_side_is_too_few_trials() {
    let base = example::index_build("base", 1_000_000, &[(Order::Random, 0, "16MB", &[11.6])]);
    let cand = example::index_build("cand", 1_000_000, &[(Order::Random, 0, "16MB", &[5.8])]);
    let c = history::compare(&base, &cand).unwrap();
    let s = &c.settings[0];
    assert_eq!(s.verdict, Some(Verdict::TooFewTrials));
    // One a side: three a side are the fewest ever compared.
    assert_eq!(s.trials_needed, Some(3));
    assert!((s.ratio.unwrap() - 0.5).abs() < 1e-9);
    assert_eq!(
        c.verdict,
        "candidate vs baseline: too few trials on 1 of 1 setting (about 3 trials a side would decide, estimated from the spread so far)"
    );
    let text = pglab::report::comparison::render(&c, pglab::report::Format::Table);
    assert!(text.contains("too few trials (about 3 a side)"), "{text}");
}

#[test]
fn compare_calls_a_one_and_a_half_fold_difference() {
    let base = two_settings("base", 1_000_000, &NOISE, 1.0);
    let cand = two_settings("cand", 1_000_000, &NOISE2, 1.5);
    let c = history::compare(&base, &cand).unwrap();
    assert_eq!(c.counts.slower, 2, "{c:#?}");
    for s in &c.settings {
        assert!((s.ratio.unwrap() - 1.5).abs() < 0.03, "{s:?}");
        assert!(s.ratio_low.unwrap() > 1.0);
    }
    assert!(
        c.verdict
            .starts_with("candidate vs baseline: slower on 2 of 2 settings; up to 1.5"),
        "{}",
        c.verdict
    );
    let back = history::compare(&cand, &base).unwrap();
    assert_eq!(back.counts.faster, 2);
    assert!(
        back.verdict.contains("faster on 2 of 2"),
        "{}",
        back.verdict
    );
    // A stricter smallest effect than the difference makes it no difference worth calling.
    let opts = history::CompareOptions {
        rules: Some(pglab::measure::rules::Rules::new(0.95, 0.6).unwrap()),
        ..Default::default()
    };
    let strict = history::compare_with(&cand, &base, &opts).unwrap();
    assert_eq!(strict.counts.no_significant_difference, 2);
    assert_eq!(strict.rules_from, "the command line");
}

#[test]
fn compare_lists_settings_run_on_one_side_only() {
    let base = two_settings("base", 1_000_000, &NOISE, 1.0);
    let mut cand = two_settings("cand", 1_000_000, &NOISE2, 1.0);
    let extra = example::index_build(
        "x",
        1_000_000,
        &[(Order::Random, 0, "1GB", &scaled(1.2, &NOISE))],
    );
    if let (ReportBody::IndexBuild(c), ReportBody::IndexBuild(x)) = (&mut cand.body, &extra.body) {
        c.trials.extend(x.trials.iter().cloned());
        c.params.mwm.extend(x.params.mwm.iter().cloned());
    }
    cand.spec_key = ExperimentSpec::IndexBuild(match &cand.body {
        ReportBody::IndexBuild(b) => b.params.clone(),
        _ => unreachable!(),
    })
    .spec_key();
    let c = history::compare(&base, &cand).unwrap();
    assert_eq!(c.counts.unmatched, 1);
    let only = c.settings.iter().find(|s| s.only_in.is_some()).unwrap();
    assert_eq!(only.only_in, Some(Side::Candidate));
    assert_eq!(only.setting, "random · 0 workers · 1GB");
    assert!(only.verdict.is_none() && only.candidate.is_some() && only.baseline.is_none());
    // The sweep's list differs, and that is a setting, not a condition.
    assert!(c.not_comparable.is_empty());
    assert!(
        c.differences
            .iter()
            .any(|d| d.name == "mwm" && d.role == Role::Setting)
    );
    assert!(
        c.verdict
            .ends_with("; 1 setting ran in only one of the runs"),
        "{}",
        c.verdict
    );
}

/// A record of `kind` with these parameters and `body` (trials given as JSON, as they are
/// stored), on the example server and host.
fn record(id: &str, spec: ExperimentSpec, body: ReportBody) -> RunReport {
    let mut r = example::index_build(id, 1000, &[(Order::Sorted, 0, "64MB", &[1.0])]);
    r.preset = None;
    r.spec_key = spec.spec_key();
    r.body = body;
    r
}

fn spec_of(kind: ExperimentKind, pairs: &[(&str, &str)]) -> ExperimentSpec {
    let p: ParamText = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    kind.parse_spec(&p).expect("valid spec")
}

/// An ingest run: per configuration (method, batch, rows/s of each repeat).
fn ingest_run(id: &str, rows: &str, configs: &[(&str, u64, &[f64])]) -> RunReport {
    let spec = spec_of(
        ExperimentKind::Ingest,
        &[
            ("rows", rows),
            ("method", "insert-tx,copy"),
            ("batch", "16,256"),
            ("repeat", "5"),
        ],
    );
    let ExperimentSpec::Ingest(params) = &spec else {
        unreachable!()
    };
    let mut body = IngestReport::new(params);
    // Repeats interleaved across configurations, as a run does them.
    let most = configs.iter().map(|c| c.2.len()).max().unwrap_or(0);
    for i in 0..most {
        for (method, batch, rps) in configs {
            let Some(rps) = rps.get(i) else { continue };
            let trial = serde_json::json!({
                "method": method, "batch": batch, "clients": 1, "synchronous_commit": "on",
                "pipeline": false, "rows": 1000, "client_rows": [1000], "rows_counted": 1000,
                "rows_before": 0, "seconds": 1000.0 / rps, "rows_per_s": rps,
                "latency_ms": {"p50": 1.0, "p95": 2.0, "p99": 3.0, "max": 4.0},
                "wal_bytes": 100000, "wal_bytes_per_row": 100.0, "commits": 10,
                "commits_per_s": 10.0, "series": [], "table_bytes": 65536, "stopped_by": "rows"
            });
            body.trials
                .push(serde_json::from_value(trial).expect("an ingest trial as stored"));
        }
    }
    record(id, spec, ReportBody::Ingest(Box::new(body)))
}

#[test]
fn compare_ingest_per_configuration_over_the_repeats() {
    let base = ingest_run(
        "ib",
        "1k",
        &[
            ("insert-tx", 16, &scaled(4000.0, &NOISE)),
            ("copy", 256, &scaled(50_000.0, &NOISE)),
        ],
    );
    let cand = ingest_run(
        "ic",
        "1k",
        &[
            ("insert-tx", 16, &scaled(6000.0, &NOISE2)),
            ("copy", 256, &scaled(50_000.0, &NOISE2)),
        ],
    );
    let c = history::compare(&base, &cand).unwrap();
    assert!(c.not_comparable.is_empty(), "{:?}", c.not_comparable);
    let labels: Vec<&str> = c.settings.iter().map(|s| s.setting.as_str()).collect();
    assert_eq!(
        labels,
        [
            "insert-tx · batch 16 · 1 client · sync on",
            "copy · batch 256 · 1 client · sync on"
        ]
    );
    let tx = &c.settings[0];
    assert_eq!(tx.metric, "rows/s");
    assert_eq!(tx.baseline.unwrap().n, 5, "the repeats are grouped");
    // More rows/s is better: 1.5× the rows/s is faster.
    assert_eq!(tx.verdict, Some(Verdict::Faster));
    assert!((tx.ratio.unwrap() - 1.5).abs() < 0.03);
    assert_eq!(
        c.settings[1].verdict,
        Some(Verdict::NoSignificantDifference)
    );
    assert!(
        c.verdict.starts_with(
            "candidate vs baseline: faster on 1, no significant difference on 1 of 2 settings"
        ),
        "{}",
        c.verdict
    );
    // Another payload is another experiment.
    let other = ingest_run("io", "2k", &[("copy", 256, &scaled(50_000.0, &NOISE2))]);
    let c = history::compare(&base, &other).unwrap();
    assert_eq!(c.not_comparable, ["rows 1000 vs 2000"]);
    assert_eq!(c.counts.not_comparable, 1);
}

/// A growth run: per (design, versions) the write repeats and the read median.
fn growth_run(id: &str, churn: &str, steps: &[(&str, u64, &[f64], f64)]) -> RunReport {
    let spec = spec_of(
        ExperimentKind::Growth,
        &[
            ("units", "1k"),
            ("steps", "0,100"),
            ("design", "snapshot,ranges"),
            ("churn", churn),
            ("repeat", "5"),
        ],
    );
    let ExperimentSpec::Growth(params) = &spec else {
        unreachable!()
    };
    let mut body = GrowthReport::new(params);
    for (design, versions, writes, read) in steps {
        let step = serde_json::json!({
            "design": design, "versions": versions, "rows": versions * 1000,
            "pairs": versions * 1000, "projected": false,
            "write_seconds": writes[writes.len() / 2], "write_repeats": writes,
            "read_seconds": read, "read_cold_seconds": null,
            "table_bytes": 8192, "index_bytes": {}, "bytes_per_row": null
        });
        body.steps
            .push(serde_json::from_value(step).expect("a growth step as stored"));
    }
    // A projected step is not a measurement.
    let mut projected: pglab::experiment::growth::GrowthStep = body.steps[0].clone();
    projected.versions = 1_000_000;
    projected.projected = true;
    body.steps.push(projected);
    record(id, spec, ReportBody::Growth(Box::new(body)))
}

#[test]
fn compare_growth_per_design_and_step() {
    let base = growth_run(
        "gb",
        "1%",
        &[
            ("snapshot", 100, &scaled(0.020, &NOISE), 0.004),
            ("ranges", 100, &scaled(0.010, &NOISE), 0.002),
        ],
    );
    let cand = growth_run(
        "gc",
        "1%",
        &[
            ("snapshot", 100, &scaled(0.030, &NOISE2), 0.004),
            ("ranges", 100, &scaled(0.010, &NOISE2), 0.002),
        ],
    );
    let c = history::compare(&base, &cand).unwrap();
    let labels: Vec<&str> = c.settings.iter().map(|s| s.setting.as_str()).collect();
    assert_eq!(
        labels,
        [
            "snapshot · 100 versions · write",
            "snapshot · 100 versions · read",
            "ranges · 100 versions · write",
            "ranges · 100 versions · read",
        ]
    );
    let v: Vec<Option<Verdict>> = c.settings.iter().map(|s| s.verdict).collect();
    assert_eq!(
        v,
        [
            Some(Verdict::Slower),
            Some(Verdict::TooFewTrials),
            Some(Verdict::NoSignificantDifference),
            Some(Verdict::TooFewTrials),
        ]
    );
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("median of a step's reads"))
    );
    let text = pglab::report::comparison::render(&c, pglab::report::Format::Table);
    assert!(
        text.contains("write seconds:") && text.contains("read seconds:"),
        "{text}"
    );
    assert!(text.contains("4.00 ms"), "{text}");
    // Another churn is another experiment.
    let other = growth_run(
        "go",
        "5%",
        &[("ranges", 100, &scaled(0.010, &NOISE2), 0.002)],
    );
    let c = history::compare(&base, &other).unwrap();
    assert_eq!(c.not_comparable, ["churn 1% vs 5%"]);
}

#[test]
fn compare_refuses_two_experiments() {
    let base = two_settings("base", 1_000_000, &NOISE, 1.0);
    let cand = ingest_run("ic", "1k", &[("copy", 256, &[1.0, 2.0, 3.0])]);
    let e = history::compare(&base, &cand).unwrap_err();
    assert!(e.contains("same experiment"), "{e}");
}

fn comparison_schema() -> jsonschema::Validator {
    let schema: serde_json::Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/schema/comparison.schema.json"
    )))
    .expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

fn schema_check(json: &serde_json::Value) {
    let errors: Vec<String> = comparison_schema()
        .iter_errors(json)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

#[test]
fn the_compare_command_speaks_every_format() {
    let dir = temp("compare-cli");
    let path = dir.join("data").join("history.jsonl");
    history::append(&path, &two_settings("base", 1_000_000, &NOISE, 1.0)).unwrap();
    history::append(&path, &two_settings("cand", 1_000_000, &NOISE2, 1.5)).unwrap();
    let run = |args: &[&str]| {
        let out = pglab(&dir)
            .args(["history", "compare"])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, text, err) = run(&["last~1", "last"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        text.contains("verdict: candidate vs baseline: slower on 2 of 2 settings"),
        "{text}"
    );
    assert!(
        text.contains("rules: 95% confidence, 5% smallest effect"),
        "{text}"
    );

    let (code, json, err) = run(&["base", "cand", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    schema_check(&v);
    let s = &v["settings"][0];
    for side in ["baseline", "candidate"] {
        for key in ["n", "median", "ci_low", "ci_high"] {
            assert!(s[side][key].is_number(), "{side}.{key}: {s}");
        }
    }
    for key in ["ratio", "ratio_low", "ratio_high"] {
        assert!(s[key].is_number(), "{key}: {s}");
    }
    assert_eq!(s["verdict"], "slower");

    let (code, csv, _) = run(&["base", "cand", "--format", "csv"]);
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("baseline_run,candidate_run,setting,metric,"));
    assert!(lines[1].ends_with(",slower,"), "{}", lines[1]);

    let (code, md, _) = run(&["base", "cand", "--format", "md", "--min-effect", "60%"]);
    assert_eq!(code, Some(0));
    assert!(md.starts_with("# index-build comparison"), "{md}");
    assert!(
        md.contains("no significant difference on 2 of 2") && md.contains("from the command line"),
        "{md}"
    );

    let (code, _, err) = run(&["base", "cand", "--confidence", "40%"]);
    assert_eq!(code, Some(2));
    // In percent, as the user wrote it, like the experiments' own field.
    assert!(
        err.contains("--confidence: '40%' is out of range: the confidence is above 50%"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Each fixture the schema must accept: not comparable, too few, one-sided, other experiments.
#[test]
fn every_comparison_fits_the_schema() {
    let ib = |id, rows, by| two_settings(id, rows, &NOISE, by);
    let pairs = [
        (ib("a", 1_000_000, 1.0), ib("b", 2_000_000, 1.0)),
        (
            example::index_build("a", 1000, &[(Order::Random, 0, "16MB", &[1.0])]),
            example::index_build("b", 1000, &[(Order::Random, 0, "1GB", &[1.0])]),
        ),
        (
            ingest_run("a", "1k", &[("copy", 256, &[1.0, 2.0])]),
            ingest_run("b", "1k", &[("copy", 256, &[1.0, 2.0, 3.0])]),
        ),
        (
            growth_run("a", "1%", &[("snapshot", 100, &[0.1, 0.2, 0.3], 0.01)]),
            growth_run("b", "1%", &[("snapshot", 100, &[0.1], 0.01)]),
        ),
    ];
    for (a, b) in &pairs {
        let c = history::compare(a, b).unwrap();
        schema_check(&serde_json::to_value(&c).unwrap());
    }
}

/// Two real runs of the same tiny spec on the sandbox, recorded by `pglab run` and compared
/// by `pglab history compare`: like with like, so every matched setting gets a verdict from
/// the vocabulary other than `not comparable` (which of them depends on the host's noise),
/// from as many trials as the runs made.
#[test]
fn real_runs_of_the_same_spec_compare_like_with_like() {
    let lab = common::lab();
    let db = format!(
        "host={} port={} user=pglab dbname=pglab",
        lab.sandbox.root.display(),
        lab.port
    );
    let history = lab.paths.data_dir.join("history.jsonl");
    let specs: [(&str, &[&str], usize); 3] = [
        (
            "index-build",
            &[
                "--rows", "5k", "--order", "sorted", "--mwm", "64MB", "--repeat", "5", "--writes",
                "lab",
            ],
            5,
        ),
        (
            "ingest",
            &[
                "--rows", "200", "--method", "copy", "--batch", "100", "--repeat", "3", "--writes",
                "lab",
            ],
            1,
        ),
        (
            "growth",
            &[
                "--units", "100", "--steps", "0,10", "--design", "ranges", "--repeat", "3",
                "--writes", "lab",
            ],
            3,
        ),
    ];
    for (experiment, args, least) in specs {
        for _ in 0..2 {
            let out = lab
                .command()
                .args(["--db", &db, "run", experiment, "--yes", "--format", "json"])
                .args(args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{experiment}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let (runs, _) = history::read(&history);
        let n = runs.len();
        assert!(n >= 2);
        let c = history::compare(&runs[n - 2], &runs[n - 1]).unwrap();
        assert_eq!(c.experiment.as_str(), experiment);
        assert!(
            c.not_comparable.is_empty(),
            "{experiment}: {:?}",
            c.not_comparable
        );
        assert!(c.counts.matched() >= 1 && c.counts.unmatched == 0, "{c:#?}");
        for s in &c.settings {
            let v = s.verdict.expect("both runs measured every setting");
            assert_ne!(v, Verdict::NotComparable, "{s:?}");
            let (b, k) = (s.baseline.unwrap(), s.candidate.unwrap());
            if s.metric != "read seconds" {
                assert!(b.n >= least && k.n >= least, "{experiment}: {s:?}");
            }
            if b.n < 3 || k.n < 3 {
                assert_eq!(v, Verdict::TooFewTrials, "{s:?}");
            }
        }
        let out = lab
            .command()
            .args(["history", "compare", "last~1", "last", "--format", "json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        schema_check(&json);
        assert_eq!(json["experiment"], experiment);
    }
}

/// `history list` for scripts: one record per run in JSON and CSV, with the same fields.
#[test]
fn history_list_speaks_json_and_csv() {
    let dir = common::temp_dir("list-formats");
    let history = dir.join("data").join("history.jsonl");
    history::append(&history, &example::cybertec_10m("20260301T100000Z-aaaa")).unwrap();
    history::append(&history, &example::cybertec_10m("20260302T100000Z-bbbb")).unwrap();
    let run = |format: &str| {
        let o = std::process::Command::new(common::TestLab::bin())
            .env("PGLAB_DATA_DIR", dir.join("data"))
            .env("PGLAB_CONFIG_DIR", dir.join("config"))
            .args(["history", "list", "--format", format])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["run_id"], "20260302T100000Z-bbbb");
    assert_eq!(rows[0]["experiment"], "index-build");
    assert!(rows[0]["seconds"].is_number());
    let csv = run("csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("id,started (UTC),experiment"), "{csv}");
    assert!(lines[2].starts_with("20260302T100000Z-bbbb,"), "{csv}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Growth records that keep every read compare reads with a verdict, like writes.
#[test]
fn growth_reads_kept_one_by_one_get_a_verdict() {
    let with_reads = |id: &str, reads: &[f64]| {
        let mut r = growth_run(
            id,
            "1%",
            &[(
                "snapshot",
                100,
                &scaled(0.020, &NOISE),
                reads[reads.len() / 2],
            )],
        );
        let ReportBody::Growth(g) = &mut r.body else {
            unreachable!()
        };
        for s in g.steps.iter_mut().filter(|s| !s.projected) {
            s.read_repeats = reads.to_vec();
        }
        r
    };
    let base = with_reads("gr1", &scaled(0.004, &NOISE));
    let cand = with_reads("gr2", &scaled(0.008, &NOISE2));
    let c = history::compare(&base, &cand).unwrap();
    let read = c
        .settings
        .iter()
        .find(|s| s.setting.ends_with("read"))
        .unwrap();
    assert_eq!(read.verdict, Some(Verdict::Slower), "{read:?}");
    assert!(
        !c.notes
            .iter()
            .any(|n| n.contains("median of a step's reads"))
    );
}
