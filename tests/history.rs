//! The history: concurrent appends from two processes, torn and corrupt records, finding and
//! filtering runs, export round trips, no passwords, and comparisons of two runs.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use pglab::experiment::index_build::Order;
use pglab::experiment::{ExperimentKind, RunEvent, RunOptions, RunReport};
use pglab::history::compare::Judgement;
use pglab::history::{self, HistoryFilter};
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
                .args(["--exact", "history_writer_child", "--test-threads=1"])
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
    assert!(list.contains("random: 16MB fastest"), "{list}");

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
        history: Some(path.clone()),
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

#[test]
fn a_two_fold_difference_is_judged_so() {
    let base = example::index_build(
        "base",
        1_000_000,
        &[
            (Order::Random, 0, "16MB", &[11.6, 11.7, 11.5]),
            (Order::Random, 0, "1GB", &[13.0, 13.2, 13.1]),
        ],
    );
    let mut cand = example::index_build(
        "cand",
        1_000_000,
        &[
            (Order::Random, 0, "16MB", &[5.8, 5.85, 5.75]),
            (Order::Random, 0, "1GB", &[6.5, 6.6, 6.55]),
        ],
    );
    if let Some(s) = cand.server.as_mut() {
        s.settings.insert("shared_buffers".into(), "2GB".into());
    }
    cand.host.total_memory *= 2;
    let c = history::compare(&base, &cand).unwrap();
    assert_eq!((c.better, c.worse, c.same), (2, 0, 0), "{c:#?}");
    let p = &c.points[0];
    assert_eq!(p.key, "random · 0 workers · 16MB");
    assert!((p.ratio.unwrap() - 0.5).abs() < 1e-9);
    assert_eq!(p.judgement, Judgement::Better);
    assert!((p.factor(true).unwrap() - 2.0).abs() < 1e-9);
    assert!(
        c.verdict.starts_with("candidate faster on 2 of 2"),
        "{}",
        c.verdict
    );
    assert!(c.verdict.contains("2.00×"), "{}", c.verdict);
    // What differed around the runs is listed.
    assert!(
        c.server_differences
            .iter()
            .any(|d| d.name == "shared_buffers" && d.candidate.as_deref() == Some("2GB")),
        "{:?}",
        c.server_differences
    );
    assert!(c.host_differences.iter().any(|d| d.name == "total_memory"));
    // The other way round it is slower.
    let back = history::compare(&cand, &base).unwrap();
    assert_eq!(back.worse, 2);
    assert!(
        back.verdict.starts_with("candidate slower"),
        "{}",
        back.verdict
    );
    let text = pglab::report::comparison::render(&c, pglab::report::Format::Table);
    assert!(text.contains("shared_buffers") && text.contains("verdict: candidate faster"));
}

#[test]
fn a_difference_within_noise_is_judged_equal() {
    let base = example::index_build(
        "base",
        1_000_000,
        &[
            (Order::Sorted, 0, "64MB", &[10.0, 11.0, 10.5]),
            (Order::Sorted, 0, "256MB", &[9.0, 9.8, 9.4]),
        ],
    );
    let cand = example::index_build(
        "cand",
        1_000_000,
        &[
            (Order::Sorted, 0, "64MB", &[10.3, 10.9, 10.2]),
            (Order::Sorted, 0, "256MB", &[9.6, 9.7, 9.9]),
            (Order::Sorted, 0, "1GB", &[9.0, 9.1, 9.2]),
        ],
    );
    let c = history::compare(&base, &cand).unwrap();
    assert_eq!(
        (c.better, c.worse, c.same, c.unmatched),
        (0, 0, 2, 1),
        "{c:#?}"
    );
    assert!(
        c.verdict.starts_with("no difference beyond noise"),
        "{}",
        c.verdict
    );
    assert!(c.verdict.contains("only one of the runs"), "{}", c.verdict);
    assert!(c.server_differences.is_empty() && c.host_differences.is_empty());
    assert!(
        c.parameter_differences
            .iter()
            .any(|d| d.name.starts_with("mwm")),
        "{:?}",
        c.parameter_differences
    );
}
