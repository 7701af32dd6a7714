//! A captured workload's replay on pglab's sandbox leaves out a statement it cannot run (a
//! missing extension's function, a table that is not there) with a sentence naming it, its
//! SQLSTATE and message, and says the coverage left; the other statements are measured. A
//! workload none of whose statements can run stops with one sentence.

use crate::common;

use std::path::PathBuf;

/// A file in the shape `pglab capture` writes: name, weight (calls), production's line.
fn captured(statements: &[(&str, u64, f64, &str)]) -> String {
    let mut out = String::from("-- pglab capture: a test workload\n");
    for (name, calls, mean_ms, sql) in statements {
        out.push_str(&format!(
            "\n-- name: {name}\n-- weight: {calls}\n-- production: {calls} calls, 10.0 % of the time; mean {mean_ms:.3} ms, stddev 0.010 ms; per call 1.00 rows, 1.0 shared blocks hit, 0.0 read, 0.0 temp\n{sql};\n"
        ));
    }
    out
}

fn write(tag: &str, text: &str) -> PathBuf {
    let dir = common::temp_dir(tag);
    let path = dir.join("w.sql");
    std::fs::write(&path, text).unwrap();
    path
}

fn run(path: &PathBuf, format: &str) -> (Option<i32>, String, String) {
    let out = common::lab()
        .command()
        .args(["--keep-sandbox", "run", "query", "--file"])
        .arg(path)
        .args(["--repeat", "2", "--no-history", "--format", format])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_statement_the_sandbox_cannot_run_is_left_out_with_the_coverage_said() {
    let path = write(
        "replay-skip",
        &captured(&[
            ("one", 100, 1.0, "SELECT 1"),
            (
                "series",
                50,
                2.0,
                "SELECT count(*) FROM generate_series(1, 100)",
            ),
            ("reset", 10, 8.0, "SELECT pg_stat_statements_reset()"),
            ("gone", 10, 1.0, "SELECT * FROM no_such_table_here"),
        ]),
    );
    let (code, stdout, stderr) = run(&path, "json");
    assert_eq!(code, Some(0), "{stderr}\n{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let names: std::collections::BTreeSet<&str> = report["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["one", "series"],
        "{report}"
    );
    let replay = &report["replay"];
    assert_eq!(replay["kept"], 2, "{report}");
    assert_eq!(replay["captured"], 4, "{report}");
    let skipped: Vec<(&str, &str)> = replay["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["sqlstate"].as_str().unwrap()))
        .collect();
    assert_eq!(skipped, [("reset", "42883"), ("gone", "42P01")], "{replay}");
    // 100×1 + 50×2 of 100×1 + 50×2 + 10×8 + 10×1 ms.
    let share = replay["time_share"].as_f64().unwrap();
    assert!((share - 200.0 / 290.0).abs() < 1e-6, "{share}");
    let text = report.to_string();
    for said in [
        "left out of the replay: reset (line 16) cannot run here (SQLSTATE 42883: function pg_stat_statements_reset() does not exist)",
        "left out of the replay: gone (line 21) cannot run here (SQLSTATE 42P01: relation \\\"no_such_table_here\\\" does not exist)",
        "the replay covers 2 of 4 captured statements, 69.0 % of the captured statement time",
    ] {
        assert!(text.contains(said), "{said}\n{text}");
    }
    // The same sentences in the text and Markdown reports.
    for format in ["text", "md"] {
        let (code, stdout, stderr) = run(&path, format);
        assert_eq!(code, Some(0), "{format}: {stderr}");
        for said in [
            "left out of the replay: reset (line 16)",
            "the replay covers 2 of 4 captured statements, 69.0 %",
        ] {
            assert!(stdout.contains(said), "{format}: {said}\n{stdout}");
        }
    }
}

#[test]
fn a_replay_none_of_whose_statements_can_run_stops_with_a_sentence() {
    let path = write(
        "replay-none",
        &captured(&[
            ("reset", 10, 8.0, "SELECT pg_stat_statements_reset()"),
            ("gone", 10, 1.0, "SELECT * FROM no_such_table_here"),
        ]),
    );
    let (code, stdout, stderr) = run(&path, "json");
    assert_ne!(code, Some(0), "{stdout}");
    assert!(
        stderr.contains("none of the 2 captured statements can run here")
            && stderr.contains("SQLSTATE 42883"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_hand_written_file_with_a_broken_statement_is_still_refused() {
    let path = write(
        "replay-hand",
        "SELECT 1;\nSELECT * FROM no_such_table_here;\n",
    );
    let (code, _, stderr) = run(&path, "json");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no_such_table_here"), "{stderr}");
}

/// The TUI's road to a run passes the same gate: a captured file with a statement the
/// sandbox cannot run is let through (the run leaves it out, as above), a hand-written one
/// with the same statement is refused.
#[tokio::test]
async fn the_tuis_road_lets_a_replay_through_and_refuses_a_hand_written_file() {
    use pglab::tui::runtime::prepare::{Road, verdict};
    let lab = common::lab();
    let road = Road {
        target: lab.target(),
        sandbox: Some(lab.sandbox.clone()),
        schema: "pglab".into(),
        local_data_dir: None,
    };
    let spec = |path: &PathBuf| {
        let p: pglab::experiment::ParamText = [("file".to_string(), path.display().to_string())]
            .into_iter()
            .collect();
        pglab::experiment::ExperimentKind::Query
            .parse_spec(&p)
            .unwrap()
    };
    let captured = write(
        "replay-tui",
        &captured(&[
            ("one", 100, 1.0, "SELECT 1"),
            ("reset", 10, 8.0, "SELECT pg_stat_statements_reset()"),
        ]),
    );
    let v = verdict(&road, &spec(&captured), None).await;
    assert_eq!(v.refuse, None);
    let hand = write(
        "replay-tui-hand",
        "SELECT 1;\nSELECT pg_stat_statements_reset();\n",
    );
    let v = verdict(&road, &spec(&hand), None).await;
    assert!(
        v.refuse
            .as_deref()
            .is_some_and(|r| r.contains("pg_stat_statements_reset")),
        "{:?}",
        v.refuse
    );
}
