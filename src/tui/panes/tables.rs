//! The two tables of the run pane as lines (so that they scroll like any text): per trial,
//! the experiment's own columns; per setting, the median with its interval and the marks of
//! the best group, each series followed by its finding.
//!
//! Columns are whole or absent, never cut, and always the leading ones: a wider pane shows
//! at least the columns a narrower one shows.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::summary::{self, Mark, SeriesSummary};
use crate::experiment::{ResultLayout, Sample};
use crate::measure::rules::Rules;
use crate::tui::text::{fit, pad, width, wrap};
use crate::tui::theme::Theme;

/// A widest cell, so that one long sort description does not take the pane.
const MAX_CELL: usize = 24;
const SPACING: usize = 2;

/// A table as lines: the header and the rows, and the width all its columns need.
pub struct Lines<'a> {
    pub header: Line<'a>,
    pub rows: Vec<Line<'a>>,
    pub natural: usize,
}

/// How many leading columns of `widths` fit in `cols`.
fn columns_that_fit(widths: &[usize], cols: usize) -> usize {
    let mut used = 0;
    for (i, w) in widths.iter().enumerate() {
        let add = if i == 0 { *w } else { *w + SPACING };
        if used + add > cols {
            return i;
        }
        used += add;
    }
    widths.len()
}

fn natural(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + SPACING * widths.len().saturating_sub(1)
}

fn cells_line<'a>(cells: &[String], widths: &[usize], shown: usize, style: Style) -> Line<'a> {
    let text = (0..shown)
        .map(|i| pad(cells.get(i).map(String::as_str).unwrap_or(""), widths[i]))
        .collect::<Vec<_>>()
        .join(&" ".repeat(SPACING));
    Line::from(Span::styled(text.trim_end().to_string(), style))
}

/// Per trial, in the order they ran; projected rows (warm-ups, projections) dimmed.
pub fn trials<'a>(
    theme: Theme,
    layout: &ResultLayout,
    samples: &[Sample],
    cols: usize,
) -> Lines<'a> {
    let ncols = layout.columns.len();
    let mut widths: Vec<usize> = layout.columns.iter().map(|c| width(c)).collect();
    for s in samples {
        for (i, c) in s.cells.iter().enumerate().take(ncols) {
            widths[i] = widths[i].max(width(c));
        }
    }
    for w in &mut widths {
        *w = (*w).min(MAX_CELL);
    }
    let shown = columns_that_fit(&widths, cols);
    let rows = samples
        .iter()
        .map(|s| {
            let style = if s.projected {
                theme.dim()
            } else {
                theme.plain()
            };
            let cells: Vec<String> = s.cells.iter().map(|c| fit(c, MAX_CELL)).collect();
            cells_line(&cells, &widths, shown, style)
        })
        .collect();
    Lines {
        header: cells_line(&layout.columns, &widths, shown, theme.title()),
        rows,
        natural: natural(&widths),
    }
}

/// Per setting: `★ series setting n median ± range`, and under each series with repeated
/// trials its finding.
pub fn settings<'a>(
    theme: Theme,
    layout: &ResultLayout,
    series: &[SeriesSummary],
    rules: &Rules,
    cols: usize,
) -> Lines<'a> {
    let header: Vec<String> = ["", "series", "setting", "n", "median", "±", "range"]
        .map(String::from)
        .to_vec();
    let value = |v: f64| summary::value(layout, v);
    let cells_of = |r: &summary::SettingRow| -> Vec<String> {
        let mut c = vec![
            r.mark.symbol().to_string(),
            r.series.clone(),
            r.label.clone(),
        ];
        match &r.estimate {
            Some(e) => c.extend([
                e.n.to_string(),
                value(e.median),
                summary::plus_minus(e, rules),
                if e.n > 1 {
                    format!("{}–{}", value(e.min), value(e.max))
                } else {
                    String::new()
                },
            ]),
            None => c.extend(["0".into(), "–".into()]),
        }
        c
    };
    let table: Vec<Vec<Vec<String>>> = series
        .iter()
        .map(|s| s.settings.iter().map(cells_of).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| width(h)).collect();
    for c in table.iter().flatten() {
        for (i, cell) in c.iter().enumerate() {
            widths[i] = widths[i].max(width(cell)).min(MAX_CELL);
        }
    }
    let shown = columns_that_fit(&widths, cols);
    let mut rows = Vec::new();
    let (mut best, mut tied) = (false, false);
    for (s, cells) in series.iter().zip(&table) {
        for (r, c) in s.settings.iter().zip(cells) {
            let mut line = cells_line(c, &widths, shown, theme.plain());
            best |= r.mark == Mark::Best;
            tied |= r.mark == Mark::Tied;
            if r.mark != Mark::None
                && let Some(first) = line.spans.first_mut()
            {
                let rest: String = first.content.chars().skip(1).collect();
                line.spans = vec![
                    Span::styled(r.mark.symbol(), theme.good()),
                    Span::styled(rest, theme.plain()),
                ];
            }
            rows.push(line);
        }
        // Single trials say nothing about noise: no sentence until some setting has two
        // (a growth step is one sample however many writes it timed).
        let repeated = s
            .settings
            .iter()
            .any(|r| r.estimate.is_some_and(|e| e.n > 1));
        if !repeated {
            continue;
        }
        let finding = format!("{}: {}", s.series, s.sentence);
        for (i, l) in wrap(&finding, cols.saturating_sub(4), 3)
            .into_iter()
            .enumerate()
        {
            let indent = if i == 0 { "  " } else { "    " };
            rows.push(Line::styled(format!("{indent}{l}"), theme.dim()));
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
        rows.push(Line::styled(l, theme.dim()));
    }
    Lines {
        header: cells_line(&header, &widths, shown, theme.title()),
        rows,
        natural: natural(&widths),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_whole_and_leading() {
        assert_eq!(columns_that_fit(&[5, 5, 5], 100), 3);
        assert_eq!(columns_that_fit(&[5, 5, 5], 12), 2);
        assert_eq!(columns_that_fit(&[5, 5, 5], 11), 1);
        assert_eq!(columns_that_fit(&[5, 5, 5], 4), 0);
        assert_eq!(natural(&[5, 5, 5]), 19);
    }

    #[test]
    fn single_trials_get_no_finding_line_repeated_ones_do() {
        let layout = crate::experiment::growth::layout();
        let sample = |x: f64, y: f64| Sample {
            series: "snapshot".into(),
            x,
            y,
            projected: false,
            cells: vec![],
            settings: String::new(),
        };
        let rules = Rules::default();
        let text = |samples: &[Sample]| -> String {
            let series = summary::summarize(&layout, samples, &rules);
            let t = settings(Theme { color: false }, &layout, &series, &rules, 100);
            t.rows.iter().map(|l| l.to_string() + "\n").collect()
        };
        // Growth: one sample per step, whatever its repeats inside.
        let one = text(&[sample(1e6, 0.2), sample(1e7, 0.3)]);
        assert!(!one.contains("too few trials"), "{one}");
        assert_eq!(one.lines().count(), 2, "{one}");
        let two = text(&[sample(1e6, 0.2), sample(1e7, 0.3), sample(1e6, 0.21)]);
        assert!(two.contains("snapshot: too few trials to decide"), "{two}");
    }
}
