//! Headless usage errors and help: a bad value gets the field's own sentence whatever its
//! spelling, and `run EXPERIMENT --help` groups its flags.

use std::process::Command;

fn pglab(args: &[&str]) -> std::process::Output {
    let dir = std::env::temp_dir().join(format!("pglab-cli-usage-{}", std::process::id()));
    Command::new(env!("CARGO_BIN_EXE_pglab"))
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_negative_count_is_a_bad_value_not_an_unknown_flag() {
    for args in [
        &["run", "index-build", "--rows", "-5"][..],
        &["run", "index-build", "--rows=-5"][..],
    ] {
        let o = pglab(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("--rows: '-5' is not a count"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
}

#[test]
fn run_help_groups_parameters_run_options_and_global_options() {
    let o = pglab(&["run", "ingest", "--help"]);
    let text = String::from_utf8_lossy(&o.stdout);
    let at = |h: &str| {
        text.find(h)
            .unwrap_or_else(|| panic!("{h} missing:\n{text}"))
    };
    let (params, run, global) = (
        at("ingest parameters:"),
        at("Run options:"),
        at("Global options:"),
    );
    assert!(params < run && run < global, "{text}");
    let rows = &text[params..run];
    assert!(
        rows.contains("--batch") && rows.contains("--repeat"),
        "{rows}"
    );
    assert!(
        !rows.contains("--db"),
        "a global flag among the parameters:\n{rows}"
    );
}

#[test]
fn citus_workers_with_another_server_says_which_wins() {
    let o = pglab(&["--citus-workers", "2", "--db", "host=/tmp port=1", "probe"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--citus-workers makes pglab's own sandbox a Citus cluster"),
        "{err}"
    );
}
