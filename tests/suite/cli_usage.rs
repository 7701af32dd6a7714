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

/// Every long flag pglab's command line knows, in every subcommand.
fn known_flags() -> std::collections::BTreeSet<String> {
    use clap::CommandFactory;
    fn walk(c: &clap::Command, out: &mut std::collections::BTreeSet<String>) {
        for a in c.get_arguments() {
            if let Some(l) = a.get_long() {
                out.insert(l.to_string());
            }
        }
        for s in c.get_subcommands() {
            walk(s, out);
        }
    }
    let mut out = std::collections::BTreeSet::new();
    walk(&pglab::cli::Cli::command(), &mut out);
    out
}

/// The `.rs` files under `dir`.
fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_flag_a_message_names_is_a_real_flag() {
    // Other programs' flags pglab mentions (pg_config, initdb) and clap's own.
    let others = [
        "pkglibdir",
        "sharedir",
        "bindir",
        "no-sync",
        "locale",
        "system",
        "help",
        "version",
    ];
    let known = known_flags();
    let mut files = Vec::new();
    sources(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut wrong = Vec::new();
    let mut checked = 0;
    for f in files {
        // Messages, not tests: a test module (at the end of a file, or a `*_tests.rs` file)
        // may spell a wrong flag on purpose.
        if f.to_string_lossy().ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim() == "#[cfg(test)]" {
                break;
            }
            // Only inside string literals: the text between quotes on the line.
            for (i, lit) in line.split('"').enumerate() {
                if i % 2 == 0 {
                    continue;
                }
                let mut rest = lit;
                while let Some(at) = rest.find("--") {
                    let name: String = rest[at + 2..]
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
                        .collect();
                    rest = &rest[at + 2..];
                    let name = name.trim_end_matches('-');
                    if name.is_empty() {
                        continue;
                    }
                    checked += 1;
                    if known.contains(name) || others.contains(&name) {
                        continue;
                    }
                    wrong.push(format!("{}:{}: --{name}", f.display(), n + 1));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "the scan found only {checked} flags in messages"
    );
    assert!(
        wrong.is_empty(),
        "messages name flags that do not exist:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn own_knobs_refused_in_set_name_the_flag_that_sweeps_them() {
    for (args, flag) in [
        (
            &["run", "ingest", "--set", "synchronous_commit=on,off"][..],
            "--sync-commit",
        ),
        (
            &[
                "run",
                "index-build",
                "--set",
                "maintenance_work_mem=1MB,64MB",
            ],
            "--mwm",
        ),
        (
            &[
                "run",
                "index-build",
                "--set",
                "max_parallel_maintenance_workers=0,2",
            ],
            "--workers",
        ),
    ] {
        let o = pglab(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("sweep it with {flag}")),
            "{args:?}: {err}"
        );
        assert!(
            known_flags().contains(flag.trim_start_matches('-')),
            "{flag}"
        );
    }
}

#[test]
fn settings_an_index_build_never_reads_are_refused_with_the_one_it_does() {
    for (set, reads, flag) in [
        (
            "work_mem=4MB,64MB",
            "sorts in maintenance_work_mem",
            "--mwm",
        ),
        (
            "hash_mem_multiplier=1,2",
            "sorts in maintenance_work_mem",
            "--mwm",
        ),
        (
            "max_parallel_workers_per_gather=0,4",
            "max_parallel_maintenance_workers",
            "--workers",
        ),
    ] {
        let o = pglab(&["run", "index-build", "--set", set]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{set}: {err}");
        let name = set.split('=').next().unwrap();
        assert!(
            err.contains(&format!("{name} does not change this experiment")),
            "{set}: {err}"
        );
        assert!(
            err.contains(reads) && err.contains(&format!("which {flag} sweeps")),
            "{set}: {err}"
        );
    }
    // Settings the build does read are swept as before (refused later only for want of a
    // server, not for the setting): nothing listens on port 1, so the run stops at connecting
    // instead of starting a sandbox and building the default million rows.
    let o = pglab(&[
        "--db",
        "host=127.0.0.1 port=1 connect_timeout=2",
        "run",
        "index-build",
        "--set",
        "wal_compression=off,pglz",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("does not change"), "{err}");
    assert!(err.contains("connection refused by 127.0.0.1:1"), "{err}");
}

#[test]
fn zero_query_clients_is_refused_not_a_quiet_off() {
    let o = pglab(&["run", "query", "--sql", "SELECT 1", "--clients", "0"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("0 clients would run nothing: write off to time single executions"),
        "{err}"
    );
}

#[test]
fn tune_help_lists_every_setting_the_durability_flag_opens() {
    let o = pglab(&["tune", "--help"]);
    let text = String::from_utf8_lossy(&o.stdout);
    let at = text
        .find("--allow-durability-tradeoff")
        .unwrap_or_else(|| panic!("{text}"));
    let help = &text[at..text[at..].find("\n\n").map_or(text.len(), |e| at + e)];
    for s in pglab::tune::candidates::DURABILITY {
        assert!(help.contains(s), "{s} missing from:\n{help}");
    }
}

#[test]
fn a_reader_that_stops_reading_gets_no_stack_trace() {
    // `pglab presets list | head -1`: the reader is gone before pglab prints.
    let dir = std::env::temp_dir().join(format!("pglab-pipe-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_pglab"))
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .args(["presets", "list"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(141), "{err}");
}

#[test]
fn a_tune_never_replaces_its_script_unasked() {
    let dir = std::env::temp_dir().join(format!("pglab-cli-tune-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let tune = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_pglab"))
            .env("PGLAB_DATA_DIR", dir.join("data"))
            .env("PGLAB_CONFIG_DIR", dir.join("config"))
            .current_dir(&dir)
            // Nothing listens there: the tune stops at connecting, after the files are settled.
            .args(["--db", "host=127.0.0.1 port=1 connect_timeout=2", "tune"])
            .args(["--workload", "ingest", "--budget", "1min"])
            .args(args)
            .output()
            .unwrap()
    };
    std::fs::write(dir.join("mine.sql"), "-- mine").unwrap();
    // A path given with --out: refused before anything runs, the file untouched.
    let o = tune(&["--out", "mine.sql"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "--out: mine.sql already there; add --force to replace it, or choose another path"
        ),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("mine.sql")).unwrap(),
        "-- mine"
    );
    // --force goes on (to the connection, which fails here).
    let err = String::from_utf8_lossy(&tune(&["--out", "mine.sql", "--force"]).stderr).into_owned();
    assert!(!err.contains("already there"), "{err}");
    // The default name taken: the numbered one, said before the tune starts.
    std::fs::write(dir.join("tune.md"), "notes").unwrap();
    let err = String::from_utf8_lossy(&tune(&[]).stderr).into_owned();
    assert!(
        err.contains("tune.md already there: writing tune-2.sql, tune-2.md and tune-2.svg instead (--force replaces)"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_size_flag_of_tune_is_one_sentence_with_an_example() {
    let out = pglab(&[
        "tune",
        "--workload",
        "ingest",
        "--budget",
        "60s",
        "--max-memory",
        "lots",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--max-memory lots:") && err.contains("(write it as 48GB)"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
