//! Plans before passes. A query tune on the sandbox first runs one pass at the starting
//! configuration whose run takes each statement's `EXPLAIN (ANALYZE, BUFFERS, SETTINGS)`;
//! the plans decide which settings are measured and with which values
//! ([`super::plan_advice`]), a planner-only setting's values are checked with a plain
//! `EXPLAIN` first ([`super::plan_check`]), and the search is sized to the budget left
//! ([`super::design`]). Everything decided is kept in [`PlanReading`] for the report.

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::budget::Budget;
use super::candidates::same_value;
use super::decide::{Decision, Why};
use super::design::{Design, Sizing};
use super::engine::{End, TuneEvent, Tuner};
use super::phase::TunePhase;
use super::plan_advice::{self, Verdict};
use super::plan_check::CheckError;
use super::plan_facts::PlanFacts;
use super::rounds::{self, Stop};
use super::state::{SettingPlan, TuneState};
use crate::experiment::ExperimentSpec;
use crate::experiment::lab::whatif::{self, Reach, SettingsSweep};

/// A setting as the plans left it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingRead {
    pub setting: String,
    /// Measured (in the search, or in the plan-guided set).
    pub tried: bool,
    pub why: String,
    /// The values measured (the one in effect first).
    #[serde(default)]
    pub values: Vec<String>,
}

/// What the plans showed and what the tune made of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanReading {
    pub facts: Vec<PlanFacts>,
    pub settings: Vec<SettingRead>,
    /// The design the budget held, in a sentence.
    #[serde(default)]
    pub design: String,
}

/// Whether a tune reads plans first: a query workload of timed statements on the sandbox.
pub(crate) fn reads_plans(st: &TuneState) -> bool {
    matches!(&st.spec, ExperimentSpec::Query(q) if !q.throughput() && q.script.is_none() && !q.statements.is_empty())
        && st.on_sandbox
}

impl Tuner {
    /// Read the plans, reshape the search and size it (once per tune): the phase the tune goes
    /// on with, or how it ends here (cancelled, failed: the plans are read again on resume).
    pub(super) async fn read_plans(
        &self,
        st: &mut TuneState,
        budget: &Budget,
        cancel: &CancellationToken,
    ) -> Result<TunePhase, End> {
        self.emit(TuneEvent::Note(
            "reading the plans: one pass at the starting configuration with each statement's EXPLAIN (ANALYZE, BUFFERS, SETTINGS)".into(),
        ));
        let spec = rounds::round_spec(&st.spec, &[], None, false);
        let round = match self.one_run(st, spec, budget, cancel).await {
            Ok(r) => r,
            Err(Stop::Cancelled) => return Err(End::Cancelled),
            Err(Stop::BudgetOut) => {
                st.plans = Some(PlanReading::default());
                return Ok(TunePhase::search(&st.plan));
            }
            Err(Stop::Failed(e)) => return Err(End::Failed(e)),
        };
        // The pass's preparation (setup, the analyzed plans, the first warm-up) is paid once:
        // later configurations on a warm cache cost their work and their settings.
        if let Some(last) = st.pace.runs.pop() {
            st.pace.record(last.work_s + 1.0, last.passes, last.work_s);
        }
        let mut reading = PlanReading::default();
        for (name, json) in &round.analyzed {
            match PlanFacts::read(name, json, crate::experiment::query::plan::DEFAULT_BLOCK) {
                Ok(f) => reading.facts.push(f),
                Err(e) => st.notes.push(format!("{name}: plan not read ({e})")),
            }
        }
        if reading.facts.is_empty() {
            st.plans = Some(reading);
            return Ok(TunePhase::search(&st.plan));
        }
        for f in &reading.facts {
            self.emit(TuneEvent::Note(format!("plan of {}", f.sentence())));
        }
        let before = st.plan.clone();
        if let Err(e) = self.reshape(st, &mut reading).await {
            st.plan = before;
            reading.settings.clear();
            let note = format!(
                "the plans were read but the settings could not be checked against them ({e}): every setting is searched"
            );
            self.emit(TuneEvent::Note(note.clone()));
            st.notes.push(note);
            st.plans = Some(reading);
            return Ok(TunePhase::search(&st.plan));
        }
        let next = self.size_search(st, &mut reading, budget);
        st.plans = Some(reading);
        Ok(next)
    }

    /// The search plan as the plans advise: settings dropped with why, plan-sized values
    /// added, planner-only values kept only when EXPLAIN shows them changing a plan.
    async fn reshape(
        &self,
        st: &mut TuneState,
        reading: &mut PlanReading,
    ) -> Result<(), CheckError> {
        let client = self.target.connect().await.map_err(|e| CheckError::Plan {
            statement: "the connection".into(),
            why: e.to_string(),
        })?;
        super::plan_check::use_schema(&client, &self.run.schema).await?;
        let statements = explainable(&st.spec);
        let reach = if st.on_sandbox {
            Reach::Sandbox
        } else {
            Reach::Other
        };
        let mut kept: Vec<(SettingPlan, Verdict)> = Vec::new();
        for p in std::mem::take(&mut st.plan) {
            let (read, p, verdict) =
                advise_one(&client, reach, p, &reading.facts, &statements, st.named).await?;
            let tried = read.tried;
            reading.settings.push(read);
            if tried {
                kept.push((p, verdict));
            }
        }
        // The settings the plans point at first, the planner-checked after, the rest last.
        kept.sort_by_key(|(p, v)| match v {
            Verdict::Try if p.candidates.iter().any(|c| c.1 == "plan") => 0,
            Verdict::PlanCheck => 1,
            _ => 2,
        });
        st.plan = kept.into_iter().map(|(p, _)| p).collect();
        Ok(())
    }

    /// Say how many configurations the budget holds and pick the design that fits: the phase
    /// it begins with.
    fn size_search(
        &self,
        st: &mut TuneState,
        reading: &mut PlanReading,
        budget: &Budget,
    ) -> TunePhase {
        if st.plan.is_empty() {
            let note = "the plans show no setting that can change the time: nothing to search (pgtune's set is still measured against the start)".to_string();
            self.emit(TuneEvent::Note(note.clone()));
            st.notes.push(note.clone());
            reading.design = note;
            return TunePhase::Racing(None);
        }
        let per = st.pace.estimate(1).map_or(0.0, |d| d.as_secs_f64());
        let holds = if per > 0.0 {
            (budget.remaining().as_secs_f64() / per).floor() as usize
        } else {
            usize::MAX
        };
        let plan_set: Vec<(String, String)> = st
            .plan
            .iter()
            .filter_map(|p| {
                p.candidates
                    .iter()
                    .find(|c| c.1 == "plan")
                    .map(|c| (p.name.clone(), c.0.clone()))
            })
            .collect();
        let plan_set = one_memory_setting(plan_set, &reading.facts);
        let sizing = Sizing {
            holds,
            confirm: confirm_configs(st),
            values: st.plan.iter().map(|p| p.candidates.len()).collect(),
            plan_set: !plan_set.is_empty(),
        };
        let sentence = sizing.sentence(per, budget.spent().as_secs_f64());
        self.emit(TuneEvent::Note(sentence.clone()));
        st.notes.push(sentence.clone());
        reading.design = sentence;
        match sizing.choose().0 {
            Design::ScreenThenRace => TunePhase::search(&st.plan),
            Design::Race => TunePhase::Racing(None),
            Design::PlanSet => {
                self.plan_set_decisions(st, reading, plan_set);
                TunePhase::Racing(None)
            }
            Design::TooSmall => {
                st.plan.clear();
                TunePhase::Done(None)
            }
        }
    }
}

impl Tuner {
    /// The plan-guided set as decisions (the confirmation measures it as a whole); the plan
    /// holds only its settings, the others said not measured.
    fn plan_set_decisions(
        &self,
        st: &mut TuneState,
        reading: &mut PlanReading,
        plan_set: Vec<(String, String)>,
    ) {
        let names: Vec<String> = plan_set.iter().map(|(n, _)| n.clone()).collect();
        st.plan.sort_by_key(|p| !names.contains(&p.name));
        for (name, value) in plan_set {
            let start = st
                .plan
                .iter()
                .find(|p| p.name == name)
                .and_then(|p| p.candidates.first())
                .map(|c| c.0.clone())
                .unwrap_or_default();
            st.decisions.push(Decision {
                setting: name,
                start,
                value,
                why: Why::PlanGuided,
                comparison: None,
                confidence: self.rules.confidence,
                rounds: 0,
                trials: 0,
            });
        }
        st.plan.truncate(st.decisions.len());
        for s in reading
            .settings
            .iter_mut()
            .filter(|s| s.tried && !names.contains(&s.setting))
        {
            s.tried = false;
            s.why.push_str(" — not measured: the budget held no race");
        }
    }
}

/// The confirmation's configurations at its fewest rounds: every side each round; when
/// pgtune's set restarts the server, the tuned set is confirmed against the start first
/// ([`super::confirm_staged`]) and pgtune's set joins for at least one round, with the
/// warm-ups after its restart and after the server's own value is put back (each about a
/// pass).
fn confirm_configs(st: &TuneState) -> usize {
    let restarts = st.on_sandbox
        && st
            .formula
            .iter()
            .any(|(n, _)| super::formula::needs_restart(n));
    let sides = st.confirm_sides();
    if restarts && sides >= 3 {
        return 2 * super::confirm::MIN_ROUNDS + sides + 2;
    }
    sides * super::confirm::MIN_ROUNDS
}

/// Why a planner-only setting is measured with the values it keeps, or not at all.
fn plan_check_why(
    moved: &[super::plan_check::ValueCheck],
    still: &[super::plan_check::ValueCheck],
) -> String {
    let list = |v: &[super::plan_check::ValueCheck]| {
        v.iter()
            .map(|c| c.value.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    for c in moved {
        parts.push(format!(
            "{} changes the plan of {}",
            c.value,
            c.changed.join(", ")
        ));
    }
    if !still.is_empty() {
        parts.push(format!(
            "{} change{} no plan (plain EXPLAIN), so cannot change the time: not measured",
            list(still),
            if still.len() == 1 { "s" } else { "" }
        ));
    }
    parts.join("; ")
}

/// The statements of a query workload EXPLAIN takes, by name.
fn explainable(spec: &ExperimentSpec) -> Vec<(String, String)> {
    match spec {
        ExperimentSpec::Query(q) => q
            .statements
            .iter()
            .filter(|s| crate::experiment::query::guard::explainable(&s.sql))
            .map(|s| (s.name.clone(), s.sql.clone()))
            .collect(),
        _ => Vec::new(),
    }
}

/// One setting as the plans advise: what the report says of it, its plan (values added, or
/// pruned by EXPLAIN) and the advice's verdict.
async fn advise_one(
    client: &tokio_postgres::Client,
    reach: Reach,
    mut p: SettingPlan,
    facts: &[PlanFacts],
    statements: &[(String, String)],
    named: bool,
) -> Result<(SettingRead, SettingPlan, Verdict), CheckError> {
    let current = p
        .candidates
        .first()
        .map(|c| c.0.clone())
        .unwrap_or_default();
    let mut advice = plan_advice::advise(&p.name, &current, facts);
    if advice.verdict == Verdict::Skip && named {
        advice.verdict = Verdict::Try;
        advice.why = format!("named by --settings: measured, although {}", advice.why);
    }
    if advice.verdict == Verdict::Skip {
        let read = SettingRead {
            setting: p.name.clone(),
            tried: false,
            why: advice.why,
            values: Vec::new(),
        };
        return Ok((read, p, Verdict::Skip));
    }
    for v in &advice.values {
        if p.candidates.iter().any(|(c, _)| same_value(c, v)) {
            continue;
        }
        if let Ok(sweep) = SettingsSweep::parse(&format!("{}={v}", p.name))
            && whatif::check(client, &sweep, reach).await.is_ok()
        {
            // A planner-only value is a direction to check, not a size the plans showed.
            let origin = if advice.verdict == Verdict::PlanCheck {
                "plan-check"
            } else {
                "plan"
            };
            p.candidates.push((v.clone(), origin.into()));
        }
    }
    let mut why = advice.why.clone();
    if advice.verdict == Verdict::PlanCheck {
        let others: Vec<String> = p.candidates.iter().skip(1).map(|c| c.0.clone()).collect();
        let checks = super::plan_check::check(client, statements, &p.name, &others).await?;
        let (moved, still): (Vec<_>, Vec<_>) =
            checks.into_iter().partition(|c| !c.changed.is_empty());
        p.candidates
            .retain(|(v, _)| *v == current || moved.iter().any(|c| c.value == *v));
        why = plan_check_why(&moved, &still);
    }
    let read = SettingRead {
        setting: p.name.clone(),
        tried: p.candidates.len() >= 2,
        why,
        values: p.candidates.iter().map(|c| c.0.clone()).collect(),
    };
    Ok((read, p, advice.verdict))
}

/// The plan-guided set holds one memory setting per spill: `work_mem` when a sort spilled (it
/// also gives hashes more), else `hash_mem_multiplier` alone (only hashes get more), so the
/// set does not grant a hash both sizes at once.
fn one_memory_setting(set: Vec<(String, String)>, facts: &[PlanFacts]) -> Vec<(String, String)> {
    let has = |n: &str| set.iter().any(|(s, _)| s == n);
    if !(has("work_mem") && has("hash_mem_multiplier")) {
        return set;
    }
    let sorted = facts
        .iter()
        .flat_map(|f| &f.spills)
        .any(|s| s.kind == super::plan_facts::SpillKind::Sort);
    let drop = if sorted {
        "hash_mem_multiplier"
    } else {
        "work_mem"
    };
    set.into_iter().filter(|(n, _)| n != drop).collect()
}
