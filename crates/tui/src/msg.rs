//! What flows into `update` (messages) and out of it (commands for the runtime to carry out).

use std::time::Duration;

use crossterm::event::KeyEvent;

use crate::experiment::RunReport;
use crate::experiment::lab::preflight::Preflight;
use crate::experiment::{ExperimentSpec, RunEvent};
use crate::host::probe::{FsyncResult, SeqWriteResult};
use crate::host::{HostSample, HostSnapshot};
use crate::preset::{Preset, PresetEntry, PresetError};
use crate::server::ServerSnapshot;

/// Which kind of run a key asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    /// `r`: one trial, the first value of every list (the swept settings included), in every
    /// experiment.
    Single,
    /// `s`: the full sweep of the parameters.
    Sweep,
}

/// News about the server connection.
#[derive(Debug, Clone)]
pub enum ServerMsg {
    Snapshot(Box<ServerSnapshot>),
    /// The connection failed or a reading timed out; the next try is in `retry_in`.
    Lost {
        error: String,
        retry_in: Duration,
    },
}

/// The disk probes' two steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeStage {
    SeqWrite,
    Fsync,
}

impl ProbeStage {
    pub(crate) fn label(self) -> &'static str {
        match self {
            ProbeStage::SeqWrite => "sequential write",
            ProbeStage::Fsync => "fsync latency",
        }
    }
}

#[derive(Debug, Clone)]
pub enum ProbeMsg {
    Progress { stage: ProbeStage, fraction: f64 },
    Done(Result<(SeqWriteResult, FsyncResult), String>),
    Cancelled,
}

/// A past run of the current spec, for the history strip: its result in one number
/// (`history::headline`), not its duration.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryPoint {
    pub value: f64,
    /// "s" or "rows/s".
    pub unit: &'static str,
    /// What the number is: "best median", "snapshot write at 100 versions".
    pub what: String,
    /// The interval of `value`, when the run had one.
    pub interval: Option<(f64, f64)>,
    /// The run it is from.
    pub run_id: String,
    pub better: crate::measure::verdict::Better,
}

/// How long the parameters on screen would take: the sweep (`s`) and one trial (`r`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimates {
    pub sweep: Option<crate::experiment::lab::eta::Eta>,
    pub one: Option<crate::experiment::lab::eta::Eta>,
}

/// What the history says about the spec on screen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Past {
    pub points: Vec<HistoryPoint>,
    pub eta: Estimates,
}

#[derive(Debug)]
pub enum Msg {
    /// What interrupted runs left in the lab schema (found at start-up).
    Leftovers(Vec<crate::experiment::lab::leftovers::LabObject>),
    /// The outcome of dropping them.
    Cleaned(Result<Vec<String>, String>),
    Key(KeyEvent),
    Resize(u16, u16),
    /// The clock moved (spinners, elapsed time, deadlines).
    Tick,
    Server(ServerMsg),
    HostInfo(Box<HostSnapshot>),
    HostSample(HostSample),
    Probe(ProbeMsg),
    Preflight {
        spec: Box<ExperimentSpec>,
        kind: RunKind,
        verdict: Box<Preflight>,
    },
    Run(RunEvent),
    /// The run's event stream ended without a final event (the task died).
    RunClosed,
    History {
        spec_key: String,
        past: Result<Past, String>,
    },
    /// The presets of every experiment, and the files that did not load.
    Presets {
        entries: Vec<PresetEntry>,
        problems: Vec<String>,
    },
    /// A preset was saved, renamed or deleted (or not).
    PresetDone {
        op: PresetOp,
        result: Result<(), PresetError>,
    },
    /// The whole history, oldest first, and the lines skipped while reading it.
    Runs {
        runs: Vec<RunReport>,
        warnings: Vec<String>,
    },
    /// SIGTERM, SIGHUP or SIGINT: leave cleanly.
    Shutdown,
    /// News for the import dialog.
    Import(ImportMsg),
    /// News of the tune.
    Tune(TuneMsg),
    /// News of the capture key's capture (and of the window key's window).
    Capture(CaptureMsg),
    /// The last two windows compared (`V`), or why not.
    Verified(Result<VerifiedWindows, String>),
    /// The run was not started (another pglab holds the data directory's run lock).
    RunRefused(String),
    /// The report key's files, or why none was written.
    ReportWritten(Result<Vec<std::path::PathBuf>, String>),
}

/// What the tune view hears back.
#[derive(Debug)]
pub enum TuneMsg {
    Event(Box<crate::tune::TuneEvent>),
    /// The tune ended: what was written (or that it was stopped), or why it failed.
    Done(Result<String, String>),
    /// Not started: files of `taken` (the default names) are there already; `free` is the
    /// first numbered set that is not. `start` is the command, to send again with an answer.
    OutputsTaken {
        existing: Vec<std::path::PathBuf>,
        taken: crate::outputs::OutputSet,
        free: crate::outputs::OutputSet,
        start: Box<TuneCmd>,
    },
}

/// What the tune view asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum TuneCmd {
    Start {
        /// The workload as the view names it (`work-mem-spill (preset)`).
        workload: String,
        spec: Box<ExperimentSpec>,
        budget: Duration,
        settings: Vec<String>,
        /// Where the script, report and chart go; None: the default names, asking first
        /// when they are there already.
        outputs: Option<crate::outputs::OutputSet>,
    },
    Cancel,
}

/// What the import dialog hears back.
#[derive(Debug)]
pub enum ImportMsg {
    /// The source's tables, or why they could not be listed.
    Tables(Result<Vec<crate::import::source::Listed>, String>),
    Event(crate::import::ImportEvent),
}

/// What the import dialog asks for. The conninfo may hold a password: it is never logged.
#[derive(Clone, PartialEq)]
pub enum ImportCmd {
    List {
        conninfo: String,
    },
    Start {
        conninfo: String,
        spec: crate::import::ImportSpec,
    },
    Cancel,
}

impl std::fmt::Debug for ImportCmd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportCmd::List { .. } => f.write_str("List"),
            ImportCmd::Start { spec, .. } => write!(f, "Start {:?}", spec.tables),
            ImportCmd::Cancel => f.write_str("Cancel"),
        }
    }
}

/// A change to the user's presets.
#[derive(Debug, Clone, PartialEq)]
pub enum PresetOp {
    Save {
        preset: Box<Preset>,
        overwrite: bool,
    },
    Rename {
        from: String,
        to: String,
    },
    Delete {
        name: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Check free space and connection slots for this run, then answer with `Msg::Preflight`.
    Preflight {
        spec: Box<ExperimentSpec>,
        kind: RunKind,
        server: Option<Box<ServerSnapshot>>,
    },
    StartRun {
        spec: Box<ExperimentSpec>,
        /// The preset the parameters came from, unchanged (recorded in the history).
        preset: Option<String>,
    },
    CancelRun,
    StartProbe,
    CancelProbe,
    /// Capture the target's workload (answer: `Msg::Capture`).
    StartCapture,
    /// End the capture's sample early.
    CancelCapture,
    /// Record a window of the target's `pg_stat_statements` (answer: `Msg::Capture`); a
    /// window is a capture kept in the data directory's `windows` (`CancelCapture` ends it).
    StartWindow,
    /// Compare the last two windows recorded (answer: `Msg::Verified`).
    CompareWindows,
    /// Read the history for this spec: the strip's points and the time estimates.
    LoadHistory {
        spec_key: String,
        spec: Box<ExperimentSpec>,
    },
    /// List the presets (answer: `Msg::Presets`).
    LoadPresets,
    /// Carry out a preset change (answer: `Msg::PresetDone`).
    Preset(PresetOp),
    /// Read the whole history (answer: `Msg::Runs`).
    LoadRuns,
    /// Look for leftovers of interrupted runs (answer: `Msg::Leftovers`).
    FindLeftovers,
    /// Drop them, each only if still marked as pglab's (answer: `Msg::Cleaned`).
    CleanLeftovers(Vec<crate::experiment::lab::leftovers::LabObject>),
    /// The import dialog's listing, import and cancel (answers: `Msg::Import`).
    Import(ImportCmd),
    /// Start or stop a tune (answers: `Msg::Tune`).
    Tune(TuneCmd),
    /// Write this run's report into the current directory (answer: `Msg::ReportWritten`).
    WriteReport {
        run_id: String,
    },
    Quit,
}

/// The last two windows compared: the decision object and the two files' names.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedWindows {
    pub verification: Box<crate::capture::verify::Verification>,
    pub before: String,
    pub after: String,
}

/// What the capture key reports.
#[derive(Debug)]
pub enum CaptureMsg {
    /// The sample so far: executions seen, seconds sampled.
    Progress {
        seen: usize,
        seconds: f64,
    },
    Done(Result<CaptureDone, String>),
}

/// A finished capture: the workload file written and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureDone {
    pub path: std::path::PathBuf,
    pub database: String,
    pub captured: usize,
    pub written: usize,
    /// Share of the database's statement time (or of the executions seen).
    pub coverage: f64,
    pub from_statements: bool,
}
