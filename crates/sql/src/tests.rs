//! The classifier against every statement class the issue names, on the parser's own tree.

use super::classify::{Frame, Place, Rules, check, explainable};

const FOREIGN_MEASURED: Rules = Rules {
    place: Place::Measured,
    frame: Frame::ReadOnly,
    foreign: true,
};

fn refused(sql: &str, rules: Rules) -> String {
    match check(sql, rules) {
        Err(e) => e,
        Ok(()) => panic!("{sql:?} should be refused under {rules:?}"),
    }
}

fn with(place: Place, frame: Frame, foreign: bool) -> Rules {
    Rules {
        place,
        frame,
        foreign,
    }
}

#[test]
fn reads_pass_on_a_foreign_server() {
    for sql in [
        "SELECT count(*) FROM t",
        "select 1 -- a note",
        "/* a note */ SELECT 1",
        "VALUES (1), (2)",
        "TABLE t",
        "WITH x AS (SELECT 1) SELECT * FROM x",
        "EXPLAIN SELECT 1",
        "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM t WHERE id = 4",
        "SHOW work_mem",
        "SELECT pg_sleep(0.01)",
        "SELECT pg_read_file('postgresql.conf')",
        "SELECT $$COMMIT$$, 'ROLLBACK; SELECT pg_reload_conf()'",
    ] {
        assert_eq!(check(sql, FOREIGN_MEASURED), Ok(()), "{sql}");
    }
}

#[test]
fn every_statement_of_item_4_is_refused_with_a_sentence() {
    for (sql, says) in [
        ("REINDEX TABLE t", "REINDEX rewrites"),
        ("ANALYZE t", "ANALYZE vacuums or analyzes"),
        ("VACUUM t", "VACUUM"),
        (
            "LOCK TABLE t IN ACCESS EXCLUSIVE MODE",
            "LOCK TABLE takes a table lock",
        ),
        ("SELECT pg_reload_conf()", "pg_reload_conf()"),
        ("SELECT pg_cancel_backend(42)", "acts on another session"),
        (
            "select pg_catalog.pg_terminate_backend(pid) from pg_stat_activity",
            "pg_terminate_backend",
        ),
        ("CLUSTER t USING t_pkey", "CLUSTER rewrites"),
        ("COPY t TO PROGRAM 'cat > /tmp/x'", "COPY copies"),
        (
            "SELECT dblink_exec('dbname=x', 'DELETE FROM t')",
            "dblink_exec()",
        ),
        ("SELECT pg_advisory_lock(1)", "advisory lock"),
        ("SELECT pg_try_advisory_xact_lock(1)", "advisory lock"),
        ("SELECT pg_switch_wal()", "pg_switch_wal()"),
        ("SELECT pg_stat_reset()", "resets statistics"),
        (
            "SELECT pg_stat_reset_shared('bgwriter')",
            "resets statistics",
        ),
        ("SELECT pg_stat_statements_reset()", "resets statistics"),
        ("SELECT nextval('s')", "moves a sequence"),
        ("SELECT txid_current()", "assigns a transaction id"),
        ("SELECT pg_current_xact_id()", "assigns a transaction id"),
        ("SELECT lo_import('/etc/passwd')", "lo_import()"),
        ("SELECT pg_notify('c', 'x')", "pg_notify()"),
        (
            "SELECT query_to_xml('select pg_reload_conf()', true, true, '')",
            "runs SQL given as text",
        ),
        ("CALL p()", "CALL runs procedural code"),
        ("DO $$BEGIN PERFORM 1; END$$", "DO runs procedural code"),
        (
            "CREATE TABLE x (a int)",
            "CREATE TABLE changes the database",
        ),
        ("DROP TABLE t", "DROP TABLE"),
        ("CHECKPOINT", "CHECKPOINT forces"),
        ("DELETE FROM t WHERE id < 50", "--writes rollback"),
        (
            "WITH d AS (DELETE FROM t RETURNING *) SELECT count(*) FROM d",
            "modifies rows",
        ),
        ("SELECT * FROM t FOR UPDATE", "locks rows"),
        ("SELECT * FROM (SELECT * FROM t FOR SHARE) s", "locks rows"),
        ("SELECT * INTO copy FROM t", "creates a table"),
        (
            "EXPLAIN ANALYZE DELETE FROM t",
            "EXPLAIN ANALYZE runs the statement",
        ),
        (
            "SELECT 1 FROM t WHERE id = (SELECT max(id) FROM (SELECT setval('s', 1)) q)",
            "setval()",
        ),
    ] {
        let e = refused(sql, FOREIGN_MEASURED);
        assert!(e.contains(says), "{sql}: {e}");
        assert_eq!(e.lines().count(), 1, "one sentence: {e}");
    }
}

#[test]
fn dml_is_measured_only_in_a_rolled_back_transaction() {
    let rollback = with(Place::Measured, Frame::Rollback, true);
    assert_eq!(check("DELETE FROM t WHERE id < 50", rollback), Ok(()));
    assert_eq!(
        check("EXPLAIN ANALYZE UPDATE t SET x = 1", rollback),
        Ok(())
    );
    // A rollback undoes none of these.
    assert!(check("SELECT pg_reload_conf()", rollback).is_err());
    assert!(check("REINDEX TABLE t", rollback).is_err());
}

#[test]
fn transaction_control_is_pglabs_everywhere_but_a_scripts_own() {
    for sql in [
        "COMMIT",
        "begin read write",
        "SAVEPOINT a",
        "ROLLBACK",
        "END",
        "ABORT",
        "START TRANSACTION",
    ] {
        let e = refused(sql, FOREIGN_MEASURED);
        assert!(e.contains("pglab's to give"), "{sql}: {e}");
    }
    assert!(
        refused(
            "prepare transaction 'x'",
            with(Place::Script, Frame::ReadOnly, true)
        )
        .contains("two-phase")
    );
    let script = with(Place::Script, Frame::ReadOnly, true);
    assert_eq!(check("BEGIN", script), Ok(()));
    assert_eq!(check("BEGIN READ ONLY", script), Ok(()));
    assert!(refused("BEGIN READ WRITE", script).contains("READ WRITE"));
    assert!(
        refused(
            "START TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ WRITE",
            script
        )
        .contains("READ WRITE")
    );
    assert!(refused("BEGIN", with(Place::Script, Frame::Rollback, true)).contains("rolled back"));
}

#[test]
fn a_script_may_not_change_pglabs_frame() {
    let script = with(Place::Script, Frame::ReadOnly, true);
    for sql in [
        "SET TRANSACTION READ WRITE",
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
        "SET default_transaction_read_only = off",
        "set transaction_read_only to off",
        "RESET ALL",
        "DISCARD ALL",
        "SET statement_timeout = 0",
        "SET lock_timeout = 0",
        "SET idle_in_transaction_session_timeout = 0",
        "SET ROLE postgres",
        "SELECT set_config('transaction_read_only', 'off', true)",
        "SELECT pg_catalog.set_config($q$default_transaction_read_only$q$, $$off$$, false)",
        "/* x */ select SET_CONFIG('transaction_read_only', 'off', false) -- y",
    ] {
        assert!(check(sql, script).is_err(), "{sql}");
    }
    assert_eq!(check("SET work_mem = '64MB'", script), Ok(()));
    // On the sandbox, as written: the DBA's own server.
    assert_eq!(
        check("RESET ALL", with(Place::Script, Frame::Autocommit, false)),
        Ok(())
    );
    assert!(refused("SET work_mem = '1GB'", FOREIGN_MEASURED).contains("--set"));
}

#[test]
fn the_setup_runs_inside_pglabs_transaction() {
    let sandbox = with(Place::Setup, Frame::Autocommit, false);
    let e = refused(
        "CREATE TABLE s (a int); COMMIT; DELETE FROM t WHERE id < 50",
        sandbox,
    );
    assert!(
        e.starts_with("COMMIT ends or changes the transaction"),
        "{e}"
    );
    for sql in [
        "VACUUM t",
        "CREATE DATABASE d",
        "DROP DATABASE d",
        "CREATE ROLE r",
        "ALTER ROLE r SUPERUSER",
        "CREATE TABLESPACE ts LOCATION '/tmp'",
        "ALTER SYSTEM SET work_mem = '1GB'",
        "CREATE INDEX CONCURRENTLY i ON t (a)",
        "SET work_mem = '1GB'",
        "ROLLBACK",
        "END",
    ] {
        assert!(check(sql, sandbox).is_err(), "{sql}");
    }
    assert_eq!(
        check(
            "CREATE TABLE s AS SELECT 1 AS a; CREATE INDEX ON s (a); ANALYZE s",
            sandbox
        ),
        Ok(())
    );
}

#[test]
fn a_foreign_setup_makes_only_temporary_tables_with_writes_rollback() {
    let rollback = with(Place::Setup, Frame::Rollback, true);
    assert_eq!(
        check(
            "CREATE TEMP TABLE s (a int); INSERT INTO s SELECT g FROM generate_series(1, 10) g; CREATE TEMPORARY TABLE u AS SELECT 1 AS b",
            rollback
        ),
        Ok(())
    );
    assert!(refused("CREATE TABLE s (a int)", rollback).contains("permanent object"));
    assert!(refused("CREATE UNLOGGED TABLE s (a int)", rollback).contains("permanent object"));
    assert!(
        refused(
            "CREATE TEMP TABLE s (a int)",
            with(Place::Setup, Frame::ReadOnly, true)
        )
        .contains("--writes rollback")
    );
    assert!(refused("SELECT pg_reload_conf()", rollback).contains("never run"));
    assert!(refused("COMMIT", rollback).contains("transaction"));
}

#[test]
fn parse_errors_are_the_parsers_own_sentence() {
    let e = refused("SELECT 1 /* x", FOREIGN_MEASURED);
    assert!(e.contains("unterminated /* comment"), "{e}");
    assert!(refused("SELEC 1", FOREIGN_MEASURED).contains("syntax error"));
    assert!(refused("-- only a note", FOREIGN_MEASURED).contains("no statement"));
    assert!(refused("SELECT 1; COMMIT", FOREIGN_MEASURED).contains("2 statements"));
    assert!(refused("SELECT 1; SELECT 2", FOREIGN_MEASURED).contains("one is measured at a time"));
}

#[test]
fn explain_takes_queries_only() {
    assert!(explainable("with x as (select 1) select * from x"));
    assert!(explainable("DELETE FROM t -- note"));
    assert!(!explainable("CALL p()"));
    assert!(!explainable("SHOW work_mem"));
}

#[test]
fn a_copy_over_the_connection_is_refused_where_pglab_measures_it() {
    for place in [Place::Measured, Place::Script] {
        let sandbox = with(place, Frame::Autocommit, false);
        assert!(refused("COPY t TO STDOUT", sandbox).contains("TO STDOUT"));
        assert!(refused("COPY t (a) FROM STDIN", sandbox).contains("neither send nor read"));
    }
    // A server file on the sandbox is the server's own work, timed as any statement.
    assert!(
        check(
            "COPY t TO '/tmp/t.copy'",
            with(Place::Measured, Frame::Autocommit, false)
        )
        .is_ok()
    );
}
