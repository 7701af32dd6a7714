//! The preset picker and the history overlay: messages in, state and commands out; and how
//! they draw at 80×24 and 160×48.

use std::time::Instant;

use crossterm::event::KeyCode;

use super::app::{App, Confirm, Focus, Overlay};
use super::fixture::{self, code, key, screen, typed};
use super::msg::{Command, Msg, PresetOp};
use super::update::update;
use crate::experiment::{ExperimentKind, Outcome, RunReport};
use crate::preset::{Preset, PresetEntry, PresetError};

const SMALL: (u16, u16) = (80, 24);
const LARGE: (u16, u16) = (160, 48);

fn entry(name: &str, kind: ExperimentKind, params: &[(&str, &str)], shipped: bool) -> PresetEntry {
    PresetEntry {
        preset: Preset {
            name: name.into(),
            description: format!("{name}: a test preset"),
            experiment: kind,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            source: None,
        },
        shipped,
        shadows_shipped: false,
        path: None,
    }
}

fn entries() -> Vec<PresetEntry> {
    let mut shadow = entry(
        "cybertec-quick",
        ExperimentKind::IndexBuild,
        &[("rows", "1M")],
        false,
    );
    shadow.shadows_shipped = true;
    vec![
        entry(
            "cybertec-10m",
            ExperimentKind::IndexBuild,
            &[("rows", "10M")],
            true,
        ),
        shadow,
        entry(
            "my-ingest",
            ExperimentKind::Ingest,
            &[("rows", "50k")],
            false,
        ),
    ]
}

pub(super) fn picker(size: (u16, u16)) -> App {
    let mut app = fixture::idle_app(size, Instant::now());
    let cmds = update(&mut app, key('p'));
    assert_eq!(cmds, [Command::LoadPresets]);
    assert_eq!(app.overlay, Overlay::Presets);
    update(
        &mut app,
        Msg::Presets {
            entries: entries(),
            problems: vec!["bad.toml: line 2: unknown key 'rowz'".into()],
        },
    );
    app
}

fn run(id: &str, kind: ExperimentKind, secs: f64) -> RunReport {
    let mut r = fixture::report(&format!("{}:x", kind.as_str()), Outcome::Finished, secs);
    r.run_id = id.into();
    r
}

/// The overlay with three runs, oldest first as the file holds them.
pub(super) fn runs_view(size: (u16, u16)) -> App {
    let mut app = fixture::idle_app(size, Instant::now());
    let cmds = update(&mut app, key('h'));
    assert_eq!(cmds, [Command::LoadRuns]);
    assert_eq!(app.overlay, Overlay::Runs);
    let mut ingest = run("20250102T050000Z-cccc", ExperimentKind::IndexBuild, 9.0);
    ingest.preset = Some("cybertec-quick".into());
    update(
        &mut app,
        Msg::Runs {
            runs: vec![
                run("20250102T030405Z-aaaa", ExperimentKind::IndexBuild, 12.0),
                run("20250102T040000Z-bbbb", ExperimentKind::IndexBuild, 10.0),
                ingest,
            ],
            warnings: Vec::new(),
        },
    );
    app
}

#[test]
fn picking_a_preset_loads_its_experiment_and_fields() {
    let mut app = picker((100, 30));
    assert_eq!(app.presets.entries.len(), 3);
    update(&mut app, code(KeyCode::Down));
    update(&mut app, code(KeyCode::Down));
    update(&mut app, code(KeyCode::Down)); // stays on the last
    assert_eq!(app.presets.selected, 2);
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(app.focus, Focus::Params);
    assert_eq!(app.params.kind, ExperimentKind::Ingest);
    assert_eq!(app.params.current()["rows"], "50k");
    // The other fields are the experiment's defaults.
    let defaults = ExperimentKind::Ingest.defaults();
    assert_eq!(app.params.current().len(), defaults.len());
    assert!(
        matches!(cmds.as_slice(), [Command::LoadHistory { spec_key, .. }] if spec_key.starts_with("ingest:")),
        "{cmds:?}"
    );
    assert!(app.notice.as_ref().unwrap().text.contains("my-ingest"));
    // Runs of it record the preset until a value changes.
    assert_eq!(app.params.preset_name().as_deref(), Some("my-ingest"));
    app.params.set_value("rows", "60k");
    assert_eq!(app.params.preset_name(), None);
}

#[test]
fn saving_with_a_bad_name_says_why_and_keeps_the_input() {
    let mut app = picker((100, 30));
    update(&mut app, key('S'));
    assert!(app.presets.input.is_some());
    typed(&mut app, "my preset");
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert!(cmds.is_empty());
    assert!(app.presets.input.is_some());
    let m = app.presets.message.as_ref().expect("a reason");
    assert!(m.text.contains("use only letters, digits"), "{}", m.text);
    // Fix it: the save goes out without overwriting.
    for _ in 0.." preset".len() {
        update(&mut app, code(KeyCode::Backspace));
    }
    typed(&mut app, "-2");
    let cmds = update(&mut app, code(KeyCode::Enter));
    let [Command::Preset(PresetOp::Save { preset, overwrite })] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert!(!overwrite);
    assert_eq!(preset.name, "my-2");
    assert_eq!(preset.experiment, app.params.kind);
    assert_eq!(&preset.params, app.params.current());
    // It exists: ask, and on y save over it.
    let exists = PresetError::Exists {
        name: "my-2".into(),
        path: "/x/my-2.toml".into(),
    };
    let op = PresetOp::Save {
        preset: preset.clone(),
        overwrite: false,
    };
    update(
        &mut app,
        Msg::PresetDone {
            op,
            result: Err(exists),
        },
    );
    assert!(matches!(
        app.overlay,
        Overlay::Confirm(Confirm::OverwritePreset { .. })
    ));
    let cmds = update(&mut app, key('y'));
    assert!(
        matches!(
            cmds.as_slice(),
            [Command::Preset(PresetOp::Save {
                overwrite: true,
                ..
            })]
        ),
        "{cmds:?}"
    );
    assert_eq!(app.overlay, Overlay::Presets);
    let op = PresetOp::Save {
        preset: preset.clone(),
        overwrite: true,
    };
    let cmds = update(&mut app, Msg::PresetDone { op, result: Ok(()) });
    assert_eq!(cmds, [Command::LoadPresets]);
    assert!(app.presets.message.as_ref().unwrap().text.contains("saved"));
}

#[test]
fn deleting_asks_first_and_shipped_presets_stay() {
    let mut app = picker((100, 30));
    // The shipped one cannot be deleted or renamed.
    assert!(update(&mut app, key('D')).is_empty());
    assert_eq!(app.overlay, Overlay::Presets);
    assert!(
        app.presets
            .message
            .as_ref()
            .unwrap()
            .text
            .contains("shipped preset")
    );
    assert!(update(&mut app, key('R')).is_empty());
    assert!(app.presets.input.is_none());
    // Yours: asked, n keeps it, y deletes it.
    update(&mut app, code(KeyCode::Down));
    assert!(update(&mut app, key('D')).is_empty());
    let Overlay::Confirm(Confirm::DeletePreset { name, question }) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert_eq!(name, "cybertec-quick");
    assert!(question.contains("shipped one of that name shows again"));
    assert!(update(&mut app, key('n')).is_empty());
    assert_eq!(app.overlay, Overlay::Presets);
    update(&mut app, key('D'));
    let cmds = update(&mut app, key('y'));
    assert_eq!(
        cmds,
        [Command::Preset(PresetOp::Delete {
            name: "cybertec-quick".into()
        })]
    );
    // Rename goes through the name input.
    update(&mut app, key('R'));
    for _ in 0.."cybertec-quick".len() {
        update(&mut app, code(KeyCode::Backspace));
    }
    typed(&mut app, "quick");
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert_eq!(
        cmds,
        [Command::Preset(PresetOp::Rename {
            from: "cybertec-quick".into(),
            to: "quick".into()
        })]
    );
    update(&mut app, code(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn history_filters_marks_a_baseline_and_compares() {
    let mut app = runs_view((100, 30));
    // Newest first.
    assert_eq!(app.runs.shown()[0].run_id, "20250102T050000Z-cccc");
    // f: index-build only, then the others (none), then all again.
    update(&mut app, key('f'));
    assert_eq!(app.runs.filter, Some(ExperimentKind::IndexBuild));
    assert_eq!(app.runs.shown().len(), 3);
    update(&mut app, key('f'));
    assert_eq!(app.runs.filter, Some(ExperimentKind::Ingest));
    assert!(app.runs.shown().is_empty());
    // growth, query, then all again.
    update(&mut app, key('f'));
    update(&mut app, key('f'));
    update(&mut app, key('f'));
    assert_eq!(app.runs.filter, None);
    // c without a baseline says how.
    update(&mut app, key('c'));
    assert!(
        app.runs
            .message
            .as_ref()
            .unwrap()
            .text
            .contains("no baseline")
    );
    // Oldest run as the baseline, compared with the newest.
    update(&mut app, code(KeyCode::Down));
    update(&mut app, code(KeyCode::Down));
    update(&mut app, key('b'));
    assert_eq!(app.runs.baseline.as_deref(), Some("20250102T030405Z-aaaa"));
    update(&mut app, key('c'));
    assert!(app.runs.view.is_none(), "the baseline with itself");
    update(&mut app, code(KeyCode::Up));
    update(&mut app, code(KeyCode::Up));
    update(&mut app, key('c'));
    let v = app.runs.view.as_ref().expect("a comparison");
    assert!(v.title.contains("Compare"), "{}", v.title);
    assert!(!v.lines.is_empty());
    update(&mut app, code(KeyCode::PageDown));
    update(&mut app, code(KeyCode::Esc));
    assert!(app.runs.view.is_none());
    assert_eq!(app.overlay, Overlay::Runs);
    // Enter opens the selected run's report.
    update(&mut app, code(KeyCode::Enter));
    let v = app.runs.view.as_ref().expect("a report");
    assert!(v.title.contains("20250102T050000Z-cccc"));
    update(&mut app, code(KeyCode::Esc));
    update(&mut app, code(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn preset_picker_draws() {
    for size in [SMALL, LARGE] {
        let mut app = picker(size);
        update(&mut app, code(KeyCode::Down));
        let s = screen(&app);
        for t in [
            "Presets",
            "cybertec-10m",
            "shipped",
            "yours, shadows shipped",
            "my-ingest",
            "bad.toml",
            "S save current",
        ] {
            assert!(s.contains(t), "{t} missing at {size:?}:\n{s}");
        }
        insta::assert_snapshot!(format!("presets_{}x{}", size.0, size.1), s);
    }
}

#[test]
fn history_overlay_draws() {
    for size in [SMALL, LARGE] {
        let mut app = runs_view(size);
        let s = screen(&app);
        let last = if size == LARGE {
            "outcome"
        } else {
            "index-build"
        };
        for t in ["History", "20250102T050000Z-cccc", "cybertec-quick", last] {
            assert!(s.contains(t), "{t} missing at {size:?}:\n{s}");
        }
        insta::assert_snapshot!(format!("history_{}x{}", size.0, size.1), s);
        if size == SMALL {
            // Wider than the screen: → shows the rest.
            for _ in 0..5 {
                update(&mut app, code(KeyCode::Right));
            }
            let s = screen(&app);
            assert!(s.contains("outcome"), "{s}");
            assert!(s.contains("finished"), "{s}");
        }
        update(&mut app, code(KeyCode::Enter));
        let s = screen(&app);
        assert!(s.contains("Run 20250102T050000Z-cccc"), "{s}");
        assert!(s.contains("Esc back"), "{s}");
        insta::assert_snapshot!(format!("history_report_{}x{}", size.0, size.1), s);
    }
}
