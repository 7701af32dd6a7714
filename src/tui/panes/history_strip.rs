//! History strip: past results of the same experiment and parameters, one number per run.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::measure::stats;
use crate::measure::units::format_seconds;
use crate::tui::app::App;
use crate::tui::msg::HistoryPoint;
use crate::tui::text::{fit, spark_range, width};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryState {
    /// The spec the points belong to.
    pub spec_key: Option<String>,
    pub points: Vec<HistoryPoint>,
    pub error: Option<String>,
    pub loading: bool,
}

impl HistoryState {
    /// Results arrived; those of another spec (the user moved on) are dropped.
    pub fn apply(&mut self, spec_key: String, points: Result<Vec<HistoryPoint>, String>) {
        if self.spec_key.as_deref() != Some(spec_key.as_str()) {
            return;
        }
        self.loading = false;
        match points {
            Ok(p) => {
                self.points = p;
                self.error = None;
            }
            Err(e) => {
                self.points.clear();
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
        let secs: Vec<f64> = st.points.iter().map(|p| p.seconds).collect();
        let median = stats::median(&secs).unwrap_or(0.0);
        let n = secs.len();
        let summary = format!(
            " median {} over {n} run{} of these parameters · last {}",
            format_seconds(median),
            if n == 1 { "" } else { "s" },
            format_seconds(*secs.last().unwrap_or(&0.0))
        );
        let spark_w = n.min(40).min(rest.saturating_sub(width(&summary)).max(4));
        spans.push(Span::styled(
            spark_range(secs.iter(), spark_w),
            theme.spark(),
        ));
        let left = rest.saturating_sub(spark_w);
        Span::styled(fit(&summary, left), theme.plain())
    };
    spans.push(text);
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}
