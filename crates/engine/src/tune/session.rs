//! A tune from start to end, the one sequence both front ends run: read the server, refuse
//! what must not run, load the saved state or set up a fresh one, save it before the first
//! round (a tune killed during it can be resumed too), race, write the script and the report,
//! remove the state. `pglab tune` and the TUI's tune view only choose how to show its events
//! ([`TuneEvent`]) and its end ([`Finish`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::budget::Budget;
use super::engine::{End, TuneEvent, Tuner};
use super::setup::{self, Fresh, SetupError};
use super::state::{self, TuneState};
use crate::experiment::RunOptions;
use crate::experiment::lab::preflight;
use crate::measure::units::format_seconds;
use crate::server::{ServerSnapshot, Target, snapshot};

/// Where a finished tune's script and report go (the report module writes them; the session
/// owns only the seam, as the runner owns its recorder).
pub trait Outputs: Send + Sync {
    /// Write them; the sentence saying what was written, or why not.
    fn write(&self, st: &TuneState) -> Result<String, String>;
}

/// A fresh tune, or the saved one `--resume` goes on with.
pub enum Start {
    Fresh(Box<Fresh>),
    Resume(Box<TuneState>),
}

/// Everything a tune needs.
pub struct Request {
    pub target: Arc<Target>,
    pub start: Start,
    /// The options of every round's run (recorder, schema, sandbox, …).
    pub run: RunOptions,
    /// Where the state is saved between rounds ([`state::path`]).
    pub state_file: PathBuf,
    /// A budget given again on `--resume` (None: the saved one).
    pub budget: Option<Duration>,
    /// A memory ceiling given again on `--resume` (None: the saved one).
    pub max_memory: Option<u64>,
    /// The budget's clock: everything from this instant counts.
    pub clock: Instant,
    pub outputs: Box<dyn Outputs>,
}

/// Why a tune did not start: bad input (exit 2 headless) or a server that refuses or fails.
#[derive(Debug, Clone, PartialEq)]
pub enum Refused {
    Usage(String),
    Failed(String),
}

/// How a tune that started ended.
#[derive(Debug)]
pub enum Finish {
    /// Searched and confirmed; the outputs are written (the sentence says where).
    Done { state: Box<TuneState>, said: String },
    /// Stopped by the user; the state is saved for `--resume`.
    Cancelled { spent_s: f64 },
    /// The search or its outputs failed; the state is saved for `--resume`.
    Failed(String),
}

/// What a tune is about to do, sent once before its first round.
#[derive(Debug, Clone, PartialEq)]
pub struct Ready {
    pub on_sandbox: bool,
    pub notes: Vec<String>,
    /// "tune: ingest · budget 15 min (0 s spent) · 2 settings: work_mem [4MB, 64MB]; …"
    pub line: String,
}

/// Run a tune: [`Ready`] then the engine's events on `ready`/`events`, its end returned.
pub async fn run(
    req: Request,
    ready: impl FnOnce(Ready),
    events: UnboundedSender<TuneEvent>,
    cancel: &CancellationToken,
) -> Result<Finish, Refused> {
    let Request {
        target,
        start,
        run: opts,
        state_file,
        budget,
        max_memory,
        clock,
        outputs,
    } = req;
    let on_sandbox = opts.sandbox.is_some();
    let mut st = prepare(&target, &opts, start, on_sandbox).await?;
    if let Some(b) = budget {
        st.budget_s = b.as_secs_f64();
    }
    if max_memory.is_some() {
        st.max_memory = max_memory;
    }
    ready(Ready {
        on_sandbox,
        notes: st.notes.clone(),
        line: summary_line(&st),
    });
    let budget = Budget::since(
        clock,
        Duration::from_secs_f64(st.budget_s),
        Duration::from_secs_f64(st.spent_s),
    );
    st.spent_s = budget.spent().as_secs_f64();
    if let Err(e) = state::save(&state_file, &st) {
        let _ = events.send(TuneEvent::Note(e));
    }
    let tuner = Tuner {
        target,
        rules: setup::rules(&st.spec),
        run: opts,
        state_file: state_file.clone(),
        events,
    };
    let end = tuner.run(&mut st, &budget, cancel).await;
    drop(tuner);
    Ok(match end {
        End::Done => match outputs.write(&st) {
            Ok(said) => {
                state::remove(&state_file);
                Finish::Done {
                    state: Box::new(st),
                    said,
                }
            }
            Err(e) => Finish::Failed(e),
        },
        End::Cancelled => Finish::Cancelled {
            spent_s: budget.spent().as_secs_f64(),
        },
        End::Failed(e) => Finish::Failed(e),
    })
}

/// The state the tune starts from: the server read and checked, then the saved state (on the
/// same server) or a fresh one set up on it.
async fn prepare(
    target: &Target,
    opts: &RunOptions,
    start: Start,
    on_sandbox: bool,
) -> Result<TuneState, Refused> {
    let failed = Refused::Failed;
    let client = target.connect().await.map_err(|e| failed(e.to_string()))?;
    let server = snapshot::read(&client, target)
        .await
        .map_err(|e| failed(e.to_string()))?;
    match start {
        Start::Resume(st) => {
            preflight::may_run(&server, &st.spec, on_sandbox).map_err(failed)?;
            same_server(&st, target, on_sandbox)?;
            Ok(*st)
        }
        Start::Fresh(fresh) => {
            preflight::may_run(&server, &fresh.spec, on_sandbox).map_err(failed)?;
            // Generated tables on a server pglab did not start: only with writes = lab, said
            // as every front end says it.
            let exists = crate::experiment::lab::gate::schema_exists(&client, &opts.schema)
                .await
                .map_err(|e| failed(e.to_string()))?;
            crate::experiment::lab::lab_writes::check(
                &fresh.spec,
                &opts.schema,
                exists,
                on_sandbox,
            )
            .map_err(|w| Refused::Usage(w.to_string()))?;
            let setting_up = SetUp {
                target,
                opts,
                client: &client,
                server: &server,
            };
            setting_up.fresh_state(*fresh, on_sandbox).await
        }
    }
}

/// A saved tune goes on only on the server it ran on (the sandbox may come back on another
/// port: it is the same server).
fn same_server(st: &TuneState, target: &Target, on_sandbox: bool) -> Result<(), Refused> {
    if st.on_sandbox != on_sandbox || (!on_sandbox && st.target != target.describe()) {
        return Err(Refused::Usage(format!(
            "--resume: the saved tune ran on {}, not on this server; point pglab at that server again",
            st.target
        )));
    }
    Ok(())
}

/// The server a fresh tune is set up on.
struct SetUp<'a> {
    target: &'a Target,
    opts: &'a RunOptions,
    client: &'a tokio_postgres::Client,
    server: &'a ServerSnapshot,
}

impl SetUp<'_> {
    /// The fresh state: the hardware as given (a remote server's must be), the prior, the plan.
    async fn fresh_state(&self, mut fresh: Fresh, on_sandbox: bool) -> Result<TuneState, Refused> {
        fresh.hardware.local = self.target.location.is_local();
        if let Some(m) = fresh.hardware.missing_for_remote() {
            return Err(Refused::Usage(m));
        }
        setup::new_state(
            self.client,
            self.server,
            &self.target.describe(),
            on_sandbox,
            self.opts.probe_dir.clone(),
            &self.opts.schema,
            fresh,
        )
        .await
        .map_err(|e| match e {
            SetupError::Nothing(m) => Refused::Usage(m),
            SetupError::Failed(m) => Refused::Failed(m),
        })
    }
}

/// "tune: ingest · budget 15 min (0 s spent) · 2 settings: work_mem [4MB, 64MB]; …"
pub(crate) fn summary_line(st: &TuneState) -> String {
    let plan: Vec<String> = st
        .plan
        .iter()
        .map(|p| {
            let values: Vec<&str> = p.candidates.iter().map(|c| c.0.as_str()).collect();
            format!("{} [{}]", p.name, values.join(", "))
        })
        .collect();
    format!(
        "tune: {} · budget {} ({} spent) · {} settings: {}",
        st.workload,
        format_seconds(st.budget_s),
        format_seconds(st.spent_s),
        st.plan.len(),
        plan.join("; ")
    )
}
