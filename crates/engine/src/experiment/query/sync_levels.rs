//! A throughput run across `synchronous_commit` levels (`--sync-commit`, or `--set
//! synchronous_commit=…`): per client count and the rest of the combination, each level's
//! statement latency (an autocommit statement's includes its commit), stall seconds, slowest
//! second and the standby's lag after the load, in the words of ingest's findings — and what
//! durability each level buys.

use super::report::{QueryReport, QueryTrial};
use crate::experiment::lab::commit_cost::{LevelRow, LevelTrial, LevelWords, level_findings};
use crate::experiment::lab::fault_report::{self, FaultTrial};
use crate::experiment::lab::standby_fields::SYNC_COMMIT;
use crate::experiment::lab::sync_commit::SyncCommit;

/// The trial's level, as its session showed it.
fn level(t: &QueryTrial) -> Option<SyncCommit> {
    SyncCommit::parse(t.settings.get(SYNC_COMMIT)?).ok()
}

/// What a trial shares with the others of its configuration but the level: its clients, its
/// index value and its other settings.
fn key(report: &QueryReport, t: &QueryTrial) -> (String, usize, String) {
    let others: Vec<String> = t
        .settings
        .iter()
        .filter(|(n, _)| *n != SYNC_COMMIT)
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    (
        t.name.clone(),
        report.params.split_combo(t.combo).0,
        others.join(" "),
    )
}

/// The trials run with a standby fault, per configuration and level: what the fault did
/// (ingest's words, see `lab::fault_report`).
pub(crate) fn fault_findings(report: &QueryReport, confidence: f64) -> Vec<String> {
    let views: Vec<FaultTrial> = report
        .trials
        .iter()
        .filter_map(|t| {
            let load = t.load.as_ref()?;
            let (name, index, rest) = key(report, t);
            Some(FaultTrial {
                subject: subject(&name, index),
                rest,
                level: level(t)?,
                series: &load.shape.series,
                longest_ms: load.statement_ms.max,
                fault: load.fault.as_ref(),
                replicas: &load.shape.replicas,
            })
        })
        .collect();
    fault_report::findings(&views, "tps", confidence)
}

/// `4 clients`, and the candidate index when there is one.
fn subject(clients: &str, index: usize) -> String {
    match index {
        0 => clients.to_string(),
        v => format!("{clients} · idx {v}"),
    }
}

/// One finding per configuration measured at two levels or more, then what each buys.
pub(crate) fn findings(report: &QueryReport, confidence: f64) -> Vec<String> {
    let rows: Vec<LevelRow> = report
        .trials
        .iter()
        .filter_map(|t| {
            let (load, level) = (t.load.as_ref()?, level(t)?);
            let (name, index, rest) = key(report, t);
            Some(LevelRow {
                subject: subject(&name, index),
                settings: rest,
                level,
                trial: LevelTrial {
                    latency: load.statement_ms,
                    stall_seconds: load.shape.stall_seconds,
                    worst_second: load.shape.worst_second,
                    replicas: &load.shape.replicas,
                },
            })
        })
        .collect();
    let words = LevelWords {
        what: "statement latency",
        unit: "tps",
        per: "trial",
    };
    level_findings(&rows, words, confidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::commit_cost::{LatencyMs, LoadShape};
    use crate::experiment::query::per_second::LoadRecord;
    use crate::server::replication::ReplicaLag;

    fn trial(level: &str, p50: f64, repeat: u32, sync: bool) -> QueryTrial {
        let mut t = QueryTrial::test(0, 1.0, repeat);
        t.name = "1 client".into();
        t.tps = Some(1000.0 / p50);
        t.settings.insert(SYNC_COMMIT.into(), level.into());
        t.load = Some(LoadRecord {
            statement_ms: LatencyMs {
                p50,
                p95: p50 * 1.5,
                p99: p50 * 2.0,
                p999: p50 * 3.0,
                max: p50 * 4.0,
            },
            shape: LoadShape {
                series: vec![10.0, 0.0],
                stall_seconds: u32::from(level == "on"),
                worst_second: Some(0.0),
                replicas: vec![ReplicaLag {
                    application_name: "pglab_standby_1".into(),
                    state: "streaming".into(),
                    sync_state: if sync { "sync" } else { "async" }.into(),
                    write_lag_ms: Some(4.1),
                    flush_lag_ms: Some(4.2),
                    replay_lag_ms: Some(4.3),
                    replay_behind_bytes: Some(0),
                }],
            },
            fault: None,
        });
        t
    }

    #[test]
    fn levels_of_one_configuration_compare_in_ingests_words() {
        let spec = crate::experiment::query::test_spec(&[
            ("sql", "INSERT INTO t VALUES (1)"),
            ("clients", "1"),
            ("sync-commit", "local,on"),
        ]);
        let mut r = QueryReport::new(&spec);
        for rep in 1..=3 {
            let d = f64::from(rep) * 0.01;
            r.trials.push(trial("local", 0.2 + d, rep, true));
            r.trials.push(trial("on", 4.1 + d, rep, true));
        }
        let f = findings(&r, 0.95);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(
            f[0].starts_with("1 client: statement latency by synchronous_commit"),
            "{}",
            f[0]
        );
        assert!(f[0].contains("local p50 0.22 ms ["), "{}", f[0]);
        assert!(
            f[0].contains("on p50 4.12 ms [")
                && f[0].contains(
                    "max 16.52 ms, 3 stall s, slowest second 0 tps, standby replay lag up to 4.3 ms"
                ),
            "{}",
            f[0]
        );
        assert!(f[1].contains("on: also flushed to the synchronous standby's disk"));
        // One level only: nothing to compare, nothing said.
        r.trials.retain(|t| t.settings[SYNC_COMMIT] == "on");
        assert!(findings(&r, 0.95).is_empty());
    }

    #[test]
    fn without_a_synchronous_standby_the_remote_levels_are_local() {
        let spec = crate::experiment::query::test_spec(&[
            ("sql", "INSERT INTO t VALUES (1)"),
            ("clients", "1"),
        ]);
        let mut r = QueryReport::new(&spec);
        r.trials.push(trial("local", 0.2, 1, false));
        r.trials.push(trial("remote_apply", 0.21, 1, false));
        let f = findings(&r, 0.95);
        assert!(
            f[1].contains("without a synchronous standby: the same as local"),
            "{f:#?}"
        );
    }
}
