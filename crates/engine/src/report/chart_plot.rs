//! A small line-chart description and its SVG drawing, shared by the ingest and growth
//! charts: named series (solid or dashed, with a marker), interval whiskers, horizontal
//! reference lines, and axes that are linear or logarithmic.
//!
//! A log axis cannot show 0, yet a growth run starts at 0 versions and an empty table has 0
//! bytes. Such values are drawn one tick before the first decade, at the axis start, and that
//! tick is labelled "0". Ticks carry the axis' unit ("10 ms", "1 MB", "100k"), so titles
//! name the quantity only and never repeat the unit.

use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::chart::{HEIGHT, WIDTH};

/// How values map to an axis.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scale {
    /// Powers of ten, each tick labelled by `fmt` (e.g. `format_count`).
    Log10(fn(f64) -> String),
    /// Bytes on powers of two: "1 kB", "32 MB", "1 GB".
    LogBytes,
    /// Linear from 0 to a round value, ticks labelled in this unit ("s": "0, 50 ms,
    /// 100 ms"; "bytes"; "" for counts) by `report::ticks`.
    Linear(&'static str),
}

#[derive(Debug, Clone)]
pub(crate) struct Axis {
    pub title: String,
    pub scale: Scale,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    Circle,
    Triangle,
    Cross,
}

/// One named line.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub name: String,
    pub color: RGBColor,
    pub dashed: bool,
    pub marker: Marker,
    /// Hollow markers (projected values).
    pub hollow: bool,
    pub points: Vec<(f64, f64)>,
    /// (x, low, high): an interval drawn as a vertical bar.
    pub whiskers: Vec<(f64, f64, f64)>,
    /// Single trials, drawn as small faint dots beside the line of their medians.
    pub dots: Vec<(f64, f64)>,
}

impl Series {
    /// Every value of y it draws: its points, its whiskers' ends, its trials' dots.
    pub(crate) fn ys(&self) -> impl Iterator<Item = f64> + '_ {
        let points = self.points.iter().map(|p| p.1);
        let whiskers = self.whiskers.iter().flat_map(|w| [w.1, w.2]);
        points.chain(whiskers).chain(self.dots.iter().map(|d| d.1))
    }
}

/// A horizontal line at a value of y, named in the legend.
#[derive(Debug, Clone)]
pub(crate) struct RefLine {
    pub name: String,
    pub y: f64,
    pub color: RGBColor,
}

#[derive(Clone)]
pub(crate) struct Plot {
    pub caption: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub refs: Vec<RefLine>,
}

pub(crate) const PALETTE: [RGBColor; 10] = [
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
pub(crate) struct Layout {
    scale: Scale,
    lo: f64,
    hi: f64,
    /// Coordinate of the value 0 on a log axis (the axis start), when some value is 0.
    zero_at: Option<f64>,
    /// Label every n-th whole coordinate (log axes); the number of ticks (linear axes).
    every: i64,
}

fn base(scale: Scale) -> f64 {
    match scale {
        Scale::LogBytes => 2.0,
        _ => 10.0,
    }
}

impl Layout {
    pub(crate) fn new(scale: Scale, values: &[f64]) -> Layout {
        let finite: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .collect();
        if let Scale::Linear(unit) = scale {
            let t = super::ticks::linear(&finite, unit, 8, true);
            let [lo, hi] = t.bounds();
            return Layout {
                scale,
                lo,
                hi,
                zero_at: None,
                every: t.at.len() as i64,
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
    pub(crate) fn pos(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear(_) => v,
            _ if v <= 0.0 => self.zero_at.unwrap_or(self.lo),
            _ => v.log(base(self.scale)),
        }
    }

    pub(crate) fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }

    /// How many tick positions to ask plotters for: whole coordinates on a log axis.
    pub(crate) fn ticks(&self) -> usize {
        match self.scale {
            Scale::Linear(_) => self.every as usize,
            _ => ((self.hi - self.lo).floor() as usize + 1).max(2),
        }
    }

    /// The label at a coordinate ("" for unlabelled ticks).
    pub(crate) fn label(&self, c: f64) -> String {
        match self.scale {
            Scale::Linear(unit) => super::ticks::label(c, unit, self.hi.abs().max(self.lo.abs())),
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
pub(crate) fn bytes_tick(e: i64) -> String {
    if e < 0 {
        return String::new();
    }
    const UNITS: [&str; 7] = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let unit = (e / 10) as usize;
    format!("{} {}", 1u64 << (e % 10), UNITS[unit.min(6)])
}

pub(super) type DrawResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Width of the legend panel right of the plot: the legend never hides a line.
pub(crate) const LEGEND_WIDTH: u32 = 330;
/// Characters of a legend line before it wraps.
const LEGEND_CHARS: usize = 46;

/// The legend, drawn in its own panel: a sample of each line (solid or dashed, with its
/// marker) and its name, wrapped.
pub(super) struct Legend<'a, 'b> {
    area: &'a Area<'b>,
    y: i32,
}

/// A part of the SVG canvas.
pub(super) type Area<'b> = DrawingArea<SVGBackend<'b>, plotters::coord::Shift>;

impl<'a, 'b> Legend<'a, 'b> {
    pub(super) fn new(area: &'a Area<'b>) -> Self {
        Legend { area, y: 56 }
    }

    /// A shaded area's entry: a filled swatch and its name.
    pub(super) fn swatch(&mut self, name: &str, fill: ShapeStyle) -> DrawResult<()> {
        let y = self.y;
        self.area
            .draw(&Rectangle::new([(4, y - 6), (30, y + 6)], fill))?;
        self.text(name)
    }

    fn text(&mut self, name: &str) -> DrawResult<()> {
        for (i, text) in wrap(name, LEGEND_CHARS).iter().enumerate() {
            self.area.draw(&Text::new(
                text.clone(),
                (38, self.y - 6 + 15 * i as i32),
                ("sans-serif", 12).into_font(),
            ))?;
        }
        self.y += 15 * wrap(name, LEGEND_CHARS).len() as i32 + 5;
        Ok(())
    }

    pub(super) fn entry(
        &mut self,
        name: &str,
        dashed: bool,
        marker: Option<Marker>,
        line: ShapeStyle,
        mark: ShapeStyle,
    ) -> DrawResult<()> {
        let y = self.y;
        let path = vec![(4, y), (30, y)];
        if dashed {
            self.area.draw(&DashedPathElement::new(path, 5, 3, line))?;
        } else {
            self.area.draw(&PathElement::new(path, line))?;
        }
        match marker {
            Some(Marker::Circle) => self.area.draw(&Circle::new((17, y), 4, mark))?,
            Some(Marker::Triangle) => self.area.draw(&TriangleMarker::new((17, y), 5, mark))?,
            Some(Marker::Cross) => self.area.draw(&Cross::new((17, y), 4, mark))?,
            None => {}
        }
        self.text(name)
    }
}

/// Split `s` into lines of at most `n` characters at spaces (a longer word stays whole).
fn wrap(s: &str, n: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in s.split(' ') {
        match out.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= n => {
                l.push(' ');
                l.push_str(word);
            }
            _ => out.push(word.to_string()),
        }
    }
    out
}

/// The plot's chart area: values on both axes as coordinates, drawn to SVG.
pub(super) type Canvas<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The plot as an SVG document; None when no series has a point.
pub(crate) fn draw(plot: &Plot) -> DrawResult<Option<String>> {
    draw_with(plot, |_, _, _, _| Ok(()))
}

/// An SVG document of the plot's size, white, its plot area and legend panel drawn by `f`.
pub(super) fn canvas(f: impl FnOnce(&Area<'_>, &Area<'_>) -> DrawResult<()>) -> DrawResult<String> {
    let mut buf = String::new();
    {
        let root =
            SVGBackend::with_string(&mut buf, (WIDTH + LEGEND_WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let (area, legend_area) = root.split_horizontally(WIDTH);
        f(&area, &legend_area)?;
        root.present()?;
    }
    Ok(buf)
}

/// Like [`draw`], with `under` drawn after the axes and before the lines.
pub(super) fn draw_with(
    plot: &Plot,
    under: impl FnOnce(&mut Canvas<'_, '_>, &mut Legend<'_, '_>, &Layout, &Layout) -> DrawResult<()>,
) -> DrawResult<Option<String>> {
    if plot.series.iter().all(|s| s.points.is_empty()) {
        return Ok(None);
    }
    let (xl, yl) = layouts(plot);
    canvas(|area, legend_area| {
        let x = Frame::of(&plot.x.title, &xl);
        let y = Frame::of(&plot.y.title, &yl);
        let mut chart = framed(area, &plot.caption, &x, &y)?;
        let (x0, x1) = (xl.range().start, xl.range().end);
        let mut legend = Legend::new(legend_area);
        under(&mut chart, &mut legend, &xl, &yl)?;
        for r in &plot.refs {
            let y = yl.pos(r.y);
            let style = r.color.stroke_width(2);
            chart.draw_series(DashedLineSeries::new(vec![(x0, y), (x1, y)], 8, 5, style))?;
            legend.entry(&r.name, true, None, style, style)?;
        }
        for s in &plot.series {
            let (line, mark) = draw_line(&mut chart, s, &xl, &yl)?;
            legend.entry(&s.name, s.dashed, Some(s.marker), line, mark)?;
        }
        Ok(())
    })
    .map(Some)
}

/// The x and y axes laid out for every value drawn: points, trials' dots, whiskers and
/// reference lines.
fn layouts(plot: &Plot) -> (Layout, Layout) {
    let xs: Vec<f64> = plot
        .series
        .iter()
        .flat_map(|s| s.points.iter().chain(s.dots.iter()).map(|p| p.0))
        .collect();
    let ys: Vec<f64> = plot
        .series
        .iter()
        .flat_map(Series::ys)
        .chain(plot.refs.iter().map(|r| r.y))
        .collect();
    (
        Layout::new(plot.x.scale, &xs),
        Layout::new(plot.y.scale, &ys),
    )
}

/// How one axis is drawn: its title, coordinate range, how many ticks, and their labels.
pub(super) struct Frame<'a> {
    pub title: &'a str,
    pub range: std::ops::Range<f64>,
    pub ticks: usize,
    pub label: Box<dyn Fn(f64) -> String + 'a>,
}

impl<'a> Frame<'a> {
    /// An axis laid out by `layout`.
    pub(crate) fn of(title: &'a str, layout: &'a Layout) -> Frame<'a> {
        Frame {
            title,
            range: layout.range(),
            ticks: layout.ticks(),
            label: Box::new(|v| layout.label(v)),
        }
    }
}

/// The chart on `area` with its caption, axes titles, ticks and light grid drawn.
pub(super) fn framed<'a, 'b>(
    area: &'a Area<'b>,
    caption: &str,
    x: &Frame<'_>,
    y: &Frame<'_>,
) -> DrawResult<Canvas<'a, 'b>> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x.range.clone(), y.range.clone())?;
    chart
        .configure_mesh()
        .x_desc(x.title)
        .y_desc(y.title)
        .x_labels(x.ticks)
        .y_labels(y.ticks)
        .x_label_formatter(&|v| (x.label)(*v))
        .y_label_formatter(&|v| (y.label)(*v))
        .max_light_lines(1)
        .light_line_style(RGBColor(240, 240, 240))
        .draw()?;
    Ok(chart)
}

/// One series: its whiskers, its line, its trials' dots and its markers. Returns the line's
/// and the markers' styles, for its legend entry.
pub(super) fn draw_line(
    chart: &mut Canvas<'_, '_>,
    s: &Series,
    xl: &Layout,
    yl: &Layout,
) -> DrawResult<(ShapeStyle, ShapeStyle)> {
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
    let faint = c.mix(0.45).filled();
    chart.draw_series(
        s.dots
            .iter()
            .map(|p| Circle::new((xl.pos(p.0), yl.pos(p.1)), 2, faint)),
    )?;
    let mark = if s.hollow {
        c.stroke_width(2)
    } else {
        c.filled()
    };
    match s.marker {
        Marker::Circle => {
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 4, mark)))?;
        }
        Marker::Triangle => {
            chart.draw_series(pts.iter().map(|p| TriangleMarker::new(*p, 5, mark)))?;
        }
        Marker::Cross => {
            chart.draw_series(pts.iter().map(|p| Cross::new(*p, 4, mark)))?;
        }
    }
    Ok((line, mark))
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

    #[test]
    fn legend_lines_wrap_at_spaces() {
        assert_eq!(
            wrap("host RAM 23.5 GB (snapshot: at 12k)", 16),
            ["host RAM 23.5 GB", "(snapshot: at", "12k)"]
        );
        assert_eq!(wrap("short", 16), ["short"]);
    }
}
