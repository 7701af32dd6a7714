//! Reads on a standby (`run query --on-standby 1`): the statements run on a standby of the
//! sandbox while the primary churns the tables they read (UPDATEs at `--churn` rows/s and a
//! VACUUM every `--churn-vacuum`), so that the primary removes row versions the standby's
//! queries may still need — what makes recovery conflicts. Each trial counts the queries the
//! standby cancelled, reads `pg_stat_database_conflicts` by kind, times the statements, and
//! measures what the primary paid for the standby's feedback: dead tuples kept, growth of the
//! churned tables and how far its xmin was held back. With `--clients` or `--script` the
//! readers are the throughput clients, going on past each cancel (see [`clients`]).
//! `hot_standby_feedback` and `max_standby_streaming_delay` swept with `--set` are applied on
//! the standby (see [`crate::experiment::lab::standby_settings`]).

pub(crate) mod churn;
pub(crate) mod clients;
pub(crate) mod findings;
pub(crate) mod node;
pub(crate) mod reader;
pub(crate) mod record;
pub(crate) mod run;
pub(crate) mod spec;
pub(crate) mod trial;

pub(crate) use run::{body, describe, trials};
pub(crate) use spec::{CHURN, CHURN_VACUUM, ON_STANDBY, StandbyReads};
pub(crate) use trial::StandbyReadTrial;

use super::QueryReport;

/// The findings of a run on a standby (none for a run on the target).
pub(crate) fn findings(report: &QueryReport) -> Vec<String> {
    let Some(r) = &report.params.on_standby else {
        return Vec::new();
    };
    findings::findings(
        &report.combos,
        &report.standby_reads,
        &format!("pglab_standby_{}", r.standby),
        report.params.decision.confidence,
    )
}
