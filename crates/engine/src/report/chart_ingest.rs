//! ingest charts, the CouchDB post's picture: rows/s against batch size (log–log), one line
//! per method × clients × synchronous_commit with each median's interval, and the disk's
//! fsync ceiling as a reference line when the run measured it; batch latency p50/p99 against
//! batch size. Commit latency per synchronous_commit level is `chart_commit`'s, rows/s over
//! the seconds of a trial `chart_over_time`'s.

use crate::experiment::ingest::{ConfigStat, IngestReport, IngestTrial, Method, SyncCommit};
use crate::measure::units::format_count;

use super::chart_plot::{Axis, Marker, PALETTE, Plot, RefLine, Scale, Series, draw};
use super::charts::Chart;
use super::ingest::{median_of, trials_of};

pub const BATCH_AXIS: &str = "batch size in rows (log scale)";
pub const RATE_AXIS: &str = "rows loaded per second (log scale)";
pub const LATENCY_AXIS: &str = "time of one batch (log scale)";

/// A curve: one method at one client count and synchronous_commit.
type Curve = (Method, u32, SyncCommit);

pub(super) fn curve_name((m, c, s): Curve) -> String {
    format!(
        "{} · {c} client{} · sync {}",
        m.as_str(),
        if c == 1 { "" } else { "s" },
        s.as_str()
    )
}

fn curves(b: &IngestReport) -> Vec<(Curve, Vec<&ConfigStat>)> {
    let mut out: Vec<(Curve, Vec<&ConfigStat>)> = Vec::new();
    for c in &b.summary.configs {
        let key = (c.method, c.clients, c.synchronous_commit);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(c),
            None => out.push((key, vec![c])),
        }
    }
    for (_, v) in &mut out {
        v.sort_by_key(|c| c.batch);
    }
    out
}

pub(super) fn marker(m: Method) -> Marker {
    match m {
        Method::Insert => Marker::Cross,
        Method::InsertTx => Marker::Circle,
        Method::Values => Marker::Triangle,
        Method::Copy => Marker::Circle,
    }
}

fn count(v: f64) -> String {
    format_count(v)
}

/// "0.1 ms", "1 ms", "1000 ms": ticks in the axis' unit.
pub(super) fn ms_tick(v: f64) -> String {
    let s = format!("{v:.4}");
    format!("{} ms", s.trim_end_matches('0').trim_end_matches('.'))
}

fn rate_chart(b: &IngestReport) -> Option<Plot> {
    let mut series = Vec::new();
    for (i, (key, cs)) in curves(b).into_iter().enumerate() {
        series.push(Series {
            name: curve_name(key),
            color: PALETTE[i % PALETTE.len()],
            dashed: false,
            marker: marker(key.0),
            hollow: false,
            dots: Vec::new(),
            points: cs
                .iter()
                .map(|c| (c.batch as f64, c.rows_per_s.median))
                .collect(),
            whiskers: cs
                .iter()
                .filter(|c| c.rows_per_s.n >= 2)
                .map(|c| (c.batch as f64, c.rows_per_s.ci_low, c.rows_per_s.ci_high))
                .collect(),
        });
    }
    let mut refs = Vec::new();
    if let Some(f) = b.fsync.as_ref().filter(|f| f.ops_per_s > 0.0) {
        refs.push(RefLine {
            name: format!(
                "fsync ceiling: {} flushes/s = rows/s at one row per commit",
                format_count(f.ops_per_s.round())
            ),
            y: f.ops_per_s,
            color: plotters::style::RGBColor(90, 90, 90),
        });
    }
    // The disk's sequential write rate over the WAL a row costs: the rows/s the disk allows.
    let mut wal: Vec<f64> = b
        .trials
        .iter()
        .map(|t| t.wal_bytes_per_row)
        .filter(|w| *w > 0.0)
        .collect();
    wal.sort_by(f64::total_cmp);
    if let (Some(bps), Some(&w)) = (
        b.params.seq_write_bytes_per_s.filter(|v| *v > 0.0),
        wal.get(wal.len() / 2),
    ) {
        refs.push(RefLine {
            name: format!(
                "sequential-write ceiling: {}/s ÷ {w:.0} B of WAL per row = {} rows/s",
                crate::measure::units::format_bytes_short(bps),
                crate::measure::units::format_rate(bps / w)
            ),
            y: bps / w,
            color: plotters::style::RGBColor(160, 60, 60),
        });
    }
    Some(Plot {
        caption: format!(
            "ingest: rows/s by batch size ({} rows per trial, {} payload)",
            format_count(b.params.rows as f64),
            b.params.payload.text
        ),
        x: Axis {
            title: BATCH_AXIS.into(),
            scale: Scale::Log10(count),
        },
        y: Axis {
            title: RATE_AXIS.into(),
            scale: Scale::Log10(count),
        },
        series,
        refs,
    })
}

fn latency_chart(b: &IngestReport) -> Option<Plot> {
    let mut series = Vec::new();
    for (i, (key, cs)) in curves(b).into_iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        for (what, dashed, f) in [
            (
                "p50",
                false,
                (|t: &IngestTrial| t.latency_ms.p50) as fn(&IngestTrial) -> f64,
            ),
            ("p99", true, |t: &IngestTrial| t.latency_ms.p99),
        ] {
            let points: Vec<(f64, f64)> = cs
                .iter()
                .filter_map(|c| Some((c.batch as f64, median_of(&trials_of(b, c), f)?)))
                .collect();
            series.push(Series {
                name: format!("{} · {what}", curve_name(key)),
                color,
                dashed,
                marker: marker(key.0),
                hollow: dashed,
                dots: Vec::new(),
                points,
                whiskers: Vec::new(),
            });
        }
    }
    Some(Plot {
        caption: "ingest: batch latency (median and 99th percentile) by batch size".into(),
        x: Axis {
            title: BATCH_AXIS.into(),
            scale: Scale::Log10(count),
        },
        y: Axis {
            title: LATENCY_AXIS.into(),
            scale: Scale::Log10(ms_tick),
        },
        series,
        refs: Vec::new(),
    })
}

/// The ingest charts: rows/s by batch (the main one), latency by batch, commit latency by
/// synchronous_commit level (when the run varied it or the standby's distance), rows/s over
/// time (when trials recorded a series).
pub fn charts(b: &IngestReport) -> Vec<Chart> {
    let draw_plot = |p: Option<Plot>| p.and_then(|p| draw(&p).ok().flatten());
    let mut out = Vec::new();
    for (suffix, title, svg) in [
        (
            "",
            "Rows per second by batch size",
            draw_plot(rate_chart(b)),
        ),
        (
            "-latency",
            "Batch latency by batch size",
            draw_plot(latency_chart(b)),
        ),
    ] {
        if let Some(svg) = svg {
            out.push(Chart {
                suffix: suffix.into(),
                title: title.into(),
                svg,
            });
        }
    }
    out.extend(super::chart_load::of_ingest(b).charts());
    out
}
