//! A captured file read back: every statement it writes parses back as itself, whatever it
//! ends in or holds (a `--` comment, dollar quotes, `E''` strings with `\'`, casts, a `;`
//! inside a string), and the window it carries comes back whole.

use super::{render, terminated};
use crate::capture::{Capture, Captured, Values};
use pglab_engine::experiment::query::sqltext;

const HARD: [&str; 9] = [
    "SELECT count(*) FROM orders WHERE status = 'shipped' -- how many new",
    "SELECT count(*) FROM orders WHERE status = 'shipped' -- how many new;",
    "SELECT $fn$ a; b $fn$ AS body, $$;$$::text",
    "SELECT E'it\\'s; fine' AS s, 'O''Neil' AS n",
    "SELECT '42'::int4 + CAST('1' AS bigint), '{1,2}'::int[]",
    "SELECT 1 /* a; /* nested; */ comment */ + 2",
    "SELECT \"we;ird\" FROM \"t;x\" -- trailing\n  -- two comment lines",
    "WITH x AS (SELECT 1 AS a) SELECT a FROM x;",
    "UPDATE acc SET abalance = abalance + 1 WHERE aid = 7 -- pay",
];

fn statement(i: usize, sql: &str) -> Captured {
    Captured {
        name: format!("s{i}"),
        normalized: sql.to_string(),
        sql: Some(sql.to_string()),
        values: Values::None,
        left_out: None,
        write: sql.starts_with("UPDATE"),
        baseline: None,
        weight: 1,
        share: 0.1,
    }
}

fn fp(sql: &str) -> String {
    pg_query::fingerprint(sql, 0, pg_query::FingerprintOptions::FULL_RELNAME)
        .unwrap()
        .hex
}

/// The text as the reader keeps it: no `;` at its end, no space after it.
fn body(sql: &str) -> String {
    sql.trim_end().trim_end_matches(';').trim_end().to_string()
}

#[test]
fn every_statement_parses_back_as_itself() {
    for sql in HARD {
        let t = terminated(sql);
        let back = sqltext::split(&t).unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(back.len(), 1, "{t}");
        // The reader's text is the statement; the server's parser agrees it is one statement.
        assert_eq!(fp(&back[0].sql), fp(sql), "{t}");
        assert!(back[0].sql.starts_with(&body(sql)[..10]), "{t}");
    }
    let cap = Capture {
        statements: HARD
            .iter()
            .enumerate()
            .map(|(i, s)| statement(i, s))
            .collect(),
        ..Capture::default()
    };
    let file = render(&cap, "now");
    let back = sqltext::split(&file).unwrap();
    assert_eq!(back.len(), HARD.len(), "{file}");
    for (b, sql) in back.iter().zip(HARD) {
        assert_eq!(fp(&b.sql), fp(sql), "{file}");
    }
}

#[test]
fn a_line_comment_at_the_end_puts_the_semicolon_on_its_own_line() {
    let t = terminated("SELECT 1 -- how many new");
    assert_eq!(t, "SELECT 1 -- how many new\n;");
    assert_eq!(terminated("SELECT 1"), "SELECT 1;");
    assert_eq!(terminated("SELECT ';'"), "SELECT ';';");
}
