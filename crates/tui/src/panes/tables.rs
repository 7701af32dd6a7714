//! The two tables of the run pane as lines (so that they scroll like any text): per trial,
//! the experiment's own columns; per setting, the median with its interval and the marks of
//! the best group, each series followed by its finding (or, for layouts that compare the
//! series at each x, each x followed by the experiment's findings there).
//!
//! Columns are whole or absent, never cut. The leading ones that name a row stay put; the
//! others scroll sideways (`hscroll` columns skipped) when the pane is too narrow for all of
//! them: a wider pane shows at least the columns a narrower one shows.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::axis;
use super::summary::{self, Mark, SeriesSummary};
use crate::experiment::{Compare, ResultLayout, Sample};
use crate::measure::interval::Estimate;
use crate::measure::rules::Rules;
use crate::tui::text::{fit, pad, width, wrap};
use crate::tui::theme::Theme;

/// A widest cell, so that one long sort description does not take the pane.
const MAX_CELL: usize = 24;
const SPACING: usize = 2;

/// A table as lines: the header and the rows, and how its columns fit.
pub(crate) struct Lines<'a> {
    pub header: Line<'a>,
    pub rows: Vec<Line<'a>>,
    /// The width all its columns need.
    pub natural: usize,
    /// Columns shown and in all.
    pub shown: usize,
    pub total: usize,
    /// The most columns that can be scrolled off (0: everything fits).
    pub max_skip: usize,
}

/// Which columns show in `cols`: the first `frozen` (as many as fit), then the others from
/// `frozen + skip` on, as long as they fit.
fn visible(widths: &[usize], frozen: usize, skip: usize, cols: usize) -> Vec<usize> {
    let mut used = 0;
    let mut out = Vec::new();
    let order =
        (0..frozen.min(widths.len())).chain((frozen + skip).min(widths.len())..widths.len());
    for i in order {
        let add = if out.is_empty() {
            widths[i]
        } else {
            widths[i] + SPACING
        };
        if used + add > cols {
            break;
        }
        used += add;
        out.push(i);
    }
    out
}

/// The fewest columns to skip so that the last one shows (0 when all fit).
fn max_skip(widths: &[usize], frozen: usize, cols: usize) -> usize {
    let scrolling = widths.len().saturating_sub(frozen);
    (0..scrolling)
        .find(|&s| visible(widths, frozen, s, cols).last() == Some(&(widths.len() - 1)))
        .unwrap_or(scrolling.saturating_sub(1))
}

fn natural(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + SPACING * widths.len().saturating_sub(1)
}

fn cells_line<'a>(cells: &[String], widths: &[usize], shown: &[usize], style: Style) -> Line<'a> {
    let text = shown
        .iter()
        .map(|&i| pad(cells.get(i).map(String::as_str).unwrap_or(""), widths[i]))
        .collect::<Vec<_>>()
        .join(&" ".repeat(SPACING));
    Line::from(Span::styled(text.trim_end().to_string(), style))
}

/// A row of a table: cells (with the mark of the best group, if any), or a line of prose.
enum Row {
    Cells {
        cells: Vec<String>,
        style: Style,
        mark: Mark,
    },
    Text {
        text: String,
        style: Style,
    },
}

/// Header and rows, laid out for `cols` with `skip` columns scrolled off.
struct Table {
    header: Vec<String>,
    rows: Vec<Row>,
    frozen: usize,
}

impl Table {
    fn widths(&self) -> Vec<usize> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| width(h)).collect();
        for r in &self.rows {
            if let Row::Cells { cells, .. } = r {
                for (i, c) in cells.iter().enumerate().take(widths.len()) {
                    widths[i] = widths[i].max(width(c));
                }
            }
        }
        widths.into_iter().map(|w| w.min(MAX_CELL)).collect()
    }

    fn lines<'a>(self, theme: Theme, cols: usize, skip: usize) -> Lines<'a> {
        let widths = self.widths();
        let most = max_skip(&widths, self.frozen, cols);
        let shown = visible(&widths, self.frozen, skip.min(most), cols);
        let rows = self
            .rows
            .into_iter()
            .map(|r| match r {
                Row::Text { text, style } => Line::styled(text, style),
                Row::Cells { cells, style, mark } => {
                    let cells: Vec<String> = cells.iter().map(|c| fit(c, MAX_CELL)).collect();
                    let mut line = cells_line(&cells, &widths, &shown, style);
                    if mark != Mark::None
                        && let Some(first) = line.spans.first_mut()
                    {
                        let rest: String = first.content.chars().skip(1).collect();
                        line.spans = vec![
                            Span::styled(mark.symbol(), theme.good()),
                            Span::styled(rest, style),
                        ];
                    }
                    line
                }
            })
            .collect();
        Lines {
            header: cells_line(&self.header, &widths, &shown, theme.title()),
            rows,
            natural: natural(&widths),
            shown: shown.len(),
            total: widths.len(),
            max_skip: most,
        }
    }
}

/// Per trial, in the order they ran; projected rows (warm-ups, projections) dimmed. The swept
/// settings, when there are some, come second (by their values; the names head the column),
/// so that every row says what it ran with.
pub(crate) fn trials<'a>(
    theme: Theme,
    layout: &ResultLayout,
    samples: &[Sample],
    cols: usize,
    skip: usize,
) -> Lines<'a> {
    let ncols = layout.columns.len();
    let settings_at = layout
        .columns
        .iter()
        .position(|c| c == "settings")
        .filter(|&i| i > 1);
    let order: Vec<usize> = match settings_at {
        Some(k) => [0, k]
            .into_iter()
            .chain(key_first(&layout.columns, (1..ncols).filter(|&i| i != k)))
            .collect(),
        None => [0]
            .into_iter()
            .chain(key_first(&layout.columns, 1..ncols))
            .collect(),
    };
    let names = axis::swept_names(samples);
    let header: Vec<String> = order
        .iter()
        .map(|&i| match settings_at {
            Some(k) if i == k && !names.is_empty() => names.clone(),
            _ => layout.columns[i].clone(),
        })
        .collect();
    let rows = samples
        .iter()
        .map(|s| Row::Cells {
            cells: order
                .iter()
                .map(|&i| {
                    let c = s.cells.get(i).cloned().unwrap_or_default();
                    if Some(i) == settings_at {
                        axis::values(&c)
                    } else {
                        c
                    }
                })
                .collect(),
            style: if s.projected {
                theme.dim()
            } else {
                theme.plain()
            },
            mark: Mark::None,
        })
        .collect();
    Table {
        header,
        rows,
        frozen: if settings_at.is_some() { 2 } else { 1 },
    }
    .lines(theme, cols, skip)
}

/// Trial columns that explain another and come right after it, so an 80-column pane shows
/// them beside the measure they explain (index-build's `sort`, in memory or spilled, after
/// `seconds`: the fact behind its recommendation), not past the columns that scroll off.
pub(crate) const BESIDE: [(&str, &str); 1] = [("sort", "seconds")];

/// `cols` in their order, each [`BESIDE`] column moved right after the one it explains.
fn key_first(names: &[String], cols: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut out: Vec<usize> = cols.collect();
    for (col, after) in BESIDE {
        let at = |v: &[usize], n: &str| v.iter().position(|&i| names[i] == n);
        if let (Some(c), Some(_)) = (at(&out, col), at(&out, after)) {
            let moved = out.remove(c);
            let a = at(&out, after).unwrap_or(0);
            out.insert(a + 1, moved);
        }
    }
    out
}

/// What the settings table is made of besides the per-series summaries.
pub(crate) struct SettingsInput<'a> {
    pub layout: &'a ResultLayout,
    pub series: &'a [SeriesSummary],
    /// For layouts that compare the series at each x: the experiment's findings at each x.
    pub findings: &'a [(f64, Vec<String>)],
    /// The series column's header ("series", "series · shared_buffers").
    pub series_title: String,
    pub rules: &'a Rules,
}

/// Per setting: `★ series setting n median interval`, the further measures and the layout's
/// summary columns; under each series with repeated trials its finding, or under each x the
/// experiment's findings there.
pub(crate) fn settings<'a>(
    theme: Theme,
    input: &SettingsInput,
    cols: usize,
    skip: usize,
) -> Lines<'a> {
    let rows = if input.layout.compare == Compare::Series {
        rows_by_x(theme, input, cols)
    } else {
        rows_by_series(theme, input, cols)
    };
    Table {
        header: settings_header(input),
        rows,
        frozen: 3,
    }
    .lines(theme, cols, skip)
}

/// The header: mark, series, setting, n, the y measure and its interval, each further
/// measure with its interval, then the layout's summary columns.
fn settings_header(input: &SettingsInput) -> Vec<String> {
    let layout = input.layout;
    let y_name = if layout.y_name.is_empty() {
        "median".to_string()
    } else {
        layout.y_name.clone()
    };
    let mut header: Vec<String> = vec![
        String::new(),
        input.series_title.clone(),
        if layout.x_label.is_empty() {
            "setting".into()
        } else {
            layout.x_label.clone()
        },
        "n".into(),
        y_name,
        "interval".into(),
    ];
    for m in &layout.measures {
        header.push(m.name.clone());
        header.push("interval".into());
    }
    header.extend(layout.summary_columns.iter().cloned());
    header
}

/// The median and its interval in `unit`, or a dash when there is no estimate.
fn median_and_interval(e: &Option<Estimate>, unit: &str, rules: &Rules) -> [String; 2] {
    match e {
        Some(e) => [
            crate::tui::text::with_unit(e.median, unit),
            summary::interval(e, unit, rules),
        ],
        None => ["–".into(), String::new()],
    }
}

/// One setting's row, its cells in the header's order.
fn setting_row(theme: Theme, input: &SettingsInput, r: &summary::SettingRow) -> Row {
    let layout = input.layout;
    let mut c = vec![
        r.mark.symbol().to_string(),
        r.series.clone(),
        r.label.clone(),
        r.estimate.map(|e| e.n.to_string()).unwrap_or("0".into()),
    ];
    c.extend(median_and_interval(
        &r.estimate,
        &layout.y_unit,
        input.rules,
    ));
    for (m, e) in layout.measures.iter().zip(&r.measures) {
        c.extend(median_and_interval(e, &m.unit, input.rules));
    }
    c.extend(r.cells.iter().cloned());
    Row::Cells {
        cells: c,
        style: theme.plain(),
        mark: r.mark,
    }
}

/// A sentence under the rows, indented and wrapped to three lines at most.
fn prose(theme: Theme, cols: usize, rows: &mut Vec<Row>, text: &str) {
    for (i, l) in wrap(text, cols.saturating_sub(4), 3)
        .into_iter()
        .enumerate()
    {
        let indent = if i == 0 { "  " } else { "    " };
        rows.push(Row::Text {
            text: format!("{indent}{l}"),
            style: theme.dim(),
        });
    }
}

/// Layouts that compare the series at each x: every series' settings at that x, then the
/// experiment's findings there.
fn rows_by_x(theme: Theme, input: &SettingsInput, cols: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    for (x, findings) in input.findings {
        for s in input.series {
            for r in s.settings.iter().filter(|r| r.x == *x) {
                rows.push(setting_row(theme, input, r));
            }
        }
        for f in findings {
            prose(theme, cols, &mut rows, f);
        }
    }
    rows
}

/// Each series' settings with its finding under them, then what the marks mean.
fn rows_by_series(theme: Theme, input: &SettingsInput, cols: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    let (mut best, mut tied) = (false, false);
    for s in input.series {
        for r in &s.settings {
            best |= r.mark == Mark::Best;
            tied |= r.mark == Mark::Tied;
            rows.push(setting_row(theme, input, r));
        }
        // Single trials say nothing about noise: no sentence until some setting has two.
        if s.settings
            .iter()
            .any(|r| r.estimate.is_some_and(|e| e.n > 1))
        {
            prose(
                theme,
                cols,
                &mut rows,
                &format!("{}: {}", s.series, s.sentence),
            );
        }
    }
    let legend = match (best, tied) {
        (true, true) => {
            "★ the one to use: the best, or the cheapest of those shown as good as it (≈)"
        }
        (true, false) => "★ the one to use: better than every other setting of its series",
        (false, true) => "≈ shown as good as the best (within the smallest effect)",
        (false, false) => "",
    };
    for l in wrap(legend, cols, 2) {
        rows.push(Row::Text {
            text: l,
            style: theme.dim(),
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_columns_stay_and_the_others_scroll() {
        let w = [5, 5, 5, 5];
        assert_eq!(visible(&w, 1, 0, 100), [0, 1, 2, 3]);
        assert_eq!(visible(&w, 1, 0, 12), [0, 1]);
        assert_eq!(visible(&w, 1, 1, 12), [0, 2]);
        assert_eq!(visible(&w, 1, 2, 12), [0, 3]);
        assert_eq!(visible(&w, 1, 0, 4), Vec::<usize>::new());
        assert_eq!(max_skip(&w, 1, 12), 2);
        assert_eq!(max_skip(&w, 1, 100), 0);
        assert_eq!(natural(&[5, 5, 5]), 19);
    }

    fn growth_sample(x: f64, writes: &[f64], findings: &[&str]) -> Sample {
        Sample {
            series: "snapshot".into(),
            x,
            y: writes[0],
            cells: vec![],
            values: writes.to_vec(),
            findings: findings.iter().map(|f| f.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_step_with_repeats_shows_their_count_and_interval_and_its_findings() {
        let layout = crate::experiment::growth::layout();
        let rules = Rules::default();
        let samples = [
            growth_sample(10.0, &[0.118, 0.048, 0.180, 0.120], &[]),
            growth_sample(
                100.0,
                &[0.058, 0.036, 0.078, 0.060],
                &["at 100 versions: a verdict"],
            ),
        ];
        let series = summary::summarize(&layout, &samples, &rules);
        let findings = summary::findings_by_x(&samples);
        let input = SettingsInput {
            layout: &layout,
            series: &series,
            findings: &findings,
            series_title: "design".into(),
            rules: &rules,
        };
        let t = settings(Theme { color: false }, &input, 200, 0);
        let text: String = t.rows.iter().map(|l| l.to_string() + "\n").collect();
        let header = t.header.to_string();
        assert!(
            header.contains("versions") && header.contains("write"),
            "{header}"
        );
        assert!(text.contains("snapshot  10"), "{text}");
        // Four writes: n 4, their median and the interval the core gives.
        assert!(text.contains("4  119 ms  48–180 ms (87.5%)"), "{text}");
        assert!(text.contains("at 100 versions: a verdict"), "{text}");
        // No ranking of the steps of a design: no marks, no sentence about steps.
        assert!(!text.contains('★') && !text.contains("faster"), "{text}");
    }
}
