use super::*;

fn sqls(text: &str) -> Vec<String> {
    split(text).unwrap().into_iter().map(|s| s.sql).collect()
}

#[test]
fn splits_at_top_level_semicolons_only() {
    assert_eq!(sqls("SELECT 1; SELECT 2;"), ["SELECT 1", "SELECT 2"]);
    assert_eq!(
        sqls("SELECT ';' ; SELECT 'it''s;'"),
        ["SELECT ';'", "SELECT 'it''s;'"]
    );
    assert_eq!(
        sqls(r"SELECT E'\';' ; SELECT 2"),
        [r"SELECT E'\';'", "SELECT 2"]
    );
    // Without E, a backslash is an ordinary character.
    assert_eq!(sqls(r"SELECT '\'; SELECT 2"), [r"SELECT '\'", "SELECT 2"]);
    assert_eq!(
        sqls(r#"SELECT 1 AS "a;b"; SELECT 2"#),
        [r#"SELECT 1 AS "a;b""#, "SELECT 2"]
    );
    assert_eq!(
        sqls("DO $x$ BEGIN PERFORM 1; END $x$; SELECT $$;$$"),
        ["DO $x$ BEGIN PERFORM 1; END $x$", "SELECT $$;$$"]
    );
    assert_eq!(
        sqls("SELECT 1 /* ; /* ; */ ; */ ; -- ;\n SELECT 2"),
        ["SELECT 1 /* ; /* ; */ ; */", "SELECT 2"]
    );
    // A parameter-like $1 is not a dollar quote.
    assert_eq!(sqls("SELECT $1; SELECT 2"), ["SELECT $1", "SELECT 2"]);
    assert_eq!(
        sqls(
            "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END; SELECT 3"
        ),
        [
            "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END",
            "SELECT 3"
        ]
    );
    assert!(sqls(" ;; -- nothing\n ; ").is_empty());
}

#[test]
fn names_come_from_comments_or_first_lines() {
    let s = split(
        "-- the nightly report\n-- name: nightly\nSELECT a,\n  b FROM t;\n\nSELECT count(*) FROM t;\nSELECT count(*) FROM t",
    )
    .unwrap();
    assert_eq!(s[0].name, "nightly");
    assert_eq!(s[0].sql, "SELECT a,\n  b FROM t");
    assert_eq!(s[0].line, 3);
    assert_eq!(s[1].name, "SELECT count(*) FROM t");
    assert_eq!(s[1].line, 6);
    assert_eq!(s[2].name, "SELECT count(*) FROM t (2)");
    let long = format!("SELECT {} FROM t", "x, ".repeat(40));
    let n = &split(&long).unwrap()[0].name;
    assert!(n.ends_with('…') && n.chars().count() <= NAME_CHARS, "{n}");
}

#[test]
fn a_captured_production_mean_is_kept_with_its_statement() {
    let s = split(
        "-- name: a\n-- weight: 5\n-- production: 500 calls, 7.5 % of the time; mean 0.042 ms, stddev 0.021 ms; per call 1.00 rows\nSELECT 1;\nSELECT 2",
    )
    .unwrap();
    assert_eq!(s[0].production_mean_ns, Some(42_000));
    assert_eq!(s[1].production_mean_ns, None);
    assert_eq!(
        production_mean("mean 120 ms, stddev 3 ms"),
        Some(120_000_000)
    );
    assert_eq!(production_mean("mean soon"), None);
}

#[test]
fn weights_come_from_comments_before_a_statement() {
    let s = split("-- name: a\n-- weight: 5\nSELECT 1;\nSELECT 2 -- weight: 9\n;").unwrap();
    assert_eq!((s[0].name.as_str(), s[0].weight), ("a", Some(5)));
    // A comment after the first token is the statement's own, not its weight.
    assert_eq!(s[1].weight, None);
    let e = split("SELECT 1;\n-- weight: 0\nSELECT 2").unwrap_err();
    assert_eq!(
        e,
        "line 2: weight '0' is not a whole number of at least 1 (write -- weight: 5)"
    );
    assert!(split("-- weight: lots\nSELECT 1").is_err());
}

#[test]
fn meta_commands_and_missing_files_are_sentences() {
    let e = split("SELECT 1;\n\\timing on\nSELECT 2").unwrap_err();
    assert_eq!(
        e,
        "line 2: \\timing is a psql meta-command, not SQL: leave it out"
    );
    let e = resolve("@/nonexistent/q.sql").unwrap_err();
    assert_eq!(e, "cannot read /nonexistent/q.sql: no such file");
    assert_eq!(resolve("  SELECT 1 ").unwrap(), "SELECT 1");
    assert!(resolve("@").is_err());
}

#[test]
fn first_words_skip_comments_and_parentheses() {
    assert_eq!(first_keyword("/* x */ -- y\n (SELECT 1)"), "SELECT");
    assert_eq!(words("with recursive t AS (", 2), ["WITH", "RECURSIVE"]);
    assert_eq!(first_keyword(""), "");
    assert_eq!(digest("a"), digest("a"));
    assert_ne!(digest("a"), digest("b"));
}

#[test]
fn the_lexer_is_the_servers_own() {
    // Unicode escapes, a bit string and a type-cast literal hold no split point.
    assert_eq!(
        sqls("SELECT U&'d\\0061t;a', B'1010', int ';1'; SELECT 2"),
        ["SELECT U&'d\\0061t;a', B'1010', int ';1'", "SELECT 2"]
    );
    // A dollar quote's tag must match to close it.
    assert_eq!(
        sqls("SELECT $a$ $b$ ; $a$; SELECT 2"),
        ["SELECT $a$ $b$ ; $a$", "SELECT 2"]
    );
    // An unterminated quote or comment is the lexer's sentence, and `unterminated` says so.
    assert_eq!(
        split("SELECT 'open; SELECT 2").unwrap_err(),
        "unterminated quoted string at or near \"'open; SELECT 2\""
    );
    assert!(unterminated("SELECT 'open"));
    assert!(unterminated("SELECT 1 /* open"));
    assert!(unterminated("SELECT $x$ open"));
    assert!(!unterminated("SELECT 'closed'"));
}
