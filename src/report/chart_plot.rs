//! A small line-chart description and its SVG drawing, shared by the ingest and growth
//! charts: named series (solid or dashed, with a marker), interval whiskers, horizontal
//! reference lines, and axes that are linear or logarithmic.
//!
//! A log axis cannot show 0, yet a growth run starts at 0 versions and an empty table has 0
//! bytes. Such values are drawn one tick before the first decade, at the axis start, and that
//! tick is labelled "0". Ticks carry the axis' unit ("10 ms", "1 MB", "100k"), so titles
//! name the quantity only and never repeat the unit.

use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::chart::{HEIGHT, WIDTH};

/// How values map to an axis.
#[derive(Debug, Clone, Copy)]
pub enum Scale {
    /// Powers of ten, each tick labelled by `fmt` (e.g. `format_count`).
    Log10(fn(f64) -> String),
    /// Bytes on powers of two: "1 kB", "32 MB", "1 GB".
    LogBytes,
    /// Linear from 0, labelled by `fmt`.
    Linear(fn(f64) -> String),
}

#[derive(Debug, Clone)]
pub struct Axis {
    pub title: String,
    pub scale: Scale,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Triangle,
    Cross,
}

/// One named line.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub color: RGBColor,
    pub dashed: bool,
    pub marker: Marker,
    /// Hollow markers (projected values).
    pub hollow: bool,
    pub points: Vec<(f64, f64)>,
    /// (x, low, high): an interval drawn as a vertical bar.
    pub whiskers: Vec<(f64, f64, f64)>,
}

/// A horizontal line at a value of y, named in the legend.
#[derive(Debug, Clone)]
pub struct RefLine {
    pub name: String,
    pub y: f64,
    pub color: RGBColor,
}

#[derive(Clone)]
pub struct Plot {
    pub caption: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub refs: Vec<RefLine>,
    pub legend: SeriesLabelPosition,
}

pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// An axis laid out for its values: the coordinate range, where 0 sits, which ticks get a
/// label.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    scale: Scale,
    lo: f64,
    hi: f64,
    /// Coordinate of the value 0 on a log axis (the axis start), when some value is 0.
    zero_at: Option<f64>,
    /// Label every n-th whole coordinate (log axes).
    every: i64,
}

fn base(scale: Scale) -> f64 {
    match scale {
        Scale::LogBytes => 2.0,
        _ => 10.0,
    }
}

impl Layout {
    pub fn new(scale: Scale, values: &[f64]) -> Layout {
        let finite: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .collect();
        if let Scale::Linear(_) = scale {
            let hi = finite.iter().copied().fold(0.0f64, f64::max).max(1e-9) * 1.08;
            return Layout {
                scale,
                lo: 0.0,
                hi,
                zero_at: None,
                every: 1,
            };
        }
        let b = base(scale);
        let pos: Vec<f64> = finite.iter().copied().filter(|v| *v > 0.0).collect();
        let (mut lo_e, mut hi_e) = pos.iter().fold((f64::MAX, f64::MIN), |(lo, hi), v| {
            let e = v.log(b);
            (lo.min(e), hi.max(e))
        });
        if pos.is_empty() {
            (lo_e, hi_e) = (0.0, 1.0);
        }
        lo_e = lo_e.floor();
        hi_e = hi_e.ceil().max(lo_e + 1.0);
        let span = hi_e - lo_e;
        let every = [1i64, 2, 5, 10]
            .into_iter()
            .find(|e| span / *e as f64 <= 8.0)
            .unwrap_or(10);
        // Round the first labelled tick down to a multiple of `every`.
        lo_e = (lo_e / every as f64).floor() * every as f64;
        let zero_at = finite.contains(&0.0).then_some(lo_e - every as f64);
        let start = zero_at.unwrap_or(lo_e);
        let pad = 0.15 * every as f64;
        Layout {
            scale,
            lo: start - pad,
            hi: hi_e + pad,
            zero_at,
            every,
        }
    }

    /// The coordinate of a value.
    pub fn pos(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear(_) => v,
            _ if v <= 0.0 => self.zero_at.unwrap_or(self.lo),
            _ => v.log(base(self.scale)),
        }
    }

    pub fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }

    /// How many tick positions to ask plotters for: whole coordinates on a log axis.
    pub fn ticks(&self) -> usize {
        match self.scale {
            Scale::Linear(_) => 8,
            _ => ((self.hi - self.lo).floor() as usize + 1).max(2),
        }
    }

    /// The label at a coordinate ("" for unlabelled ticks).
    pub fn label(&self, c: f64) -> String {
        match self.scale {
            Scale::Linear(fmt) => fmt(c),
            scale => {
                if self.zero_at.is_some_and(|z| (c - z).abs() < 1e-6) {
                    return "0".into();
                }
                let r = c.round();
                let first = self.zero_at.map_or(self.lo, |z| z + 0.5);
                if (c - r).abs() > 1e-6 || (r as i64) % self.every != 0 || c < first {
                    return String::new();
                }
                match scale {
                    Scale::Log10(fmt) => fmt(10f64.powf(r)),
                    _ => bytes_tick(r as i64),
                }
            }
        }
    }
}

/// "512 B", "1 kB", "32 MB" for 2^e bytes.
pub fn bytes_tick(e: i64) -> String {
    if e < 0 {
        return String::new();
    }
    const UNITS: [&str; 7] = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let unit = (e / 10) as usize;
    format!("{} {}", 1u64 << (e % 10), UNITS[unit.min(6)])
}

type DrawResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The plot as an SVG document; None when no series has a point.
pub fn draw(plot: &Plot) -> DrawResult<Option<String>> {
    if plot.series.iter().all(|s| s.points.is_empty()) {
        return Ok(None);
    }
    let xs: Vec<f64> = plot
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    let ys: Vec<f64> = plot
        .series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.1)
                .chain(s.whiskers.iter().flat_map(|w| [w.1, w.2]))
        })
        .chain(plot.refs.iter().map(|r| r.y))
        .collect();
    let xl = Layout::new(plot.x.scale, &xs);
    let yl = Layout::new(plot.y.scale, &ys);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&plot.caption, ("sans-serif", 18))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(xl.range(), yl.range())?;
        chart
            .configure_mesh()
            .x_desc(plot.x.title.as_str())
            .y_desc(plot.y.title.as_str())
            .x_labels(xl.ticks())
            .y_labels(yl.ticks())
            .x_label_formatter(&|v| xl.label(*v))
            .y_label_formatter(&|v| yl.label(*v))
            .max_light_lines(1)
            .light_line_style(RGBColor(240, 240, 240))
            .draw()?;
        let (x0, x1) = (xl.range().start, xl.range().end);
        for r in &plot.refs {
            let y = yl.pos(r.y);
            let c = r.color;
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x0, y), (x1, y)],
                    8,
                    5,
                    c.stroke_width(2),
                ))?
                .label(r.name.clone())
                .legend(move |(x, y)| {
                    DashedPathElement::new(vec![(x, y), (x + 22, y)], 5, 3, c.stroke_width(2))
                });
        }
        for s in &plot.series {
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|p| (xl.pos(p.0), yl.pos(p.1)))
                .collect();
            let c = s.color;
            let line = c.stroke_width(2);
            for w in &s.whiskers {
                let x = xl.pos(w.0);
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x, yl.pos(w.1)), (x, yl.pos(w.2))],
                    c.mix(0.55).stroke_width(1),
                )))?;
            }
            if pts.len() > 1 {
                if s.dashed {
                    chart.draw_series(DashedLineSeries::new(pts.clone(), 7, 5, line))?;
                } else {
                    chart.draw_series(LineSeries::new(pts.clone(), line))?;
                }
            }
            let mark = if s.hollow {
                c.stroke_width(2)
            } else {
                c.filled()
            };
            let anno = match s.marker {
                Marker::Circle => {
                    chart.draw_series(pts.iter().map(|p| Circle::new(*p, 4, mark)))?
                }
                Marker::Triangle => {
                    chart.draw_series(pts.iter().map(|p| TriangleMarker::new(*p, 5, mark)))?
                }
                Marker::Cross => chart.draw_series(pts.iter().map(|p| Cross::new(*p, 4, mark)))?,
            };
            anno.label(s.name.clone());
            if s.dashed {
                anno.legend(move |(x, y)| {
                    DashedPathElement::new(vec![(x, y), (x + 22, y)], 5, 3, line)
                });
            } else {
                anno.legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], line));
            }
        }
        chart
            .configure_series_labels()
            .border_style(BLACK.mix(0.3))
            .background_style(WHITE.mix(0.9))
            .position(plot.legend.clone())
            .draw()?;
        root.present()?;
    }
    Ok(Some(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(v: f64) -> String {
        crate::measure::units::format_count(v)
    }

    #[test]
    fn a_zero_on_a_log_axis_sits_at_the_start_labelled_0() {
        let l = Layout::new(Scale::Log10(count), &[0.0, 100.0, 1000.0, 10_000.0]);
        assert_eq!(l.pos(0.0), 1.0);
        assert_eq!(l.label(1.0), "0");
        assert_eq!(l.label(2.0), "100");
        assert_eq!(l.label(4.0), "10k");
        assert_eq!(l.label(2.5), "");
        assert!(l.range().start < 1.0 && l.range().end > 4.0);
        // No zero: no "0" label and the axis starts at the first decade.
        let l = Layout::new(Scale::Log10(count), &[100.0, 1000.0]);
        assert_eq!(l.label(1.0), "");
        assert_eq!(l.label(2.0), "100");
    }

    #[test]
    fn byte_ticks_are_powers_of_two_in_their_unit() {
        assert_eq!(bytes_tick(10), "1 kB");
        assert_eq!(bytes_tick(25), "32 MB");
        assert_eq!(bytes_tick(30), "1 GB");
        let l = Layout::new(Scale::LogBytes, &[8192.0, 2e9]);
        assert_eq!(l.every, 5);
        assert_eq!(l.label(20.0), "1 MB");
        assert_eq!(l.label(21.0), "");
    }
}
