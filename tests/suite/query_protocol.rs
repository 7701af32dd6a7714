//! `--protocol simple|extended|prepared` of throughput mode against the sandbox: each protocol
//! seen from the server's side (the prepared statements the session holds, the text the
//! server received), a captured workload's value sets bound, runs of two protocols not
//! compared, a prepared session that survives the server forgetting its statements, and a
//! parameter the server cannot type refused before the run with its line.

use crate::common;
use crate::common::query;

use std::sync::Arc;

use query::{body, on_sandbox};

use pglab::experiment::query::QueryReport;
use pglab::experiment::{RunOptions, RunReport};
use pglab::server::Target;

/// Run the query experiment of `pairs` to the end (see `query::run`).
async fn run(
    target: Arc<Target>,
    pairs: &[(&str, &str)],
    opts: RunOptions,
) -> Result<RunReport, (String, RunReport)> {
    query::run(target, query::spec(pairs), opts).await
}

const TABLE: &str =
    "CREATE TABLE tp AS SELECT g AS id FROM generate_series(1, 2000) g; CREATE INDEX ON tp (id)";

/// Rows per transaction, every trial alike: `rows` over `transactions`.
fn rows_per_transaction(b: &QueryReport) -> Vec<f64> {
    b.trials
        .iter()
        .map(|t| {
            let tx = t.transactions.unwrap();
            assert!(tx > 5, "{t:?}");
            t.rows as f64 / tx as f64
        })
        .collect()
}

/// Each transaction: the lookup (1 row); a row when the server received `$1` rather than
/// the value (bound: extended, prepared); a row per statement the session holds prepared
/// (prepared: the script's three).
const SEEN_BY_THE_SERVER: &str = "\\set aid random(1, 1000)\n\
SELECT id FROM tp WHERE id = :aid;\n\
SELECT 1 WHERE :aid > 0 AND strpos(current_query(), chr(36) || '1') > 0;\n\
SELECT name FROM pg_prepared_statements WHERE name LIKE 'pglab%';\n";

#[tokio::test]
async fn each_protocol_sends_the_script_as_pgbench_m_does_and_says_which() {
    let lab = common::lab();
    let dir = common::temp_dir("q-protocol");
    let script = dir.join("seen.sql");
    std::fs::write(&script, SEEN_BY_THE_SERVER).unwrap();
    let mut reports = Vec::new();
    for (protocol, rows) in [("simple", 1.0), ("extended", 2.0), ("prepared", 5.0)] {
        let r = run(
            lab.target(),
            &[
                ("setup", TABLE),
                ("script", script.to_str().unwrap()),
                ("clients", "2"),
                ("duration", "300ms"),
                ("repeat", "1"),
                ("protocol", protocol),
            ],
            on_sandbox("q_protocol"),
        )
        .await
        .map_err(|(e, _)| e)
        .unwrap();
        assert_eq!(rows_per_transaction(body(&r)), [rows], "{protocol}");
        let note = format!("--protocol {protocol} ran (default prepared)");
        assert!(r.notes.iter().any(|n| n.contains(&note)), "{:?}", r.notes);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["params"]["protocol"], protocol, "{json}");
        reports.push(r);
    }
    // Like with like: the same script sent another way is another condition.
    let c = pglab::history::compare::compare(&reports[0], &reports[2]).unwrap();
    assert!(
        c.not_comparable
            .iter()
            .any(|r| r.starts_with("protocol simple vs prepared")),
        "{:?}",
        c.not_comparable
    );
    // Single timed executions say how they are sent.
    let r = run(
        lab.target(),
        &[("sql", "SELECT 1"), ("repeat", "1")],
        on_sandbox("q_protocol"),
    )
    .await
    .map_err(|(e, _)| e)
    .unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("as psql sends it, on the simple protocol")),
        "{:?}",
        r.notes
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file as `pglab capture` writes it: the normalised text and two value sets.
const CAPTURED: &str = "-- name: by_id\n\
-- normalized: SELECT id FROM tp WHERE id = $1 AND strpos(current_query(), chr(36)) > 0\n\
-- set: $1 = 5\n\
-- set: $1 = 7\n\
SELECT id FROM tp WHERE id = 5 AND strpos(current_query(), chr(36)) > 0;\n";

#[tokio::test]
async fn a_captured_workload_is_replayed_prepared_with_its_sets_bound() {
    let lab = common::lab();
    let dir = common::temp_dir("q-protocol-capture");
    let file = dir.join("w.sql");
    std::fs::write(&file, CAPTURED).unwrap();
    for (protocol, rows) in [("prepared", 1.0), ("simple", 0.0)] {
        let r = run(
            lab.target(),
            &[
                ("setup", TABLE),
                ("file", file.to_str().unwrap()),
                ("clients", "2"),
                ("duration", "300ms"),
                ("repeat", "1"),
                ("protocol", protocol),
            ],
            on_sandbox("q_protocol_cap"),
        )
        .await
        .map_err(|(e, _)| e)
        .unwrap();
        // Bound: the server received `$1` (and the row of each set); simple: the filled text.
        assert_eq!(rows_per_transaction(body(&r)), [rows], "{protocol}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_prepared_session_survives_the_server_forgetting_its_statements() {
    let lab = common::lab();
    let dir = common::temp_dir("q-protocol-forget");
    let script = dir.join("forget.sql");
    // `forget()` deallocates every prepared statement of the session on every 7th call of that
    // session, which the client does not see (its next statement fails with SQLSTATE 26000);
    // the script's own DEALLOCATE ALL the client sees. The count is the session's own (a
    // setting, which the statement's own implicit transaction commits): with a sequence shared
    // by the two clients, the other client's calls could make the transaction pglab starts
    // again land on a multiple of 7 too, and a session that forgets twice in a row is a stop.
    std::fs::write(
        &script,
        "\\set aid random(1, 1000)\nSELECT forget();\nSELECT id FROM tp WHERE id = :aid;\nDEALLOCATE ALL;\nSELECT id FROM tp WHERE id = :aid + 1;\n",
    )
    .unwrap();
    let setup = format!(
        "{TABLE}; CREATE FUNCTION forget() RETURNS int LANGUAGE plpgsql AS $$ DECLARE n int := coalesce(nullif(current_setting('forget.calls', true), ''), '0')::int + 1; BEGIN PERFORM set_config('forget.calls', n::text, false); IF n % 7 = 0 THEN EXECUTE 'DEALLOCATE ALL'; END IF; RETURN 1; END $$"
    );
    let r = run(
        lab.target(),
        &[
            ("setup", setup.as_str()),
            ("script", script.to_str().unwrap()),
            ("clients", "2"),
            ("duration", "500ms"),
            ("repeat", "1"),
        ],
        on_sandbox("q_protocol_forget"),
    )
    .await
    .map_err(|(e, _)| e)
    .unwrap();
    // Each transaction: forget()'s row and the two lookups'.
    assert_eq!(rows_per_transaction(body(&r)), [3.0]);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("sessions forgot their prepared statements")
                && n.contains("prepared them again")),
        "{:?}",
        r.notes
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_parameter_the_server_cannot_type_is_refused_before_the_run_with_its_line() {
    let lab = common::lab();
    let dir = common::temp_dir("q-protocol-untyped");
    let script = dir.join("untyped.sql");
    std::fs::write(
        &script,
        "\\set aid random(1, 1000)\nSELECT id FROM tp WHERE id = :aid;\nSELECT 1 WHERE :aid IS NOT NULL;\n",
    )
    .unwrap();
    let (e, report) = run(
        lab.target(),
        &[
            ("setup", TABLE),
            ("script", script.to_str().unwrap()),
            ("clients", "2"),
            ("duration", "300ms"),
            ("repeat", "1"),
        ],
        on_sandbox("q_protocol_untyped"),
    )
    .await
    .expect_err("refused");
    assert!(
        e.contains("script line 3: the server cannot tell the type of a parameter"),
        "{e}"
    );
    assert!(e.contains("--protocol simple"), "{e}");
    assert!(body(&report).trials.is_empty());
    // The same script on the simple protocol runs (the value is written into the text).
    let r = run(
        lab.target(),
        &[
            ("setup", TABLE),
            ("script", script.to_str().unwrap()),
            ("clients", "2"),
            ("duration", "300ms"),
            ("repeat", "1"),
            ("protocol", "simple"),
        ],
        on_sandbox("q_protocol_untyped"),
    )
    .await
    .map_err(|(e, _)| e)
    .unwrap();
    assert_eq!(rows_per_transaction(body(&r)), [2.0]);
    std::fs::remove_dir_all(&dir).unwrap();
}
