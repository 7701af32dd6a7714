//! Windows of `pg_stat_statements` and `pglab verify` against a second real cluster standing in
//! for production (`pg_stat_statements` and `pg_walinspect` loaded, `work_mem = 1MB`): a
//! read-only pgbench mix of five statements, one of which sorts past `work_mem`, runs while
//! windows are captured as role `watcher` (CONNECT, SELECT and `pg_read_all_stats`) and as
//! role `reader` (CONNECT and SELECT only). Before the windows the server's statistics hold
//! an old mix, pglab's own queries (`pglab probe`) and a DBA's monitoring calls. The sort is
//! named faster at `work_mem = 64MB` (its spill of every row becomes a top-N heapsort in
//! memory), its temp blocks per call gone, the setting named at the top.

use crate::common;
use crate::common::source;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use source::SourceCluster;

/// The mix pgbench runs: script, weight. Read-only, so the WAL stays where it is.
const MIX: [(&str, &str, u64); 5] = [
    (
        "a.sql",
        "\\set aid random(1, 5000)\nSELECT abalance FROM acc WHERE aid = :aid;\n",
        6,
    ),
    (
        "b.sql",
        "\\set lo random(1, 4950)\nSELECT sum(abalance) FROM acc WHERE aid BETWEEN :lo AND :lo + 50;\n",
        3,
    ),
    (
        "c.sql",
        "\\set bid random(0, 49)\nSELECT count(*) FROM acc WHERE bid = :bid;\n",
        2,
    ),
    (
        "d.sql",
        "\\set aid random(1, 5000)\nSELECT aid, bid FROM acc WHERE aid = :aid -- one account\n;\n",
        2,
    ),
    (
        "s.sql",
        "SELECT max(length(pad)) FROM (SELECT pad FROM srt ORDER BY v LIMIT 5000) s;\n",
        2,
    ),
];

fn psql(c: &SourceCluster, sql: &str) -> String {
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
            "postgres",
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

fn pgbench(c: &SourceCluster, extra: &[&str]) -> Child {
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
        .arg("postgres")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn conninfo(c: &SourceCluster, user: &str) -> String {
    format!(
        "host={} port={} user={user} dbname=postgres",
        c.dir.display(),
        c.port
    )
}

fn pglab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pglab"))
        .env("PGLAB_DATA_DIR", common::temp_dir("verify-data"))
        .env("PGLAB_CONFIG_DIR", common::temp_dir("verify-config"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// `pglab capture` as `user` with `args`: (exit code, stdout, stderr, the file's path, text).
fn capture(c: &SourceCluster, user: &str, args: &[&str]) -> (i32, String, String, PathBuf, String) {
    let out = common::temp_dir("verify-out").join("w.sql");
    let conn = conninfo(c, user);
    let mut all = vec!["capture", "--db", &conn, "--top", "10", "--out"];
    let path = out.display().to_string();
    all.push(&path);
    all.extend_from_slice(args);
    let (code, stdout, stderr) = pglab(&all);
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    (code, stdout, stderr, out, text)
}

/// WAL records since `from` that are not the server's own bookkeeping (see tests/capture.rs).
fn wal_written_since(c: &SourceCluster, from: &str) -> String {
    if psql(
        c,
        &format!("SELECT pg_current_wal_insert_lsn() > '{from}'::pg_lsn"),
    ) != "t"
    {
        return String::new();
    }
    psql(
        c,
        &format!(
            "SELECT coalesce(string_agg(resource_manager || ' ' || record_type, ', '), '')
               FROM pg_get_wal_records_info_till_end_of_wal('{from}')
              WHERE resource_manager NOT IN ('Standby', 'XLOG')"
        ),
    )
}

/// The `-- statement-json:` lines' texts.
fn window_texts(file: &str) -> Vec<String> {
    file.lines()
        .filter_map(|l| l.strip_prefix("-- statement-json: "))
        .map(|j| {
            let v: serde_json::Value = serde_json::from_str(j).unwrap();
            v["query"].as_str().unwrap().to_string()
        })
        .collect()
}

fn setup() -> SourceCluster {
    let c = SourceCluster::start_with(
        &common::temp_dir("verify"),
        // No parallel workers: an OLTP server's setting, and two cores shared with builds.
        "shared_preload_libraries = 'pg_stat_statements'\nwork_mem = '1MB'\nmax_parallel_workers_per_gather = 0",
    );
    psql(
        &c,
        "CREATE EXTENSION pg_stat_statements;
         CREATE EXTENSION pg_walinspect;
         CREATE TABLE acc (aid int PRIMARY KEY, bid int, abalance int);
         INSERT INTO acc SELECT g, g % 50, (g * 7) % 1000 FROM generate_series(1, 5000) g;
         CREATE TABLE srt (id int, v int, pad text);
         INSERT INTO srt SELECT g, (g::bigint * 7919 % 1000003)::int,
                repeat(md5(g::text) || md5((g * 3)::text), 8)
           FROM generate_series(1, 60000) g;
         CREATE ROLE reader LOGIN;
         GRANT SELECT ON acc, srt TO reader;
         CREATE ROLE watcher LOGIN;
         GRANT SELECT ON acc, srt TO watcher;
         GRANT pg_read_all_stats TO watcher;",
    );
    psql(&c, "ANALYZE");
    psql(&c, "VACUUM");
    c
}

/// What the statistics hold before any window: an old mix, pglab's own queries as both
/// roles, a DBA's monitoring.
fn history(c: &SourceCluster) {
    let old = c.dir.join("old.sql");
    std::fs::write(&old, "SELECT bid, count(*) FROM acc GROUP BY bid;\n").unwrap();
    let st = c
        .tool("pgbench")
        .args(["-n", "-M", "simple", "-t", "300", "-f"])
        .arg(&old)
        .arg("-h")
        .arg(&c.dir)
        .args(["-p", &c.port.to_string(), "-U", "postgres", "postgres"])
        .status()
        .unwrap();
    assert!(st.success());
    for user in ["reader", "watcher"] {
        let (code, _, err) = pglab(&["--db", &conninfo(c, user), "probe"]);
        assert_eq!(code, 0, "{err}");
    }
    psql(
        c,
        "SELECT pg_current_wal_lsn(); SELECT count(*) FROM pg_stat_activity",
    );
}

#[test]
fn windows_privileges_and_a_change_verified_read_only() {
    let c = setup();
    history(&c);
    let wal = psql(&c, "SELECT pg_current_wal_insert_lsn()");
    // A rate the eight clients keep up with at 1MB too (the sort's ~4 calls a second at up to
    // half a second each under builds): a saturated mix changes its own load when the sort
    // gets faster, and every other statement moves with it.
    let mut bench = pgbench(&c, &["-c", "8", "-T", "90", "-R", "30"]);
    std::thread::sleep(std::time::Duration::from_secs(1));

    // Item 4: a role without pg_read_all_stats is told what is hidden and which grant shows it.
    let (code, _, stderr, _, _) = capture(&c, "reader", &["--sample", "3s"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("role reader sees no statement")
            && stderr.contains("of the statement time")
            && stderr.contains("GRANT pg_read_all_stats TO reader"),
        "{stderr}"
    );

    // Windows 0 and 1 (nothing changed between them), as watcher.
    let (code, stdout, stderr, w0, f0) = capture(&c, "watcher", &["--sample", "12s"]);
    assert_eq!(code, 0, "{stderr}");
    println!("{stdout}");
    let (code, _, stderr, w1, _) = capture(&c, "watcher", &["--sample", "12s"]);
    assert_eq!(code, 0, "{stderr}");

    // Item 6: the window holds the mix, not the old one; --since-reset holds both.
    assert!(
        f0.contains("the difference of two reads of pg_stat_statements"),
        "{f0}"
    );
    let texts = window_texts(&f0);
    assert_eq!(
        texts.len(),
        5,
        "every application statement and nothing else: {texts:#?}"
    );
    for want in [
        "WHERE aid = $1",
        "BETWEEN",
        "bid = $1",
        "-- one account",
        "ORDER BY v",
    ] {
        assert!(texts.iter().any(|t| t.contains(want)), "{want}: {texts:#?}");
    }
    assert!(
        !texts.iter().any(|t| t.contains("GROUP BY bid")),
        "the old mix: {texts:#?}"
    );
    // Item 4: none of pglab's own, none of the DBA's monitoring, with a note.
    assert!(
        !texts
            .iter()
            .any(|t| t.contains("pglab") || t.contains("pg_")),
        "{texts:#?}"
    );
    let (code, _, stderr, _, cumulative) = capture(&c, "watcher", &["--sample", "0"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        cumulative.contains("since pg_stat_statements was last reset"),
        "{cumulative}"
    );
    let all = window_texts(&cumulative);
    assert!(all.iter().any(|t| t.contains("GROUP BY bid")), "{all:#?}");
    assert!(
        cumulative.contains("administration and monitoring calls")
            && !all.iter().any(|t| t.contains("pglab")),
        "{cumulative}"
    );
    // Item 5: the statement ending in a comment is written so that it reads back as itself.
    let back = pglab::experiment::query::sqltext::split(&f0).unwrap();
    assert!(
        back.iter().any(|s| s.sql.ends_with("-- one account")),
        "{f0}"
    );

    // The change, as the DBA makes it.
    psql(&c, "ALTER SYSTEM SET work_mem = '64MB'");
    psql(&c, "SELECT pg_reload_conf()");
    // A backend takes the new value at its next statement: a sort already running at 1MB
    // (up to ~0.7 s under builds) must end before the window starts, or the window holds
    // one sort of each kind (seen once: ×0.27, ×0.06 … ×1.28, one spilling call in 58).
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let (code, _, stderr, w2, _) = capture(&c, "watcher", &["--sample", "12s"]);
    assert_eq!(code, 0, "{stderr}");
    let _ = bench.kill();
    let _ = bench.wait();
    psql(&c, "ALTER SYSTEM RESET work_mem");
    psql(&c, "SELECT pg_reload_conf()");
    assert_eq!(
        wal_written_since(&c, &wal),
        "",
        "nothing pglab sent wrote WAL"
    );

    // A/A: no statement named.
    let (code, aa, stderr) = pglab(&[
        "verify",
        &w0.display().to_string(),
        &w1.display().to_string(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let aa: serde_json::Value = serde_json::from_str(&aa).unwrap();
    let named: Vec<&serde_json::Value> = aa["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "faster" || r["verdict"] == "slower")
        .collect();
    assert!(named.is_empty(), "A/A names nothing: {aa:#}");
    assert!(aa["settings"].as_array().unwrap().is_empty(), "{aa:#}");

    // The change: the sorting statement faster, its temp blocks gone, work_mem named.
    let (code, json, stderr) = pglab(&[
        "verify",
        &w1.display().to_string(),
        &w2.display().to_string(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    println!("{json}");
    let settings = v["settings"].as_array().unwrap();
    assert!(settings.iter().any(|s| s["name"] == "work_mem"), "{json}");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "{json}");
    let sort = rows
        .iter()
        .find(|r| r["query"].as_str().unwrap().contains("ORDER BY v"))
        .unwrap();
    // At 1MB the sort writes every row to disk to keep the first 5,000; at 64MB it keeps
    // them in a top-N heap (×0.35–×0.6 a call by hand with psql's \timing, docs/verify.md).
    println!(
        "the sort: {} ×{:.2} ({:.2} … {:.2}), temp blocks per call {} → {}",
        sort["verdict"],
        sort["ratio"].as_f64().unwrap(),
        sort["low"].as_f64().unwrap(),
        sort["high"].as_f64().unwrap(),
        sort["temp"]["before"],
        sort["temp"]["after"]
    );
    assert_eq!(sort["verdict"], "faster", "{sort:#}");
    assert!(sort["high"].as_f64().unwrap() < 1.0, "{sort:#}");
    assert!(sort["flags"].as_array().unwrap().is_empty(), "{sort:#}");
    assert!(
        sort["temp"]["before"].as_f64().unwrap() > 100.0
            && sort["temp"]["after"].as_f64().unwrap() < 1.0,
        "{sort:#}"
    );
    assert!(
        v["headline"].as_str().unwrap().contains("faster: "),
        "{json}"
    );
    for r in rows
        .iter()
        .filter(|r| !r["query"].as_str().unwrap().contains("ORDER BY v"))
    {
        assert!(
            r["verdict"] != "faster" && r["verdict"] != "slower",
            "the others are not named (host load: see uptime): {r:#}"
        );
    }
    // The TUI's view of the same two windows at 80×24: the headline, the setting, the sort.
    let screen = tui_view(&w1, &w2, 0);
    println!("{}", screen.join("\n"));
    let name = sort["name"].as_str().unwrap();
    assert!(screen[1].contains("Verify · postgres"), "{screen:#?}");
    assert!(
        screen[2].contains("of 5 statements compared")
            && screen.iter().any(|l| l.contains("faster: ")),
        "{screen:#?}"
    );
    assert!(
        screen
            .iter()
            .any(|l| l.contains("setting changed: work_mem 1024kB → 65536kB")),
        "{screen:#?}"
    );
    assert!(
        screen
            .iter()
            .any(|l| l.contains(&format!("{name} · ×")) && l.contains("faster")),
        "{screen:#?}"
    );
    assert!(screen[21].contains("lines 1–"), "{screen:#?}");
    let end = tui_view(&w1, &w2, usize::MAX / 2);
    assert!(
        end[21].contains(" of ") && !end[21].contains("lines 1–"),
        "scrolled to the end: {end:#?}"
    );
    // The table names the setting at the top; md writes its SVG beside it.
    let (code, table, _) = pglab(&[
        "verify",
        &w1.display().to_string(),
        &w2.display().to_string(),
    ]);
    assert_eq!(code, 0);
    let head: Vec<&str> = table.lines().take(4).collect();
    assert!(
        head.iter()
            .any(|l| l.contains("setting changed: work_mem 1024kB → 65536kB")),
        "{table}"
    );
    let md = common::temp_dir("verify-md").join("v.md");
    let (code, _, stderr) = pglab(&[
        "verify",
        &w1.display().to_string(),
        &w2.display().to_string(),
        "--format",
        "md",
        "--out",
        &md.display().to_string(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        std::fs::read_to_string(md.with_extension("svg"))
            .unwrap()
            .contains("<svg")
    );
    assert!(std::fs::read_to_string(&md).unwrap().contains("](v.svg)"));
}

/// The TUI's verify view (`V`) of the two windows, as the key finds them in the data
/// directory's `windows` and compares them (the same code), drawn at 80×24: the screen's rows.
fn tui_view(before: &std::path::Path, after: &std::path::Path, scroll: usize) -> Vec<String> {
    use pglab::tui::overlays::verify::{VerifyView, draw};
    let data = common::temp_dir("verify-tui");
    let dir = pglab::tui::runtime::verify::windows_dir(&data);
    std::fs::create_dir_all(&dir).unwrap();
    // Named so that the order holds even when both copies get the same modification time.
    std::fs::copy(before, dir.join("a-before.sql")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::copy(after, dir.join("b-after.sql")).unwrap();
    let w = pglab::tui::runtime::verify::compare_last_two(&dir).unwrap();
    assert_eq!(
        (w.before.as_str(), w.after.as_str()),
        ("a-before.sql", "b-after.sql")
    );
    let view = VerifyView {
        verification: w.verification,
        files: (w.before, w.after),
        scroll,
    };
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    let theme = pglab::tui::theme::Theme { color: false };
    term.draw(|f| draw(&view, theme, f, f.area())).unwrap();
    let buf = term.backend().buffer().clone();
    (0..24)
        .map(|y| (0..80).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect()
}

#[test]
fn bad_inputs_are_one_sentence() {
    let dir = common::temp_dir("verify-bad");
    let plain = dir.join("plain.sql");
    std::fs::write(&plain, "SELECT 1;\n").unwrap();
    let p = plain.display().to_string();
    let (code, _, stderr) = pglab(&["verify", &p, &p]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("carries no window"), "{stderr}");
    let (code, _, stderr) = pglab(&["verify", "/nonexistent/a.sql", &p]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot read it"), "{stderr}");
    let (code, _, stderr) = pglab(&["verify", &p, &p, "--confidence", "120%"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--confidence 120%"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
