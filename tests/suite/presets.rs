//! Presets: the shipped ones parse (and the quick one runs), user presets save, shadow,
//! rename and delete, and bad files and names are refused with file, line and field.

use crate::common;

use std::path::Path;

use pglab::experiment::{ExperimentKind, RunEvent, RunOptions};
use pglab::paths::Paths;
use pglab::preset::{self, Preset, PresetError, shipped};

fn paths(tag: &str) -> Paths {
    let dir = common::temp_dir(tag);
    Paths {
        data_dir: dir.join("data"),
        config_dir: dir.join("config"),
    }
}

fn cleanup(p: &Paths) {
    if let Some(dir) = p.data_dir.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn write_user(p: &Paths, name: &str, text: &str) -> std::path::PathBuf {
    let dir = p.presets_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn every_shipped_preset_parses() {
    assert!(shipped::SHIPPED.len() >= 7);
    for (name, text) in shipped::SHIPPED {
        let p = preset::parse(text, &shipped::file_label(name), Some(name))
            .unwrap_or_else(|e| panic!("shipped preset {name} does not load:\n{e}"));
        assert_eq!(p.name, *name);
        assert!(!p.description.is_empty(), "{name} has no description");
        assert!(p.source.is_some(), "{name} does not say what it reproduces");
        assert!(p.experiment.parse_spec(&p.params).is_ok());
    }
    let p = Paths {
        data_dir: "/nonexistent/data".into(),
        config_dir: "/nonexistent/config".into(),
    };
    let quick = preset::load(&p, "cybertec-quick").unwrap();
    assert_eq!(quick.experiment, ExperimentKind::IndexBuild);
    let (entries, _) = preset::list(&p);
    assert!(
        entries
            .iter()
            .any(|e| e.preset.name == "cybertec-10m" && e.shipped)
    );
}

#[tokio::test]
async fn cybertec_quick_runs_to_completion() {
    let lab = common::lab();
    let mut p = preset::load(&lab.paths, "cybertec-quick").unwrap();
    p.params.insert("rows".into(), "20k".into());
    let spec = p.experiment.parse_spec(&p.params).unwrap();
    let trials = spec.estimate().trials;
    let history = lab.paths.history_file();
    let opts = RunOptions {
        preset: Some(p.name.clone()),
        recorder: Some(pglab::history::recorder(history.clone())),
        ..RunOptions::default()
    };
    let mut h = pglab::experiment::spawn(lab.target(), spec, opts);
    let mut last = None;
    while let Some(ev) = h.events.recv().await {
        if ev.is_final() {
            last = Some(ev);
        }
    }
    let report = match last {
        Some(RunEvent::Finished(r)) => r,
        other => panic!("cybertec-quick did not finish: {other:?}"),
    };
    assert_eq!(report.preset.as_deref(), Some("cybertec-quick"));
    let pglab::experiment::ReportBody::IndexBuild(b) = &report.body else {
        panic!("not an index-build report")
    };
    assert_eq!(b.trials.iter().filter(|t| !t.warmup).count(), trials);
    assert_eq!(b.summary.groups.len(), 2);
    let (runs, _) = pglab::history::read(&history);
    assert!(runs.iter().any(|r| r.run_id == report.run_id));
}

#[test]
fn user_presets_save_shadow_rename_and_delete() {
    let p = paths("user");
    let mine = Preset {
        name: "mine".into(),
        description: "a \"quoted\" description".into(),
        experiment: ExperimentKind::IndexBuild,
        params: [("rows", "50k"), ("mwm", "1MB,4MB"), ("order", "random")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        source: None,
    };
    let path = preset::save(&p, &mine, false).unwrap();
    assert_eq!(path, p.presets_dir().join("mine.toml"));
    assert_eq!(preset::load(&p, "mine").unwrap(), mine);
    let e = preset::save(&p, &mine, false).unwrap_err();
    assert!(matches!(e, PresetError::Exists { .. }), "{e}");
    preset::save(&p, &mine, true).unwrap();
    // No temp files left behind.
    let files: Vec<_> = std::fs::read_dir(p.presets_dir())
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(files.len(), 1);

    // A user preset with a shipped name shadows it, and says so.
    let mut shadow = preset::load(&p, "cybertec-quick").unwrap();
    shadow.params.insert("rows".into(), "20k".into());
    preset::save(&p, &shadow, false).unwrap();
    assert_eq!(
        preset::load(&p, "cybertec-quick").unwrap().params["rows"],
        "20k"
    );
    let (entries, errors) = preset::list(&p);
    assert!(errors.is_empty(), "{errors:?}");
    let e = entries
        .iter()
        .find(|e| e.preset.name == "cybertec-quick")
        .unwrap();
    assert!(!e.shipped && e.shadows_shipped);
    assert_eq!(
        entries
            .iter()
            .filter(|e| e.preset.name == "cybertec-quick")
            .count(),
        1
    );
    preset::delete(&p, "cybertec-quick").unwrap();
    assert_eq!(
        preset::load(&p, "cybertec-quick").unwrap().params["rows"],
        "1M"
    );
    let e = preset::delete(&p, "cybertec-quick").unwrap_err();
    assert!(e.to_string().contains("shipped preset"), "{e}");

    let renamed = preset::rename(&p, "mine", "yours").unwrap();
    assert_eq!(renamed, p.presets_dir().join("yours.toml"));
    assert!(!p.presets_dir().join("mine.toml").exists());
    assert_eq!(preset::load(&p, "yours").unwrap().name, "yours");
    assert!(matches!(
        preset::load(&p, "mine"),
        Err(PresetError::NotFound { .. })
    ));
    assert!(preset::rename(&p, "cybertec-10m", "x").is_err());
    preset::delete(&p, "yours").unwrap();
    cleanup(&p);
}

#[test]
fn bad_files_are_refused_with_file_line_and_field() {
    let p = paths("bad");
    let path = write_user(
        &p,
        "broken",
        "name = \"broken\"\nexperiment = \"index-build\"\n[params\nrows = 1\n",
    );
    let e = preset::load(&p, "broken").unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:3:", path.display())), "{e}");

    let path = write_user(
        &p,
        "unknown",
        "name = \"unknown\"\nexperiment = \"index-build\"\ncolour = \"red\"\n",
    );
    let e = preset::load(&p, "unknown").unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}:3: colour: unknown field", path.display())),
        "{e}"
    );

    let path = write_user(
        &p,
        "param",
        "name = \"param\"\nexperiment = \"index-build\"\n\n[params]\nrows = \"1M\"\nspeed = \"fast\"\nmwm = \"64mb\"\n",
    );
    let e = preset::load(&p, "param").unwrap_err();
    let text = e.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with(&format!("{}:6: speed: unknown parameter", path.display())),
        "{text}"
    );
    assert!(
        lines[1].starts_with(&format!("{}:7: mwm: ", path.display())),
        "{text}"
    );

    write_user(
        &p,
        "kind",
        "name = \"kind\"\nexperiment = \"index-rebuild\"\n",
    );
    let e = preset::load(&p, "kind").unwrap_err().to_string();
    assert!(
        e.contains(":2: experiment: unknown experiment 'index-rebuild'"),
        "{e}"
    );

    write_user(
        &p,
        "other",
        "name = \"not-other\"\nexperiment = \"index-build\"\n",
    );
    let e = preset::load(&p, "other").unwrap_err().to_string();
    assert!(e.contains(":1: name: the file is other.toml"), "{e}");

    // list still lists the good ones and reports each bad file.
    let (entries, errors) = preset::list(&p);
    assert!(entries.iter().any(|e| e.preset.name == "cybertec-10m"));
    for bad in ["broken", "unknown", "param", "kind", "other"] {
        assert!(
            errors
                .iter()
                .any(|e| e.to_string().contains(&format!("{bad}.toml"))),
            "{bad}: {errors:?}"
        );
    }
    cleanup(&p);
}

#[test]
fn names_cannot_escape_the_presets_directory() {
    let p = paths("escape");
    let outside = p.config_dir.join("outside.toml");
    std::fs::create_dir_all(&p.config_dir).unwrap();
    std::fs::write(
        &outside,
        "name = \"outside\"\nexperiment = \"index-build\"\n",
    )
    .unwrap();
    for bad in [
        "../outside",
        "/etc/passwd",
        "a/b",
        "..",
        "x.toml",
        "",
        &"n".repeat(65),
    ] {
        let e = preset::load(&p, bad).unwrap_err();
        assert!(matches!(e, PresetError::BadName { .. }), "{bad:?}: {e}");
        assert!(e.to_string().contains("bad preset name"), "{e}");
        let attempt = Preset {
            name: bad.to_string(),
            description: String::new(),
            experiment: ExperimentKind::IndexBuild,
            params: Default::default(),
            source: None,
        };
        assert!(preset::save(&p, &attempt, true).is_err());
        assert!(preset::delete(&p, bad).is_err());
    }
    assert!(outside.exists());
    // A file in the directory whose name is not a preset name is reported, not loaded.
    write_user(
        &p,
        "has space",
        "name = \"x\"\nexperiment = \"index-build\"\n",
    );
    let (_, errors) = preset::list(&p);
    assert!(
        errors
            .iter()
            .any(|e| e.to_string().contains("has space.toml")),
        "{errors:?}"
    );
    cleanup(&p);
}

fn pglab(p: &Paths) -> std::process::Command {
    let mut c = std::process::Command::new(common::TestLab::bin());
    c.env("PGLAB_DATA_DIR", &p.data_dir)
        .env("PGLAB_CONFIG_DIR", &p.config_dir);
    c
}

fn out(c: &mut std::process::Command) -> (i32, String, String) {
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn the_presets_command_saves_lists_shows_and_deletes() {
    let p = paths("cli");
    let (code, stdout, stderr) = out(pglab(&p).args([
        "presets",
        "save",
        "small",
        "index-build",
        "--rows",
        "20k",
        "--mwm",
        "1MB,16MB",
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("small.toml"), "{stdout}");
    let text = std::fs::read_to_string(p.presets_dir().join("small.toml")).unwrap();
    assert!(text.contains("rows = \"20k\""), "{text}");

    let (code, _, stderr) = out(pglab(&p).args(["presets", "save", "small", "index-build"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("--force"), "{stderr}");

    let (code, _, stderr) = out(pglab(&p).args([
        "presets",
        "save",
        "derived",
        "index-build",
        "--preset",
        "cybertec-quick",
        "--repeat",
        "2",
    ]));
    assert_eq!(code, 0, "{stderr}");
    let d = preset::load(&p, "derived").unwrap();
    assert_eq!(
        (d.params["repeat"].as_str(), d.params["rows"].as_str()),
        ("2", "1M")
    );

    let (code, _, stderr) =
        out(pglab(&p).args(["presets", "save", "bad", "index-build", "--mwm", "512kB"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("--mwm: 512kB is below"), "{stderr}");
    // A bad value names the flag, not a file that was never written.
    assert!(stderr.contains("preset 'bad' not saved"), "{stderr}");
    assert!(!stderr.contains(".toml"), "{stderr}");
    assert!(!p.presets_dir().join("bad.toml").exists());

    // The README's order: the experiment's flags, then --description.
    let (code, _, stderr) = out(pglab(&p).args([
        "presets",
        "save",
        "readme",
        "ingest",
        "--batch",
        "16",
        "--description",
        "T",
    ]));
    assert_eq!(code, 0, "{stderr}");
    let r = preset::load(&p, "readme").unwrap();
    assert_eq!(
        (r.description.as_str(), r.params["batch"].as_str()),
        ("T", "16")
    );
    // --force after the flags too; run's options are not preset options.
    let (code, _, stderr) = out(pglab(&p).args([
        "presets", "save", "readme", "ingest", "--batch", "32", "--force",
    ]));
    assert_eq!(code, 0, "{stderr}");
    for run_only in ["--format", "--yes", "--no-history", "--statement-timeout"] {
        let (code, _, stderr) =
            out(pglab(&p).args(["presets", "save", "x", "ingest", run_only, "json"]));
        assert_eq!(code, 2, "{run_only}: {stderr}");
    }
    let (_, help, _) = out(pglab(&p).args(["presets", "save", "--help"]));
    for run_only in ["--format", "--yes", "--no-history", "--statement-timeout"] {
        assert!(!help.contains(run_only), "{run_only} in:\n{help}");
    }
    assert!(
        help.contains("--description") && help.contains("--preset"),
        "{help}"
    );

    let (code, stdout, _) = out(pglab(&p).args(["presets", "list"]));
    assert_eq!(code, 0);
    for name in ["small", "derived", "cybertec-10m", "cybertec-quick"] {
        assert!(stdout.contains(name), "{name} missing:\n{stdout}");
    }
    let (code, stdout, _) = out(pglab(&p).args(["presets", "show", "small"]));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("1MB,16MB") && stdout.contains("(default)"),
        "{stdout}"
    );

    let (code, _, stderr) = out(pglab(&p).args(["presets", "show", "../etc"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("bad preset name"), "{stderr}");

    let (code, _, _) = out(pglab(&p).args(["presets", "delete", "small"]));
    assert_eq!(code, 0);
    assert!(!Path::new(&p.presets_dir().join("small.toml")).exists());
    let (code, _, stderr) = out(pglab(&p).args(["presets", "delete", "cybertec-10m"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("shipped preset"), "{stderr}");

    let (code, _, stderr) = out(pglab(&p).args(["run", "--preset", "nope"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("no preset named 'nope'"), "{stderr}");
    cleanup(&p);
}
