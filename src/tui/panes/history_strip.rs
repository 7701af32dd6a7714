//! History strip: past results of the same experiment and parameters, one number per run
//! (its result, in the experiment's own measure), and what the history says the run would
//! take.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::measure::stats;
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
    pub fn apply(&mut self, spec_key: String, past: Result<Past, String>) {
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
    pub fn want(&mut self, spec_key: Option<String>) -> bool {
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

pub fn render(app: &App, f: &mut Frame, area: Rect) {
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
        let summary = summary(&st.points);
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

/// " best median: 11.6 s over 7 runs of these parameters · last 11.7 s": the result past runs
/// reached (their median, and the last), in the experiment's own measure.
pub fn summary(points: &[HistoryPoint]) -> String {
    let Some(last) = points.last() else {
        return String::new();
    };
    let values: Vec<f64> = points.iter().map(|p| p.value).collect();
    let median = stats::median(&values).unwrap_or(0.0);
    let n = values.len();
    let v = |x: f64| with_unit(x, last.unit);
    if n == 1 {
        return format!(
            " {}: {} in 1 run of these parameters",
            last.what,
            v(last.value)
        );
    }
    format!(
        " {}: {} over {n} runs of these parameters · last {}",
        last.what,
        v(median),
        v(last.value)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strip_says_results_in_their_unit_not_durations() {
        let p = |value: f64| HistoryPoint {
            value,
            unit: "rows/s",
            what: "best median".into(),
        };
        assert_eq!(
            summary(&[p(12_000.0), p(14_000.0), p(13_000.0)]),
            " best median: 13.0k rows/s over 3 runs of these parameters · last 13.0k rows/s"
        );
        assert_eq!(
            summary(&[p(980.0)]),
            " best median: 980 rows/s in 1 run of these parameters"
        );
    }
}
