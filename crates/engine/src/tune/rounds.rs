//! One round of a tune is one run of the workload's experiment — the same runner, what-if
//! machinery and history as `pglab run` — with the tune's settings as its `--set` sweep and
//! one trial per configuration. The runner applies the settings (SET per session anywhere;
//! ALTER SYSTEM + reload or restart on the sandbox only, restarts between trials, never
//! inside one) and puts the sandbox's own settings back when the run ends, whichever way it
//! ends; a killed pglab's are put back by the next start.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::objective;
use crate::experiment::lab::whatif::SettingsSweep;
use crate::experiment::lab::whatif::sweep::SweptSetting;
use crate::experiment::{self, ExperimentSpec, RunEvent, RunOptions, RunReport};
use crate::server::Target;

/// Why a round did not finish.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// The user asked to stop (Ctrl-C, Esc).
    Cancelled,
    /// The budget ran out mid-round.
    BudgetOut,
    Failed(String),
}

/// A finished round: the pass measure of each configuration, by the value list's order.
#[derive(Debug, Clone)]
pub struct Round {
    pub measures: BTreeMap<usize, f64>,
    pub run_id: String,
    pub wall_s: f64,
    /// Seconds of its timed trials (the rest of `wall_s` is settings, restarts, preparation).
    pub work_s: f64,
    /// Passes of the workload measured (one per configuration of the tune).
    pub passes: usize,
    /// Trials the experiment ran (a pass holds one per configuration of the workload).
    pub trials: usize,
    pub notes: Vec<String>,
    /// The most memory-taking nodes of one of its plans (query workloads).
    pub nodes: Option<super::memory::MemoryNodes>,
    /// Each statement's seconds per execution, by configuration (timed query workloads).
    pub statements: BTreeMap<usize, Vec<(String, f64)>>,
    /// Its warm-ups and restarts.
    pub warmth: super::warm::RoundWarmth,
    /// The analyzed plan of each statement under its first configuration (query workloads).
    pub analyzed: Vec<(String, serde_json::Value)>,
}

/// The workload with `fixed` settings (one value each) and, last, `raced` with its values in
/// order (each a combination of the sweep, in that order): one trial per configuration.
pub fn round_spec(
    workload: &ExperimentSpec,
    fixed: &[(String, String)],
    raced: Option<(&str, &[String])>,
    warmup: bool,
) -> ExperimentSpec {
    let raced: Vec<(String, Vec<String>)> = raced
        .map(|(n, v)| (n.to_string(), v.to_vec()))
        .into_iter()
        .collect();
    group_spec(workload, fixed, &raced, warmup)
}

/// [`round_spec`] with several settings varied together (a screening group): the product of
/// their values, in order, first setting outermost, after the fixed ones.
pub(crate) fn group_spec(
    workload: &ExperimentSpec,
    fixed: &[(String, String)],
    raced: &[(String, Vec<String>)],
    warmup: bool,
) -> ExperimentSpec {
    let mut spec = workload.clone();
    let mut items: Vec<SweptSetting> = fixed
        .iter()
        .filter(|(n, _)| !raced.iter().any(|(r, _)| r == n))
        .map(|(n, v)| SweptSetting {
            name: n.clone(),
            values: vec![v.clone()],
        })
        .collect();
    items.extend(raced.iter().map(|(name, values)| SweptSetting {
        name: name.clone(),
        values: values.clone(),
    }));
    spec.one_pass(warmup);
    spec.set_settings(SettingsSweep { items });
    spec
}

/// Run one round to its end: Ok with the measures when the run finished; the reason
/// otherwise (the run is cancelled on the server at `deadline` or when `cancel` fires, and
/// its partial report still lands in the history). `on_event` sees the run's events.
pub async fn run(
    target: Arc<Target>,
    spec: ExperimentSpec,
    opts: RunOptions,
    deadline: Instant,
    cancel: &CancellationToken,
    mut on_event: impl FnMut(&RunEvent),
) -> Result<Round, Stop> {
    let started = Instant::now();
    let mut handle = experiment::spawn(target, spec, opts);
    let mut stop: Option<Stop> = None;
    let sleep = tokio::time::sleep_until(deadline.into());
    tokio::pin!(sleep);
    let end = loop {
        tokio::select! {
            _ = cancel.cancelled(), if stop.is_none() => {
                stop = Some(Stop::Cancelled);
                handle.cancel.cancel();
            }
            _ = &mut sleep, if stop.is_none() => {
                stop = Some(Stop::BudgetOut);
                handle.cancel.cancel();
            }
            ev = handle.events.recv() => {
                let Some(ev) = ev else {
                    break Err(Stop::Failed("the run ended without a result".into()));
                };
                on_event(&ev);
                match ev {
                    RunEvent::Finished(report) => break Ok(*report),
                    RunEvent::Cancelled(_) => break Err(stop.clone().unwrap_or(Stop::Cancelled)),
                    RunEvent::Failed { error, .. } => {
                        break Err(stop.clone().unwrap_or(Stop::Failed(error)));
                    }
                    _ => {}
                }
            }
        }
    };
    let _ = handle.task.await;
    let report: RunReport = end?;
    // A run that finished after the deadline fired (its last trial ended first) still counts.
    let measures = objective::per_combo(&report);
    Ok(Round {
        passes: measures.len(),
        trials: objective::trial_count(&report),
        work_s: objective::work_seconds(&report),
        measures,
        run_id: report.run_id.clone(),
        wall_s: started.elapsed().as_secs_f64(),
        notes: report.notes.clone(),
        nodes: super::memory::nodes_of(&report),
        statements: objective::per_statement(&report),
        warmth: super::warm::RoundWarmth::of(&report),
        analyzed: analyzed(&report),
    })
}

/// The analyzed plans a query run took under its first configuration.
fn analyzed(report: &RunReport) -> Vec<(String, serde_json::Value)> {
    let crate::experiment::ReportBody::Query(q) = &report.body else {
        return Vec::new();
    };
    q.plans
        .iter()
        .filter(|p| p.combo == 0 && !p.estimate_only)
        .map(|p| (p.name.clone(), p.plan.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::decision::Repeat;
    use crate::experiment::{ExperimentKind, ParamText};

    #[test]
    fn the_raced_setting_goes_last_and_the_carried_ones_are_single_values() {
        let mut p = ParamText::new();
        p.insert("repeat".into(), "4".into());
        let w = ExperimentKind::Ingest.parse_spec(&p).unwrap();
        let fixed = vec![
            ("max_wal_size".to_string(), "4GB".to_string()),
            ("shared_buffers".to_string(), "128MB".to_string()),
        ];
        let values = vec!["1GB".to_string(), "128MB".to_string()];
        let s = round_spec(&w, &fixed, Some(("shared_buffers", &values)), false);
        assert_eq!(
            s.settings().text(),
            "max_wal_size=4GB shared_buffers=1GB,128MB"
        );
        assert_eq!(s.settings().combos().len(), 2);
        let ExperimentSpec::Ingest(i) = &s else {
            panic!()
        };
        assert_eq!(i.repeat, Repeat::Fixed(1));
        let none = round_spec(&w, &[], None, true);
        assert!(none.settings().is_empty());
        let ExperimentSpec::Ingest(i) = &none else {
            panic!()
        };
        assert!(i.warmup);
    }
}
