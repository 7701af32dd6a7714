//! One full frame at 200×60 on a TestBackend, with a run in progress (chart, table, sparklines).

use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use pglab::tui::{fixture, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn frame(c: &mut Criterion) {
    let app = fixture::running_app((200, 60), Instant::now());
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("test backend");
    c.bench_function("render 200x60 running", |b| {
        b.iter(|| {
            terminal.draw(|f| render::render(&app, f)).expect("draws");
        })
    });
    let idle = fixture::idle_app((200, 60), Instant::now());
    c.bench_function("render 200x60 idle", |b| {
        b.iter(|| {
            terminal.draw(|f| render::render(&idle, f)).expect("draws");
        })
    });
}

criterion_group!(benches, frame);
criterion_main!(benches);
