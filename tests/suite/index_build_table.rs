//! index-build on an existing table (`--table`, `--column`, `--sample`): on the sandbox it
//! builds on the imported table itself and says which data it measured; sampled, it builds on
//! copies at three sizes and projects to the whole table, saying so; on another server it
//! builds on copies in the lab schema and never touches the user's table.

use crate::common;
use crate::common::source;

use std::sync::Arc;
use std::time::Duration;

use pglab::experiment::index_build::{IndexBuildReport, Order};
use pglab::experiment::{self, ExperimentKind, ParamText, ReportBody, RunEvent, RunOptions};
use pglab::import::{self, ImportEvent, ImportOptions, ImportSpec, Sample, TableName};
use pglab::server::{Target, conninfo};

fn params(pairs: &[(&str, &str)]) -> ParamText {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

async fn run(target: Arc<Target>, pairs: &[(&str, &str)], sandbox: bool) -> IndexBuildReport {
    let spec = ExperimentKind::IndexBuild
        .parse_spec(&params(pairs))
        .unwrap();
    let lab = common::lab();
    let mut h = experiment::spawn(
        target,
        spec,
        RunOptions {
            schema: "ibt_lab".into(),
            sandbox: sandbox.then(|| lab.sandbox.clone()),
            ..RunOptions::default()
        },
    );
    loop {
        match tokio::time::timeout(Duration::from_secs(300), h.events.recv())
            .await
            .unwrap()
            .unwrap()
        {
            RunEvent::Finished(r) => match r.body {
                ReportBody::IndexBuild(b) => return *b,
                _ => panic!("not index-build"),
            },
            RunEvent::Failed { error, .. } => panic!("{error}"),
            _ => {}
        }
    }
}

static IMPORTED: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();

/// `ibt.orders` on the source, imported into the sandbox (once for the tests of this file).
async fn imported() -> &'static source::SourceCluster {
    IMPORTED.get_or_init(set_up).await;
    source::shared()
}

async fn set_up() {
    let src = source::shared();
    src.admin()
        .await
        .batch_execute(
            "CREATE SCHEMA ibt;
             CREATE TABLE ibt.orders (id int PRIMARY KEY, customer_id int, note text);
             INSERT INTO ibt.orders SELECT g, (g * 7919) % 5000, md5(g::text) FROM generate_series(1, 60000) g;
             CREATE INDEX orders_customer ON ibt.orders (customer_id);
             ANALYZE ibt.orders;",
        )
        .await
        .unwrap();
    let params = conninfo::resolve(Some(&src.conninfo("postgres")), &conninfo::ProcessEnv).unwrap();
    let mut h = import::spawn(
        Arc::new(Target::new(params, false).unwrap()),
        common::lab().target(),
        ImportSpec {
            tables: vec![TableName::new("ibt", "orders")],
            sample: Sample::All,
            seed: 42,
            indexes: true,
        },
        ImportOptions::default(),
    );
    loop {
        match h.events.recv().await.unwrap() {
            ImportEvent::Finished(_) => break,
            ImportEvent::Failed { error, .. } => panic!("{error}"),
            ImportEvent::Cancelled => panic!("cancelled"),
            _ => {}
        }
    }
}

async fn indexes(c: &tokio_postgres::Client, table: &str) -> Vec<String> {
    let rows = c
        .query(
            "SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = $1::text::regclass ORDER BY 1",
            &[&table],
        )
        .await
        .unwrap();
    rows.iter().map(|r| r.get(0)).collect()
}

#[tokio::test]
async fn on_the_sandbox_it_builds_on_the_table_and_says_which_data() {
    imported().await;
    let lab = common::lab();
    let sb = lab.target().connect().await.unwrap();
    let before = indexes(&sb, "ibt.orders").await;
    let r = run(
        lab.target(),
        &[
            ("table", "ibt.orders"),
            ("column", "customer_id"),
            ("mwm", "1MB,64MB"),
            ("repeat", "2"),
        ],
        true,
    )
    .await;
    let own = r.own.as_ref().expect("the table is recorded");
    assert!(own.on_sandbox && own.rows_counted);
    assert_eq!(own.rows, Some(60000));
    assert_eq!(own.built_on, "the table itself");
    let rec = own
        .imported
        .as_ref()
        .expect("the import record travels with the run");
    assert_eq!(rec.rows, 60000);
    assert!(rec.source.target.starts_with("postgres@"));
    assert_eq!(r.datasets.len(), 1);
    assert_eq!(r.datasets[0].order, Order::Table);
    assert_eq!(r.trials.len(), 4);
    assert!(
        r.trials
            .iter()
            .all(|t| t.rows == 60000 && t.key_type == "integer")
    );
    assert!(r.trials.iter().all(|t| t.index_bytes > 100_000));
    assert_eq!(
        r.params.to_text().get("table").map(String::as_str),
        Some("ibt.orders")
    );
    assert!(!r.params.to_text().contains_key("rows"));
    assert_eq!(
        indexes(&sb, "ibt.orders").await,
        before,
        "the trial's index is gone"
    );
}

#[tokio::test]
async fn a_sample_projects_to_the_whole_table_and_says_so() {
    imported().await;
    let lab = common::lab();
    let r = run(
        lab.target(),
        &[
            ("table", "ibt.orders"),
            ("column", "customer_id,id"),
            ("sample", "40%"),
            ("mwm", "64MB"),
            ("repeat", "3"),
        ],
        true,
    )
    .await;
    let orders: Vec<Order> = r.datasets.iter().map(|d| d.order).collect();
    assert_eq!(
        orders,
        [
            Order::Copy(100_000),
            Order::Copy(200_000),
            Order::Copy(400_000)
        ]
    );
    // Nested BERNOULLI samples of 60k rows: about 6k, 12k, 24k.
    let rows: Vec<u64> = r.datasets.iter().map(|d| d.rows).collect();
    assert!(rows.windows(2).all(|w| w[0] < w[1]), "{rows:?}");
    assert!((20_000..28_000).contains(&rows[2]), "{rows:?}");
    let own = r.own.as_ref().unwrap();
    let lines: Vec<String> = r
        .summary
        .findings
        .iter()
        .filter(|f| f.contains("whole table"))
        .cloned()
        .collect();
    assert_eq!(lines.len(), 1, "{:?}", r.summary.findings);
    // Either a projection that says it is one, or why there is none: never a bare figure.
    match own.projections.first() {
        Some(p) => {
            let p = &p.projection;
            assert!(p.low <= p.value && p.value <= p.high, "{p:?}");
            assert_eq!((p.to_n, p.sizes, p.trials), (60000.0, 3, 9));
            assert!(
                lines[0].contains("projected for the whole table (60k rows"),
                "{}",
                lines[0]
            );
            assert!(lines[0].contains("prediction interval") && lines[0].contains("n·log₂n"));
        }
        None => assert!(lines[0].contains("no projection"), "{}", lines[0]),
    }
    let report = pglab::experiment::RunReport {
        body: ReportBody::IndexBuild(Box::new(r.clone())),
        ..pglab::report::example::cybertec_10m("ibt")
    };
    let text = pglab::report::render(&report, pglab::report::Format::Table);
    // The first line of every form says it is a projection from a 40% sample of the table.
    let what = "projection from a 40% sample of ibt.orders (customer_id, id), 60k rows";
    assert!(
        r.headline.starts_with(&format!(
            "{what}: built on samples of 10%, 20%, 40%, maintenance_work_mem scaled"
        )),
        "{}",
        r.headline
    );
    let first = |s: &str| s.lines().next().unwrap_or_default().to_string();
    assert!(first(&text).contains(what), "{text}");
    let md = pglab::report::render(&report, pglab::report::Format::Md);
    assert!(
        first(&md).starts_with("# ") && first(&md).contains(what),
        "{md}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&pglab::report::render(&report, pglab::report::Format::Json)).unwrap();
    assert!(
        json["headline"]
            .as_str()
            .is_some_and(|h| h.starts_with(what)),
        "{}",
        json["headline"]
    );
    let svg = pglab::report::chart::svg(&report).unwrap();
    assert!(svg.contains(what), "the chart's title names the sample");
    assert!(!svg.contains("int4 rows"), "no generated rows in the title");
    // Every build on a sample ran at 64MB × its fraction: 6554kB, 13107kB, 26214kB.
    for t in &r.trials {
        let f = t.order.fraction().unwrap();
        let want = ((64.0 * 1024.0 * f).round() as u64) * 1024;
        assert_eq!(t.built_at_bytes, Some(want), "{t:?}");
    }
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("data")
            && l.contains("ibt.orders imported from postgres@")),
        "the report says which data it measured:\n{text}"
    );
    if !own.projections.is_empty() {
        assert!(
            text.contains("(fitted to the samples, not measured)"),
            "{text}"
        );
        assert!(text.contains("(projected)"), "{text}");
    }
    // The copies were the run's own: none is left in the lab schema.
    let sb = lab.target().connect().await.unwrap();
    let left: i64 = sb
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'ibt_lab'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(left, 0);
}

#[tokio::test]
async fn on_another_server_it_builds_on_a_copy_never_on_the_table() {
    let src = imported().await;
    let admin = src.admin().await;
    let before = indexes(&admin, "ibt.orders").await;
    let params = conninfo::resolve(Some(&src.conninfo("postgres")), &conninfo::ProcessEnv).unwrap();
    let target = Arc::new(Target::new(params, false).unwrap());
    let watcher = target.connect().await.unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    // Watch the source's pg_stat_progress_create_index while the run builds: every build is
    // on a copy in the lab schema.
    let watch = tokio::spawn(async move {
        loop {
            let rows = watcher
                .query(
                    "SELECT c.relnamespace::regnamespace::text FROM pg_stat_progress_create_index p JOIN pg_class c ON c.oid = p.relid",
                    &[],
                )
                .await
                .unwrap_or_default();
            for r in rows {
                let _ = tx.send(r.get::<_, String>(0));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let r = run(
        target,
        &[
            ("table", "ibt.orders"),
            ("column", "note"),
            ("mwm", "1MB"),
            ("repeat", "2"),
            ("writes", "lab"),
        ],
        false,
    )
    .await;
    watch.abort();
    while let Ok(schema) = rx.try_recv() {
        assert_eq!(schema, "ibt_lab", "a build ran outside the lab schema");
    }
    let own = r.own.as_ref().unwrap();
    assert!(!own.on_sandbox && own.imported.is_none());
    assert_eq!(r.datasets.len(), 1);
    assert_eq!(r.datasets[0].order, Order::Copy(1_000_000));
    assert_eq!(r.datasets[0].rows, 60000);
    assert_eq!(
        r.datasets[0].schema, None,
        "the copy lives in the lab schema"
    );
    assert_eq!(
        indexes(&admin, "ibt.orders").await,
        before,
        "the user's table is untouched"
    );
    let left: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'ibt_lab'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "the copy went with the run");
}

#[test]
fn an_unknown_table_or_column_is_one_sentence_with_exit_2() {
    let lab = common::lab();
    let db = format!(
        "host={} port={} user=pglab dbname=pglab",
        lab.sandbox.root.display(),
        lab.port
    );
    for (args, needle) in [
        (
            vec!["--table", "ibt.nope", "--column", "id"],
            "--table: there is no table ibt.nope",
        ),
        (vec!["--column", "id"], "a column needs a table"),
        (
            vec!["--table", "pg_catalog.pg_class", "--column", "nope"],
            "--column: pg_catalog.pg_class has no column nope",
        ),
    ] {
        let out = lab
            .command()
            .args(["--db", &db, "run", "index-build", "--no-history"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[tokio::test]
async fn an_index_an_interrupted_run_left_on_the_table_is_dropped() {
    let lab = common::lab();
    let sb = lab.target().connect().await.unwrap();
    // A table of the sandbox's own, and the index a pglab killed between two builds leaves.
    sb.batch_execute(
        "CREATE SCHEMA stale;
         CREATE TABLE stale.t AS SELECT g AS id FROM generate_series(1, 5000) g;
         CREATE INDEX pglab_ib_20200101t000000z_dead ON stale.t (id);
         CREATE INDEX kept_by_the_user ON stale.t (id);",
    )
    .await
    .unwrap();
    let spec = ExperimentKind::IndexBuild
        .parse_spec(&params(&[
            ("table", "stale.t"),
            ("column", "id"),
            ("mwm", "64MB"),
            ("repeat", "1"),
        ]))
        .unwrap();
    let mut h = experiment::spawn(
        lab.target(),
        spec,
        RunOptions {
            schema: "ibt_lab".into(),
            sandbox: Some(lab.sandbox.clone()),
            ..RunOptions::default()
        },
    );
    let notes = loop {
        match h.events.recv().await.unwrap() {
            RunEvent::Finished(r) => break r.notes,
            RunEvent::Failed { error, .. } => panic!("{error}"),
            _ => {}
        }
    };
    assert!(
        notes
            .iter()
            .any(|n| n.contains("dropped index pglab_ib_20200101t000000z_dead")),
        "{notes:?}"
    );
    assert_eq!(indexes(&sb, "stale.t").await, ["stale.kept_by_the_user"]);
}
