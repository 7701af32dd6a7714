//! The one gate every road to a run passes, against a second real cluster standing in for
//! production: the same refusals through the headless binary and through the TUI's
//! preparation path (and, for one, the TUI itself in tmux), in the same words, each leaving
//! the WAL position, the catalog and the server log as they were. And what the gate lets
//! through: generated tables with `--writes lab` (gone when the run ends, the lab schema too),
//! a VOLATILE function the user vouches for, a HypoPG what-if advising from the planner's
//! estimate.

use crate::common;
use crate::common::source;
use crate::common::tmux;

use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use pglab::experiment::{ExperimentKind, ParamText};
use pglab::server::{Target, conninfo};
use pglab::tui::runtime::prepare::{Road, verdict};

/// One test at a time on the cluster: each reads the WAL position around what it does.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The source cluster with what the cases need: a table, HypoPG, a function that reloads the
/// server's configuration and a SECURITY DEFINER one that writes.
async fn cluster() -> &'static source::SourceCluster {
    static SET: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    SET.get_or_init(|| async {
        source::shared()
            .admin()
            .await
            .batch_execute(
                "CREATE TABLE gate_t (id int, a int, pad text);
                 INSERT INTO gate_t SELECT g, g % 5000, repeat('x', 40) FROM generate_series(1, 20000) g;
                 ANALYZE gate_t;
                 CREATE TABLE gate_log (x int);
                 CREATE FUNCTION public.quiet_reload() RETURNS bool LANGUAGE sql VOLATILE AS 'SELECT pg_reload_conf()';
                 CREATE FUNCTION public.note_it() RETURNS int LANGUAGE plpgsql VOLATILE SECURITY DEFINER
                   AS $$ BEGIN INSERT INTO gate_log VALUES (1); RETURN 1; END $$;
                 CREATE VIEW gate_v AS SELECT id, public.quiet_reload() AS r FROM gate_t;
                 CREATE EXTENSION hypopg;",
            )
            .await
            .unwrap();
    })
    .await;
    source::shared()
}

fn params(pairs: &[(&str, &str)]) -> ParamText {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `pglab --db <source> run KIND --no-history ARGS`, with a data directory of its own.
fn cli(c: &source::SourceCluster, kind: &str, args: &[&str]) -> Output {
    let dir = common::temp_dir("gate-cli");
    std::process::Command::new(env!("CARGO_BIN_EXE_pglab"))
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .env_remove("PGDATABASE")
        .env_remove("PGUSER")
        .args(["--db", &c.conninfo("postgres"), "run", kind, "--no-history"])
        .args(args)
        .output()
        .unwrap()
}

/// The TUI's preparation of the same run: its refusal, None when it would start.
async fn tui(
    c: &source::SourceCluster,
    kind: ExperimentKind,
    pairs: &[(&str, &str)],
) -> Option<String> {
    let p = conninfo::resolve(Some(&c.conninfo("postgres")), &conninfo::ProcessEnv).unwrap();
    let road = Road {
        target: Arc::new(Target::new(p, false).unwrap()),
        sandbox: None,
        schema: "pglab".into(),
        local_data_dir: None,
    };
    let spec = kind.parse_spec(&params(pairs)).unwrap();
    verdict(&road, &spec, None).await.refuse
}

/// What the server is now: its WAL insert position, its relations and schemas, the rows of
/// `gate_log`, and how many configuration reloads its log shows.
async fn state(c: &source::SourceCluster) -> (String, i64, i64, i64, usize) {
    let a = c.admin().await;
    let r = a
        .query_one(
            "SELECT pg_current_wal_insert_lsn()::text, (SELECT count(*) FROM pg_class),
                    (SELECT count(*) FROM pg_namespace), (SELECT count(*) FROM gate_log)",
            &[],
        )
        .await
        .unwrap();
    (r.get(0), r.get(1), r.get(2), r.get(3), sighups(c))
}

fn sighups(c: &source::SourceCluster) -> usize {
    std::fs::read_to_string(c.dir.join("log"))
        .unwrap_or_default()
        .matches("received SIGHUP")
        .count()
}

/// Each case: the experiment, the flags, the same as parameters, and words its refusal has.
struct Case {
    kind: ExperimentKind,
    flags: &'static [&'static str],
    pairs: &'static [(&'static str, &'static str)],
    says: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        kind: ExperimentKind::IndexBuild,
        flags: &[
            "--rows", "10k", "--repeat", "1", "--mwm", "4MB", "--order", "random",
        ],
        pairs: &[
            ("rows", "10k"),
            ("repeat", "1"),
            ("mwm", "4MB"),
            ("order", "random"),
        ],
        says: &[
            "index-build writes on this server, which pglab did not start: schema pglab (created, dropped at the end); table pglab.ib_int4_random_10000_s42_<run id> (10,000 rows each; each trial builds one index on it and drops it); the largest table about ",
            "of WAL; <run id> is the run's id, given when it starts; every table is dropped when the run ends; allow it with writes = lab (--writes lab",
        ],
    },
    Case {
        kind: ExperimentKind::Ingest,
        flags: &["--rows", "1000"],
        pairs: &[("rows", "1000")],
        says: &[
            "ingest writes on this server, which pglab did not start: schema pglab (created, dropped at the end); tables pglab.ingest_<run id>_t1 … pglab.ingest_<run id>_t",
            " (one table per trial, at most ",
            " trials, 1,000 rows each, each dropped after its trial); the largest table about ",
            "--writes lab",
        ],
    },
    Case {
        kind: ExperimentKind::Growth,
        flags: &["--units", "100", "--steps", "0,2"],
        pairs: &[("units", "100"), ("steps", "0,2")],
        says: &[
            "growth writes on this server, which pglab did not start: schema pglab (created, dropped at the end); tables pglab.growth_content_<run id>, pglab.growth_",
            "(the content table and one association table per design, growing to about ",
            "--writes lab",
        ],
    },
    Case {
        kind: ExperimentKind::Query,
        flags: &["--sql", "SELECT public.quiet_reload()", "--repeat", "1"],
        pairs: &[("sql", "SELECT public.quiet_reload()"), ("repeat", "1")],
        says: &[
            "calls public.quiet_reload(), a VOLATILE function",
            "pass --allow-function public.quiet_reload",
        ],
    },
    Case {
        kind: ExperimentKind::Query,
        flags: &["--sql", "SELECT count(*) FROM gate_v", "--repeat", "1"],
        pairs: &[("sql", "SELECT count(*) FROM gate_v"), ("repeat", "1")],
        says: &["reads view gate_v, which calls public.quiet_reload(), a VOLATILE function"],
    },
    Case {
        kind: ExperimentKind::Query,
        flags: &[
            "--sql",
            "SELECT count(*) FROM gate_t",
            "--setup",
            "CREATE TEMP TABLE s AS SELECT public.note_it() AS n",
            "--writes",
            "rollback",
            "--repeat",
            "1",
        ],
        pairs: &[
            ("sql", "SELECT count(*) FROM gate_t"),
            (
                "setup",
                "CREATE TEMP TABLE s AS SELECT public.note_it() AS n",
            ),
            ("writes", "rollback"),
            ("repeat", "1"),
        ],
        says: &["setup: calls public.note_it(), a VOLATILE function, SECURITY DEFINER"],
    },
    Case {
        kind: ExperimentKind::Query,
        flags: &["--sql", "SELECT 1", "--set", "shared_buffers=256MB"],
        pairs: &[("sql", "SELECT 1"), ("set", "shared_buffers=256MB")],
        says: &["--set: "],
    },
];

#[tokio::test]
async fn both_front_ends_refuse_the_same_runs_in_the_same_words_and_write_nothing() {
    let c = cluster().await;
    let _turn = TURN.lock().await;
    let before = state(c).await;
    for case in CASES {
        let out = cli(c, case.kind.as_str(), case.flags);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{} {:?}: {err}",
            case.kind,
            case.flags
        );
        let said = tui(c, case.kind, case.pairs)
            .await
            .unwrap_or_else(|| panic!("the TUI would start {} {:?}", case.kind, case.pairs));
        for words in case.says {
            assert!(said.contains(words), "TUI: {words}\n{said}");
        }
        assert!(
            err.lines().any(|l| l == format!("pglab: {said}")),
            "the command line said\n{err}\nthe TUI\n{said}"
        );
    }
    assert_eq!(state(c).await, before, "a refusal changed the server");
}

#[tokio::test]
async fn the_tui_refuses_a_generated_index_build_on_production_in_the_gates_words() {
    if tmux::tmux_missing() {
        return;
    }
    let c = cluster().await;
    let _turn = TURN.lock().await;
    let dir = common::temp_dir("gate-tui");
    let before = state(c).await;
    let script = format!(
        "env -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER -u PGSERVICE PGLAB_DATA_DIR={} PGLAB_CONFIG_DIR={} {} --db '{}'; echo \"EXIT=$?\"; sleep 600",
        tmux::shell_quote(&dir.join("data")),
        tmux::shell_quote(&dir.join("config")),
        tmux::shell_quote(Path::new(env!("CARGO_BIN_EXE_pglab"))),
        c.conninfo("postgres"),
    );
    let t = tmux::Tmux::start("gate", 200, 40, &script);
    let wait = Duration::from_secs(60);
    t.wait_for("the target pane", wait, |s| s.contains("conns"));
    t.keys(&["s"]);
    // The TUI's default index-build (1M rows, random and sorted): the gate's sentence, as
    // the command line says it for the same parameters; the screen shows its start.
    let said = tui(c, ExperimentKind::IndexBuild, &[]).await.unwrap();
    let head = format!("not started: {}", said.chars().take(50).collect::<String>());
    t.wait_for(&head, wait, |s| s.contains(&head));
    let out = cli(c, "index-build", &[]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&said),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.keys(&["q"]);
    t.wait_for("pglab to exit", wait, |s| s.contains("EXIT=0"));
    assert_eq!(
        state(c).await,
        before,
        "the TUI's refusal changed the server"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The relations and schemas a run left on the cluster.
async fn lab_objects(c: &source::SourceCluster) -> Vec<String> {
    c.admin()
        .await
        .query(
            "SELECT n.nspname || '.' || coalesce(cl.relname, '') FROM pg_namespace n
               LEFT JOIN pg_class cl ON cl.relnamespace = n.oid WHERE n.nspname = 'pglab'",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[tokio::test]
async fn with_writes_lab_a_generated_index_build_runs_and_leaves_nothing() {
    let c = cluster().await;
    let _turn = TURN.lock().await;
    let out = cli(
        c,
        "index-build",
        &[
            "--rows", "10k", "--repeat", "1", "--mwm", "4MB", "--order", "random", "--writes",
            "lab",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("this run writes on this server (writes = lab): schema pglab (created, dropped at the end); table pglab.ib_int4_random_10000_s42_<run id> (10,000 rows each;"),
        "{err}"
    );
    assert!(!err.contains("kept for reuse"), "{err}");
    assert_eq!(lab_objects(c).await, Vec::<String>::new(), "{err}");
}

#[tokio::test]
async fn a_volatile_function_the_user_vouches_for_runs() {
    let c = cluster().await;
    let _turn = TURN.lock().await;
    let reloads = sighups(c);
    let out = cli(
        c,
        "query",
        &[
            "--sql",
            "SELECT public.quiet_reload()",
            "--repeat",
            "1",
            "--allow-function",
            "public.quiet_reload",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // It ran: the server reloaded its configuration (the log says so within a moment).
    let mut waited = 0;
    while sighups(c) == reloads && waited < 50 {
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
    }
    assert!(sighups(c) > reloads, "{err}");
}

#[tokio::test]
async fn a_hypopg_what_if_advises_from_the_planners_estimate_with_the_plans_nodes() {
    let c = cluster().await;
    let _turn = TURN.lock().await;
    let before = state(c).await;
    let out = cli(
        c,
        "query",
        &[
            "--sql",
            "SELECT * FROM gate_t WHERE a = 7",
            "--index",
            "CREATE INDEX ON gate_t (a)",
            "--repeat",
            "1",
        ],
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        !text.contains("one combination ran, nothing to compare"),
        "{text}"
    );
    assert!(
        text.contains("by the planner's estimate (HypoPG; not measured)"),
        "{text}"
    );
    assert!(text.contains("build it"), "{text}");
    assert!(text.contains("CREATE INDEX ON gate_t (a);"), "{text}");
    // The plan named by its nodes: a bitmap plan is not called an index scan.
    let node = [
        "Bitmap Index Scan on <",
        "Index Scan using <",
        "Index Only Scan using <",
    ];
    assert!(node.iter().any(|n| text.contains(n)), "{text}");
    assert!(!text.contains("uses an index scan"), "{text}");
    let after = state(c).await;
    assert_eq!(after.0, before.0, "the what-if wrote WAL");
}
