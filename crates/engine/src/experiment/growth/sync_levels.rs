//! A growth run across `synchronous_commit` levels (`--sync-commit`): per combination of the
//! other swept settings, each level's version-write COMMIT latency (the median over the steps
//! of each step's p50, with its interval; p99, p99.9 and max the worst step's), stall
//! seconds, slowest second and the standby's lag after the writes, in the words of ingest's
//! and query's findings — and what each level buys. The write times themselves compare across
//! the levels by the usual verdicts (`verdicts::settings_findings`). Then, with
//! `--standby-fault`, how long commits waited while the standby was gone, per level.

use super::commits::{GrowthFault, StepCommits};
use super::report::GrowthReport;
use crate::experiment::lab::commit_cost::{LevelRow, LevelTrial, LevelWords, level_findings};
use crate::experiment::lab::fault_report::{HUNG_MS, hang_sentence, waits};
use crate::experiment::lab::standby_fields::SYNC_COMMIT;
use crate::experiment::lab::sync_commit::SyncCommit;

/// The step's level, as its session showed it.
fn level(s: &StepCommits) -> Option<SyncCommit> {
    SyncCommit::parse(s.settings.get(SYNC_COMMIT)?).ok()
}

/// Its other swept settings: what groups it with the other levels of its configuration.
fn rest(s: &StepCommits) -> String {
    let others: Vec<String> = s
        .settings
        .iter()
        .filter(|(n, _)| *n != SYNC_COMMIT)
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    others.join(" ")
}

/// "version writes (single-row INSERTs in one transaction)".
fn subject(report: &GrowthReport) -> String {
    format!("version writes ({})", report.params.write_method.describe())
}

/// One finding per configuration measured at two levels or more, then what each buys.
pub(crate) fn findings(report: &GrowthReport, confidence: f64) -> Vec<String> {
    let rows: Vec<LevelRow> = report
        .commits
        .iter()
        .filter_map(|s| {
            Some(LevelRow {
                subject: subject(report),
                settings: rest(s),
                level: level(s)?,
                trial: LevelTrial {
                    latency: s.commit_ms,
                    stall_seconds: s.shape.stall_seconds,
                    worst_second: s.shape.worst_second,
                    replicas: &s.shape.replicas,
                },
            })
        })
        .collect();
    let words = LevelWords {
        what: "COMMIT latency",
        unit: "rows/s",
        per: "step",
    };
    level_findings(&rows, words, confidence)
}

/// Per configuration and level run with a standby fault: when the standby was gone at each
/// step, how long commits waited meanwhile, and whether they hung and why.
pub(crate) fn fault_findings(report: &GrowthReport) -> Vec<String> {
    let with: Vec<&StepCommits> = report
        .commits
        .iter()
        .filter(|s| s.fault.is_some())
        .collect();
    let mut keys: Vec<(String, SyncCommit)> = Vec::new();
    for s in &with {
        if let Some(l) = level(s)
            && !keys.contains(&(rest(s), l))
        {
            keys.push((rest(s), l));
        }
    }
    keys.into_iter()
        .map(|(r, l)| {
            let of: Vec<&StepCommits> = with
                .iter()
                .copied()
                .filter(|s| rest(s) == r && level(s) == Some(l))
                .collect();
            fault_finding(&subject(report), &r, l, &of)
        })
        .collect()
}

/// Each fault that happened: "0.0–2.4 s at 0 versions", and how long the standby then took
/// to catch up ("0.1 s").
fn windows(happened: &[&(u64, &GrowthFault)]) -> (Vec<String>, Vec<String>) {
    happened
        .iter()
        .map(|(v, f)| {
            let (from, to) = (f.window.from_s.unwrap_or(0.0), f.window.to_s.unwrap_or(0.0));
            let caught = f.window.caught_up_s;
            (
                format!("{from:.1}–{to:.1} s at {v} versions"),
                caught.map_or("–".into(), |c| format!("{c:.1} s")),
            )
        })
        .unzip()
}

/// "version writes (…) on under standby fault stop-at=0s,for=2s (pglab_standby_1, gone
/// 0.0–2.4 s at 0 versions, …): commits waited 2.3 s while the standby was stopped (1 COMMIT,
/// the longest 2310 ms); commits HUNG …; caught up after its return in 0.1 s".
fn fault_finding(subject: &str, rest: &str, level: SyncCommit, of: &[&StepCommits]) -> String {
    let faults: Vec<(u64, &GrowthFault)> = of
        .iter()
        .filter_map(|s| Some((s.versions, s.fault.as_ref()?)))
        .collect();
    let w = &faults[0].1.window;
    let paused = w.fault.starts_with("pause-replay");
    let (gone_word, state) = if paused {
        ("paused", "its replay was paused")
    } else {
        ("gone", "the standby was stopped")
    };
    let happened: Vec<&(u64, &GrowthFault)> = faults
        .iter()
        .filter(|(_, f)| f.window.from_s.is_some())
        .collect();
    let head = format!(
        "{subject}{}{rest} {} under standby fault {}",
        if rest.is_empty() { "" } else { " " },
        level.as_str(),
        w.fault
    );
    if happened.is_empty() {
        return format!(
            "{head}: the fault never happened (every first write round ended before it was due)"
        );
    }
    let (windows, caught) = windows(&happened);
    let waited: f64 = happened.iter().map(|(_, f)| f.commits_waited_s).sum();
    let commits: u32 = happened.iter().map(|(_, f)| f.commits).sum();
    let longest = happened
        .iter()
        .map(|(_, f)| f.longest_commit_ms)
        .fold(0.0, f64::max);
    let sync = of
        .iter()
        .any(|s| crate::experiment::lab::commit_cost::synchronous(&s.shape.replicas));
    let expected = waits(level, w, sync);
    let problems: Vec<&str> = happened
        .iter()
        .flat_map(|(_, f)| f.window.problems.iter().map(String::as_str))
        .collect();
    format!(
        "{head} ({}, {gone_word} {}): commits waited {waited:.1} s while {state} ({commits} COMMIT{} in progress meanwhile, the longest {longest:.0} ms); {}; caught up after its return in {}{}",
        w.standby,
        windows.join(", "),
        if commits == 1 { "" } else { "s" },
        hang_sentence(level, expected, longest >= HUNG_MS, &w.standby, gone_word),
        caught.join(", "),
        if problems.is_empty() {
            String::new()
        } else {
            format!("; problems: {}", problems.join("; "))
        }
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::experiment::growth::commits::WriteTiming;
    use crate::experiment::growth::kinds::Design;
    use crate::experiment::lab::spec::{ExperimentKind, ExperimentSpec};
    use crate::experiment::lab::standby_fault::FaultWindow;
    use crate::server::replication::ReplicaLag;

    fn report() -> GrowthReport {
        let mut p = ExperimentKind::Growth.defaults();
        p.insert("sync-commit".into(), "local,on".into());
        match ExperimentKind::Growth.parse_spec(&p) {
            Ok(ExperimentSpec::Growth(s)) => GrowthReport::new(&s),
            other => panic!("{other:?}"),
        }
    }

    fn step(level: &str, versions: u64, commit_ms: f64, fault: Option<FaultWindow>) -> StepCommits {
        let writes: Vec<WriteTiming> = (0..2)
            .map(|i| WriteTiming {
                design: Design::Snapshot,
                round: 1,
                at_s: f64::from(i) * 0.1,
                seconds: 0.05 + commit_ms / 1000.0,
                commit_seconds: commit_ms / 1000.0,
                rows: 100,
            })
            .collect();
        let fault = fault.map(|w| GrowthFault::of(w, 1, &writes));
        let settings = BTreeMap::from([(SYNC_COMMIT.to_string(), level.to_string())]);
        let replicas = vec![ReplicaLag {
            application_name: "pglab_standby_1".into(),
            state: "streaming".into(),
            sync_state: "sync".into(),
            write_lag_ms: Some(2.1),
            flush_lag_ms: Some(2.2),
            replay_lag_ms: Some(2.3),
            replay_behind_bytes: Some(0),
        }];
        StepCommits::of((versions, 0), settings, writes, replicas, fault).unwrap()
    }

    #[test]
    fn levels_compare_in_ingests_words_over_the_steps() {
        let mut r = report();
        for v in [0, 10, 100] {
            r.commits
                .push(step("local", v, 0.3 + v as f64 * 1e-4, None));
            r.commits.push(step("on", v, 2.6 + v as f64 * 1e-4, None));
        }
        let f = findings(&r, 0.95);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(
            f[0].starts_with("version writes (single-row INSERTs in one transaction): COMMIT latency by synchronous_commit (p50 median [interval] of the steps;"),
            "{}",
            f[0]
        );
        assert!(f[0].contains("local p50 0.30 ms ["), "{}", f[0]);
        assert!(f[0].contains("on p50 2.60 ms ["), "{}", f[0]);
        assert!(f[0].contains("standby replay lag up to 2.3 ms"), "{}", f[0]);
        assert!(
            f[1].contains("on: also flushed to the synchronous standby's disk"),
            "{}",
            f[1]
        );
        // One level: nothing to compare.
        r.commits.retain(|s| s.settings[SYNC_COMMIT] == "on");
        assert!(findings(&r, 0.95).is_empty());
    }

    #[test]
    fn a_fault_says_how_long_commits_waited_and_why() {
        let mut r = report();
        let window = |from: Option<f64>| FaultWindow {
            fault: "stop-at=0s,for=2s".into(),
            standby: "pglab_standby_1".into(),
            from_s: from,
            to_s: from.map(|_| 2.3),
            caught_up_s: from.map(|_| 0.1),
            problems: vec![],
        };
        r.commits
            .push(step("on", 0, 2250.0, Some(window(Some(0.0)))));
        r.commits
            .push(step("local", 0, 0.4, Some(window(Some(0.0)))));
        let f = fault_findings(&r);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(
            f[0].contains("on under standby fault stop-at=0s,for=2s (pglab_standby_1, gone 0.0–2.3 s at 0 versions): commits waited 4.5 s while the standby was stopped (2 COMMITs in progress meanwhile, the longest 2250 ms); commits HUNG"),
            "{}",
            f[0]
        );
        assert!(
            f[1].contains("no commit hung: local does not wait"),
            "{}",
            f[1]
        );
        // A fault due after the round had ended.
        r.commits = vec![step("on", 0, 2.0, Some(window(None)))];
        assert!(
            fault_findings(&r)[0].contains("never happened"),
            "{:?}",
            fault_findings(&r)
        );
    }
}
