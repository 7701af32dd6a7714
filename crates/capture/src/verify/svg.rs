//! The per-statement ratios of a verification as an SVG: one row per statement compared, its
//! ratio (after/before time per call) as a dot and its interval as a bar on a log axis, a
//! line at ×1; flagged statements in grey.

use plotters::prelude::*;

use super::compare::Verification;

const WIDTH: u32 = 760;
const ROW: u32 = 26;

/// The SVG text (None: no statement compared, or the drawing failed).
pub fn ratios(v: &Verification) -> Option<String> {
    if v.rows.is_empty() {
        return None;
    }
    let n = v.rows.len();
    let height = 90 + ROW * n as u32;
    let lo = v.rows.iter().map(|r| r.low).fold(1.0f64, f64::min) / 1.15;
    let hi = v.rows.iter().map(|r| r.high).fold(1.0f64, f64::max) * 1.15;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "time per call, after / before ({:.1} % family-wise)",
                    v.confidence * 100.0
                ),
                ("sans-serif", 16),
            )
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(230)
            .build_cartesian_2d((lo..hi).log_scale(), 0f64..n as f64)
            .ok()?;
        let names: Vec<String> = v.rows.iter().map(|r| r.name.clone()).collect();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n + 1)
            .y_label_formatter(&|y| {
                let i = (*y - 0.5).round();
                if (y - 0.5 - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len() {
                    names[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .x_label_formatter(&|x| format!("×{x:.2}"))
            .x_desc("after / before (lower is faster)")
            .draw()
            .ok()?;
        chart
            .draw_series(LineSeries::new(
                [(1.0, 0.0), (1.0, n as f64)],
                BLACK.stroke_width(1),
            ))
            .ok()?;
        draw_rows(&mut chart, v)?;
        root.present().ok()?;
    }
    Some(out)
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<
        plotters::coord::combinators::LogCoord<f64>,
        plotters::coord::types::RangedCoordf64,
    >,
>;

/// Each statement's ratio as a dot and its interval as a bar: green faster, red slower, blue
/// otherwise, grey when flagged.
fn draw_rows(chart: &mut Chart, v: &Verification) -> Option<()> {
    for (i, r) in v.rows.iter().enumerate() {
        let y = i as f64 + 0.5;
        let color = if !r.flags.is_empty() {
            RGBColor(150, 150, 150)
        } else if r.verdict == "faster" {
            RGBColor(0, 120, 60)
        } else if r.verdict == "slower" {
            RGBColor(190, 30, 30)
        } else {
            RGBColor(40, 70, 160)
        };
        chart
            .draw_series(LineSeries::new(
                [(r.low, y), (r.high, y)],
                color.stroke_width(3),
            ))
            .ok()?;
        chart
            .draw_series(std::iter::once(Circle::new(
                (r.ratio, y),
                4,
                color.filled(),
            )))
            .ok()?;
    }
    Some(())
}
