//! The fields of a query run whose reads go to a standby of the sandbox: which standby
//! (`--on-standby 1`), how fast the primary's rows churn meanwhile (`--churn 1000`, rows/s)
//! and how often the primary vacuums the churned tables (`--churn-vacuum 1s`).

use serde::{Deserialize, Serialize};

use crate::experiment::lab::field::{FieldDef, FieldKind, FieldReader, ParamText};
use crate::measure::units::{parse_count, parse_duration};

pub(crate) const ON_STANDBY: FieldDef = FieldDef {
    key: "on-standby",
    help: "run the statements (one session, or the --clients / --script clients) on the sandbox's standby N (1: the first) while the primary churns the tables they read; off: on the target",
    default: "off",
    kind: FieldKind::Text,
};

pub(crate) const CHURN: FieldDef = FieldDef {
    key: "churn",
    help: "with --on-standby: rows per second the primary UPDATEs in the tables the statements read, during each trial",
    default: "1000",
    kind: FieldKind::Count,
};

pub(crate) const CHURN_VACUUM: FieldDef = FieldDef {
    key: "churn-vacuum",
    help: "with --on-standby: how often the primary VACUUMs the churned tables during a trial (and once at its end); off: autovacuum only",
    default: "1s",
    kind: FieldKind::Text,
};

/// The most churn a trial asks for.
pub(crate) const MAX_CHURN: u64 = 1_000_000;

/// Reads on a standby of the sandbox while the primary churns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StandbyReads {
    /// The standby's index (1-based).
    pub standby: u32,
    /// Rows per second the primary updates during a trial.
    pub churn_rows_s: u64,
    /// Seconds between the primary's VACUUMs of the churned tables (None: autovacuum only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vacuum_every_s: Option<f64>,
}

fn default_churn() -> u64 {
    1000
}

fn default_vacuum() -> Option<f64> {
    Some(1.0)
}

/// `off`, or the standby's number.
fn standby_of(s: &str) -> Result<Option<u32>, String> {
    match s {
        "" | "off" => Ok(None),
        n => match n.parse::<u32>() {
            Ok(i) if (1..=crate::server::standby::MAX_STANDBYS).contains(&i) => Ok(Some(i)),
            _ => Err(format!(
                "{n}: give the standby's number, 1 to {} (1 is the first), or off",
                crate::server::standby::MAX_STANDBYS
            )),
        },
    }
}

fn churn_of(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Ok(default_churn());
    }
    let n = parse_count(s).map_err(|e| e.0)?;
    if n > MAX_CHURN {
        return Err(format!("{n} rows/s: at most {MAX_CHURN}"));
    }
    Ok(n)
}

fn vacuum_of(s: &str) -> Result<Option<f64>, String> {
    match s {
        "" => Ok(default_vacuum()),
        "off" => Ok(None),
        s => {
            let d = parse_duration(s).map_err(|e| e.0)?.as_secs_f64();
            if d < 0.1 {
                return Err("VACUUM at most every 100ms (or off)".into());
            }
            Ok(Some(d))
        }
    }
}

impl StandbyReads {
    /// The fields (each checked even when reads stay on the target); None: `on-standby off`.
    pub(crate) fn read(r: &mut FieldReader) -> Option<StandbyReads> {
        let standby = r.get(ON_STANDBY.key, None, standby_of);
        let churn_rows_s = r.get(CHURN.key, default_churn(), churn_of);
        let vacuum_every_s = r.get(CHURN_VACUUM.key, default_vacuum(), vacuum_of);
        Some(StandbyReads {
            standby: standby?,
            churn_rows_s,
            vacuum_every_s,
        })
    }

    /// The fields as text.
    pub(crate) fn write(&self, t: &mut ParamText) {
        t.insert(ON_STANDBY.key.into(), self.standby.to_string());
        t.insert(CHURN.key.into(), self.churn_rows_s.to_string());
        t.insert(
            CHURN_VACUUM.key.into(),
            self.vacuum_every_s
                .map_or("off".into(), super::super::spec_values::format_duration),
        );
    }
}

/// What a run on a standby does not take (yet), one sentence per field.
pub(crate) fn problems(spec: &super::super::QuerySpec) -> Vec<(String, String)> {
    use super::super::{Cache, Writes};
    if spec.on_standby.is_none() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut no =
        |key: &str, why: &str| out.push((key.to_string(), format!("with --on-standby: {why}")));
    if !spec.index.is_empty() {
        no(
            "index",
            "a standby is read-only, so a candidate index would be built on the primary and reach the standby by replay, its drop's lock and pglab's switching between candidates conflicting with the reads being measured; not tried: create the index in --setup (built on the primary, replayed before the first trial) and compare a run with it against one without",
        );
    }
    if spec.cache == Cache::Cold {
        no("cache", "cold would restart the standby: use warm");
    }
    if spec.writes == Writes::Rollback {
        no("writes", "a standby takes no writes, not even rolled back");
    }
    if spec.fault.is_some() {
        no(
            "standby-fault",
            "a standby fault is not run beside reads on a standby (not built: the run would leave it out and measure the reads as if no fault had been asked); measure what the fault does to the primary's commits in a run without --on-standby (--clients, --sync-commit local,on, --standby-fault …), and the reads on the standby in a run of their own",
        );
    }
    if spec.repeat.is_auto() {
        no(
            "repeat",
            "give a number of trials per combination (auto is not taken yet)",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> (Option<StandbyReads>, Vec<(String, String)>) {
        let p: ParamText = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut r = FieldReader::new(&p);
        let s = StandbyReads::read(&mut r);
        (s, r.errors)
    }

    #[test]
    fn fields_read_and_write_back() {
        let (s, e) = read(&[]);
        assert!(e.is_empty());
        assert_eq!(s, None);
        let mut t = ParamText::new();
        let (s, e) = read(&[
            ("on-standby", "1"),
            ("churn", "5k"),
            ("churn-vacuum", "500ms"),
        ]);
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(
            s,
            Some(StandbyReads {
                standby: 1,
                churn_rows_s: 5000,
                vacuum_every_s: Some(0.5)
            })
        );
        let s = s.unwrap();
        s.write(&mut t);
        let again: Vec<(&str, &str)> = t.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(read(&again).0, Some(s), "{t:?}");
        let (s, _) = read(&[("on-standby", "2"), ("churn-vacuum", "off")]);
        assert_eq!(s.unwrap().vacuum_every_s, None);
    }

    #[test]
    fn bad_values_are_sentences() {
        let (_, e) = read(&[
            ("on-standby", "0"),
            ("churn", "2M"),
            ("churn-vacuum", "1ms"),
        ]);
        let said: Vec<&str> = e.iter().map(|(_, m)| m.as_str()).collect();
        assert!(said[0].contains("the standby's number, 1 to 4"), "{said:?}");
        assert!(said[1].contains("at most 1000000"), "{said:?}");
        assert!(said[2].contains("every 100ms"), "{said:?}");
        let (_, e) = read(&[("on-standby", "first")]);
        assert_eq!(e.len(), 1);
    }

    #[test]
    fn what_a_run_on_a_standby_does_not_take_is_said_per_field() {
        let p: ParamText = [
            ("sql", "SELECT 1"),
            ("on-standby", "1"),
            ("clients", "2"),
            ("index", "CREATE INDEX ON t (id)"),
            ("repeat", "auto"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let e = crate::experiment::ExperimentKind::Query
            .parse_spec(&p)
            .unwrap_err();
        let said = format!("{e:?}");
        assert!(said.contains("create the index in --setup"), "{said}");
        assert!(!said.contains("clients"), "clients are taken: {said}");
        assert!(said.contains("auto is not taken yet"), "{said}");
        // A fault beside the reads is refused as such, whatever else is given.
        let fault = |more: &[(&str, &str)]| {
            let mut p: ParamText = [
                ("sql", "SELECT 1"),
                ("on-standby", "1"),
                ("standby-fault", "stop-at=1s,for=1s"),
            ]
            .iter()
            .chain(more)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            p.insert("duration".into(), "3s".into());
            crate::experiment::ExperimentKind::Query
                .parse_spec(&p)
                .unwrap_err()
        };
        for e in [
            fault(&[]),
            fault(&[("clients", "2"), ("sync-commit", "local,on")]),
        ] {
            assert_eq!(e.len(), 1, "{e:?}");
            assert_eq!(e[0].0, "standby-fault");
            assert!(
                e[0].1.starts_with(
                    "with --on-standby: a standby fault is not run beside reads on a standby"
                ) && e[0].1.contains("in a run without --on-standby"),
                "{e:?}"
            );
        }
        let ok = crate::experiment::query::test_spec(&[("sql", "SELECT 1"), ("on-standby", "1")]);
        assert_eq!(ok.on_standby.map(|r| r.standby), Some(1));
        assert!(problems(&crate::experiment::query::test_spec(&[("sql", "SELECT 1")])).is_empty());
    }
}
