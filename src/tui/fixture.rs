//! Realistic UI states for the rendering tests and the render benchmark. Not used by the
//! product: the run pane there is fed only by `experiment::spawn`.
//!
//! Every state is built by sending messages through `update`, with a fixed clock, so that a
//! rendering of it is the same on every machine.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::app::{App, AppInit};
use super::keys::KeyMap;
use super::msg::{Command, Estimates, HistoryPoint, Msg, Past, ServerMsg};
use super::render::render;
use super::theme::Theme;
use super::update::update;
use crate::experiment::index_build::{IndexBuildReport, IndexBuildSpec};
use crate::experiment::lab::eta::Eta;
use crate::experiment::{
    ExperimentKind, Outcome, Progress, ReportBody, ResultLayout, RunEvent, RunReport, Sample,
    TrialRef,
};
use crate::host::{DiskInfo, HostFingerprint, HostSample, HostSnapshot};
use crate::server::snapshot::{Counters, Readable, Setting};
use crate::server::{Location, ServerSnapshot};

/// The sandbox, as the fixture's target.
pub fn location() -> Location {
    Location::Sandbox {
        socket_dir: PathBuf::from("/tmp/pglab/sandbox"),
        port: 54329,
    }
}

fn setting(value: &str, unit: Option<&str>) -> Readable<Setting> {
    Readable::Value(Setting {
        value: value.into(),
        unit: unit.map(str::to_string),
        source: "default".into(),
    })
}

/// The server after `i` seconds of a steady, modest load.
pub fn server(i: u64, taken: Instant) -> ServerSnapshot {
    let settings: BTreeMap<String, Readable<Setting>> = [
        ("shared_buffers", setting("16384", Some("8kB"))),
        ("maintenance_work_mem", setting("65536", Some("kB"))),
        ("max_parallel_maintenance_workers", setting("2", None)),
        ("max_worker_processes", setting("8", None)),
        ("max_parallel_workers", setting("8", None)),
        ("work_mem", setting("4096", Some("kB"))),
        ("synchronous_commit", setting("on", None)),
        ("fsync", setting("on", None)),
        ("wal_level", setting("replica", None)),
        ("max_wal_size", setting("1024", Some("MB"))),
        ("checkpoint_timeout", setting("300", Some("s"))),
        ("effective_io_concurrency", setting("1", None)),
        ("max_connections", setting("100", None)),
        ("superuser_reserved_connections", setting("3", None)),
        ("autovacuum", setting("on", None)),
        ("data_directory", setting("/tmp/pglab/sandbox/data", None)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let wave = |period: u64, amp: i64| ((i % period) as i64 * amp) / period as i64;
    ServerSnapshot {
        version: "15.18 (Debian 15.18-0+deb12u1)".into(),
        version_num: 150018,
        version_full: "PostgreSQL 15.18".into(),
        location: location(),
        target: "pglab@/tmp/pglab/sandbox/.s.PGSQL.54329 db=pglab".into(),
        tls: None,
        in_recovery: false,
        database: "pglab".into(),
        database_bytes: 412 << 20,
        user: "pglab".into(),
        superuser: true,
        can_checkpoint: true,
        connections: BTreeMap::from([("active".to_string(), 1), ("idle".to_string(), 2)]),
        settings,
        counters: Counters {
            xact_commit: (i * 12) as i64 + wave(7, 20) * i as i64,
            xact_rollback: 0,
            blks_hit: (i * 990) as i64,
            blks_read: (i * 8) as i64,
            temp_files: 0,
            temp_bytes: if i > 40 {
                (((i - 40) * 3) << 20) as i64
            } else {
                0
            },
            wal_bytes: Some((i * i * (1 << 18)) as i64),
            checkpoints: Some(3),
        },
        cache_hit_total: Some(0.992),
        altered: Vec::new(),
        citus: None,
        replicas: Vec::new(),
        standby_lag: None,
        taken: Some(taken),
    }
}

pub fn host_info() -> HostSnapshot {
    HostSnapshot {
        hostname: "lab".into(),
        cpu_model: "AMD EPYC 7B13".into(),
        physical_cores: Some(1),
        logical_cores: 2,
        total_memory: 24 << 30,
        available_memory: 20 << 30,
        total_swap: 0,
        used_swap: 0,
        load: [0.42, 0.3, 0.2],
        cgroup: None,
        os: "Debian GNU/Linux 12".into(),
        kernel: "6.1.0".into(),
        disk: Some(DiskInfo {
            path: PathBuf::from("/tmp/pglab/sandbox"),
            mount_point: PathBuf::from("/"),
            fs_type: "ext4".into(),
            device: "/dev/vda1".into(),
            total_bytes: 100 << 30,
            available_bytes: 60 << 30,
        }),
    }
}

/// A host reading for second `i` (varied, as a real machine's are).
pub fn host_sample(i: u64) -> HostSample {
    HostSample {
        cpu_percent: [8.0, 12.0, 35.0, 60.0, 41.0, 20.0, 9.0][i as usize % 7],
        memory_used: (4 << 30) + (i % 5) * (64 << 20),
        memory_total: 24 << 30,
        disk_read_bps: if i.is_multiple_of(9) { 12e6 } else { 0.0 },
        disk_write_bps: [0.0, 4e6, 310e6, 120e6, 2e6][i as usize % 5],
        load1: 0.42,
    }
}

pub fn layout() -> ResultLayout {
    ResultLayout {
        x_label: "maintenance_work_mem".into(),
        x_unit: "bytes".into(),
        x_log: true,
        y_label: "build time".into(),
        y_unit: "s".into(),
        y_log: false,
        y_better: crate::measure::verdict::Better::Lower,
        columns: [
            "order", "mwm", "workers", "seconds", "index", "temp", "sort",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        x_names: Vec::new(),
        ..Default::default()
    }
}

const MWM: [(&str, u64); 5] = [
    ("1MB", 1 << 20),
    ("16MB", 16 << 20),
    ("64MB", 64 << 20),
    ("256MB", 256 << 20),
    ("1GB", 1 << 30),
];

/// The first `n` results of a sorted/random sweep.
pub fn samples(n: usize) -> Vec<Sample> {
    let mut out = Vec::new();
    for (o, order) in ["sorted", "random"].iter().enumerate() {
        for (m, (text, bytes)) in MWM.iter().enumerate() {
            let secs = if o == 0 {
                [5.2, 5.6, 5.9, 6.3, 6.9][m]
            } else {
                [18.1, 12.4, 11.6, 12.2, 14.1][m]
            };
            out.push(Sample {
                series: order.to_string(),
                x: *bytes as f64,
                y: secs,
                projected: false,
                cells: vec![
                    order.to_string(),
                    text.to_string(),
                    "0".into(),
                    format!("{secs:.1}"),
                    "21 MB".into(),
                    if m == 0 {
                        "30 MB".into()
                    } else {
                        "0 bytes".into()
                    },
                    if m < 2 {
                        "external, 4 runs".into()
                    } else {
                        "internal".into()
                    },
                ],
                settings: String::new(),
                ..Default::default()
            });
        }
    }
    out.truncate(n);
    out
}

/// A sorted/random sweep repeated `repeats` times, rounds interleaved as the engine runs
/// them, each trial within ±3% of its setting's time. Sorted input: 1MB is fastest by far.
/// Random input: 16MB, 64MB and 256MB are within noise of each other.
pub fn repeated_samples(repeats: usize) -> Vec<Sample> {
    // ±1%: tight enough that six repeats show 16MB..256MB of random within 5% of each other
    // with five settings at once (each pair at 99.5%).
    const NOISE: [f64; 5] = [1.0, 0.99, 1.01, 0.995, 1.005];
    let mut out = Vec::new();
    for (o, order) in ["sorted", "random"].iter().enumerate() {
        for r in 0..repeats {
            for (m, (text, bytes)) in MWM.iter().enumerate() {
                let base = if o == 0 {
                    [5.2, 5.6, 5.9, 6.3, 6.9][m]
                } else {
                    [18.1, 11.7, 11.6, 11.75, 14.1][m]
                };
                let secs = base * NOISE[(r + m) % NOISE.len()];
                out.push(Sample {
                    series: order.to_string(),
                    x: *bytes as f64,
                    y: secs,
                    projected: false,
                    cells: vec![
                        order.to_string(),
                        text.to_string(),
                        "0".into(),
                        format!("{secs:.2}"),
                        "21 MB".into(),
                        if m == 0 { "30 MB" } else { "0 bytes" }.into(),
                        if m < 2 {
                            "external, 4 runs"
                        } else {
                            "internal"
                        }
                        .into(),
                    ],
                    settings: String::new(),
                    ..Default::default()
                });
            }
        }
    }
    out
}

/// A finished sweep of six repeats with its findings as notes.
pub fn finished_app(size: (u16, u16), base: Instant) -> App {
    let mut app = idle_app(size, base);
    let samples = repeated_samples(6);
    let mut events = vec![RunEvent::Started {
        run_id: "20250102T030405Z-abcd".into(),
        description: "index-build · 1M rows · sorted,random · 60 trials".into(),
        trials: samples.len(),
        layout: layout(),
    }];
    events.extend(samples.into_iter().map(RunEvent::Sample));
    for n in [
        "dataset ib_int4_sorted_1000000_s42: 1M rows, 42 MB heap, correlation 1.000",
        "sorted: 1MB faster than every other setting (5.20 s [5.15 s, 5.25 s] vs next 5.60 s)",
        "random: 16MB..256MB are within 5% of the best (no significant difference); 16MB is enough, more bought nothing measurable",
        "SET maintenance_work_mem = '16MB';  -- random input; sorted input needs only 1MB",
    ] {
        events.push(RunEvent::Note(n.into()));
    }
    events.push(RunEvent::Finished(Box::new(report(
        "k",
        Outcome::Finished,
        412.0,
    ))));
    play(&mut app, base, events, 8);
    app
}

pub fn report(spec_key: &str, outcome: Outcome, seconds: f64) -> RunReport {
    let spec =
        IndexBuildSpec::parse(&ExperimentKind::IndexBuild.defaults()).expect("defaults parse");
    let started = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .expect("a date");
    RunReport {
        whatif: None,
        schema_version: crate::experiment::lab::record::SCHEMA_VERSION,
        run_id: "20250102T030405Z-abcd".into(),
        pglab_version: "0.1.0".into(),
        outcome,
        error: None,
        started_at: started,
        finished_at: started + chrono::Duration::milliseconds((seconds * 1000.0) as i64),
        preset: None,
        tune: None,
        target: "pglab@sandbox".into(),
        server: None,
        host: HostFingerprint {
            hostname: "lab".into(),
            cpu_model: "AMD EPYC 7B13".into(),
            physical_cores: Some(1),
            logical_cores: 2,
            total_memory: 24 << 30,
            os: "Debian GNU/Linux 12".into(),
            kernel: "6.1.0".into(),
            filesystem: None,
        },
        spec_key: spec_key.into(),
        notes: Vec::new(),
        body: ReportBody::IndexBuild(Box::new(IndexBuildReport::new(&spec))),
    }
}

/// An idle lab after a minute: connected to the sandbox, the host sampled, some history.
pub fn idle_app(size: (u16, u16), base: Instant) -> App {
    let mut app = App::new(AppInit {
        now: base,
        theme: Theme { color: true },
        keys: KeyMap::default(),
        config_file: PathBuf::from("/home/dba/.config/pglab/config.toml"),
        observe: false,
        last_params: None,
        location: location(),
        size,
        notice: None,
    });
    let send = |app: &mut App, at: u64, m: Msg| {
        app.now = base + Duration::from_secs(at);
        update(app, m)
    };
    super::update::init(&mut app);
    send(&mut app, 0, Msg::HostInfo(Box::new(host_info())));
    for i in 0..=60 {
        send(
            &mut app,
            i,
            Msg::Server(ServerMsg::Snapshot(Box::new(server(
                i,
                base + Duration::from_secs(i),
            )))),
        );
        send(&mut app, i, Msg::HostSample(host_sample(i)));
    }
    let key = app.params.spec_key().unwrap_or_default();
    let points = [11.9, 11.6, 12.4, 11.7, 11.8, 10.9, 11.7]
        .into_iter()
        .map(|value| HistoryPoint {
            value,
            unit: "s",
            what: "best median".into(),
        })
        .collect();
    send(
        &mut app,
        60,
        Msg::History {
            spec_key: key,
            past: Ok(Past {
                points,
                eta: Estimates {
                    sweep: Some(Eta {
                        low_s: 640.0,
                        high_s: 700.0,
                        basis: "the last 7 runs of these parameters".into(),
                    }),
                    one: None,
                },
            }),
        },
    );
    app
}

/// A sweep in progress: trial 7 of 10, six results in.
pub fn running_app(size: (u16, u16), base: Instant) -> App {
    running_app_with(size, base, 6)
}

/// A sweep in progress with `n` results in.
pub fn running_app_with(size: (u16, u16), base: Instant, n: usize) -> App {
    running_app_from(size, base, layout(), samples(n))
}

/// A sweep in progress, trial 7 of 10, with these results in.
pub fn running_app_from(
    size: (u16, u16),
    base: Instant,
    layout: ResultLayout,
    samples: Vec<Sample>,
) -> App {
    let mut app = idle_app(size, base);
    let spec = app
        .params
        .spec_for(super::msg::RunKind::Sweep)
        .expect("defaults parse");
    app.now = base + Duration::from_secs(60);
    app.run.begin(&spec, super::msg::RunKind::Sweep, app.now);
    super::update::set_focus(&mut app, super::app::Focus::Run);
    let mut events = vec![RunEvent::Started {
        run_id: "20250102T030405Z-abcd".into(),
        description: "index-build · 1M rows · sorted,random · 10 trials".into(),
        trials: 10,
        layout,
    }];
    events.extend(samples.into_iter().map(RunEvent::Sample));
    for k in 0..12u32 {
        events.push(RunEvent::Progress(Progress {
            trial: Some(TrialRef {
                index: 7,
                total: 10,
                label: "random · 16MB".into(),
            }),
            phase: "building index: loading tuples in tree".into(),
            fraction: Some(0.06 * k as f64),
            elapsed_s: 0.5 * k as f64,
            rate: Some(900_000.0 + 40_000.0 * (k % 5) as f64),
            rate_unit: "tuples/s".into(),
        }));
    }
    for (i, ev) in events.into_iter().enumerate() {
        app.now = base + Duration::from_secs(60) + Duration::from_millis(4000 * i as u64 / 3);
        update(&mut app, Msg::Run(ev));
    }
    app.now += Duration::from_millis(300);
    app
}

/// A plain key press.
pub fn key(c: char) -> Msg {
    code(KeyCode::Char(c))
}

/// A key press by code (arrows, Enter, Esc…).
pub fn code(c: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

/// Press `c` on `app`; the commands it gave.
pub fn press(app: &mut App, c: KeyCode) -> Vec<Command> {
    update(app, code(c))
}

/// Type `s` one key at a time; the commands the keys gave, in order.
pub fn typed(app: &mut App, s: &str) -> Vec<Command> {
    s.chars().flat_map(|c| update(app, key(c))).collect()
}

/// `app` drawn on a test terminal of its own size.
pub fn draw(app: &App) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(app.size.0, app.size.1)).unwrap();
    t.draw(|f| render(app, f)).unwrap();
    t
}

/// The screen `app` draws, as text: one line per row.
pub fn screen(app: &App) -> String {
    let t = draw(app);
    let buf = t.backend().buffer();
    let mut s = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            s.push_str(buf[(x, y)].symbol());
        }
        s.push('\n');
    }
    s
}

/// Feed `events` to a run begun from the parameters on screen, `every` seconds apart from a
/// minute in.
fn play(app: &mut App, base: Instant, events: Vec<RunEvent>, every: u64) {
    let spec = app
        .params
        .spec_for(super::msg::RunKind::Sweep)
        .expect("the fixture's parameters parse");
    app.now = base + Duration::from_secs(60);
    app.run.begin(&spec, super::msg::RunKind::Sweep, app.now);
    super::update::set_focus(app, super::app::Focus::Run);
    for (i, ev) in events.into_iter().enumerate() {
        app.now = base + Duration::from_secs(60) + Duration::from_secs(every * i as u64);
        update(app, Msg::Run(ev));
    }
}

/// A finished `pulp-quick` growth run (snapshot against ranges at 0, 10 and 100 versions of
/// 1k units, projected to 1G pairs), its samples made by the growth experiment's own
/// `sample_of` from `report::example::growth`, each step's verdicts on its last sample.
pub fn growth_app(size: (u16, u16), base: Instant) -> App {
    use crate::experiment::growth::{self, GrowthStep};
    let mut app = idle_app(size, base);
    let report = crate::report::example::growth("20261203T150341Z-e935");
    let ReportBody::Growth(b) = &report.body else {
        unreachable!("a growth report")
    };
    app.params.set_kind(ExperimentKind::Growth);
    for (k, v) in b.params.to_text() {
        app.params.set_value(&k, &v);
    }
    let mut events = vec![RunEvent::Started {
        run_id: report.run_id.clone(),
        description: "growth · snapshot vs ranges · 1k units × 0/10/100 versions".into(),
        trials: b.params.samples(),
        layout: growth::layout(),
    }];
    let measured: Vec<&GrowthStep> = b.steps.iter().filter(|s| !s.projected).collect();
    for (i, s) in measured.iter().enumerate() {
        let last_of_step = measured.get(i + 1).is_none_or(|n| n.versions != s.versions);
        let findings = if last_of_step {
            b.summary
                .comparisons
                .iter()
                .filter(|c| c.versions == s.versions)
                .map(|c| c.finding.clone())
                .collect()
        } else {
            Vec::new()
        };
        events.push(RunEvent::Sample(growth::sample_of(&b.params, s, findings)));
    }
    for s in b.steps.iter().filter(|s| s.projected) {
        events.push(RunEvent::Sample(growth::sample_of(
            &b.params,
            s,
            Vec::new(),
        )));
    }
    for f in &b.summary.findings {
        events.push(RunEvent::Note(f.clone()));
    }
    events.push(RunEvent::Finished(Box::new(report.clone())));
    play(&mut app, base, events, 2);
    app
}

/// A finished what-if run: index-build with its own knob at one value (64MB, random input)
/// and `set shared_buffers=128MB,256MB`, five builds each, interleaved.
pub fn whatif_app(size: (u16, u16), base: Instant) -> App {
    let mut app = idle_app(size, base);
    for (k, v) in [
        ("rows", "200k"),
        ("order", "random"),
        ("mwm", "64MB"),
        ("set", "shared_buffers=128MB,256MB"),
    ] {
        app.params.set_value(k, v);
    }
    let spec = app
        .params
        .spec_for(super::msg::RunKind::Sweep)
        .expect("the fixture's parameters parse");
    let layout = crate::experiment::lab::whatif::layout_with(
        crate::experiment::index_build::layout(),
        spec.settings(),
    );
    let mut events = vec![RunEvent::Started {
        run_id: "20261203T160000Z-f00d".into(),
        description: "index-build · 200k rows · random · 64MB · ×5 · 2 settings".into(),
        trials: 10,
        layout,
    }];
    const TIMES: [[f64; 5]; 2] = [
        [0.0652, 0.0671, 0.0640, 0.0660, 0.0701],
        [0.0655, 0.0648, 0.0669, 0.0662, 0.0690],
    ];
    for r in 0..5 {
        for (times, sb) in TIMES.iter().zip(["128MB", "256MB"]) {
            let settings = format!("shared_buffers={sb}");
            let secs = times[r];
            events.push(RunEvent::Sample(Sample {
                series: format!("random · {settings}"),
                x: (64u64 << 20) as f64,
                y: secs,
                projected: false,
                cells: [
                    "random",
                    "0",
                    "64MB",
                    &(r + 1).to_string(),
                    &format!("{secs:.3}"),
                    "0",
                    "4408 kB",
                    "0 bytes",
                    "internal",
                    &settings,
                ]
                .map(String::from)
                .to_vec(),
                settings,
                ..Default::default()
            }));
        }
    }
    events.push(RunEvent::Note(
        "random @ 64MB: no significant difference between shared_buffers=128MB and shared_buffers=256MB".into(),
    ));
    events.push(RunEvent::Finished(Box::new(report(
        "k",
        Outcome::Finished,
        14.2,
    ))));
    play(&mut app, base, events, 2);
    app
}
