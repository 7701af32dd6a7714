//! The report's chart as SVG, drawn with plotters' SVG backend. Without its `ttf` feature
//! plotters lays text out with an estimated glyph width and writes real `<text>` elements, so
//! no system fonts are needed and the viewer renders the labels.
//!
//! index-build: CREATE INDEX time against maintenance_work_mem on a log₂ axis, one series
//! per order × workers (the median line with its interval, every repeat as a faint dot),
//! drawn by the shared plot (`chart_plot`): the legend in its own panel right of the plot,
//! ticks with their unit ("150 ms", "16 MB").

use super::chart_plot::{Axis, Marker, PALETTE, Plot, Scale, Series, draw};
use crate::experiment::index_build::IndexBuildReport;
use crate::experiment::{ReportBody, RunReport};
use crate::measure::units::format_count;

pub(crate) const WIDTH: u32 = 900;
pub(crate) const HEIGHT: u32 = 540;

/// The x axis title of the index-build chart.
pub const MWM_AXIS: &str = "maintenance_work_mem (log scale)";
/// The y axis title of the index-build chart (the unit is on the ticks).
pub const SECONDS_AXIS: &str = "CREATE INDEX time";

/// The (main) chart of a report, or None when nothing finished.
pub fn svg(report: &RunReport) -> Option<String> {
    match &report.body {
        ReportBody::IndexBuild(b) => draw(&index_build(b)?).ok().flatten(),
        // ingest and growth draw several; the first is their main chart.
        _ => super::charts::charts(report)
            .into_iter()
            .next()
            .map(|c| c.svg),
    }
}

/// The index-build plot; None when no setting finished.
fn index_build(b: &IndexBuildReport) -> Option<Plot> {
    let groups: Vec<_> = b
        .summary
        .groups
        .iter()
        .filter(|g| !g.by_mwm.is_empty())
        .collect();
    if groups.is_empty() {
        return None;
    }
    let many_workers = groups.iter().any(|g| g.workers != groups[0].workers);
    let combos: Vec<String> = b
        .params
        .set
        .combos()
        .iter()
        .map(crate::experiment::lab::whatif::combo_label)
        .collect();
    let series = groups
        .iter()
        .enumerate()
        .map(|(i, g)| Series {
            name: {
                let mut name = if many_workers || g.workers > 0 {
                    format!("{} · {} workers", g.order.name(), g.workers)
                } else {
                    g.order.name()
                };
                // A what-if sweep draws a line per settings combination: named by it.
                if !g.settings.is_empty() {
                    name.push_str(&format!(" · {}", g.settings));
                }
                name
            },
            color: PALETTE[i % PALETTE.len()],
            dashed: false,
            marker: Marker::Circle,
            hollow: false,
            points: g
                .by_mwm
                .iter()
                .map(|m| (m.maintenance_work_mem_bytes as f64, m.median))
                .collect(),
            whiskers: g
                .by_mwm
                .iter()
                .filter(|m| m.n > 1)
                .map(|m| (m.maintenance_work_mem_bytes as f64, m.ci_low, m.ci_high))
                .collect(),
            dots: b
                .trials
                .iter()
                .filter(|t| !t.warmup && t.order == g.order && t.workers_requested == g.workers)
                .filter(|t| combos.get(t.combo).is_none_or(|c| *c == g.settings))
                .map(|t| (t.maintenance_work_mem_bytes as f64, t.seconds))
                .collect(),
        })
        .collect();
    Some(Plot {
        caption: match crate::experiment::index_build::projection::headline_parts(b) {
            // A run on a table names it: a sample's projection never passes for generated rows.
            Some((what, _)) => format!("CREATE INDEX ({}): {what}", b.params.method.as_str()),
            None => format!(
                "CREATE INDEX ({}) on {} {} rows vs maintenance_work_mem",
                b.params.method.as_str(),
                format_count(b.params.rows as f64),
                b.params.key.as_str()
            ),
        },
        x: Axis {
            title: MWM_AXIS.into(),
            scale: Scale::LogBytes,
        },
        y: Axis {
            title: SECONDS_AXIS.into(),
            scale: Scale::Linear("s"),
        },
        series,
        refs: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_build_chart_has_axes_series_and_ticks_with_units() {
        let r = crate::report::example::cybertec_10m("r1");
        let svg = svg(&r).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        assert!(svg.contains(MWM_AXIS) && svg.contains(SECONDS_AXIS));
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        for label in ["random", "sorted", "1 MB", "16 MB", "1 GB", "10 s"] {
            assert!(texts.contains(&label), "no text {label}");
        }
    }

    #[test]
    fn the_legend_sits_right_of_the_plot() {
        let r = crate::report::example::cybertec_10m("r1");
        let svg = svg(&r).unwrap();
        // The canvas is the plot and the legend panel beside it.
        assert!(
            svg.contains(&format!(
                "width=\"{}\"",
                WIDTH + super::super::chart_plot::LEGEND_WIDTH
            )),
            "{}",
            &svg[..200]
        );
        // Every legend name is drawn beyond the plot's width.
        for name in ["random", "sorted"] {
            let at = svg
                .find(&format!(">{name}<"))
                .or_else(|| svg.find(&format!(">\n{name}\n<")));
            assert!(at.is_some(), "{name}");
        }
        let xs: Vec<f64> = svg
            .match_indices("<text")
            .filter_map(|(i, _)| {
                let tag = &svg[i..svg[i..].find('>').map(|j| i + j)?];
                let text_end = svg[i..].find("</text>")? + i;
                let body = svg[i..text_end].rsplit('>').next()?.trim();
                if body != "random" && body != "sorted" {
                    return None;
                }
                let x = tag.split("x=\"").nth(1)?.split('"').next()?;
                x.parse().ok()
            })
            .collect();
        assert!(!xs.is_empty(), "no legend text found");
        assert!(xs.iter().all(|x| *x >= WIDTH as f64), "{xs:?}");
    }

    #[test]
    fn short_builds_read_in_milliseconds() {
        use crate::experiment::index_build::Order;
        let r = crate::report::example::index_build(
            "ms",
            200_000,
            &[
                (Order::Random, 0, "1MB", &[0.101, 0.107, 0.104]),
                (Order::Random, 0, "64MB", &[0.052, 0.060, 0.055]),
            ],
        );
        let svg = svg(&r).unwrap();
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        assert!(texts.contains(&"100 ms"), "{texts:?}");
        assert!(!texts.contains(&"0.1"), "a tick without its unit");
    }
}
