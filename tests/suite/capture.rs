//! `pglab capture` against a real cluster with `pg_stat_statements` loaded, standing in for
//! production: pgbench runs a mix of three parameterised statements in known proportions,
//! then capture finds the three with weights close to the mix, fills their parameters (from
//! column statistics when no session is running, from `pg_stat_activity` while pgbench runs),
//! writes nothing on the source (its WAL position unchanged) and writes a file the query
//! experiment's readers take as it is. Without the extension in a database, capture says how
//! to enable it and works from the samples alone.

use crate::common;
use crate::common::source;
use crate::common::tmux;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use pglab::experiment::query::QuerySpec;
use pglab::experiment::query::script::Script;
use pglab::experiment::query::sqltext;
use source::SourceCluster;

/// The mix pgbench runs: script, weight.
const MIX: [(&str, &str, u64); 3] = [
    (
        "a.sql",
        "\\set aid random(1, 5000)\nSELECT abalance FROM acc WHERE aid = :aid;\n",
        5,
    ),
    (
        "b.sql",
        "\\set lo random(1, 4950)\n\\set hi :lo + 50\nSELECT sum(abalance) FROM acc WHERE aid BETWEEN :lo AND :hi;\n",
        3,
    ),
    (
        "c.sql",
        "\\set aid random(1, 5000)\n\\set d random(-50, 50)\nINSERT INTO hist (aid, delta) VALUES (:aid, :d);\n",
        2,
    ),
];

static CLUSTER: OnceLock<SourceCluster> = OnceLock::new();
/// Tests that run pgbench or watch the WAL take turns.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

extern "C" fn stop_cluster() {
    if let Some(c) = CLUSTER.get() {
        c.stop();
    }
}

/// The cluster with pg_stat_statements loaded, its tables made and the mix run once.
fn cluster() -> &'static SourceCluster {
    CLUSTER.get_or_init(|| {
        let c = SourceCluster::start_with(
            &common::temp_dir("capture"),
            "shared_preload_libraries = 'pg_stat_statements'",
        );
        unsafe {
            libc::atexit(stop_cluster);
        }
        psql(
            &c,
            "postgres",
            "CREATE EXTENSION pg_stat_statements;
             CREATE TABLE acc (aid int PRIMARY KEY, bid int, abalance int);
             INSERT INTO acc SELECT g, g % 50, (g * 7) % 1000 FROM generate_series(1, 5000) g;
             CREATE TABLE hist (id bigserial, aid int, delta int);
             CREATE ROLE watcher LOGIN;
             GRANT pg_read_all_stats TO watcher;
             GRANT SELECT ON acc, hist TO watcher;",
        );
        psql(&c, "postgres", "CREATE DATABASE plain");
        psql(&c, "postgres", "SELECT pg_stat_statements_reset()");
        let mut p = pgbench(&c, &["-c", "2", "-t", "500"]);
        assert!(p.wait().unwrap().success(), "pgbench ran the mix");
        psql(&c, "postgres", "CREATE EXTENSION pg_walinspect");
        // Every table vacuumed, the catalogs too: a read that meets dead rows prunes their page
        // and logs it (PostgreSQL's on-access pruning, whoever reads), and CREATE EXTENSION
        // left dead rows in pg_proc and pg_attribute that capture's first queries would meet.
        // ANALYZE first: it replaces rows of pg_statistic, which the VACUUM after it removes.
        for db in ["postgres", "plain"] {
            psql(&c, db, "ANALYZE");
            psql(&c, db, "VACUUM");
        }
        c
    })
}

fn psql(c: &SourceCluster, db: &str, sql: &str) -> String {
    let out = c
        .tool("psql")
        .args(["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"])
        .arg("-h")
        .arg(&c.dir)
        .args([
            "-p",
            &c.port.to_string(),
            "-U",
            "postgres",
            "-d",
            db,
            "-c",
            sql,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// pgbench running the mix (`-f a.sql@5 …`) with `extra` (-t or -T) on database postgres.
fn pgbench(c: &SourceCluster, extra: &[&str]) -> Child {
    pgbench_on(c, "postgres", extra)
}

/// pgbench running the mix on database `db`.
fn pgbench_on(c: &SourceCluster, db: &str, extra: &[&str]) -> Child {
    let mut cmd = c.tool("pgbench");
    cmd.args(["-n", "-M", "simple"])
        .arg("-h")
        .arg(&c.dir)
        .args(["-p", &c.port.to_string(), "-U", "postgres"]);
    for (file, text, weight) in MIX {
        let path = c.dir.join(file);
        std::fs::write(&path, text).unwrap();
        cmd.arg("-f").arg(format!("{}@{weight}", path.display()));
    }
    cmd.args(extra)
        .arg(db)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// pgbench running the mix's reads (its first two scripts) on database `db`.
fn reads_on(c: &SourceCluster, db: &str, extra: &[&str]) -> Child {
    let mut cmd = c.tool("pgbench");
    cmd.args(["-n", "-M", "simple"])
        .arg("-h")
        .arg(&c.dir)
        .args(["-p", &c.port.to_string(), "-U", "postgres"]);
    for (file, text, weight) in &MIX[..2] {
        let path = c.dir.join(format!("reads-{file}"));
        std::fs::write(&path, text).unwrap();
        cmd.arg("-f").arg(format!("{}@{weight}", path.display()));
    }
    cmd.args(extra)
        .arg(db)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// `pglab capture` as `user` on database `db`; (exit code, stdout, stderr, the file).
fn capture(
    c: &SourceCluster,
    user: &str,
    db: &str,
    args: &[&str],
) -> (i32, String, String, String) {
    let out_file = common::temp_dir("capture-out").join("workload.sql");
    let conninfo = format!(
        "host={} port={} user={user} dbname={db}",
        c.dir.display(),
        c.port
    );
    let out = Command::new(env!("CARGO_BIN_EXE_pglab"))
        .env("PGLAB_DATA_DIR", common::temp_dir("capture-data"))
        .env("PGLAB_CONFIG_DIR", common::temp_dir("capture-config"))
        .args(["capture", "--db", &conninfo, "--out"])
        .arg(&out_file)
        .args(args)
        .output()
        .unwrap();
    let file = std::fs::read_to_string(&out_file).unwrap_or_default();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
        file,
    )
}

fn write_file(text: &str) -> PathBuf {
    let p = common::temp_dir("capture-file").join("workload.sql");
    std::fs::write(&p, text).unwrap();
    p
}

/// The statements of a captured file with their weights, by the first word of their SQL.
fn weights(text: &str) -> BTreeMap<String, u64> {
    sqltext::split(text)
        .unwrap()
        .into_iter()
        .map(|s| {
            let verb = s.sql.split_whitespace().next().unwrap().to_string();
            let table = if s.sql.contains("sum(") {
                "range"
            } else {
                "one"
            };
            (format!("{verb} {table}"), s.weight.unwrap())
        })
        .collect()
}

fn query_spec(field: &str, path: &Path) -> QuerySpec {
    let mut p = pglab::experiment::ExperimentKind::Query.defaults();
    p.insert(field.to_string(), path.display().to_string());
    QuerySpec::parse(&p).unwrap_or_else(|e| panic!("{field} {}: {e:?}", path.display()))
}

/// WAL records written since `from` that are not the server's own bookkeeping (a running
/// transactions snapshot the background writer logs every 15 s, a checkpoint): what capture
/// would have written. An unmoved position is no WAL at all (pg_walinspect refuses an empty
/// range).
fn wal_written_since(c: &SourceCluster, from: &str) -> String {
    let moved = psql(
        c,
        "postgres",
        &format!("SELECT pg_current_wal_insert_lsn() > '{from}'::pg_lsn"),
    );
    if moved != "t" {
        return String::new();
    }
    psql(
        c,
        "postgres",
        &format!(
            "SELECT string_agg(resource_manager || ' ' || record_type || ' ' || coalesce(block_ref, ''), ', ')
               FROM pg_get_wal_records_info_till_end_of_wal('{from}')
              WHERE resource_manager NOT IN ('Standby', 'XLOG')"
        ),
    )
}

#[test]
fn the_mix_is_found_weighted_filled_and_nothing_is_written() {
    let c = cluster();
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // The insert position: a record not yet flushed (VACUUM's in-place update of
    // pg_database) is before it, not counted as capture's.
    let before = psql(c, "postgres", "SELECT pg_current_wal_insert_lsn()");
    let (code, stdout, stderr, file) = capture(
        c,
        "watcher",
        "postgres",
        &["--top", "3", "--sample", "1s", "--since-reset"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        wal_written_since(c, &before),
        "",
        "capture wrote nothing on the source"
    );
    // The three statements, weighted as the mix within ±20 %.
    let w = weights(&file);
    assert_eq!(w.len(), 3, "{file}");
    let total: u64 = w.values().sum();
    for (key, want) in [("SELECT one", 5), ("SELECT range", 3), ("INSERT one", 2)] {
        let got = w[key] as f64 / total as f64;
        let want = want as f64 / 10.0;
        assert!(
            (got - want).abs() <= 0.2 * want,
            "{key}: {got:.3} of the calls, the mix gives {want}\n{file}"
        );
    }
    // Filled from the columns' statistics (no session ran during the sample), none left out.
    assert_eq!(
        file.matches("-- values: from column statistics").count(),
        3,
        "{file}"
    );
    assert!(!file.contains("left out"), "{file}");
    assert!(
        !file
            .lines()
            .any(|l| !l.starts_with("--") && l.contains('$')),
        "only comments keep the normalised text\n{file}"
    );
    assert!(file.contains("-- writes: replayed only"), "{file}");
    assert_eq!(file.matches("-- production: ").count(), 3, "{file}");
    assert!(stdout.contains("captured 3 statements"), "{stdout}");
    // Names are stable: a second capture names the statements the same.
    let (_, _, _, again) = capture(c, "watcher", "postgres", &["--top", "3", "--sample", "0"]);
    let names = |t: &str| -> Vec<String> {
        sqltext::split(t)
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect()
    };
    assert_eq!(names(&again), names(&file));
    // The file is a workload as it is: a script (a weighted mix) and a file of statements.
    let path = write_file(&file);
    let script = query_spec("script", &path).script.unwrap();
    assert_eq!(script.mix().unwrap().len(), 3);
    assert_eq!(Script::parse(&file).unwrap().commands.len(), 3);
    let stmts = query_spec("file", &path).statements;
    assert!(
        stmts
            .iter()
            .all(|s| s.name.contains('_') && s.weight.is_some())
    );
    // Each keeps production's mean, which a replay's report is set beside.
    assert!(
        stmts.iter().all(|s| s.production_mean_ns.is_some()),
        "{stmts:?}"
    );
    // Equalities get sets drawn as their columns spread (the point lookup and the insert);
    // the range keeps its one pair of percentiles.
    let spread: Vec<usize> = stmts.iter().map(|s| s.variants.len()).collect();
    assert_eq!(
        spread.iter().filter(|n| **n > 1).count(),
        2,
        "{spread:?}\n{file}"
    );
}

#[test]
fn values_come_from_sessions_seen_running_the_statements() {
    let c = cluster();
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let mut bench = pgbench(c, &["-c", "2", "-T", "6"]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (code, _, stderr, file) = capture(
        c,
        "watcher",
        "postgres",
        &["--coverage", "95%", "--sample", "3s"],
    );
    let _ = bench.kill();
    let _ = bench.wait();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        file.contains("-- values: from pg_stat_activity"),
        "values from activity\n{file}"
    );
    // A negative delta pgbench sent stays negative; every statement has its values.
    assert!(
        !file
            .lines()
            .any(|l| !l.starts_with("--") && l.contains('$')),
        "{file}"
    );
    // pgbench draws its values at random: the sets seen are written, and a replay runs them
    // in turn rather than one set every time.
    let stmts = sqltext::split(&file).unwrap();
    let spread = stmts.iter().map(|s| s.variants.len()).max().unwrap_or(0);
    assert!(spread >= 2, "value sets written and read back\n{file}");
    assert!(file.contains("distinct value sets)"), "{file}");
}

#[test]
fn a_replay_runs_the_value_sets_in_turn() {
    let c = cluster();
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // Its own database, so the top statements of the mix's stay the mix's.
    psql(c, "postgres", "CREATE DATABASE sets");
    psql(
        c,
        "sets",
        "CREATE TABLE acc AS SELECT g AS aid, 0 AS abalance FROM generate_series(1, 10) g",
    );
    // Set 1 reads one row, set 2 two: a replay that takes both reads 1.5 rows a transaction.
    let path = write_file(
        "-- name: first_rows\n-- weight: 1\n-- normalized: SELECT abalance FROM acc WHERE aid <= $1\n-- set: $1 = 1\n-- set: $1 = 2\nSELECT abalance FROM acc WHERE aid <= 1;\n",
    );
    let from = format!(
        "host={} port={} user=postgres dbname=sets",
        c.dir.display(),
        c.port
    );
    let out = common::lab()
        .command()
        .args(["--db", &from, "run", "query", "--file"])
        .arg(&path)
        .args(["--clients", "2", "--duration", "1s", "--repeat", "1"])
        .args(["--no-history", "--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &report["trials"][0];
    let (rows, tx) = (
        t["rows"].as_f64().unwrap(),
        t["transactions"].as_f64().unwrap(),
    );
    assert!(tx >= 100.0, "{t}");
    let per = rows / tx;
    assert!((1.3..=1.7).contains(&per), "{per} rows a transaction: {t}");
    // A set that is not the statement is refused before anything runs, with its line.
    let bad = write_file(
        "-- normalized: SELECT abalance FROM acc WHERE aid <= $1\n-- set: $1 = aid\nSELECT abalance FROM acc WHERE aid <= 1;\n",
    );
    let out = common::lab()
        .command()
        .args(["--db", &from, "run", "query", "--file"])
        .arg(&bad)
        .args(["--no-history"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("line 2: set '$1 = aid'"), "{err}");
}

#[test]
fn a_page_takes_its_limit_from_productions_rows_per_call() {
    let c = cluster();
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // Its own database, so the top statements of the mix's stay the mix's.
    psql(c, "postgres", "CREATE DATABASE paged");
    psql(
        c,
        "paged",
        "CREATE EXTENSION pg_stat_statements;
         CREATE TABLE acc (aid int PRIMARY KEY, bid int);
         INSERT INTO acc SELECT g, g % 50 FROM generate_series(1, 5000) g;
         ANALYZE acc;
         GRANT SELECT ON acc TO watcher;
         SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = 'paged'), 0);",
    );
    // 100 rows per bid: every page is full, 10 rows a call; the offsets vary.
    let pages: String = (0..20)
        .map(|i| {
            format!(
                "SELECT aid FROM acc WHERE bid = {} ORDER BY aid LIMIT 10 OFFSET {};\n",
                i % 50,
                (i % 10) * 10
            )
        })
        .collect();
    psql(c, "paged", &pages);
    let (code, _, stderr, file) = capture(c, "watcher", "paged", &["--top", "5", "--sample", "0"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!file.contains("left out"), "{file}");
    let page = sqltext::split(&file)
        .unwrap()
        .into_iter()
        .find(|s| s.sql.contains("LIMIT"))
        .unwrap_or_else(|| panic!("the page is captured\n{file}"));
    assert!(page.sql.contains("LIMIT 10 OFFSET 0"), "{}", page.sql);
    assert!(
        file.contains("from column statistics (pg_stats) and production's figures")
            && file.contains("production's rows per call (10.00)")
            && file.contains("OFFSET 0, the first page"),
        "{file}"
    );
    // The page replays as it is.
    assert_eq!(
        psql(
            c,
            "paged",
            &format!(
                "SELECT count(*) FROM ({}) p",
                page.sql.trim_end_matches(';')
            )
        ),
        "10"
    );
}

/// The round trip a DBA makes: capture, `sandbox import` of the tables the statements read,
/// and the file replayed on the sandbox with `run query --file` as it was written: every
/// statement timed (the write on the imported copy), each set beside production's mean.
#[test]
fn the_captured_file_replays_on_the_sandbox_after_an_import() {
    let c = cluster();
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let (code, _, stderr, file) =
        capture(c, "watcher", "postgres", &["--top", "3", "--sample", "0"]);
    assert_eq!(code, 0, "{stderr}");
    let path = write_file(&file);
    let from = format!(
        "host={} port={} user=postgres dbname=postgres",
        c.dir.display(),
        c.port
    );
    let lab = common::lab();
    let out = lab
        .command()
        .args(["--keep-sandbox", "sandbox", "import", "--from", &from])
        .args(["--table", "public.acc", "--table", "public.hist"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = lab
        .command()
        .args(["--keep-sandbox", "run", "query", "--file"])
        .arg(&path)
        .args(["--repeat", "3", "--no-history", "--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let trials = report["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 9, "3 statements × 3 trials: {report}");
    let names: std::collections::BTreeSet<&str> =
        trials.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    let text = report.to_string();
    for n in &names {
        assert!(
            text.contains(&format!("{n}: replay median")) && text.contains("production's mean"),
            "{n} beside production\n{text}"
        );
    }
}

#[test]
fn without_the_extension_capture_says_how_and_samples_activity() {
    let c = cluster();
    let (code, _, stderr, _) = capture(c, "postgres", "plain", &["--sample", "0"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("shared_preload_libraries = 'pg_stat_statements'")
            && stderr.contains("restart"),
        "{stderr}"
    );
    // A sample in which no session ran anything: the reason, and no file (as the TUI's key).
    let (code, _, stderr, file) = capture(c, "postgres", "plain", &["--sample", "1s"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("nothing to capture from plain: no other session ran a statement"),
        "{stderr}"
    );
    assert!(file.is_empty(), "{file}");
    // A session on that database running a statement: seen in the samples.
    let mut busy = c
        .tool("psql")
        .arg("-X")
        .arg("-h")
        .arg(&c.dir)
        .args([
            "-p",
            &c.port.to_string(),
            "-U",
            "postgres",
            "-d",
            "plain",
            "-c",
        ])
        .arg("SELECT pg_sleep(3) WHERE 1 = 1")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (code, stdout, stderr, file) = capture(c, "postgres", "plain", &["--sample", "1s"]);
    let _ = busy.wait();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("note: pg_stat_statements is not available"),
        "{stdout}"
    );
    assert!(file.contains("SELECT pg_sleep(3) WHERE 1 = 1;"), "{file}");
    assert!(file.contains("-- values: from pg_stat_activity"), "{file}");
    assert!(file.contains("-- weight: 1"), "{file}");
}

#[test]
fn bad_flags_are_one_sentence() {
    let c = cluster();
    let (code, _, stderr, _) = capture(c, "postgres", "postgres", &["--coverage", "140%"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--coverage 140%: give a share"), "{stderr}");
    let (code, _, stderr, _) = capture(c, "postgres", "postgres", &["--sample", "soon"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--sample"), "{stderr}");
}

/// The TUI's capture key on the target pane's server: it samples (Esc ends the sample early),
/// writes the workload into pglab's data directory and opens it as the query experiment's
/// file, the mix's three statements in it; the source stays unwritten.
/// Its own database with the mix run there: the TUI's target pane queries its server every
/// second, and pg_stat_statements counts those under that database, so the other tests'
/// `--top 3` on database postgres stay the mix's.
#[test]
fn the_capture_key_opens_the_workload_in_the_query_experiment() {
    if tmux::tmux_missing() {
        return;
    }
    let c = cluster();
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    psql(c, "postgres", "CREATE DATABASE tuicap");
    psql(
        c,
        "tuicap",
        "CREATE EXTENSION pg_stat_statements;
         CREATE TABLE acc (aid int PRIMARY KEY, bid int, abalance int);
         INSERT INTO acc SELECT g, g % 50, (g * 7) % 1000 FROM generate_series(1, 5000) g;
         CREATE TABLE hist (id bigserial, aid int, delta int);
         GRANT SELECT ON acc, hist TO watcher;",
    );
    let mut p = pgbench_on(c, "tuicap", &["-c", "2", "-t", "300"]);
    assert!(p.wait().unwrap().success(), "pgbench ran the mix");
    psql(c, "tuicap", "ANALYZE");
    psql(c, "tuicap", "VACUUM");
    let dir = common::temp_dir("capture-tui");
    let conninfo = format!(
        "host={} port={} user=watcher dbname=tuicap",
        c.dir.display(),
        c.port
    );
    let script = format!(
        "env -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER -u PGSERVICE PGLAB_DATA_DIR={} PGLAB_CONFIG_DIR={} {} --db '{conninfo}'; echo \"EXIT=$?\"; sleep 600",
        tmux::shell_quote(&dir.join("data")),
        tmux::shell_quote(&dir.join("config")),
        tmux::shell_quote(Path::new(env!("CARGO_BIN_EXE_pglab"))),
    );
    let t = tmux::Tmux::start("capture", 100, 30, &script);
    let wait = std::time::Duration::from_secs(60);
    t.wait_for("the target pane", wait, |s| s.contains("conns"));
    let before = psql(c, "postgres", "SELECT pg_current_wal_insert_lsn()");
    // The mix's reads run during the sample (the capture is of the window; reads only, so the
    // WAL stays where it is).
    let mut bench = reads_on(c, "tuicap", &["-c", "1", "-T", "8", "-R", "200"]);
    t.keys(&["c"]);
    t.wait_for("the sample", wait, |s| s.contains("capture: sampled"));
    t.keys(&["Escape"]);
    let s = t.wait_for("the capture to open", wait, |s| s.contains("captured "));
    let _ = bench.kill();
    let _ = bench.wait();
    println!("{s}");
    let files: Vec<PathBuf> = std::fs::read_dir(dir.join("data").join("captures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let sql: Vec<String> = sqltext::split(&text)
        .unwrap()
        .into_iter()
        .map(|s| s.sql)
        .collect();
    for want in ["FROM acc WHERE aid =", "BETWEEN"] {
        assert!(sql.iter().any(|s| s.contains(want)), "{want}: {text}");
    }
    assert!(
        !sql.iter().any(|s| s.contains("INSERT INTO hist")),
        "the insert ran before the window, not in it: {text}"
    );
    // The query experiment is on screen with the captured file as its workload.
    assert!(
        s.contains("Parameters · query") || s.contains("query"),
        "{s}"
    );
    assert!(
        s.contains("captures/"),
        "the file field shows the workload\n{s}"
    );
    assert_eq!(
        wal_written_since(c, &before),
        "",
        "the capture wrote nothing on the source"
    );
    t.keys(&["q"]);
    t.wait_for("pglab to exit", wait, |s| s.contains("EXIT=0"));
    let _ = std::fs::remove_dir_all(&dir);
}
