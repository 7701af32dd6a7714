//! History strip: past results of the same experiment and parameters, one number per run
//! (its result, in the experiment's own measure), and what the history says the run would
//! take.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::app::App;
use crate::tui::msg::{Estimates, HistoryPoint, Past};
use crate::tui::text::{fit, spark_range, width, with_unit};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryState {
    /// The spec the points belong to.
    pub spec_key: Option<String>,
    pub points: Vec<HistoryPoint>,
    /// How long the sweep and one trial of the spec would take.
    pub eta: Estimates,
    pub error: Option<String>,
    pub loading: bool,
}

impl HistoryState {
    /// Results arrived; those of another spec (the user moved on) are dropped.
    pub(crate) fn apply(&mut self, spec_key: String, past: Result<Past, String>) {
        if self.spec_key.as_deref() != Some(spec_key.as_str()) {
            return;
        }
        self.loading = false;
        match past {
            Ok(p) => {
                self.points = p.points;
                self.eta = p.eta;
                self.error = None;
            }
            Err(e) => {
                self.points.clear();
                self.eta = Estimates::default();
                self.error = Some(e);
            }
        }
    }

    /// Start loading for a spec; true when it is a different spec than shown.
    pub(crate) fn want(&mut self, spec_key: Option<String>) -> bool {
        if self.spec_key == spec_key {
            return false;
        }
        self.points.clear();
        self.eta = Estimates::default();
        self.error = None;
        self.loading = spec_key.is_some();
        self.spec_key = spec_key;
        true
    }
}

pub(crate) fn render(app: &App, f: &mut Frame, area: Rect) {
    let st = &app.history;
    let theme = app.theme;
    let cols = area.width as usize;
    let mut spans = vec![Span::styled(" History ", theme.title())];
    let used = 9;
    let rest = cols.saturating_sub(used + 1);
    let text = if st.spec_key.is_none() {
        Span::styled(
            fit("(fix the parameters to see past runs of them)", rest),
            theme.dim(),
        )
    } else if let Some(e) = &st.error {
        Span::styled(
            fit(&format!("cannot read the history: {e}"), rest),
            theme.warn(),
        )
    } else if st.points.is_empty() {
        let t = if st.loading {
            "reading…"
        } else {
            "no finished runs of these parameters yet"
        };
        Span::styled(fit(t, rest), theme.dim())
    } else {
        let summary = summary_in(&st.points, rest.saturating_sub(4));
        let values: Vec<f64> = st.points.iter().map(|p| p.value).collect();
        let n = values.len();
        let spark_w = n.min(40).min(rest.saturating_sub(width(&summary)).max(4));
        spans.push(Span::styled(
            spark_range(values.iter(), spark_w),
            theme.spark(),
        ));
        let left = rest.saturating_sub(spark_w);
        Span::styled(fit(&summary, left), theme.plain())
    };
    spans.push(text);
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// " best median: 10.9 s [10.7 s, 11.2 s] in run r6, best of 7 runs of these parameters · last 11.7 s":
/// the best result past runs reached — one real run's figure with its interval, and which run
/// — then the last, in the experiment's own measure.
pub(crate) fn summary(points: &[HistoryPoint]) -> String {
    let Some(last) = points.last() else {
        return String::new();
    };
    let better = |a: &&HistoryPoint, b: &&HistoryPoint| match last.better {
        crate::measure::verdict::Better::Lower => b.value.total_cmp(&a.value),
        crate::measure::verdict::Better::Higher => a.value.total_cmp(&b.value),
    };
    let Some(best) = points.iter().max_by(better) else {
        return String::new();
    };
    let v = |p: &HistoryPoint| match p.interval {
        Some((lo, hi)) => format!(
            "{} [{}, {}]",
            with_unit(p.value, p.unit),
            with_unit(lo, p.unit),
            with_unit(hi, p.unit)
        ),
        None => with_unit(p.value, p.unit),
    };
    let n = points.len();
    if n == 1 {
        return format!(
            " {}: {} in 1 run of these parameters ({})",
            last.what,
            v(last),
            last.run_id
        );
    }
    let last_txt = if std::ptr::eq(best, last) {
        "the last".to_string()
    } else {
        format!("last {}", with_unit(last.value, last.unit))
    };
    format!(
        " {}: {} in run {}, best of {n} runs of these parameters · {last_txt}",
        best.what,
        v(best),
        best.run_id
    )
}

/// The longest form of [`summary`] that fits `cols`: the whole line, then without the last
/// run, then the best run's figure alone (never a cut sentence when a shorter one fits).
pub(crate) fn summary_in(points: &[HistoryPoint], cols: usize) -> String {
    let full = summary(points);
    if width(&full) <= cols {
        return full;
    }
    let cut = full.split(" · ").next().unwrap_or_default().to_string();
    if width(&cut) <= cols {
        return cut;
    }
    let short = cut
        .split(", best of")
        .next()
        .unwrap_or_default()
        .to_string();
    if width(&short) <= cols {
        return short;
    }
    short
        .split(" in run")
        .next()
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strip_says_a_real_run_s_figure_with_its_interval_not_a_median_of_medians() {
        let p = |value: f64, id: &str| HistoryPoint {
            value,
            unit: "rows/s",
            what: "best median".into(),
            interval: Some((value - 500.0, value + 500.0)),
            run_id: id.into(),
            better: crate::measure::verdict::Better::Higher,
        };
        assert_eq!(
            summary(&[p(12_000.0, "a"), p(14_000.0, "b"), p(13_000.0, "c")]),
            " best median: 14.0k rows/s [13.5k rows/s, 14.5k rows/s] in run b, best of 3 runs of these parameters · last 13.0k rows/s"
        );
        // The two runs: 274 ms and 403 ms, never the 339 ms between them.
        let t = |value: f64, id: &str| HistoryPoint {
            unit: "s",
            interval: None,
            better: crate::measure::verdict::Better::Lower,
            ..p(value, id)
        };
        let two = summary(&[t(0.274, "x"), t(0.403, "y")]);
        assert!(
            two.starts_with(" best median: 274 ms in run x, best of 2 runs"),
            "{two}"
        );
        assert!(!two.contains("339"), "{two}");
        assert_eq!(
            summary(&[p(980.0, "z")]),
            " best median: 980 rows/s [480 rows/s, 1.48k rows/s] in 1 run of these parameters (z)"
        );
    }
}
