//! The parameter editor: a field's error is readable at every size, under the name the flag,
//! the preset key and the message share.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::fixture::{self, code, press, screen};
use super::msg::Msg;
use super::update::update;

/// Select the field `key` and type `text` into it.
fn set(app: &mut super::app::App, key: &str, text: &str) {
    let i = app
        .params
        .fields()
        .iter()
        .position(|f| f.key == key)
        .unwrap();
    while app.params.selected() > i {
        press(app, KeyCode::Up);
    }
    while app.params.selected() < i {
        press(app, KeyCode::Down);
    }
    press(app, KeyCode::Enter);
    update(
        app,
        Msg::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
    );
    fixture::typed(app, text);
    update(app, code(KeyCode::Enter));
}

#[test]
fn a_bad_size_says_why_at_80x24_and_at_160x48() {
    for size in [(80, 24), (160, 48)] {
        let mut app = fixture::idle_app(size, Instant::now());
        set(&mut app, "mwm", "1mb");
        let s = screen(&app);
        assert!(s.contains("✗ mwm: "), "{size:?}\n{s}");
        assert!(s.contains("case-sensitive"), "{size:?}\n{s}");
        // The editor names the field as the flag and the message do.
        assert!(s.contains("mwm "), "{s}");
        assert!(!s.contains("maintenance_wm"), "{s}");
    }
}

#[test]
fn the_selected_fields_error_comes_first_and_the_rest_are_counted() {
    let mut app = fixture::idle_app((80, 24), Instant::now());
    set(&mut app, "mwm", "1mb");
    set(&mut app, "rows", "0");
    let s = screen(&app);
    assert!(
        s.contains("✗ rows: must be at least 1 (+1 more invalid)"),
        "{s}"
    );
    set(&mut app, "mwm", "1mb");
    let s = screen(&app);
    assert!(s.contains("✗ mwm: "), "{s}");
    assert!(s.contains("(+1 more invalid)"), "{s}");
}

#[test]
fn r_is_one_trial_in_every_experiment() {
    use super::msg::RunKind;
    use crate::experiment::ExperimentSpec;
    use crate::experiment::lab::decision::Repeat;
    let mut app = fixture::idle_app((100, 30), Instant::now());
    let spec = app.params.spec_for(RunKind::Single).unwrap();
    assert_eq!(spec.estimate().trials, 1, "index-build: {spec:?}");
    press(&mut app, KeyCode::Char('2'));
    set(&mut app, "method", "insert-tx,copy");
    set(&mut app, "batch", "10,100");
    set(&mut app, "clients", "1,4");
    set(&mut app, "repeat", "3");
    let ExperimentSpec::Ingest(s) = app.params.spec_for(RunKind::Single).unwrap() else {
        panic!("ingest")
    };
    assert_eq!(s.trials(), 1, "{s:?}");
    assert_eq!(
        (s.batches[0], s.clients[0], s.repeat),
        (10, 1, Repeat::Fixed(1))
    );
    let ExperimentSpec::Ingest(all) = app.params.spec_for(RunKind::Sweep).unwrap() else {
        panic!("ingest")
    };
    assert!(all.trials() > 1);
    press(&mut app, KeyCode::Char('3'));
    let ExperimentSpec::Growth(g) = app.params.spec_for(RunKind::Single).unwrap() else {
        panic!("growth")
    };
    assert_eq!((g.designs.len(), g.steps.len()), (1, 1), "{g:?}");
    assert_eq!(g.repeat, Repeat::Fixed(1));
}

#[test]
fn the_last_sessions_parameters_come_back_and_say_so() {
    use super::app::{App, AppInit};
    use super::last_params::LastParams;
    use crate::experiment::{ExperimentKind, ParamText};
    let mut ingest = ParamText::new();
    ingest.insert("clients".into(), "1,8".into());
    let last = LastParams {
        experiment: ExperimentKind::Ingest,
        params: [(ExperimentKind::Ingest, ingest)].into(),
    };
    let base = fixture::idle_app((80, 24), Instant::now());
    let mut app = App::new(AppInit {
        now: Instant::now(),
        theme: base.theme,
        keys: base.keys.clone(),
        config_file: base.config_file.clone(),
        observe: false,
        location: fixture::location(),
        size: (80, 24),
        notice: None,
        last_params: Some(last),
        saved_probe: None,
    });
    assert_eq!(app.params.kind, ExperimentKind::Ingest);
    assert_eq!(app.params.current()["clients"], "1,8");
    let s = screen(&app);
    assert!(s.contains("restored from your last session"), "{s}");
    // The first change makes them the user's values again: the line goes.
    set(&mut app, "clients", "2");
    assert!(!screen(&app).contains("restored from your last session"));
    assert_eq!(app.params.snapshot().experiment, ExperimentKind::Ingest);
}

#[test]
fn the_host_panes_disk_probes_are_the_ingest_runs_ceilings() {
    use super::panes::host::ProbeResults;
    use crate::experiment::ExperimentSpec;
    use crate::host::probe::{FsyncResult, SeqWriteResult};
    let mut app = fixture::idle_app((100, 30), Instant::now());
    press(&mut app, KeyCode::Char('2'));
    app.host.probe.last = Some(ProbeResults {
        seq: SeqWriteResult {
            bytes: 256 << 20,
            seconds: 1.0,
            mb_per_s: 180.0,
            dir: "/tmp".into(),
        },
        fsync: FsyncResult {
            ops: 1000,
            seconds: 5.0,
            ops_per_s: 200.0,
            p50_us: 4000.0,
            p99_us: 8000.0,
            max_us: 9000.0,
            dir: "/tmp".into(),
        },
        at: Instant::now(),
        saved: None,
    });
    let spec = super::update_tests::start(&mut app, 'r');
    let ExperimentSpec::Ingest(s) = *spec else {
        panic!("ingest")
    };
    assert_eq!(s.fsync_ops_per_s, Some(200.0));
    assert_eq!(s.seq_write_bytes_per_s, Some(180e6));
}
