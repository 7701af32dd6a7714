//! The event stream every experiment emits and both the TUI and the headless printer consume.
//!
//! `Started`, then any number of `Phase`/`Progress`/`Sample`/`Note`, then exactly one of
//! `Finished`, `Failed`, `Cancelled`. Progress may be dropped when the consumer is slow;
//! samples (finished trials) and the final event never are. `Settle` marks may come in
//! between: a consumer just drops them.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::record::RunReport;
use crate::measure::verdict::Better;

/// How an experiment's results are drawn: declared once in `Started` so that the TUI and the
/// reports need no experiment-specific code to draw a chart and a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultLayout {
    /// Chart x axis, e.g. "maintenance_work_mem".
    pub x_label: String,
    /// Unit of x for tick labels: "bytes", "rows", "count", …
    pub x_unit: String,
    pub x_log: bool,
    /// Chart y axis, e.g. "seconds".
    pub y_label: String,
    pub y_unit: String,
    pub y_log: bool,
    /// Which way y is better (seconds: lower, rows/s: higher): how the TUI finds the best
    /// group of settings. Layouts recorded before it existed read as `lower`.
    #[serde(default = "lower_is_better")]
    pub y_better: Better,
    /// Column titles of the results table; each `Sample::cells` matches them.
    pub columns: Vec<String>,
    /// A categorical x axis: the name of each x = 0, 1, 2 … (empty: x is a number in
    /// `x_unit`). The TUI uses it to put the swept server settings on the x axis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub x_names: Vec<String>,
    /// What y is, in a word, for table headers ("write"); empty: "median".
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub y_name: String,
    /// Further timed measures each sample carries the trials of (growth: the read of one
    /// version), each summarised beside y with its own median and interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measures: Vec<MeasureDef>,
    /// What the summary compares: the settings within each series, or the series at each x.
    #[serde(default, skip_serializing_if = "Compare::is_settings")]
    pub compare: Compare,
    /// Columns (by title) of the trial table that the summary repeats for each setting
    /// (growth: the rows and sizes of a step).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summary_columns: Vec<String>,
}

impl Default for ResultLayout {
    fn default() -> Self {
        ResultLayout {
            x_label: String::new(),
            x_unit: String::new(),
            x_log: false,
            y_label: String::new(),
            y_unit: String::new(),
            y_log: false,
            y_better: Better::Lower,
            columns: Vec::new(),
            x_names: Vec::new(),
            y_name: String::new(),
            measures: Vec::new(),
            compare: Compare::Settings,
            summary_columns: Vec::new(),
        }
    }
}

/// A further timed measure of a layout: its name for headers and its unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasureDef {
    pub name: String,
    pub unit: String,
}

/// Which settings the verdicts compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Compare {
    /// The settings (x) of each series against each other: index-build's memory, ingest's
    /// batch. The best of a series is the one to use.
    #[default]
    Settings,
    /// The series at each x against each other: growth's designs at a step. The
    /// experiment says what it concluded in each sample's `findings`.
    Series,
}

impl Compare {
    fn is_settings(&self) -> bool {
        *self == Compare::Settings
    }
}

fn lower_is_better() -> Better {
    Better::Lower
}

/// Which trial, for display: "trial 5/12 · random · 64MB".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRef {
    /// 1-based.
    pub index: usize,
    pub total: usize,
    pub label: String,
}

/// A live reading of how far the current step is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub trial: Option<TrialRef>,
    /// e.g. "building index: loading tuples in tree", "generating dataset".
    pub phase: String,
    /// 0..1 when the phase has a measurable extent; None means "show a spinner".
    pub fraction: Option<f64>,
    /// Seconds since the step began.
    pub elapsed_s: f64,
    /// The experiment's own live rate (e.g. tuples/s, rows/s) for the sparkline.
    pub rate: Option<f64>,
    pub rate_unit: String,
}

/// A finished measurement: a point on the chart and a row in the results table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// The chart series this point belongs to (e.g. "random", "copy ×2").
    pub series: String,
    pub x: f64,
    pub y: f64,
    /// True for a projected (not measured) point.
    pub projected: bool,
    /// Table cells, one per `ResultLayout::columns`.
    pub cells: Vec<String>,
    /// The swept server settings of the trial (`--set`), e.g. `wal_compression=pglz`; empty
    /// when nothing is swept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub settings: String,
    /// The trials behind `y` when the sample stands for several (a growth step times
    /// several writes; `y` is their median); empty when `y` is one trial.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<f64>,
    /// The trials of each of the layout's `measures`, in its order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measures: Vec<Vec<f64>>,
    /// What the experiment concluded once this sample was in (growth: ranges against
    /// snapshot at the step), in the statistics core's words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
}

impl Sample {
    /// The trials of `y`: its own list, or `y` itself.
    pub fn trials(&self) -> Vec<f64> {
        if self.values.is_empty() {
            vec![self.y]
        } else {
            self.values.clone()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RunEvent {
    Started {
        run_id: String,
        /// One line saying what will run, e.g. "index-build · 10M rows · 14 trials".
        description: String,
        trials: usize,
        layout: ResultLayout,
    },
    Phase {
        trial: Option<TrialRef>,
        phase: String,
    },
    Progress(Progress),
    Sample(Sample),
    Note(String),
    Finished(Box<RunReport>),
    Failed {
        error: String,
        report: Box<RunReport>,
    },
    Cancelled(Box<RunReport>),
    /// A mark: the experiment waits (see [`Emitter::settle`]) until the consumer has handled
    /// every event before it. Never recorded.
    #[serde(skip)]
    Settle(Settled),
}

/// What a `Settle` mark carries: when the consumer drops it, as it drops every event it is
/// done with, the experiment waiting for it goes on.
#[derive(Debug, Clone, Default)]
pub struct Settled {
    /// Held only to be dropped: its last drop ends the experiment's wait.
    _ack: Option<Arc<oneshot::Sender<()>>>,
}

impl PartialEq for Settled {
    fn eq(&self, _: &Settled) -> bool {
        true
    }
}

/// The longest [`Emitter::settle`] waits: a consumer that keeps its events (a test's list)
/// must not stall the experiment.
const SETTLE_WAIT: Duration = Duration::from_millis(20);

impl RunEvent {
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            RunEvent::Finished(_) | RunEvent::Failed { .. } | RunEvent::Cancelled(_)
        )
    }
}

/// The sending side, held by the experiment.
#[derive(Clone)]
pub struct Emitter {
    tx: mpsc::Sender<RunEvent>,
}

impl Emitter {
    pub fn new(tx: mpsc::Sender<RunEvent>) -> Emitter {
        Emitter { tx }
    }
    /// Send progress if there is room; a slow consumer just misses a reading.
    pub(crate) fn progress(&self, p: Progress) {
        let _ = self.tx.try_send(RunEvent::Progress(p));
    }
    /// Send an event that must arrive (waits for room). A consumer that has gone away is
    /// not an error for the experiment.
    pub(crate) async fn send(&self, e: RunEvent) {
        let _ = self.tx.send(e).await;
    }
    pub(crate) async fn phase(&self, trial: Option<TrialRef>, phase: impl Into<String>) {
        self.send(RunEvent::Phase {
            trial,
            phase: phase.into(),
        })
        .await;
    }
    pub(crate) async fn note(&self, note: impl Into<String>) {
        self.send(RunEvent::Note(note.into())).await;
    }
    pub(crate) async fn sample(&self, s: Sample) {
        self.send(RunEvent::Sample(s)).await;
    }
    /// Wait until the consumer has handled every event sent so far (at most 20 ms). Before a
    /// timed execution of a µs statement: the consumer (the TUI, the headless printer) wakes
    /// on another thread for each event, and its work must not fall inside the timed window
    /// when the two share a core (it did: +10–20% on a 150 µs lookup, `benches/query.sh`).
    pub(crate) async fn settle(&self) {
        let (tx, rx) = oneshot::channel();
        if self
            .tx
            .send(RunEvent::Settle(Settled {
                _ack: Some(Arc::new(tx)),
            }))
            .await
            .is_ok()
        {
            let _ = tokio::time::timeout(SETTLE_WAIT, rx).await;
        }
    }
}

/// A running experiment: its events and the means to cancel it.
pub struct RunHandle {
    pub events: mpsc::Receiver<RunEvent>,
    pub cancel: CancellationToken,
    pub task: JoinHandle<()>,
}

/// Channel capacity: enough for bursts of samples; progress beyond it is dropped.
pub(crate) const CHANNEL_CAPACITY: usize = 256;

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[tokio::test]
    async fn settle_waits_until_the_consumer_is_done_with_the_events_before_it() {
        let (tx, mut rx) = mpsc::channel(CHANNEL_CAPACITY);
        let emit = Emitter::new(tx);
        emit.note("first").await;
        let (done_tx, mut done_rx) = oneshot::channel::<()>();
        let consumer = tokio::spawn(async move {
            // The note is handled, then the mark is dropped: only then may settle return.
            let first = rx.recv().await;
            tokio::time::sleep(Duration::from_millis(5)).await;
            let _ = done_tx.send(());
            let mark = rx.recv().await;
            assert!(matches!(first, Some(RunEvent::Note(_))));
            assert!(matches!(mark, Some(RunEvent::Settle(_))));
        });
        emit.settle().await;
        assert!(
            done_rx.try_recv().is_ok(),
            "settle returned before the consumer handled the note"
        );
        consumer.await.unwrap();
    }

    #[tokio::test]
    async fn settle_gives_up_on_a_consumer_that_keeps_its_events_and_on_none() {
        let (tx, mut rx) = mpsc::channel(CHANNEL_CAPACITY);
        let emit = Emitter::new(tx);
        let kept = tokio::spawn(async move {
            let mut all = Vec::new();
            while let Some(ev) = rx.recv().await {
                all.push(ev);
            }
            all.len()
        });
        let t0 = Instant::now();
        emit.settle().await;
        let waited = t0.elapsed();
        assert!(waited >= SETTLE_WAIT, "returned after {waited:?}");
        drop(emit);
        assert_eq!(kept.await.unwrap(), 1);

        // The consumer has gone away: nothing to wait for.
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        drop(rx);
        Emitter::new(tx).settle().await;
    }
}
