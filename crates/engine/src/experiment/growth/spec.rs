//! growth parameters: what the editor, the flags and the presets set, and the steps and
//! points they describe (their disk cost is in `cost`, the vocabulary in `kinds`).

use serde::{Deserialize, Serialize};

use super::key::KeyShape;
use super::kinds::{Design, GrowMode, IndexKind, WriteMethod};
use super::spec_values::{
    churn_of, designs_of, distribute_of, indexes_of, optional_count, series_of, steps_of,
};
use crate::experiment::lab::checkpoint::CheckpointMode;
use crate::experiment::lab::decision::{self, DecisionParams, Repeat};
use crate::experiment::lab::field::{FieldDef, FieldErrors, FieldKind, FieldReader, ParamText};
use crate::experiment::lab::standby_fault::StandbyFault;
use crate::experiment::lab::standby_fields;
use crate::experiment::lab::whatif::SettingsSweep;
use crate::measure::units::format_count;

pub const DESIGNS: &[&str] = &["snapshot", "ranges"];
pub const INDEXES: &[&str] = &["pk", "version", "content", "version_content"];

pub const FIELDS: &[FieldDef] = &[
    FieldDef {
        key: "units",
        help: "content units per version (10k as in the original)",
        default: "10k",
        kind: FieldKind::Count,
    },
    FieldDef {
        key: "steps",
        help: "version counts to measure at (0,100,1000), or total rows with rows: (rows:0,1M,10M)",
        default: "0,100,1000,10000,50000,100000",
        kind: FieldKind::CountList,
    },
    FieldDef {
        key: "indexes",
        help: "indexes of the snapshot table: pk, version, content, version_content (unique); ranges always has pk, content, (version_added, version_removed)",
        default: "pk,version,content,version_content",
        kind: FieldKind::ChoiceList(INDEXES),
    },
    FieldDef {
        key: "design",
        help: "snapshot: a row per (version, content); ranges: a row per content with version_added/version_removed",
        default: "snapshot,ranges",
        kind: FieldKind::ChoiceList(DESIGNS),
    },
    FieldDef {
        key: "key-shape",
        help: "int: int8 ids and references; uuid: a uuid primary key and uuid references to version and content, as Pulp's models have (PostgreSQL 13+)",
        default: "int",
        kind: FieldKind::Choice(&["int", "uuid"]),
    },
    FieldDef {
        key: "churn",
        help: "% of content units replaced per version (0 = every version identical)",
        default: "1%",
        kind: FieldKind::Number,
    },
    FieldDef {
        key: "write-method",
        help: "how one new version is written: insert (single rows, as an ORM), multi (multi-row VALUES), copy",
        default: "insert",
        kind: FieldKind::Choice(&["insert", "multi", "copy"]),
    },
    crate::experiment::lab::whatif::SET,
    crate::experiment::lab::standby_fields::SYNC_FIELD,
    crate::experiment::lab::standby_rtt::FIELD,
    FAULT_FIELD,
    decision::repeat_field(
        "writes and reads per step (median of these), or auto: until the designs' verdicts are decided",
        "4",
    ),
    decision::MAX_REPEAT,
    decision::MIN_EFFECT,
    decision::CONFIDENCE,
    crate::experiment::lab::checkpoint::FIELD,
    FieldDef {
        key: "grow-mode",
        help: "between steps: rebuild (drop indexes, COPY, rebuild) or keep (COPY into the indexed table)",
        default: "rebuild",
        kind: FieldKind::Choice(&["rebuild", "keep"]),
    },
    FieldDef {
        key: "fill-limit",
        help: "largest step actually filled, in versions (or rows:N); larger steps are projected (none: as far as the disk allows)",
        default: "none",
        kind: FieldKind::Count,
    },
    FieldDef {
        key: "target-rows",
        help: "also project sizes and times to this many rows (version × content pairs), e.g. 1G; none",
        default: "none",
        kind: FieldKind::Count,
    },
    FieldDef {
        key: "baseline",
        help: "also time a plain COPY of the largest fill into an unindexed table, for the fill-rate ratio (on/off)",
        default: "off",
        kind: FieldKind::Bool,
    },
    FieldDef {
        key: "seed",
        help: "seed of the churn and of the versions read (same seed, same content)",
        default: "42",
        kind: FieldKind::Number,
    },
    FieldDef {
        key: "distribute",
        help: "Citus: the snapshot table as a plain table (none) or distributed by version and/or content, a list: none,version,content",
        default: "none",
        kind: FieldKind::ChoiceList(&["none", "version", "content"]),
    },
    crate::experiment::lab::lab_writes::FIELD,
];

/// `--standby-fault` on growth: a write phase has no time limit, so `for=` is required.
const FAULT_FIELD: FieldDef = FieldDef {
    help: "at every step, beside each combination's first write round (a new version of each design), the sandbox's synchronous standby stops (stop-at=0s,for=5s) or pauses its replay (pause-replay-at=0s,for=5s), at= counted from the round's start; for= is required (writes have no time limit); off",
    ..crate::experiment::lab::standby_fault::FIELD
};

/// A fault without levels to compare shows nothing.
const FAULT_NEEDS_LEVELS: &str = "a standby fault shows what each synchronous_commit level does meanwhile: give the levels with --sync-commit (e.g. local,on)";

/// `--standby-fault`: off, or a fault that ends by itself (`for=`).
fn fault_of(s: &str) -> Result<Option<StandbyFault>, String> {
    let f = StandbyFault::parse(s)?;
    f.map_or(Ok(()), |f| f.check(None))?;
    Ok(f)
}

/// A valid growth specification. Steps are kept as version counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrowthSpec {
    pub units: u64,
    /// Version counts, strictly increasing.
    pub steps: Vec<u64>,
    /// The steps were given as rows (`rows:…`); only changes how they are written back.
    pub steps_as_rows: bool,
    pub indexes: Vec<IndexKind>,
    pub designs: Vec<Design>,
    /// How ids and references are typed (records before the option: int).
    #[serde(default)]
    pub key_shape: KeyShape,
    /// Percent of the units replaced per version.
    pub churn_pct: f64,
    pub write_method: WriteMethod,
    pub repeat: Repeat,
    #[serde(flatten)]
    pub decision: DecisionParams,
    /// Server settings swept as one more dimension (`--set`).
    #[serde(default, skip_serializing_if = "SettingsSweep::is_empty")]
    pub set: SettingsSweep,
    /// A `CHECKPOINT` before each trial: auto (pglab's sandbox only), on, off.
    #[serde(default, skip_serializing_if = "CheckpointMode::is_auto")]
    pub checkpoint: CheckpointMode,
    pub grow_mode: GrowMode,
    /// Largest version count actually filled (None: as far as the disk allows).
    pub fill_limit: Option<u64>,
    /// Extra projection target in rows (version × content pairs).
    pub target_rows: Option<u64>,
    pub baseline: bool,
    pub seed: u64,
    /// `--standby-fault`: beside each combination's first write round of every step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<StandbyFault>,
    /// `writes = lab`: on a server pglab did not start, the run may create its tables there
    /// (in the lab schema, dropped at the end); without it the run is refused there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub writes_lab: bool,
}

/// Largest number of (version, content) pairs a spec may describe.
pub(crate) const MAX_PAIRS: u64 = 1_000_000_000_000;

impl GrowthSpec {
    pub fn parse(p: &ParamText) -> Result<GrowthSpec, FieldErrors> {
        let mut r = FieldReader::new(p);
        let units = r.count("units", 1, 10_000_000);
        let (steps, steps_as_rows) = r.get("steps", (vec![0], false), |s| steps_of(s, units));
        let indexes = r.get("indexes", vec![], indexes_of);
        let designs = r.get("design", vec![Design::Snapshot], designs_of);
        let key_shape = r.choice(
            "key-shape",
            &[("int", KeyShape::Int), ("uuid", KeyShape::Uuid)],
        );
        let churn_pct = r.get("churn", 0.0, churn_of);
        let write_method = r.choice(
            "write-method",
            &[
                ("insert", WriteMethod::Insert),
                ("multi", WriteMethod::Multi),
                ("copy", WriteMethod::Copy),
            ],
        );
        let repeat = r.get("repeat", Repeat::Fixed(1), |s| Repeat::parse(s, 100));
        let decision = DecisionParams::read(&mut r);
        let mut set = r.settings(&[]);
        crate::experiment::lab::standby_fields::read(&mut r, &mut set);
        let checkpoint = CheckpointMode::read(&mut r);
        let grow_mode = r.choice(
            "grow-mode",
            &[("rebuild", GrowMode::Rebuild), ("keep", GrowMode::Keep)],
        );
        let fill_limit = r.get("fill-limit", None, |s| match s.strip_prefix("rows:") {
            Some(rows) => Ok(optional_count(rows)?.map(|n| n / units.max(1))),
            None => optional_count(s),
        });
        let target_rows = r.get("target-rows", None, |s| {
            let v = optional_count(s)?;
            if v.is_some_and(|n| n > MAX_PAIRS) {
                return Err(format!("at most {}", format_count(MAX_PAIRS as f64)));
            }
            Ok(v)
        });
        let baseline = r.bool("baseline");
        let seed = r.whole("seed", 42);
        let fault = r.get("standby-fault", None, fault_of);
        let distribute = r.get("distribute", vec![None], distribute_of);
        let designs = series_of(&mut r, &designs, &distribute);
        let writes_lab = crate::experiment::lab::lab_writes::read(&mut r);
        let spec = GrowthSpec {
            units,
            steps,
            steps_as_rows,
            indexes,
            designs,
            key_shape,
            churn_pct,
            write_method,
            repeat,
            decision,
            set,
            checkpoint,
            grow_mode,
            fill_limit,
            target_rows,
            baseline,
            seed,
            fault,
            writes_lab,
        };
        let problems = spec.problems(r.errors.is_empty());
        r.errors.extend(problems);
        r.finish(spec)
    }

    /// What the fields' values mean together that none means alone (`valid`: each field's
    /// value was).
    fn problems(&self, valid: bool) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if valid && self.churn_pct > 0.0 && self.churn_per_version() == 0 {
            out.push((
                "churn".into(),
                format!(
                    "{}% of {} units is less than one unit per version: raise churn or use 0",
                    self.churn_pct, self.units
                ),
            ));
        }
        if self.fault.is_some() && standby_fields::levels_of(&self.set).is_empty() {
            out.push(("standby-fault".into(), FAULT_NEEDS_LEVELS.into()));
        }
        out
    }

    /// The storage designs asked for (`design`), without their distributions.
    fn base_designs(&self) -> Vec<String> {
        let mut v: Vec<Design> = self.designs.iter().map(|d| d.base()).collect();
        v.sort();
        v.dedup();
        v.into_iter().map(|d| d.as_str().to_string()).collect()
    }

    /// The distributions asked for (`distribute`), `none` for a plain table.
    pub(crate) fn distributions(&self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self
            .designs
            .iter()
            .map(|d| d.distribution().unwrap_or("none"))
            .collect();
        v.sort_by_key(|d| ["none", "version", "content"].iter().position(|x| x == d));
        v.dedup();
        v
    }

    /// Citus: the columns the run distributes its tables by.
    pub(crate) fn distributed_columns(&self) -> Vec<String> {
        self.distributions()
            .into_iter()
            .filter(|d| *d != "none")
            .map(str::to_string)
            .collect()
    }

    pub fn to_text(&self) -> ParamText {
        let join = |v: Vec<String>| v.join(",");
        let steps = if self.steps_as_rows {
            format!(
                "rows:{}",
                join(
                    self.steps
                        .iter()
                        .map(|s| (s * self.units).to_string())
                        .collect()
                )
            )
        } else {
            join(self.steps.iter().map(|s| s.to_string()).collect())
        };
        let indexes = if self.indexes.is_empty() {
            "none".to_string()
        } else {
            join(self.indexes.iter().map(|i| i.as_str().into()).collect())
        };
        let opt = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_else(|| "none".into());
        let mut t = ParamText::from([
            ("units".into(), self.units.to_string()),
            ("steps".into(), steps),
            ("indexes".into(), indexes),
            ("design".into(), join(self.base_designs())),
            ("key-shape".into(), self.key_shape.as_str().into()),
            ("churn".into(), format!("{}%", self.churn_pct)),
            ("write-method".into(), self.write_method.as_str().into()),
            ("repeat".into(), self.repeat.text()),
            ("grow-mode".into(), self.grow_mode.as_str().into()),
            ("fill-limit".into(), opt(self.fill_limit)),
            ("target-rows".into(), opt(self.target_rows)),
            (
                "baseline".into(),
                if self.baseline { "on" } else { "off" }.into(),
            ),
            ("seed".into(), self.seed.to_string()),
        ]);
        self.decision.write(&mut t);
        if !self.set.is_empty() {
            t.insert("set".into(), self.set.text());
        }
        // Written only when used, so the spec keys of runs on one server stay as they were.
        if !self.checkpoint.is_auto() {
            t.insert("checkpoint".into(), self.checkpoint.as_str().into());
        }
        if let Some(f) = self.fault {
            t.insert("standby-fault".into(), f.text());
        }
        if !self.distributed_columns().is_empty() {
            t.insert("distribute".into(), self.distributions().join(","));
        }
        if self.writes_lab {
            t.insert("writes".into(), "lab".into());
        }
        t
    }

    /// Content units replaced per version.
    pub(crate) fn churn_per_version(&self) -> u64 {
        (self.units as f64 * self.churn_pct / 100.0).round() as u64
    }

    /// (version, content) pairs at `versions`: the snapshot design's row count.
    pub(crate) fn pairs(&self, versions: u64) -> u64 {
        versions * self.units
    }

    /// Rows a design holds at `versions` (the ranges design: one row per content unit ever).
    pub fn rows(&self, design: Design, versions: u64) -> u64 {
        match design.base() {
            Design::Snapshot => self.pairs(versions),
            Design::Ranges if versions == 0 => 0,
            _ => self.units + self.churn_per_version() * (versions - 1),
        }
    }

    /// The versions at which a design's table holds `rows` (the inverse of [`Self::rows`], as a
    /// fraction): None when it never does (a ranges table without churn stays at its units).
    pub(crate) fn versions_at_rows(&self, design: Design, rows: f64) -> Option<f64> {
        let units = self.units.max(1) as f64;
        match design.base() {
            Design::Snapshot => Some(rows.max(0.0) / units),
            _ if rows <= units => Some(if rows <= 0.0 { 0.0 } else { 1.0 }),
            _ => {
                let churn = self.churn_per_version();
                (churn > 0).then(|| (rows - units) / churn as f64 + 1.0)
            }
        }
    }

    /// Indexes a design's table carries (by their report names).
    pub(crate) fn index_names(&self, design: Design) -> Vec<&'static str> {
        match design.base() {
            Design::Snapshot => self.indexes.iter().map(|i| i.as_str()).collect(),
            _ => vec!["pk", "content", "versions"],
        }
    }

    /// The version count of every point reported: the steps, then the target if it is not
    /// one of them.
    pub(crate) fn points(&self) -> Vec<u64> {
        let mut v = self.steps.clone();
        if let Some(t) = self.target_rows {
            let tv = t.div_ceil(self.units.max(1));
            if !v.contains(&tv) {
                v.push(tv);
                v.sort();
            }
        }
        v
    }

    /// Samples the run reports: one per point per design.
    pub fn samples(&self) -> usize {
        self.points().len() * self.designs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::spec::{ExperimentKind, ExperimentSpec};

    fn parse(pairs: &[(&str, &str)]) -> Result<GrowthSpec, FieldErrors> {
        let p: ParamText = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        match ExperimentKind::Growth.parse_spec(&p) {
            Ok(ExperimentSpec::Growth(s)) => Ok(s),
            Ok(_) => panic!("not growth"),
            Err(e) => Err(e),
        }
    }

    #[test]
    fn defaults_are_the_original() {
        let s = parse(&[]).unwrap();
        assert_eq!(s.units, 10_000);
        assert_eq!(s.steps, [0, 100, 1000, 10_000, 50_000, 100_000]);
        assert_eq!(s.indexes.len(), 4);
        assert_eq!(s.designs, [Design::Snapshot, Design::Ranges]);
        assert_eq!(s.churn_per_version(), 100);
        assert_eq!(s.pairs(100_000), 1_000_000_000);
        assert_eq!(s.rows(Design::Ranges, 1), 10_000);
        assert_eq!(s.rows(Design::Ranges, 3), 10_200);
        assert_eq!(GrowthSpec::parse(&s.to_text()).unwrap(), s);
    }

    #[test]
    fn steps_in_rows_round_trip() {
        let s = parse(&[("units", "100"), ("steps", "rows:0,1k,10k")]).unwrap();
        assert_eq!(s.steps, [0, 10, 100]);
        assert_eq!(s.to_text()["steps"], "rows:0,1000,10000");
        assert_eq!(GrowthSpec::parse(&s.to_text()).unwrap(), s);
        let s = parse(&[("fill-limit", "rows:10M"), ("target-rows", "1G")]).unwrap();
        assert_eq!(s.fill_limit, Some(1000));
        assert_eq!(s.points().len(), 6, "1G rows is the last step already");
        let s = parse(&[("steps", "0,100"), ("target-rows", "1G")]).unwrap();
        assert_eq!(s.points(), [0, 100, 100_000]);
        assert_eq!(s.samples(), 6);
    }

    #[test]
    fn bad_values_name_their_field() {
        let e = parse(&[
            ("steps", "100,10"),
            ("churn", "120"),
            ("design", "diff"),
            ("indexes", "pk,btree"),
        ])
        .unwrap_err();
        let keys: Vec<_> = e.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["steps", "indexes", "design", "churn"], "{e:?}");
        let e = parse(&[("units", "10"), ("churn", "1%")]).unwrap_err();
        assert!(e[0].1.contains("less than one unit"), "{e:?}");
        let e = parse(&[("units", "10k"), ("steps", "0,1G")]).unwrap_err();
        assert!(e[0].1.contains("at most"), "{e:?}");
    }

    #[test]
    fn a_fault_needs_for_and_the_levels_to_show() {
        let fault = ("standby-fault", "stop-at=0s,for=2s");
        let e = parse(&[fault]).unwrap_err();
        assert!(
            e[0].1.contains("give the levels with --sync-commit"),
            "{e:?}"
        );
        let e = parse(&[("standby-fault", "stop-at=1s"), ("sync-commit", "local,on")]).unwrap_err();
        assert!(e[0].1.contains("give for="), "{e:?}");
        let s = parse(&[fault, ("sync-commit", "local,on")]).unwrap();
        assert_eq!(s.to_text()["standby-fault"], "stop-at=0s,for=2s");
        assert_eq!(GrowthSpec::parse(&s.to_text()).unwrap(), s);
        assert!(!parse(&[]).unwrap().to_text().contains_key("standby-fault"));
    }
}
