//! A tune that reads the plans first, on a real sandbox: the facts read from a real
//! `EXPLAIN (ANALYZE, BUFFERS, SETTINGS)` (a sort and a hash that spill, JIT, parallel workers,
//! the settings), a planner-only value that changes no plan found by a plain `EXPLAIN` (and,
//! in a whole tune, not measured), and a tune's round that warms the cache once: a `SET`
//! between configurations pays no new warm-up, a restart does.

use crate::common;

use std::sync::Arc;

use pglab::experiment::query::QueryReport;
use pglab::experiment::query::kept_warm::{KeptWarm, WarmCount};
use pglab::experiment::{
    self, ExperimentKind, ExperimentSpec, ParamText, ReportBody, RunEvent, RunOptions, RunReport,
};
use pglab::server::Target;
use pglab::tune::plan_advice::{Verdict, advise};
use pglab::tune::plan_check;
use pglab::tune::plan_facts::{PlanFacts, SpillKind};

const SETUP: &str = "CREATE SCHEMA IF NOT EXISTS tp; SET search_path = tp;
DROP TABLE IF EXISTS tp_a, tp_b;
CREATE TABLE tp_a AS SELECT g AS id, g % 500 AS k, md5(g::text) AS pad FROM generate_series(1, 30000) g;
CREATE TABLE tp_b AS SELECT g AS id, md5((g * 3)::text) AS note FROM generate_series(1, 30000) g;
CREATE INDEX tp_a_id ON tp_a (id);
ANALYZE tp_a; ANALYZE tp_b;";

/// The tests share the sandbox (one restarts it): one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn client() -> tokio_postgres::Client {
    let c = common::lab().target().connect().await.expect("connect");
    c.batch_execute(SETUP).await.expect("setup");
    c
}

/// The JSON of `EXPLAIN (ANALYZE, BUFFERS, SETTINGS, FORMAT JSON) sql`.
async fn analyzed(c: &tokio_postgres::Client, sql: &str) -> serde_json::Value {
    let row = c
        .query_one(
            &format!("EXPLAIN (ANALYZE, BUFFERS, SETTINGS, FORMAT JSON) {sql}"),
            &[],
        )
        .await
        .expect("explain");
    let text: serde_json::Value = row.get(0);
    text
}

#[tokio::test]
async fn a_real_plan_is_read_into_spills_batches_jit_workers_and_settings() {
    let _serial = SERIAL.lock().await;
    let c = client().await;
    c.batch_execute(
        "SET work_mem = '64kB'; SET hash_mem_multiplier = 1;
         SET jit = on; SET jit_above_cost = 0; SET jit_inline_above_cost = 0; SET jit_optimize_above_cost = 0;
         SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
         SET max_parallel_workers_per_gather = 2",
    )
    .await
    .unwrap();
    let sort = analyzed(&c, "SELECT * FROM tp_a ORDER BY pad").await;
    let f = PlanFacts::read("sorted", &sort, 8192).expect("facts");
    let s = f
        .spills
        .iter()
        .find(|s| s.kind == SpillKind::Sort)
        .unwrap_or_else(|| panic!("a sort spilled: {f:?}"));
    assert!(s.disk_bytes > 64 * 1024, "{s:?}");
    assert_eq!(f.settings.get("work_mem").map(String::as_str), Some("64kB"));
    assert!(
        f.execution_ms > 0.0 && f.shared_hit + f.shared_read > 0,
        "{f:?}"
    );
    assert!(f.workers_planned >= 1, "workers planned: {f:?}");

    c.batch_execute("SET max_parallel_workers_per_gather = 0")
        .await
        .unwrap();
    let agg = analyzed(
        &c,
        "SELECT k % 7, sum(id * 2 + k), avg(length(pad) + id) FROM tp_a GROUP BY 1",
    )
    .await;
    let a = PlanFacts::read("agg", &agg, 8192).expect("facts");
    let jit: bool = c
        .query_one("SELECT pg_jit_available()", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        a.jit_ms > 0.0,
        jit,
        "JIT time read when JIT is available: {a:?}"
    );
    assert!(a.jit_share() > 0.0 || !jit, "{a:?}");
    let join = analyzed(
        &c,
        "SELECT count(*) FROM tp_a a JOIN tp_b b ON b.id = a.id WHERE b.note <> a.pad",
    )
    .await;
    let h = PlanFacts::read("joined", &join, 8192).expect("facts");
    let hash = h
        .spills
        .iter()
        .find(|s| s.kind == SpillKind::Hash)
        .unwrap_or_else(|| panic!("a hash in batches: {h:?}"));
    assert!(hash.batches > 1 && hash.memory_bytes > 0, "{hash:?}");
    // The advice sizes work_mem and hash_mem_multiplier to what spilled.
    let w = advise("work_mem", "64kB", std::slice::from_ref(&h));
    assert_eq!(w.verdict, Verdict::Try, "{w:?}");
    let m = advise("hash_mem_multiplier", "1", std::slice::from_ref(&h));
    assert_eq!(m.values, vec![format!("{}", hash.batches)], "{m:?}");
    assert!(h.sentence().contains("batches"), "{}", h.sentence());
}

#[tokio::test]
async fn a_planner_value_that_changes_no_plan_is_found_without_running_the_statement() {
    let _serial = SERIAL.lock().await;
    let c = client().await;
    let statements = vec![
        (
            "count_all".to_string(),
            "SELECT count(*) FROM tp_b".to_string(),
        ),
        (
            "one_row".to_string(),
            "SELECT pad FROM tp_a WHERE id = 42".to_string(),
        ),
    ];
    let values = ["1.1".to_string(), "8".to_string()];
    let rpc = plan_check::check(&c, &statements, "random_page_cost", &values)
        .await
        .unwrap();
    assert!(
        rpc.iter().all(|v| v.changed.is_empty()),
        "a scan of a table without an index and a lookup by its key keep their plans: {rpc:?}"
    );
    let off = ["off".to_string()];
    let seq = plan_check::check(&c, &statements, "enable_indexscan", &off)
        .await
        .unwrap();
    assert_eq!(seq[0].changed, vec!["one_row".to_string()], "{seq:?}");
    // Nothing ran: the rows are as the setup left them, and the session's value is its own.
    let rpc_now: String = c
        .query_one("SHOW random_page_cost", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(rpc_now, "4");
}

fn nap_spec(set: &str, kept: KeptWarm) -> ExperimentSpec {
    let p: ParamText = [
        (
            "sql",
            "-- name: nap\nSELECT pg_sleep(0.6), count(*) FROM tp.tp_b",
        ),
        ("set", set),
        ("repeat", "1"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut s = ExperimentKind::Query.parse_spec(&p).expect("valid spec");
    if let ExperimentSpec::Query(q) = &mut s {
        q.kept_warm = Some(kept);
    }
    s
}

async fn warm_count(target: Arc<Target>, spec: ExperimentSpec) -> (WarmCount, usize) {
    let opts = RunOptions {
        schema: "tp_warm".into(),
        sandbox: Some(common::lab().sandbox.clone()),
        ..RunOptions::default()
    };
    let mut h = experiment::spawn(target, spec, opts);
    let report: RunReport = loop {
        match h.events.recv().await.expect("a final event") {
            RunEvent::Finished(r) => break *r,
            RunEvent::Failed { error, .. } => panic!("{error}"),
            RunEvent::Cancelled(_) => panic!("cancelled"),
            _ => {}
        }
    };
    let restarts = report.whatif.as_ref().map_or(0, |w| w.restarts.len());
    let ReportBody::Query(q) = &report.body else {
        panic!("a query report")
    };
    let q: &QueryReport = q;
    (q.warm, restarts)
}

#[tokio::test]
async fn a_set_pays_no_warm_up_and_a_restart_does() {
    let _serial = SERIAL.lock().await;
    let _c = client().await;
    let target = common::lab().target();
    // Session settings only, cold at the start: the first configuration warms up, the second
    // (a SET away) does not, its statement found slow by the first warm-up.
    let cold = KeptWarm::default();
    let (w, r) = warm_count(target.clone(), nap_spec("work_mem=4MB,8MB", cold)).await;
    assert_eq!((w.warmups, w.skipped, r), (1, 1, 0), "{w:?}");
    // Warm at the start, the statement known slow: no warm-up at all.
    let warm = KeptWarm {
        warm_at_start: true,
        slow: vec!["nap".into()],
    };
    let (w, _) = warm_count(target.clone(), nap_spec("work_mem=4MB,8MB", warm.clone())).await;
    assert_eq!((w.warmups, w.skipped), (0, 2), "{w:?}");
    // A setting that restarts the server empties the cache: each configuration after a
    // restart warms up again.
    let (w, r) = warm_count(target, nap_spec("shared_buffers=24MB,40MB", warm)).await;
    // Every entry after a restart warms up (a configuration entered for its trials after the
    // others' warm-ups restarts again), none skips; the run's last restart puts the server's
    // own value back and enters nothing.
    assert!(r >= 2, "restarts: {r}");
    assert!(
        w.warmups >= 2 && w.warmups < r as u32,
        "{w:?}, {r} restarts"
    );
    assert_eq!(w.skipped, 0, "{w:?}");
}

#[tokio::test]
async fn a_tune_reads_the_plans_and_does_not_measure_a_value_that_changes_no_plan() {
    let _serial = SERIAL.lock().await;
    let dir = common::temp_dir("tune-plans");
    std::fs::write(
        dir.join("setup.sql"),
        "CREATE TABLE tp_w AS SELECT g AS id, g % 10 AS k FROM generate_series(1, 20000) g;",
    )
    .unwrap();
    std::fs::write(
        dir.join("w.sql"),
        "-- name: count_all\nSELECT k, count(*) FROM tp_w GROUP BY k;\n",
    )
    .unwrap();
    let out = tokio::task::spawn_blocking(move || {
        let o = common::lab()
            .command()
            .current_dir(&dir)
            .arg("--keep-sandbox")
            .args([
                "tune",
                "--workload",
                "w.sql",
                "--param",
                "setup=@setup.sql",
                "--settings",
                "random_page_cost,jit",
                "--budget",
                "90s",
                "--out",
                "t.sql",
            ])
            .output()
            .unwrap();
        (
            o,
            std::fs::read_to_string(dir.join("t.md")).unwrap_or_default(),
        )
    })
    .await
    .unwrap();
    let (o, md) = out;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(md.contains("## Plans"), "{md}");
    assert!(md.contains("- count_all: "), "what the plan showed: {md}");
    let row = |name: &str| {
        md.lines()
            .find(|l| l.starts_with(&format!("| {name} |")))
            .unwrap_or_else(|| panic!("no row for {name}: {md}"))
            .to_string()
    };
    let rpc = row("random_page_cost");
    assert!(
        rpc.starts_with("| random_page_cost | no |") && rpc.contains("no plan"),
        "{rpc}"
    );
    // JIT takes no share of this plan, but jit was named: measured, the reason said.
    let jit = row("jit");
    assert!(
        jit.starts_with("| jit | yes |") && jit.contains("named by --settings"),
        "{jit}"
    );
    // One setting left: raced, not screened; random_page_cost never measured.
    assert!(!md.contains("## Screening"), "{md}");
    assert!(!md.contains("| random_page_cost="), "{md}");
    assert!(md.contains("Warm-ups: "), "{md}");
}
