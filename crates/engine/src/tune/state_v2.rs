//! A state file saved by a pglab of state version 2, read into this version so that
//! `pglab tune --resume` goes on with a tune started before the upgrade. Version 2 carried
//! the phase in five fields side by side (`screen`, `race` with `race_started_s` and
//! `race_share_s`, `confirm`, `done`); they are read back into one [`TunePhase`] by the rules
//! the engine of version 2 went by: a done tune is done, a confirmation under way goes on,
//! plans not read yet are read first, then a screening not finished, then the race under way,
//! else the next race. Every other field is the same in both versions.

use serde::Deserialize;

use super::confirm::Confirm;
use super::phase::{RaceUnderWay, TunePhase};
use super::race::Race;
use super::screen::Screen;
use super::state::{STATE_VERSION, TuneState};

/// The fields of version 2 that carried the phase.
#[derive(Deserialize)]
struct Phase2 {
    #[serde(default)]
    screen: Option<Screen>,
    race: Option<Race>,
    confirm: Option<Confirm>,
    #[serde(default)]
    race_started_s: f64,
    #[serde(default)]
    race_share_s: f64,
    done: bool,
}

const FIELDS: [&str; 6] = [
    "screen",
    "race",
    "confirm",
    "race_started_s",
    "race_share_s",
    "done",
];

/// The version-2 file `text` as this version's state.
pub(super) fn read(text: &[u8]) -> Result<TuneState, serde_json::Error> {
    let old: Phase2 = serde_json::from_slice(text)?;
    let mut v: serde_json::Value = serde_json::from_slice(text)?;
    if let Some(fields) = v.as_object_mut() {
        for f in FIELDS {
            fields.remove(f);
        }
        fields.insert("version".into(), STATE_VERSION.into());
        fields.insert("phase".into(), serde_json::json!({ "racing": null }));
    }
    let mut st: TuneState = serde_json::from_value(v)?;
    let plans_due = st.plans.is_none() && st.trials == 0 && super::plan_phase::reads_plans(&st);
    (st.phase, st.screen) = old.phase(plans_due);
    Ok(st)
}

impl Phase2 {
    /// The phase, and the screening's results once it ended.
    fn phase(self, plans_due: bool) -> (TunePhase, Option<Screen>) {
        let (under_way, ended) = match self.screen {
            Some(s) if s.done => (None, Some(s)),
            s => (s, None),
        };
        let phase = if self.done {
            TunePhase::Done(self.confirm.map(Box::new))
        } else if let Some(c) = self.confirm {
            TunePhase::Confirming(Box::new(c))
        } else if plans_due {
            TunePhase::Plans
        } else if let Some(s) = under_way {
            TunePhase::Screening(s)
        } else {
            TunePhase::Racing(self.race.map(|race| {
                Box::new(RaceUnderWay {
                    race,
                    started_s: self.race_started_s,
                    share_s: self.race_share_s,
                })
            }))
        };
        (phase, ended)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::tune::race::tests::race;
    use crate::tune::sentences_tests::state;
    use crate::tune::state::{load, save};

    /// `st` as version 2 wrote it: the phase in its five fields.
    fn as_version_2(st: &TuneState, old: Value) -> Vec<u8> {
        let mut v = serde_json::to_value(st).unwrap();
        let fields = v.as_object_mut().unwrap();
        fields.remove("phase");
        fields.insert("version".into(), 2.into());
        for (k, x) in old.as_object().unwrap() {
            fields.insert(k.clone(), x.clone());
        }
        serde_json::to_vec_pretty(&v).unwrap()
    }

    fn loaded(st: &TuneState, old: Value) -> TuneState {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tune-state.json");
        std::fs::write(&file, as_version_2(st, old)).unwrap();
        let back = load(&file).unwrap().expect("a state");
        assert_eq!(back.version, STATE_VERSION);
        // Saved again, it is this version's file.
        save(&file, &back).unwrap();
        assert_eq!(load(&file).unwrap().as_ref(), Some(&back));
        back
    }

    fn screen(done: bool) -> Screen {
        let mut s = Screen::new(&[plan("work_mem"), plan("random_page_cost")]);
        s.done = done;
        s
    }

    fn plan(name: &str) -> super::super::state::SettingPlan {
        super::super::state::SettingPlan {
            name: name.into(),
            apply: crate::experiment::lab::whatif::Apply::Reload,
            candidates: vec![("1".into(), "current".into()), ("4".into(), "x".into())],
        }
    }

    #[test]
    fn a_race_under_way_goes_on_with_its_share_of_the_budget() {
        let mut st = state("SELECT 1");
        st.trials = 12;
        let r = race(&["128MB", "1GB"]);
        let old = json!({
            "screen": screen(true), "race": r, "confirm": null, "done": false,
            "race_started_s": 40.0, "race_share_s": 200.0,
        });
        let back = loaded(&st, old);
        let want = RaceUnderWay {
            race: r,
            started_s: 40.0,
            share_s: 200.0,
        };
        assert_eq!(back.phase, TunePhase::Racing(Some(Box::new(want))));
        assert_eq!(
            back.screen,
            Some(screen(true)),
            "the screening's results stay"
        );
        assert_eq!(back.trials, 12);
    }

    #[test]
    fn each_old_phase_maps_to_its_phase() {
        let mut st = state("SELECT 1");
        st.trials = 12;
        let c = Confirm::new(vec![("work_mem".into(), "64MB".into())], Vec::new());
        let boxed = Some(Box::new(c.clone()));
        let n = Value::Null;
        for ((scr, conf, done), want) in [
            (
                (json!(screen(false)), n.clone(), false),
                TunePhase::Screening(screen(false)),
            ),
            (
                (json!(screen(true)), n.clone(), false),
                TunePhase::Racing(None),
            ),
            (
                (n.clone(), json!(c), false),
                TunePhase::Confirming(Box::new(c.clone())),
            ),
            (
                (json!(screen(true)), json!(c), true),
                TunePhase::Done(boxed),
            ),
            ((n.clone(), n.clone(), true), TunePhase::Done(None)),
        ] {
            let old = json!({ "screen": scr, "race": null, "confirm": conf, "done": done });
            assert_eq!(loaded(&st, old).phase, want, "{scr} {conf} {done}");
        }
    }

    #[test]
    fn plans_not_read_yet_are_read_first() {
        // A query workload on the sandbox, nothing run yet: version 2 read the plans first.
        let st = state("SELECT 1");
        assert!(crate::tune::plan_phase::reads_plans(&st));
        let old = json!({ "screen": screen(false), "race": null, "confirm": null, "done": false });
        let back = loaded(&st, old);
        assert_eq!(back.phase, TunePhase::Plans);
        assert_eq!(back.screen, None);
    }

    #[test]
    fn a_file_that_is_not_a_state_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tune-state.json");
        std::fs::write(&file, b"{\"version\": 2, \"workload\": 7}").unwrap();
        let e = load(&file).unwrap_err();
        assert!(e.contains("is not a tune state pglab can read"), "{e}");
    }

    #[test]
    fn an_older_version_is_still_refused_with_its_sentence() {
        let st = state("SELECT 1");
        let mut v: Value = serde_json::from_slice(&as_version_2(&st, json!({}))).unwrap();
        v["version"] = 1.into();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tune-state.json");
        std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
        let e = load(&file).unwrap_err();
        assert!(
            e.ends_with("was saved by another pglab version; remove it to start afresh"),
            "{e}"
        );
    }
}
