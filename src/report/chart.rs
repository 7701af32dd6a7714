//! The report's chart as SVG, drawn with plotters' SVG backend. Without its `ttf` feature
//! plotters lays text out with an estimated glyph width and writes real `<text>` elements, so
//! no system fonts are needed and the viewer renders the labels.
//!
//! index-build: CREATE INDEX seconds against maintenance_work_mem on a log₂ axis, one series
//! per order × workers (the median line, every repeat as a dot).

use plotters::prelude::*;

use super::chart_plot::PALETTE;
use crate::experiment::index_build::IndexBuildReport;
use crate::experiment::{ReportBody, RunReport};
use crate::measure::units::{format_count, format_size_setting};

pub const WIDTH: u32 = 900;
pub const HEIGHT: u32 = 540;

/// The x axis title of the index-build chart.
pub const MWM_AXIS: &str = "maintenance_work_mem (log scale)";
/// The y axis title of the index-build chart.
pub const SECONDS_AXIS: &str = "CREATE INDEX time (seconds)";

/// The (main) chart of a report, or None when nothing finished.
pub fn svg(report: &RunReport) -> Option<String> {
    match &report.body {
        ReportBody::IndexBuild(b) => index_build(b).ok().flatten(),
        // ingest and growth draw several; the first is their main chart.
        _ => super::charts::charts(report)
            .into_iter()
            .next()
            .map(|c| c.svg),
    }
}

/// A size label for a log₂ tick: only whole powers of two get one.
fn size_tick(v: &f64) -> String {
    if (v - v.round()).abs() > 1e-6 || *v < 0.0 || *v > 62.0 {
        return String::new();
    }
    format_size_setting(1u64 << (v.round() as u32))
}

/// A seconds label with as many decimals as the axis' scale needs ("0.05", "2", "12.5").
fn seconds_tick(v: f64, y_max: f64) -> String {
    let decimals = (2 - y_max.log10().floor() as i32).clamp(0, 4) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

type DrawResult<T> = Result<T, Box<dyn std::error::Error>>;

/// A chart of two linear f64 axes drawn into an SVG string.
pub type SvgChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The series' legend, boxed at the upper right.
pub fn legend<'a, 'b: 'a>(chart: &mut SvgChart<'a, 'b>) -> DrawResult<()> {
    chart
        .configure_series_labels()
        .border_style(BLACK.mix(0.3))
        .background_style(WHITE.mix(0.9))
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

fn index_build(b: &IndexBuildReport) -> DrawResult<Option<String>> {
    let groups: Vec<_> = b
        .summary
        .groups
        .iter()
        .filter(|g| !g.by_mwm.is_empty())
        .collect();
    if groups.is_empty() {
        return Ok(None);
    }
    let log2 = |bytes: u64| (bytes.max(1) as f64).log2();
    let xs: Vec<f64> = b
        .trials
        .iter()
        .map(|t| log2(t.maintenance_work_mem_bytes))
        .chain(
            groups
                .iter()
                .flat_map(|g| g.by_mwm.iter().map(|m| log2(m.maintenance_work_mem_bytes))),
        )
        .collect();
    let (mut x0, mut x1) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
    x0 = x0.floor() - 0.5;
    x1 = x1.ceil() + 0.5;
    let y_max = b
        .trials
        .iter()
        .filter(|t| !t.warmup)
        .map(|t| t.seconds)
        .chain(groups.iter().flat_map(|g| g.by_mwm.iter().map(|m| m.max)))
        .fold(0.0f64, f64::max)
        .max(0.001)
        * 1.15;

    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let caption = format!(
            "CREATE INDEX ({}) on {} {} rows vs maintenance_work_mem",
            b.params.method.as_str(),
            format_count(b.params.rows as f64),
            b.params.key.as_str()
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, 0.0..y_max)?;
        let span = (x1 - x0).round() as usize;
        chart
            .configure_mesh()
            .x_desc(MWM_AXIS)
            .y_desc(SECONDS_AXIS)
            .x_labels(span + 1)
            .x_label_formatter(&size_tick)
            .y_label_formatter(&|v| seconds_tick(*v, y_max))
            .max_light_lines(1)
            .light_line_style(RGBColor(240, 240, 240))
            .draw()?;
        let many_workers = groups.iter().any(|g| g.workers != groups[0].workers);
        for (i, g) in groups.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let label = if many_workers || g.workers > 0 {
                format!("{} · {} workers", g.order.name(), g.workers)
            } else {
                g.order.name()
            };
            let line: Vec<(f64, f64)> = g
                .by_mwm
                .iter()
                .map(|m| (log2(m.maintenance_work_mem_bytes), m.median))
                .collect();
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            chart.draw_series(line.iter().map(|p| Circle::new(*p, 4, color.filled())))?;
            // The confidence interval of each median, as a whisker with caps.
            let cap = 0.08;
            chart.draw_series(g.by_mwm.iter().filter(|m| m.n > 1).flat_map(|m| {
                let x = log2(m.maintenance_work_mem_bytes);
                let (lo, hi) = (m.ci_low, m.ci_high);
                [
                    PathElement::new(vec![(x, lo), (x, hi)], color.stroke_width(1)),
                    PathElement::new(vec![(x - cap, lo), (x + cap, lo)], color.stroke_width(1)),
                    PathElement::new(vec![(x - cap, hi), (x + cap, hi)], color.stroke_width(1)),
                ]
            }))?;
            let repeats: Vec<(f64, f64)> = b
                .trials
                .iter()
                .filter(|t| !t.warmup && t.order == g.order && t.workers_requested == g.workers)
                .map(|t| (log2(t.maintenance_work_mem_bytes), t.seconds))
                .collect();
            chart.draw_series(repeats.iter().map(|p| Circle::new(*p, 2, color.mix(0.5))))?;
        }
        legend(&mut chart)?;
        root.present()?;
    }
    Ok(Some(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_name_powers_of_two() {
        assert_eq!(size_tick(&20.0), "1MB");
        assert_eq!(size_tick(&32.0), "4GB");
        assert_eq!(size_tick(&20.5), "");
        assert_eq!(seconds_tick(0.05, 0.3), "0.05");
        assert_eq!(seconds_tick(0.1, 0.3), "0.1");
        assert_eq!(seconds_tick(2.0, 16.0), "2");
        assert_eq!(seconds_tick(12.5, 16.0), "12.5");
        assert_eq!(seconds_tick(0.0, 16.0), "0");
    }

    #[test]
    fn index_build_chart_has_axes_and_series() {
        let r = crate::report::example::cybertec_10m("r1");
        let svg = svg(&r).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        assert!(svg.contains(MWM_AXIS) && svg.contains(SECONDS_AXIS));
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        for label in ["random", "sorted", "1MB", "16MB", "1GB"] {
            assert!(texts.contains(&label), "no text {label}");
        }
    }
}
