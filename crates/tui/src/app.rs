//! The whole state of the UI. Changed only by `update`; read by `render`.

use std::path::PathBuf;
use std::time::Instant;

use super::keys::KeyMap;
use super::msg::RunKind;
use super::overlays::history::RunsState;
use super::overlays::presets::PickerState;
use super::panes::history_strip::HistoryState;
use super::panes::host::HostState;
use super::panes::params::ParamsState;
use super::panes::run::RunState;
use super::panes::target::TargetState;
use super::theme::Theme;
use crate::experiment::ExperimentSpec;
use crate::preset::Preset;
use crate::server::Location;

/// The four panes, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Target,
    Host,
    Params,
    Run,
}

impl Focus {
    pub(crate) const ORDER: [Focus; 4] = [Focus::Target, Focus::Host, Focus::Params, Focus::Run];

    pub(crate) fn title(self) -> &'static str {
        match self {
            Focus::Target => "Target",
            Focus::Host => "Host",
            Focus::Params => "Parameters",
            Focus::Run => "Run",
        }
    }
}

/// A question waiting for y/n.
#[derive(Debug, Clone, PartialEq)]
pub enum Confirm {
    StartRun {
        spec: Box<ExperimentSpec>,
        kind: RunKind,
        question: String,
    },
    Quit {
        question: String,
    },
    /// Replace the user's preset of this name (the picker stays open).
    OverwritePreset {
        preset: Box<Preset>,
        question: String,
    },
    /// Delete the user's preset of this name (the picker stays open).
    DeletePreset {
        name: String,
        question: String,
    },
    /// Drop what interrupted runs left in the lab schema (offered at start-up).
    CleanLeftovers {
        objects: Vec<crate::experiment::lab::leftovers::LabObject>,
        question: String,
    },
    /// A tune's script or report is there already: y replaces them, n writes numbered ones.
    TuneOutputs {
        question: String,
        replace: Box<super::msg::TuneCmd>,
        numbered: Box<super::msg::TuneCmd>,
    },
}

impl Confirm {
    pub(crate) fn question(&self) -> &str {
        match self {
            Confirm::StartRun { question, .. }
            | Confirm::Quit { question }
            | Confirm::OverwritePreset { question, .. }
            | Confirm::DeletePreset { question, .. }
            | Confirm::CleanLeftovers { question, .. }
            | Confirm::TuneOutputs { question, .. } => question,
        }
    }
}

/// What is drawn over the panes.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    None,
    Help,
    /// The preset picker (`p`).
    Presets,
    /// Past runs (`h`).
    Runs,
    /// The last query run's plans (`e`).
    Plans(super::overlays::plans::PlanCursor),
    /// Import tables into the sandbox (`i`).
    Import,
    /// Tune the settings for the workload on screen (`t`).
    Tune,
    /// The last two windows compared (`V`), in `App::verify`.
    Verify,
    Confirm(Confirm),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

/// A line for the user above the key bar, until the next key.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub text: String,
    pub level: Level,
}

/// How the UI starts.
pub(crate) struct AppInit {
    pub now: Instant,
    pub theme: Theme,
    pub keys: KeyMap,
    pub config_file: PathBuf,
    pub observe: bool,
    pub location: Location,
    pub size: (u16, u16),
    pub notice: Option<Notice>,
    /// The last session's parameters, when there were any.
    pub last_params: Option<crate::tui::last_params::LastParams>,
    /// The disk probe an earlier session kept, when it measured the directory probed now.
    pub saved_probe: Option<crate::tui::runtime::probe_saved::SavedProbe>,
}

pub struct App {
    /// The clock as of the message being handled; the runtime advances it, `update` and
    /// `render` read it (so both are deterministic under test).
    pub now: Instant,
    /// When the UI started (spinner phase).
    pub epoch: Instant,
    pub theme: Theme,
    pub keys: KeyMap,
    pub config_file: PathBuf,
    /// Look-only: nothing is written (no runs, no disk probes, no cleanup).
    pub observe: bool,
    /// Look-only came from `--observe` (then `o` cannot turn it off).
    pub observe_flag: bool,
    pub size: (u16, u16),
    pub focus: Focus,
    /// Which lower pane shows when the lower panes are tabs (small terminals).
    pub lower: Focus,
    pub overlay: Overlay,
    /// The Run pane has the whole screen above the key bar (`z`); only while it has the focus.
    pub zoom: bool,
    /// Lines of the help scrolled off the top.
    pub help_scroll: usize,
    pub notice: Option<Notice>,
    pub target: TargetState,
    pub host: HostState,
    pub params: ParamsState,
    pub run: RunState,
    /// The last finished run of each experiment not on screen (see `run_shelf`).
    pub shelf: Vec<RunState>,
    pub history: HistoryState,
    pub presets: PickerState,
    pub runs: RunsState,
    /// The import dialog (kept while closed, so an import goes on behind the panes).
    pub import: super::overlays::import::ImportDialog,
    /// The tune view (kept while closed, so a tune goes on behind the panes).
    pub tune: super::overlays::tune::TuneView,
    /// The capture key's capture, while it runs: whether its sample was ended early.
    pub capture: Option<super::update_capture::Capturing>,
    /// The last comparison of two windows (`V`), kept while closed.
    pub verify: Option<super::overlays::verify::VerifyView>,
    /// Set when quitting waits for the run to stop.
    pub quitting: Option<Instant>,
    /// The quit came from a signal (exit code).
    pub by_signal: bool,
}

impl App {
    pub(crate) fn new(init: AppInit) -> App {
        let remote = !init.location.is_local();
        App {
            now: init.now,
            epoch: init.now,
            theme: init.theme,
            keys: init.keys,
            config_file: init.config_file,
            observe: init.observe,
            observe_flag: init.observe,
            size: init.size,
            focus: Focus::Params,
            lower: Focus::Params,
            overlay: Overlay::None,
            zoom: false,
            help_scroll: 0,
            notice: init.notice,
            target: TargetState::new(init.location),
            host: {
                let mut h = HostState::new(remote);
                h.probe.last = init
                    .saved_probe
                    .map(|p| super::panes::host::ProbeResults::restored(p, init.now));
                h
            },
            params: init
                .last_params
                .as_ref()
                .map(ParamsState::restore)
                .unwrap_or_default(),
            run: RunState::default(),
            shelf: Vec::new(),
            history: HistoryState::default(),
            presets: PickerState::default(),
            runs: RunsState::default(),
            import: Default::default(),
            tune: Default::default(),
            capture: None,
            verify: None,
            quitting: None,
            by_signal: false,
        }
    }

    /// Lower panes become tabs below this size.
    pub(crate) fn compact(&self) -> bool {
        is_compact(self.size.0, self.size.1)
    }

    /// Something on screen moves by itself (spinner, elapsed time, a deadline).
    pub(crate) fn animating(&self) -> bool {
        self.run.is_active()
            || self.host.probe.running.is_some()
            || self.quitting.is_some()
            || self.import.busy()
            || self.tune.running()
    }

    /// Spinner frame number.
    pub(crate) fn tick(&self) -> u64 {
        (self.now.saturating_duration_since(self.epoch).as_millis() / 100) as u64
    }

    /// How look-only was turned on and the way out, for messages: "look-only (pglab was
    /// started with --observe: restart without it to run experiments)".
    pub(crate) fn look_only_why(&self) -> &'static str {
        if self.observe_flag {
            "look-only: pglab was started with --observe, so nothing is written; restart without --observe to run experiments"
        } else {
            "look-only (turned on with o): nothing is written; o turns experiments on again"
        }
    }

    pub(crate) fn notify(&mut self, level: Level, text: impl Into<String>) {
        self.notice = Some(Notice {
            text: text.into(),
            level,
        });
    }
}

pub(crate) fn is_compact(w: u16, h: u16) -> bool {
    w < 100 || h < 28
}
