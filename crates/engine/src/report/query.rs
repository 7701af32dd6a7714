//! The query experiment's tables and chart: per statement (or client count) and combination
//! the median with its interval and the verdict against the best, which plan ran and what it
//! spilled; the plans by fingerprint; the candidate indexes; every trial. The chart puts the
//! combinations side by side: the median of each with its interval, every trial as a dot.

use std::collections::BTreeMap;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::chart::{HEIGHT, WIDTH};
use super::chart_plot::PALETTE;
use super::charts::Chart;
use super::content::Content;
use super::grid::Grid;
use super::kind_view::KindView;
use crate::experiment::RunReport;
use crate::experiment::lab::findings::Decided;
use crate::experiment::query::summary::{format_time, format_tps};
use crate::experiment::query::{QueryReport, UnitSummary, clients_name};
use crate::measure::units::format_bytes;
use crate::measure::verdict::Better;

/// A letter per distinct plan of statement `s`, in combination order: `A`, `B`, …
pub(crate) fn plan_letters(b: &QueryReport, s: usize) -> BTreeMap<String, char> {
    let mut out = BTreeMap::new();
    let mut plans: Vec<_> = b.plans.iter().filter(|p| p.statement == s).collect();
    plans.sort_by_key(|p| p.combo);
    for p in plans {
        let next = (b'A' + out.len().min(25) as u8) as char;
        out.entry(p.facts.fingerprint.clone()).or_insert(next);
    }
    out
}

fn fmt_value(b: &QueryReport) -> fn(f64) -> String {
    if b.better() == Better::Higher {
        format_tps
    } else {
        format_time
    }
}

fn summary_grid(b: &QueryReport) -> Grid {
    let fmt = fmt_value(b);
    let mut g = Grid::new(
        "Summary",
        &[
            (
                if b.params.throughput() {
                    "clients"
                } else {
                    "statement"
                },
                false,
            ),
            ("combination", false),
            ("n", true),
            ("median", true),
            ("interval", true),
            ("level", true),
            ("vs best", false),
            ("plan", false),
            ("spill", true),
        ],
    );
    for u in &b.summary.units {
        for (s, &c) in u.finding.settings.iter().zip(&u.combos) {
            let Some(e) = s.estimate else { continue };
            let vs = match &s.vs_best {
                Some(cmp) => cmp.verdict.as_str().to_string(),
                None if u.finding.best.as_deref() == Some(s.label.as_str()) => "best".into(),
                None => String::new(),
            };
            // Throughput runs every statement: their plans are per statement, not per unit.
            let si = if b.params.throughput() {
                0
            } else {
                b.unit_names()
                    .iter()
                    .position(|n| n == &u.name)
                    .unwrap_or(0)
            };
            let (plan, spill) = match b.plan(si, c) {
                Some(p) => (
                    plan_letters(b, si)
                        .get(&p.facts.fingerprint)
                        .map(|l| l.to_string())
                        .unwrap_or_default(),
                    format_bytes(p.facts.temp_bytes),
                ),
                None => ("–".into(), "–".into()),
            };
            g.rows.push(vec![
                u.name.clone(),
                s.label.clone(),
                e.n.to_string(),
                fmt(e.median),
                format!("{}..{}", fmt(e.ci_low), fmt(e.ci_high)),
                super::index_build::reached(e.level),
                vs,
                plan,
                spill,
            ]);
        }
        g.rows.extend(all_cancelled_rows(b, &u.name));
    }
    g
}

/// The Summary's rows for unit `name`'s combinations whose every read the standby cancelled:
/// no value to show, worse than every other.
fn all_cancelled_rows(b: &QueryReport, name: &str) -> Vec<Vec<String>> {
    let Some(u) = b.unit_names().iter().position(|n| n == name) else {
        return Vec::new();
    };
    b.all_cancelled(u)
        .iter()
        .map(|c| {
            let mut row = vec![
                name.to_string(),
                b.combo_label(c.combo),
                c.trials.to_string(),
            ];
            row.extend(["–", "–", "–"].map(String::from));
            row.push(format!("worse: all {} reads cancelled", c.cancelled));
            row.extend(["–", "–"].map(String::from));
            row
        })
        .collect()
}

fn plans_grid(b: &QueryReport) -> Grid {
    let mut g = Grid::new(
        "Plans",
        &[
            ("statement", false),
            ("plan", false),
            ("combinations", false),
            ("shape", false),
        ],
    );
    for (s, name) in b.plan_names().iter().enumerate() {
        for (fp, letter) in plan_letters(b, s) {
            let combos: Vec<String> = b
                .plans
                .iter()
                .filter(|p| p.statement == s && p.facts.fingerprint == fp)
                .map(|p| {
                    let l = b.combo_label(p.combo);
                    if p.estimate_only {
                        format!("{l} (planner estimate)")
                    } else {
                        l
                    }
                })
                .collect();
            g.rows.push(vec![
                name.clone(),
                letter.to_string(),
                combos.join(", "),
                fp,
            ]);
        }
    }
    g
}

fn index_grid(b: &QueryReport) -> Grid {
    let mut g = Grid::new(
        "Candidate indexes",
        &[
            ("index", false),
            ("how", false),
            ("table", false),
            ("build", true),
            ("size", true),
            ("statement", false),
        ],
    );
    for c in &b.indexes {
        g.rows.push(vec![
            c.value.to_string(),
            if c.hypothetical() {
                "hypothetical (planner estimate, not measured)".into()
            } else {
                "built".into()
            },
            c.table.clone(),
            c.build_seconds
                .map(format_time)
                .unwrap_or_else(|| "–".into()),
            c.index_bytes
                .map(|v| format_bytes(v.max(0) as u64))
                .unwrap_or_else(|| "–".into()),
            c.sql.clone(),
        ]);
    }
    g
}

fn trials_grid(b: &QueryReport) -> Grid {
    let throughput = b.params.throughput();
    let mut g = if throughput {
        Grid::new(
            "Trials",
            &[
                ("clients", false),
                ("combination", false),
                ("rep", true),
                ("tps", true),
                ("transactions", true),
                ("p50 ms", true),
                ("p95 ms", true),
                ("p99 ms", true),
                ("pglab CPU s", true),
            ],
        )
    } else {
        Grid::new(
            "Trials",
            &[
                ("statement", false),
                ("combination", false),
                ("rep", true),
                ("executions", true),
                ("time per execution", true),
                ("rows", true),
            ],
        )
    };
    for t in &b.trials {
        let combo = b.combo_label(t.combo);
        g.rows.push(match (t.tps, t.latency_ms) {
            (Some(tps), Some(l)) if throughput => vec![
                t.clients.map(clients_name).unwrap_or_default(),
                combo,
                t.repeat.to_string(),
                format_tps(tps),
                t.transactions.unwrap_or(0).to_string(),
                format!("{:.2}", l.p50),
                format!("{:.2}", l.p95),
                format!("{:.2}", l.p99),
                t.client_cpu_s
                    .map(|c| format!("{c:.2}"))
                    .unwrap_or_else(|| "–".into()),
            ],
            _ => vec![
                t.name.clone(),
                combo,
                t.repeat.to_string(),
                t.executions.to_string(),
                format_time(t.seconds),
                t.rows.to_string(),
            ],
        });
    }
    g
}

/// The report's tables.
pub(crate) fn grids(b: &QueryReport) -> Vec<Grid> {
    let mut out = Vec::new();
    if !b.summary.units.is_empty() {
        out.push(summary_grid(b));
    }
    if !b.plans.is_empty() {
        out.push(plans_grid(b));
    }
    if !b.indexes.is_empty() {
        out.push(index_grid(b));
    }
    if !b.trials.is_empty() {
        out.push(trials_grid(b));
    }
    out.extend(super::query_standby::grid(b));
    out
}

type DrawResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The chart area: combinations along x, the value up y, drawn to SVG.
type Canvas<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The chart's SVG; None when no statement was summarized or there is no combination.
fn draw(b: &QueryReport) -> DrawResult<Option<String>> {
    if b.summary.units.is_empty() || b.combos.is_empty() {
        return Ok(None);
    }
    let y_max = y_max(b);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = chart_with_mesh(&root, b, y_max)?;
        let k = b.summary.units.len() as f64;
        for (i, u) in b.summary.units.iter().enumerate() {
            draw_unit(&mut chart, b, i, u, k)?;
        }
        chart
            .configure_series_labels()
            .border_style(BLACK.mix(0.3))
            .background_style(WHITE.mix(0.9))
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
        root.present()?;
    }
    Ok(Some(buf))
}

/// The top of the y axis: the highest trial or interval end, with room above it.
fn y_max(b: &QueryReport) -> f64 {
    b.trials
        .iter()
        .map(|t| t.value())
        .chain(b.summary.units.iter().flat_map(|u| {
            u.finding
                .settings
                .iter()
                .filter_map(|s| s.estimate.map(|e| e.ci_high))
        }))
        .fold(0.0f64, f64::max)
        .max(1e-6)
        * 1.15
}

/// The chart on `root` with its caption, axes titles, the combinations' labels and light grid.
fn chart_with_mesh<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    b: &QueryReport,
    y_max: f64,
) -> DrawResult<Canvas<'a, 'b>> {
    let fmt = fmt_value(b);
    let n = b.combos.len();
    let labels: Vec<String> = b.combos.iter().map(|c| c.label.clone()).collect();
    let what = if b.params.throughput() {
        "transactions/s"
    } else {
        "time of each statement"
    };
    let mut chart = ChartBuilder::on(root)
        .caption(format!("{what} per combination"), ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc("combination")
        .y_desc(if b.params.throughput() {
            "transactions/s"
        } else {
            "time"
        })
        .x_labels(n + 1)
        .x_label_formatter(&|v| {
            let i = v.round();
            if (v - i).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            labels.get(i as usize).cloned().unwrap_or_default()
        })
        .y_label_formatter(&|v| fmt(*v))
        .max_light_lines(1)
        .light_line_style(RGBColor(240, 240, 240))
        .draw()?;
    Ok(chart)
}

/// Statement (or client count) `i` of `k`, shifted beside the others: each combination's
/// median (named in the legend) with its interval, and every trial as a faint dot.
fn draw_unit(
    chart: &mut Canvas<'_, '_>,
    b: &QueryReport,
    i: usize,
    u: &UnitSummary,
    k: f64,
) -> DrawResult<()> {
    let color = PALETTE[i % PALETTE.len()];
    let shift = (i as f64 - (k - 1.0) / 2.0) * 0.12;
    let points: Vec<(f64, f64, f64, f64)> = u
        .finding
        .settings
        .iter()
        .zip(&u.combos)
        .filter_map(|(s, &c)| {
            s.estimate
                .map(|e| (c as f64 + shift, e.median, e.ci_low, e.ci_high))
        })
        .collect();
    chart
        .draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.0, p.1), 5, color.filled())),
        )?
        .label(u.name.clone())
        .legend(move |(x, y)| Circle::new((x + 9, y), 4, color.filled()));
    let cap = 0.04;
    chart.draw_series(points.iter().flat_map(|&(x, _, lo, hi)| {
        [
            PathElement::new(vec![(x, lo), (x, hi)], color.stroke_width(1)),
            PathElement::new(vec![(x - cap, lo), (x + cap, lo)], color.stroke_width(1)),
            PathElement::new(vec![(x - cap, hi), (x + cap, hi)], color.stroke_width(1)),
        ]
    }))?;
    let counts = b.params.client_counts();
    let dots: Vec<(f64, f64)> = b
        .trials
        .iter()
        .filter(|t| match t.clients {
            Some(c) => counts.get(i) == Some(&c),
            None => t.name == u.name,
        })
        .map(|t| (t.combo as f64 + shift + 0.03, t.value()))
        .collect();
    chart.draw_series(dots.iter().map(|p| Circle::new(*p, 2, color.mix(0.5))))?;
    Ok(())
}

/// The report's charts: the combinations side by side, then (throughput runs) statement
/// latency by synchronous_commit level and transactions/s over time.
pub(crate) fn charts(b: &QueryReport) -> Vec<Chart> {
    let mut out = main_chart(b);
    out.extend(super::chart_load::of_query(b).charts());
    out
}

/// The combinations side by side.
fn main_chart(b: &QueryReport) -> Vec<Chart> {
    match draw(b) {
        Ok(Some(svg)) => vec![Chart {
            suffix: String::new(),
            title: if b.params.throughput() {
                "transactions/s per combination, medians with their intervals".into()
            } else {
                "time per combination, medians with their intervals".into()
            },
            svg,
        }],
        Ok(None) => Vec::new(),
        Err(e) => {
            tracing::warn!("query chart: {e}");
            Vec::new()
        }
    }
}

impl KindView for QueryReport {
    fn add_body(&self, c: &mut Content, report: &RunReport) {
        c.grids = grids(self);
        c.blocks = super::query_plans::blocks(self);
        c.findings = self.summary.findings.clone();
        c.confounders = self.summary.confounders.clone();
        c.recommendations = super::query_advice::recommendations(report, self);
    }

    fn charts(&self, _report: &RunReport) -> Vec<Chart> {
        charts(self)
    }

    fn set_lines(&self, report: &RunReport, d: &Decided, _rec: &str) -> Vec<String> {
        self.summary
            .units
            .iter()
            .find(|u| u.name == d.question)
            .map(|u| super::query_advice::unit_sql(report, self, u))
            .unwrap_or_default()
    }
}
