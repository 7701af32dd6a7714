//! What an experiment on generated tables (index-build's datasets, ingest's trial tables,
//! growth's association tables) writes on a server pglab did not start: the lab schema, its
//! tables, their size and the WAL they cost, said before the run. Such a run goes ahead there
//! only with `writes = lab` (`--writes lab`), and everything it made is dropped when it ends
//! (its tables carry the run's mark, so a run killed with `kill -9` leaves leftovers that
//! `pglab clean` finds). On pglab's own sandbox nothing here applies.

use super::experiment::{Experiment, each_kind};
use super::field::{Cost, FieldDef, FieldKind};
use super::spec::ExperimentSpec;
use crate::experiment::ExperimentKind;
use crate::measure::units::format_bytes;

/// The `writes` field of ingest and growth (index-build has its own, which also covers an
/// existing table's copies).
pub(crate) const FIELD: FieldDef = FieldDef {
    key: "writes",
    help: "on a server pglab did not start: auto refuses (the run creates tables there); lab lets it write its tables in the lab schema (it says which, their size and WAL before it starts; all dropped at the end)",
    default: "auto",
    kind: FieldKind::Choice(&["auto", "lab"]),
};

/// The `writes` field: true for `lab`, false for `auto` (or when not given).
pub(crate) fn read(r: &mut super::field::FieldReader<'_>) -> bool {
    r.get("writes", false, |s| match s {
        "" | "auto" => Ok(false),
        "lab" => Ok(true),
        other => Err(format!("'{other}' is not one of auto, lab")),
    })
}

/// What a run on generated tables writes on a server pglab did not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabWrites {
    pub kind: ExperimentKind,
    /// The lab schema the tables go in.
    pub schema: String,
    /// Whether the schema is there already (else the run creates it and drops it at the end).
    pub schema_exists: bool,
    /// The tables by the names they will have, [`RUN_ID`] standing for the run's id.
    pub tables: Vec<String>,
    /// What the tables hold and how long each lives ("10,000 rows each, …").
    pub holds: String,
    /// `tables` are the first and the last of a numbered series (ingest's trial tables).
    pub series: bool,
    /// The largest table at once, its indexes, and the WAL of the whole run.
    pub table_bytes: u64,
    pub index_bytes: u64,
    pub wal_bytes: u64,
    /// `writes = lab` was given.
    pub allowed: bool,
}

/// What stands for the run's id in a table's name before the run has one.
pub(crate) const RUN_ID: &str = "<run id>";
const STAND_IN: &str = "runidstandin";

/// `rows` as a DBA reads a row count: `10,000`.
pub(crate) fn rows(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` rows with the word for one or many: "1 row", "10,000 rows".
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", rows(n), if n == 1 { one } else { many })
}

/// The tables a kind makes in the lab schema, named as they will be, and what they hold
/// (each kind says its own, `Experiment::own_tables`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OwnTables {
    /// The tables by the names they will have.
    pub tables: Vec<String>,
    /// What they hold and how long each lives ("10,000 rows each, …").
    pub holds: String,
    /// `tables` are the first and the last of a numbered series (ingest's trial tables).
    pub series: bool,
    /// How many times the run writes the spec's estimated WAL (ingest estimates one trial's).
    pub wal_times: u64,
    /// `writes = lab` was given.
    pub allowed: bool,
}

impl LabWrites {
    /// What `spec` writes on a server pglab did not start; None when it writes nothing of its
    /// own there (a query) or says so itself (index-build on an existing table).
    pub(crate) fn of(
        spec: &ExperimentSpec,
        schema: &str,
        schema_exists: bool,
    ) -> Option<LabWrites> {
        // Named by each kind's own naming, with a stand-in id `plain_name` keeps as it is,
        // then shown as the placeholder.
        let own = each_kind!(spec, s => s.own_tables(STAND_IN))?;
        let tables = own
            .tables
            .into_iter()
            .map(|t| t.replace(STAND_IN, RUN_ID))
            .collect();
        let cost: Cost = spec.estimate();
        let wal = cost.wal_bytes.saturating_mul(own.wal_times.max(1));
        Some(LabWrites {
            kind: spec.kind(),
            schema: schema.to_string(),
            schema_exists,
            tables,
            holds: own.holds,
            series: own.series,
            table_bytes: cost.table_bytes,
            index_bytes: cost.index_bytes,
            // A table and its indexes are written to WAL once at least (full-page images and
            // index builds at wal_level replica or logical).
            wal_bytes: wal.max(cost.table_bytes + cost.index_bytes),
            allowed: own.allowed,
        })
    }

    /// "schema pglab (created, dropped at the end); table pglab.ib_int4_random_10000_s42_<run
    /// id> (10,000 rows each; …); the largest table about 352 kB, its indexes about 240 kB;
    /// about 592 kB of WAL; <run id> is the run's id, given when it starts".
    pub(crate) fn sentence(&self) -> String {
        let schema = if self.schema_exists {
            format!("in schema {} (there already)", self.schema)
        } else {
            format!("schema {} (created, dropped at the end)", self.schema)
        };
        let tables: Vec<String> = self
            .tables
            .iter()
            .map(|t| format!("{}.{t}", self.schema))
            .collect();
        let indexes = match self.index_bytes {
            0 => String::new(),
            b => format!(", its indexes about {}", format_bytes(b)),
        };
        format!(
            "{schema}; table{} {} ({}); the largest table about {}{indexes}; about {} of WAL; {RUN_ID} is the run's id, given when it starts; every table is dropped when the run ends",
            if self.tables.len() == 1 { "" } else { "s" },
            tables.join(if self.series { " … " } else { ", " }),
            self.holds,
            format_bytes(self.table_bytes),
            format_bytes(self.wal_bytes)
        )
    }
}

impl std::fmt::Display for LabWrites {
    /// The refusal: what the run would write, and the two ways on.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} writes on this server, which pglab did not start: {}; allow it with writes = lab (--writes lab; everything it makes is dropped when it ends), or run it on pglab's sandbox",
            self.kind,
            self.sentence()
        )
    }
}

/// Refuse a run on generated tables on a server pglab did not start unless `writes = lab`
/// was given: Ok(what it writes, None when nothing), or Err(what it would write).
pub(crate) fn check(
    spec: &ExperimentSpec,
    schema: &str,
    schema_exists: bool,
    on_sandbox: bool,
) -> Result<Option<LabWrites>, LabWrites> {
    if on_sandbox {
        return Ok(None);
    }
    match LabWrites::of(spec, schema, schema_exists) {
        Some(w) if !w.allowed => Err(w),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::ParamText;

    fn spec(kind: ExperimentKind, pairs: &[(&str, &str)]) -> ExperimentSpec {
        let p: ParamText = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        kind.parse_spec(&p).unwrap()
    }

    #[test]
    fn generated_tables_are_refused_off_the_sandbox_unless_lab_writes_are_given() {
        for kind in [
            ExperimentKind::IndexBuild,
            ExperimentKind::Ingest,
            ExperimentKind::Growth,
        ] {
            let s = spec(kind, &[]);
            let refused = check(&s, "pglab", false, false).unwrap_err();
            let said = refused.to_string();
            assert!(
                said.starts_with(&format!("{kind} writes on this server")),
                "{said}"
            );
            assert!(said.contains("schema pglab (created"), "{said}");
            assert!(said.contains("--writes lab"), "{said}");
            assert_eq!(check(&s, "pglab", false, true), Ok(None), "{kind}");
            let allowed = spec(kind, &[("writes", "lab")]);
            let w = check(&allowed, "pglab", true, false).unwrap().unwrap();
            assert!(w.allowed && w.wal_bytes > 0, "{kind}: {w:?}");
        }
    }

    #[test]
    fn an_index_build_names_its_datasets_and_a_query_writes_nothing_here() {
        let s = spec(
            ExperimentKind::IndexBuild,
            &[("rows", "10k"), ("order", "random"), ("mwm", "4MB")],
        );
        let w = check(&s, "pglab", true, false).unwrap_err();
        assert_eq!(
            w.tables,
            vec!["ib_int4_random_10000_s42_<run id>".to_string()]
        );
        let said = w.sentence();
        assert!(
            said.starts_with("in schema pglab (there already); table pglab.ib_int4_random_10000_s42_<run id> (10,000 rows each; each trial builds one index on it and drops it); the largest table about "),
            "{said}"
        );
        assert!(said.contains("of WAL; <run id> is the run's id, given when it starts; every table is dropped when the run ends"), "{said}");
        let q = spec(ExperimentKind::Query, &[("sql", "SELECT 1")]);
        assert_eq!(check(&q, "pglab", false, false), Ok(None));
    }

    #[test]
    fn an_ingest_names_its_trial_tables_as_the_run_will() {
        let s = spec(
            ExperimentKind::Ingest,
            &[("rows", "1000"), ("repeat", "3"), ("indexes", "1")],
        );
        let w = check(&s, "lab", false, false).unwrap_err();
        let said = w.to_string();
        assert!(
            said.starts_with("ingest writes on this server, which pglab did not start: schema lab (created, dropped at the end); tables lab.ingest_<run id>_t1 … lab.ingest_<run id>_t"),
            "{said}"
        );
        assert!(
            said.contains(" rows each, with 1 secondary index, each dropped after its trial)"),
            "{said}"
        );
        assert!(!said.contains("one table per trial (ingest_"), "{said}");
        assert!(!said.contains("indexes of about 0 B"), "{said}");
        let appended = spec(
            ExperimentKind::Ingest,
            &[("rows", "1000"), ("append", "on")],
        );
        let w = check(&appended, "lab", true, false).unwrap_err();
        assert_eq!(w.tables, ["ingest_<run id>_append"]);
        assert!(
            w.sentence()
                .contains("(1,000 rows per trial appended over at most "),
            "{}",
            w.sentence()
        );
    }

    #[test]
    fn a_growth_names_its_content_and_design_tables() {
        let s = spec(ExperimentKind::Growth, &[]);
        let w = check(&s, "pglab", true, false).unwrap_err();
        assert_eq!(w.tables[0], "growth_content_<run id>");
        assert!(w.tables.len() >= 2, "{w:?}");
        assert!(
            w.tables
                .iter()
                .all(|t| t.starts_with("growth_") && t.ends_with("_<run id>")),
            "{w:?}"
        );
        let said = w.sentence();
        assert!(
            said.contains(
                "(the content table and one association table per design, growing to about "
            ),
            "{said}"
        );
        assert!(said.contains("its indexes about "), "{said}");
    }
}
