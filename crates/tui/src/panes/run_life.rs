//! Where a run is in its life, as one value: nothing yet, the preflight under way, running
//! (perhaps cancelling), or ended. The pane, the key bar, Esc and quit read it; a run cannot
//! be both preparing and running, nor cancelling without running, nor running with an end.

use crate::experiment::Outcome;
use crate::tui::msg::RunKind;

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    pub outcome: Outcome,
    pub error: Option<String>,
    pub seconds: f64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub enum Lifecycle {
    /// No run on this pane yet.
    #[default]
    Idle,
    /// A run key was pressed; the preflight check is under way. The run before it stays on
    /// the pane until the new one starts (`before`: how it ended).
    Preparing {
        kind: RunKind,
        before: Option<Ended>,
    },
    /// A run was spawned and has not sent its final event; `cancelling`: cancel was asked for.
    Running {
        cancelling: bool,
    },
    Ended(Ended),
}

impl Lifecycle {
    /// The preflight is under way, or a run.
    pub(crate) fn is_active(&self) -> bool {
        matches!(
            self,
            Lifecycle::Preparing { .. } | Lifecycle::Running { .. }
        )
    }

    pub(crate) fn is_running(&self) -> bool {
        matches!(self, Lifecycle::Running { .. })
    }

    pub(crate) fn is_cancelling(&self) -> bool {
        matches!(self, Lifecycle::Running { cancelling: true })
    }

    /// The kind of run whose preflight is under way.
    pub(crate) fn preparing(&self) -> Option<RunKind> {
        match self {
            Lifecycle::Preparing { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// How the run on the pane ended (while a new one prepares, the one before it).
    pub(crate) fn ended(&self) -> Option<&Ended> {
        match self {
            Lifecycle::Ended(e) => Some(e),
            Lifecycle::Preparing { before, .. } => before.as_ref(),
            Lifecycle::Idle | Lifecycle::Running { .. } => None,
        }
    }

    /// A run key was pressed: the preflight starts, the run on the pane stays.
    pub(crate) fn prepare(&mut self, kind: RunKind) {
        let before = self.ended().cloned();
        *self = Lifecycle::Preparing { kind, before };
    }

    /// The preflight is dropped (answered, cancelled, quitting): back to the run before it.
    pub(crate) fn unprepare(&mut self) {
        if let Lifecycle::Preparing { before, .. } = self {
            *self = before.take().map_or(Lifecycle::Idle, Lifecycle::Ended);
        }
    }

    /// Cancel a running run: true when this asked for it (not already asked, and running).
    pub(crate) fn cancel(&mut self) -> bool {
        match self {
            Lifecycle::Running { cancelling } if !*cancelling => {
                *cancelling = true;
                true
            }
            _ => false,
        }
    }

    /// The run ended.
    pub(crate) fn end(&mut self, outcome: Outcome, error: Option<String>, seconds: f64) {
        *self = Lifecycle::Ended(Ended {
            outcome,
            error,
            seconds,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preparing_keeps_the_run_before_and_gives_it_back() {
        let mut life = Lifecycle::Idle;
        life.prepare(RunKind::Sweep);
        assert!(life.is_active() && !life.is_running());
        assert_eq!(life.preparing(), Some(RunKind::Sweep));
        assert_eq!(life.ended(), None);
        life.unprepare();
        assert_eq!(life, Lifecycle::Idle);

        life.end(Outcome::Finished, None, 3.0);
        life.prepare(RunKind::Single);
        assert_eq!(life.ended().map(|e| e.outcome), Some(Outcome::Finished));
        life.unprepare();
        assert_eq!(life.ended().map(|e| e.seconds), Some(3.0));
        assert!(!life.is_active());
    }

    #[test]
    fn cancel_is_asked_once_and_only_of_a_running_run() {
        let mut life = Lifecycle::Idle;
        assert!(!life.cancel());
        life.prepare(RunKind::Sweep);
        assert!(!life.cancel());
        life = Lifecycle::Running { cancelling: false };
        assert!(life.cancel());
        assert!(life.is_cancelling());
        assert!(!life.cancel());
        life.end(Outcome::Cancelled, None, 1.0);
        assert!(!life.is_cancelling() && !life.is_running());
        life.unprepare();
        assert_eq!(life.ended().map(|e| e.outcome), Some(Outcome::Cancelled));
    }
}
