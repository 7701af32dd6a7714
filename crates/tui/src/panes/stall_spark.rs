//! The run pane's live rate sparkline with an ingest's stalled seconds marked. The ingest's
//! live rate is taken over about the last second, so a reading of 0 rows/s once the load has
//! run a second says that nothing committed during a whole second (commits waiting for a
//! standby that is gone, a lock): its cell shows `×` in the warning colour instead of the
//! lowest bar, which a slow second would also show.

use ratatui::text::Span;

use super::Series;
use crate::tui::text::spark;
use crate::tui::theme::Theme;

/// The mark of a stalled second.
pub(crate) const STALL: char = '×';

/// Which live readings were stalled seconds (1) or not (0), kept in step with the readings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stalls(Series);

impl Stalls {
    pub(crate) fn push(&mut self, stalled: bool) {
        self.0.push(if stalled { 1.0 } else { 0.0 });
    }

    pub(crate) fn clear(&mut self) {
        self.0.clear()
    }
}

/// An ingest's live reading of `rate` rows/s, `elapsed_s` into the load, is a stalled second:
/// nothing committed over the last second (before a second has passed, a 0 may only be a
/// slow start).
pub(crate) fn is_stall(rate: f64, elapsed_s: f64) -> bool {
    rate <= 0.0 && elapsed_s >= 1.0
}

/// The sparkline of the last `cols` readings (right-aligned, newest rightmost) with each
/// stalled one's cell `×`.
pub(crate) fn stall_spark(rates: &Series, stalls: &Stalls, cols: usize) -> String {
    let mut cells: Vec<char> = spark(rates.iter(), cols, None).chars().collect();
    // The newest readings and the newest marks line up from the right.
    for (cell, stalled) in cells.iter_mut().rev().zip(stalls.0.iter().rev()) {
        if *stalled > 0.0 && *cell != ' ' {
            *cell = STALL;
        }
    }
    cells.into_iter().collect()
}

/// The sparkline as spans: bars in the sparkline's style, stall marks in the warning one.
pub(crate) fn stall_spans<'a>(
    rates: &Series,
    stalls: &Stalls,
    cols: usize,
    theme: Theme,
) -> Vec<Span<'a>> {
    let mut spans: Vec<Span<'a>> = Vec::new();
    let mut run = String::new();
    let mut run_stalled = false;
    for c in stall_spark(rates, stalls, cols).chars() {
        let stalled = c == STALL;
        if stalled != run_stalled && !run.is_empty() {
            spans.push(styled(std::mem::take(&mut run), run_stalled, theme));
        }
        run_stalled = stalled;
        run.push(c);
    }
    if !run.is_empty() {
        spans.push(styled(run, run_stalled, theme));
    }
    spans
}

fn styled<'a>(text: String, stalled: bool, theme: Theme) -> Span<'a> {
    Span::styled(text, if stalled { theme.warn() } else { theme.spark() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readings(rates: &[f64], elapsed: &[f64]) -> (Series, Stalls) {
        let (mut r, mut s) = (Series::default(), Stalls::default());
        for (v, e) in rates.iter().zip(elapsed) {
            r.push(*v);
            s.push(is_stall(*v, *e));
        }
        (r, s)
    }

    #[test]
    fn a_stalled_second_is_a_cross_and_a_slow_start_is_not() {
        // 0 at 0.1 s is a slow start; 0 at 2 s and 2.1 s are stalled seconds.
        let (r, s) = readings(
            &[0.0, 400.0, 800.0, 0.0, 0.0, 50.0, 800.0],
            &[0.1, 0.5, 1.5, 2.0, 2.1, 3.0, 3.5],
        );
        let line = stall_spark(&r, &s, 7);
        assert_eq!(line.chars().filter(|c| *c == STALL).count(), 2, "{line}");
        let cells: Vec<char> = line.chars().collect();
        assert_eq!(cells[0], '▁', "{line}");
        assert_eq!(&cells[3..5], &[STALL, STALL], "{line}");
        // A slow second keeps its bar: only a second without a commit is marked.
        assert_eq!(cells[5], '▁', "{line}");
        assert_eq!(cells[6], '█', "{line}");
    }

    #[test]
    fn marks_follow_the_newest_readings_in_a_narrow_or_wide_line() {
        let (r, s) = readings(&[800.0, 0.0, 800.0], &[1.0, 2.0, 3.0]);
        // Two cells: the last two readings, the stall first.
        assert_eq!(stall_spark(&r, &s, 2), format!("{STALL}█"));
        // Five cells: right-aligned, blanks stay blank.
        assert_eq!(stall_spark(&r, &s, 5), format!("  █{STALL}█"));
        let spans = stall_spans(&r, &s, 5, Theme { color: true });
        let texts: Vec<&str> = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(texts, ["  █", "×", "█"]);
        assert_eq!(spans[1].style, Theme { color: true }.warn());
        assert_eq!(spans[0].style, Theme { color: true }.spark());
    }
}
