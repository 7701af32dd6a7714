//! What the body of the run pane shows (one key cycles it) and how far it is scrolled.
//!
//! The scroll position is kept as the first line shown, or "at the end" for a view that
//! follows new lines (the per-trial table while trials arrive). `update` moves it knowing
//! how many lines there are and how many fit (see `run::viewport`); `render` draws what it
//! says, clamped, so a position can never show blank lines past the end.

/// The views of the run pane's body, in the order the view key cycles them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunView {
    /// Per setting: median ± interval, range, the best group marked, the finding per series.
    #[default]
    Summary,
    /// Per trial: the experiment's own columns.
    Trials,
    /// The chart alone, as large as the pane.
    Chart,
    /// Every note and finding of the run, wrapped.
    Findings,
}

impl RunView {
    pub(crate) const ALL: [RunView; 4] = [
        RunView::Summary,
        RunView::Trials,
        RunView::Chart,
        RunView::Findings,
    ];

    pub(crate) fn next(self) -> RunView {
        let i = RunView::ALL.iter().position(|v| *v == self).unwrap_or(0);
        RunView::ALL[(i + 1) % RunView::ALL.len()]
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            RunView::Summary => "summary",
            RunView::Trials => "trials",
            RunView::Chart => "chart",
            RunView::Findings => "findings",
        }
    }

    /// The per-trial table follows the newest trial, like a log; the others start at the top.
    fn follows(self) -> bool {
        self == RunView::Trials
    }
}

/// A scroll request from a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScrollBy {
    Lines(isize),
    Pages(isize),
    Top,
    End,
}

/// The first line shown, or the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scroll {
    pub top: usize,
    pub at_end: bool,
}

impl Scroll {
    pub(crate) fn new(view: RunView) -> Scroll {
        Scroll {
            top: 0,
            at_end: view.follows(),
        }
    }

    /// The first line to show of `len` lines with `visible` rows.
    pub(crate) fn first(&self, len: usize, visible: usize) -> usize {
        let last_top = len.saturating_sub(visible);
        if self.at_end {
            last_top
        } else {
            self.top.min(last_top)
        }
    }

    /// Move as asked; reaching the end (when there is more than a screen) follows it.
    pub(crate) fn apply(&mut self, by: ScrollBy, len: usize, visible: usize) {
        let last_top = len.saturating_sub(visible);
        let from = self.first(len, visible) as isize;
        let page = visible.saturating_sub(1).max(1) as isize;
        let to = match by {
            ScrollBy::Lines(n) => from + n,
            ScrollBy::Pages(n) => from + n * page,
            ScrollBy::Top => 0,
            ScrollBy::End => last_top as isize,
        };
        self.top = to.clamp(0, last_top as isize) as usize;
        // A view that was following keeps following while it stays at the end.
        self.at_end = self.top == last_top && (last_top > 0 || self.at_end);
    }
}

impl Default for Scroll {
    fn default() -> Scroll {
        Scroll::new(RunView::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_cycle_through_all_four() {
        let mut v = RunView::default();
        let mut seen = vec![v];
        for _ in 0..4 {
            v = v.next();
            seen.push(v);
        }
        assert_eq!(seen.first(), seen.last());
        assert_eq!(&seen[..4], &RunView::ALL);
    }

    #[test]
    fn scrolling_stays_inside_the_lines_and_follows_the_end() {
        let mut s = Scroll::new(RunView::Summary);
        assert_eq!(s.first(30, 10), 0);
        s.apply(ScrollBy::Lines(-3), 30, 10);
        assert_eq!(s.first(30, 10), 0);
        s.apply(ScrollBy::Pages(1), 30, 10);
        assert_eq!(s.first(30, 10), 9);
        s.apply(ScrollBy::Lines(100), 30, 10);
        assert_eq!(s.first(30, 10), 20);
        assert!(s.at_end);
        // At the end, new lines keep the newest in view; one line up stops following.
        assert_eq!(s.first(35, 10), 25);
        s.apply(ScrollBy::Lines(-1), 35, 10);
        assert_eq!((s.first(35, 10), s.at_end), (24, false));
        assert_eq!(s.first(40, 10), 24);
        s.apply(ScrollBy::Top, 40, 10);
        assert_eq!(s.first(40, 10), 0);
        s.apply(ScrollBy::End, 40, 10);
        assert_eq!(s.first(40, 10), 30);
        // Everything fits: nothing moves.
        let mut s = Scroll::new(RunView::Findings);
        s.apply(ScrollBy::Pages(2), 5, 10);
        assert_eq!(s.first(5, 10), 0);
        assert_eq!(Scroll::new(RunView::Trials).first(30, 10), 20);
    }
}
