//! Bytes pglab writes to the terminal per second, idle and during a sweep, at 80×24 and
//! 200×60, with and without synchronized output (issue: keep the UI cheap over SSH).
//!
//! The UI is driven the way the runtime drives it, on a simulated clock (see `timeline`),
//! and frames are paced by the runtime's own `Pacer`; every frame goes through the same draw
//! path as the real terminal (`tui::frame::draw`, synchronized output on) into a counting
//! writer, so the figure is what an SSH link would carry. Side by side: the pacing now
//! (background changes at most 4 frames a second) and before (every change, up to 20).
//!
//! `cargo bench --bench terminal_bytes` (also runs, briefly, under `cargo test`).

use std::io;
use std::time::{Duration, Instant};

use pglab::experiment::{Progress, RunEvent, TrialRef};
use pglab::tui::app::App;
use pglab::tui::fixture;
use pglab::tui::frame::{self, ByteCount, Counted, CountedTerminal, Pacer};
use pglab::tui::msg::{Msg, ServerMsg};
use pglab::tui::render::render;
use pglab::tui::update::update;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

fn terminal(size: (u16, u16)) -> (CountedTerminal<io::Sink>, ByteCount) {
    let (w, count) = Counted::new(io::sink());
    let t = Terminal::with_options(
        CrosstermBackend::new(w),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, size.0, size.1)),
        },
    )
    .expect("a terminal on a sink");
    (t, count)
}

/// The messages of `seconds` simulated seconds, in time order: a server snapshot and a host
/// reading every second; during a run, progress every 100 ms (index-build polls at that
/// rate), a spinner tick every 200 ms and a result every 4 s.
fn timeline(app: &App, running: bool, seconds: u64) -> Vec<(Duration, Msg)> {
    let base = app.now;
    let mut ev: Vec<(Duration, Msg)> = Vec::new();
    for s in 0..seconds {
        let at = Duration::from_secs(s);
        let snap = fixture::server(61 + s, base + at);
        ev.push((at, Msg::Server(ServerMsg::Snapshot(Box::new(snap)))));
        ev.push((
            at + Duration::from_millis(500),
            Msg::HostSample(fixture::host_sample(61 + s)),
        ));
        if !running {
            continue;
        }
        for k in 0..10u64 {
            let p = Progress {
                trial: Some(TrialRef {
                    index: 7 + (s / 4) as usize,
                    total: 40,
                    label: "random · 16MB".into(),
                }),
                phase: "building index: loading tuples in tree".into(),
                fraction: Some(((s % 4) as f64 + k as f64 / 10.0) / 4.0),
                elapsed_s: (s % 4) as f64 + k as f64 / 10.0,
                rate: Some(900_000.0 + 40_000.0 * (k % 5) as f64),
                rate_unit: "tuples/s".into(),
            };
            ev.push((
                at + Duration::from_millis(100 * k + 30),
                Msg::Run(RunEvent::Progress(p)),
            ));
        }
        for k in 0..5u64 {
            ev.push((at + Duration::from_millis(200 * k + 70), Msg::Tick));
        }
        if s % 4 == 3 {
            let mut sample = fixture::samples(1).remove(0);
            sample.y += s as f64 / 100.0;
            ev.push((
                at + Duration::from_millis(900),
                Msg::Run(RunEvent::Sample(sample)),
            ));
        }
    }
    ev.sort_by_key(|(t, _)| *t);
    ev
}

/// Bytes per second over `seconds` simulated seconds, frames paced as the runtime paces
/// them (`paced`), or as before: every change drawn at up to 20 frames a second.
fn measure(mut app: App, size: (u16, u16), running: bool, paced: bool, seconds: u64) -> f64 {
    let (mut t, count) = terminal(size);
    let base = app.now;
    // The first full frame is paid once; what matters is the steady state.
    frame::draw(&mut t, true, |f| render(&app, f)).expect("draws");
    let start = count.get();
    let mut pacer = Pacer::default();
    pacer.drawn(base);
    let draw_due =
        |app: &mut App, pacer: &mut Pacer, t: &mut CountedTerminal<io::Sink>, until: Instant| {
            if let Some(due) = pacer.due()
                && due <= until
            {
                app.now = due;
                frame::draw(t, true, |f| render(app, f)).expect("draws");
                pacer.drawn(due);
            }
        };
    for (at, m) in timeline(&app, running, seconds) {
        let now = base + at;
        draw_due(&mut app, &mut pacer, &mut t, now);
        app.now = now;
        update(&mut app, m);
        // Before: every change was drawn as soon as 50 ms had passed.
        pacer.changed(!paced);
    }
    draw_due(
        &mut app,
        &mut pacer,
        &mut t,
        base + Duration::from_secs(seconds + 1),
    );
    (count.get() - start) as f64 / seconds as f64
}

fn main() {
    // `cargo bench` passes --bench: the full two minutes; under `cargo test`, a quick pass.
    let quick = if std::env::args().any(|a| a == "--bench") {
        120
    } else {
        5
    };
    println!("terminal bytes per second ({quick} simulated seconds each)");
    println!(
        "{:<9} {:<8} {:>16} {:>22}",
        "size", "state", "paced (now)", "every change (before)"
    );
    for size in [(80u16, 24u16), (200, 60)] {
        for running in [false, true] {
            let app = || {
                if running {
                    fixture::running_app(size, Instant::now())
                } else {
                    fixture::idle_app(size, Instant::now())
                }
            };
            let now = measure(app(), size, running, true, quick);
            let before = measure(app(), size, running, false, quick);
            println!(
                "{:<9} {:<8} {:>12.0} B/s {:>18.0} B/s",
                format!("{}×{}", size.0, size.1),
                if running { "sweep" } else { "idle" },
                now,
                before
            );
        }
    }
}
