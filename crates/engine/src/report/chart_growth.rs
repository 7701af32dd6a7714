//! growth charts, the Pulp post's questions as pictures: would it be large — table and
//! per-index size against versions per design, measured solid and projected dashed with
//! hollow markers, the host's RAM as a reference line; would it be slow — write and read time
//! of one version against versions, medians with their intervals.
//!
//! Versions run on a log axis; the 0-version step sits at the axis start, labelled "0".
use plotters::style::RGBColor;

use crate::experiment::RunReport;
use crate::experiment::growth::{Design, GrowthReport, GrowthStep, Timed};
use crate::measure::fit::Shape;
use crate::measure::units::{format_bytes_short, format_count};

use super::chart_plot::{Axis, Marker, PALETTE, Plot, RefLine, Scale, Series, draw};
use super::charts::Chart;
use super::growth_advice::{crossing_text, ram_crossing};

pub const VERSIONS_AXIS: &str = "repository versions (log scale)";
pub const SIZE_AXIS: &str = "size on disk (log scale)";
pub const TIME_AXIS: &str = "time for one version (log scale)";

fn count(v: f64) -> String {
    format_count(v)
}

/// "1 ms", "10 ms", "1 s", "100 s": ticks in their unit.
fn seconds_tick(v: f64) -> String {
    if v < 1.0 {
        let ms = format!("{:.3}", v * 1000.0);
        format!("{} ms", ms.trim_end_matches('0').trim_end_matches('.'))
    } else {
        format!("{v:.0} s")
    }
}

fn marker(d: Design) -> Marker {
    match d {
        Design::Snapshot => Marker::Circle,
        Design::Ranges => Marker::Triangle,
        Design::SnapshotByVersion => Marker::Cross,
        // Ranges is never distributed, so its marker is free here.
        Design::SnapshotByContent => Marker::Triangle,
    }
}

/// (x, low, high): an interval bar.
type Whisker = (f64, f64, f64);

/// One quantity of a step on the chart: its value, and where a measured median's or a
/// projection's interval puts it.
type Value<'a> = &'a dyn Fn(&GrowthStep) -> Option<(f64, Option<(f64, f64)>)>;

/// A quantity of one design as a measured series and, when some steps are projected, a dashed
/// one that starts where the projection's shape stands at the largest measured step (so a
/// flat projection is drawn flat, not from the last noisy median) and carries each projected
/// value's interval. Its legend says the shape and how far it was carried.
fn pair(
    b: &GrowthReport,
    design: Design,
    name: &str,
    color: RGBColor,
    value: Value<'_>,
    (shape, start): (Option<Shape>, Option<f64>),
) -> Vec<Series> {
    let mut all: Vec<&GrowthStep> = b.steps.iter().filter(|s| s.design == design).collect();
    all.sort_by_key(|s| s.versions);
    // With swept server settings each combination is a line of its own; projections follow
    // the first (the one the growth runs under).
    let labels: Vec<String> = b
        .params
        .set
        .combos()
        .iter()
        .map(crate::experiment::lab::whatif::combo_label)
        .collect();
    let named = |combo: usize| match labels.get(combo).filter(|_| labels.len() > 1) {
        Some(l) => format!("{} {name} · {l}", design.as_str()),
        None => format!("{} {name}", design.as_str()),
    };
    let steps: Vec<&GrowthStep> = all.iter().copied().filter(|s| s.combo == 0).collect();
    let series = |projected: bool, combo: usize| -> (Vec<(f64, f64)>, Vec<Whisker>) {
        let mut points = Vec::new();
        let mut whiskers = Vec::new();
        for s in all
            .iter()
            .filter(|s| s.projected == projected && s.combo == combo)
        {
            if let Some((v, iv)) = value(s) {
                points.push((s.versions as f64, v));
                if let Some((lo, hi)) = iv.filter(|(lo, hi)| hi > lo) {
                    whiskers.push((s.versions as f64, lo, hi));
                }
            }
        }
        (points, whiskers)
    };
    let (measured, measured_whiskers) = series(false, 0);
    let (mut projected, projected_whiskers) = series(true, 0);
    let mut out = Vec::new();
    if !measured.is_empty() {
        out.push(Series {
            name: named(0),
            color,
            dashed: false,
            marker: marker(design),
            hollow: false,
            dots: Vec::new(),
            points: measured.clone(),
            whiskers: measured_whiskers,
        });
    }
    for combo in 1..labels.len() {
        let (points, whiskers) = series(false, combo);
        if !points.is_empty() {
            out.push(Series {
                name: named(combo),
                color,
                dashed: false,
                marker: Marker::Cross,
                hollow: false,
                dots: Vec::new(),
                points,
                whiskers,
            });
        }
    }
    if !projected.is_empty() {
        if let Some(&(x, y)) = measured.last() {
            projected.insert(0, (x, start.unwrap_or(y)));
        }
        let how = steps
            .iter()
            .filter(|s| s.projected)
            .max_by_key(|s| s.versions)
            .and_then(|s| b.projection(s))
            .map(|p| p.words())
            .unwrap_or_else(|| "projected".into());
        let how = match shape {
            Some(s) => format!("{}, {how}", s.as_str()),
            None => how,
        };
        out.push(Series {
            name: format!("{} ({how})", named(0)),
            color,
            dashed: true,
            marker: marker(design),
            hollow: true,
            dots: Vec::new(),
            points: projected,
            whiskers: projected_whiskers,
        });
    }
    out
}

/// The share of one index in a step's index total.
fn v_share(s: &GrowthStep, name: &str) -> f64 {
    let total = s.index_total();
    if total == 0 {
        0.0
    } else {
        s.index_bytes.get(name).copied().unwrap_or(0) as f64 / total as f64
    }
}

fn size_chart(report: &RunReport, b: &GrowthReport) -> Plot {
    let mut series = Vec::new();
    let mut k = 0;
    for &d in &b.params.designs {
        let mut names: Vec<String> = vec!["table".into()];
        for s in b.steps.iter().filter(|s| s.design == d) {
            for n in s.index_bytes.keys() {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        for n in names {
            let color = PALETTE[k % PALETTE.len()];
            k += 1;
            let label = if n == "table" {
                n.clone()
            } else {
                format!("index {n}")
            };
            // A projected index is its share of the projected total, interval likewise.
            let value = |s: &GrowthStep| {
                let p = b.projection(s);
                let (v, whole) = if n == "table" {
                    (s.table_bytes as f64, p.and_then(|p| p.table))
                } else {
                    (
                        *s.index_bytes.get(&n)? as f64,
                        p.and_then(|p| p.index).map(|i| {
                            let k = v_share(s, &n);
                            crate::measure::fit::Projected {
                                value: i.value * k,
                                low: i.low * k,
                                high: i.high * k,
                                ..i
                            }
                        }),
                    )
                };
                Some((v, whole.map(|w| (w.low, w.high))))
            };
            let shape = b
                .fit
                .iter()
                .find(|f| f.design == d)
                .and_then(|f| if n == "table" { f.table } else { f.index })
                .map(|t| t.shape);
            series.extend(pair(b, d, &label, color, &value, (shape, None)));
        }
    }
    let ram = report.host.total_memory;
    let mut refs = Vec::new();
    if ram > 0 {
        let mut name = format!("host RAM {}", format_bytes_short(ram as f64));
        let crossings: Vec<String> = b
            .params
            .designs
            .iter()
            .filter_map(|&d| {
                ram_crossing(b, d, ram).map(|c| format!("{}: {}", d.as_str(), crossing_text(c)))
            })
            .collect();
        if !crossings.is_empty() {
            name.push_str(&format!(" ({})", crossings.join("; ")));
        }
        refs.push(RefLine {
            name,
            y: ram as f64,
            color: RGBColor(90, 90, 90),
        });
    }
    if let Some(free) = b.free_bytes.filter(|f| *f > 0) {
        refs.push(RefLine {
            name: format!("free disk at the start {}", format_bytes_short(free as f64)),
            y: free as f64,
            color: RGBColor(160, 60, 60),
        });
    }
    Plot {
        caption: format!(
            "growth: size by versions ({} units per version, key-shape {})",
            format_count(b.params.units as f64),
            b.params.key_shape.as_str()
        ),
        x: Axis {
            title: VERSIONS_AXIS.into(),
            scale: Scale::Log10(count),
        },
        y: Axis {
            title: SIZE_AXIS.into(),
            scale: Scale::LogBytes,
        },
        series,
        refs,
    }
}

fn interval(b: &GrowthReport, s: &GrowthStep, timed: Timed) -> Option<(f64, f64)> {
    b.summary
        .estimates
        .iter()
        .find(|e| {
            e.design == s.design
                && e.versions == s.versions
                && e.combo == s.combo
                && e.seconds.n >= 2
                && e.timed == timed
        })
        .map(|e| (e.seconds.ci_low, e.seconds.ci_high))
}

fn time_chart(b: &GrowthReport) -> Plot {
    let mut series = Vec::new();
    let mut k = 0;
    for &d in &b.params.designs {
        let fit = b.fit.iter().find(|f| f.design == d);
        for (what, timed) in [("write", Timed::Write), ("read", Timed::Read)] {
            let color = PALETTE[k % PALETTE.len()];
            k += 1;
            let value = |s: &GrowthStep| {
                let p = b.projection(s).and_then(|p| match timed {
                    Timed::Write => p.write,
                    _ => p.read,
                });
                let v = match timed {
                    Timed::Write => s.write_seconds,
                    _ => s.read_seconds,
                }?;
                Some((
                    v,
                    p.map(|p| (p.low, p.high)).or_else(|| interval(b, s, timed)),
                ))
            };
            // Where the time's shape stands at the largest table measured.
            let trend = fit.and_then(|f| match timed {
                Timed::Write => f.write.map(|t| (t, f.from_rows)),
                _ => f.read.map(|t| (t, f.from_rows)),
            });
            let start = trend.map(|(t, from)| t.at(from as f64).value);
            series.extend(pair(
                b,
                d,
                what,
                color,
                &value,
                (trend.map(|(t, _)| t.shape), start),
            ));
        }
    }
    Plot {
        caption: format!(
            "growth: writing and reading one version ({})",
            b.params.write_method.describe()
        ),
        x: Axis {
            title: VERSIONS_AXIS.into(),
            scale: Scale::Log10(count),
        },
        y: Axis {
            title: TIME_AXIS.into(),
            scale: Scale::Log10(seconds_tick),
        },
        series,
        refs: Vec::new(),
    }
}

/// The growth charts: sizes (the main one), then times, then (a run that swept a level, the
/// distance or a fault) COMMIT latency per level and rows written per second over time.
pub(crate) fn charts(report: &RunReport, b: &GrowthReport) -> Vec<Chart> {
    let mut out = Vec::new();
    for (suffix, title, plot) in [
        ("", "Size by versions", size_chart(report, b)),
        ("-time", "Write and read time by versions", time_chart(b)),
    ] {
        if let Ok(Some(svg)) = draw(&plot) {
            out.push(Chart {
                suffix: suffix.into(),
                title: title.into(),
                svg,
            });
        }
    }
    out.extend(super::chart_load_growth::of_growth(b).charts());
    out
}
