//! What a standby fault (`--standby-fault`) did, per configuration (an ingest's, a query's
//! throughput trials'): when the standby was gone, the seconds with zero commits, the longest
//! commit, the rate (rows/s, tps) before, during and after the fault, how long the standby took to catch up — and whether commits hung, said plainly
//! with why (a level that waits for the only synchronous standby waits as long as it is
//! gone, until its return or a statement_timeout / Ctrl-C ends the wait).
//!
//! A second of the trial's per-second series belongs to the phase its middle falls in.

use super::commit_cost::synchronous;
use super::standby_fault::FaultWindow;
use super::sync_commit::SyncCommit;
use crate::measure::interval::estimate;
use crate::server::replication::ReplicaLag;

/// One trial as the fault findings read it.
pub(crate) struct FaultTrial<'a> {
    /// The configuration but the level: `insert batch 1, 1 client`, `1 client`.
    pub subject: String,
    /// The rest of the configuration (swept settings), grouping it with its repeats.
    pub rest: String,
    pub level: SyncCommit,
    /// Commits (rows, transactions) per second of the trial.
    pub series: &'a [f64],
    /// The longest commit (statement), ms.
    pub longest_ms: f64,
    pub fault: Option<&'a FaultWindow>,
    pub replicas: &'a [ReplicaLag],
}

/// A longest commit this long (or a zero-commit second while the standby was gone) is a hang.
pub(crate) const HUNG_MS: f64 = 500.0;

/// Rows/s before, during and after the fault (None: no whole second in that phase).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Phases {
    pub before: Option<f64>,
    pub during: Option<f64>,
    pub after: Option<f64>,
    /// Seconds with zero commits while the standby was gone.
    pub zero_during: u32,
}

/// Split a per-second series at the fault's window `[from, to)` (seconds).
pub(crate) fn phases(series: &[f64], from: f64, to: f64) -> Phases {
    let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let mid = |i: usize| i as f64 + 0.5;
    let pick = |keep: &dyn Fn(f64) -> bool| -> Vec<f64> {
        series
            .iter()
            .enumerate()
            .filter(|(i, _)| keep(mid(*i)))
            .map(|(_, r)| *r)
            .collect()
    };
    let during = pick(&|m| m >= from && m < to);
    Phases {
        before: mean(pick(&|m| m < from)),
        zero_during: during.iter().filter(|r| **r <= 0.0).count() as u32,
        during: mean(during),
        after: mean(pick(&|m| m >= to)),
    }
}

/// Whether a commit at `level` waits while the fault lasts, with `sync` a synchronous
/// standby named.
pub(crate) fn waits(level: SyncCommit, fault: &FaultWindow, sync: bool) -> bool {
    let paused = fault.fault.starts_with("pause-replay");
    sync && match level {
        SyncCommit::RemoteApply => true,
        l => !paused && l.waits_for_standby(),
    }
}

/// One trial's measurements under the fault.
struct Seen {
    phases: Phases,
    longest_ms: f64,
    from: f64,
    to: f64,
    caught_up: Option<f64>,
}

fn seen(t: &FaultTrial) -> Option<Seen> {
    let w = t.fault?;
    let (from, to) = (w.from_s?, w.to_s?);
    Some(Seen {
        phases: phases(t.series, from, to),
        longest_ms: t.longest_ms,
        from,
        to,
        caught_up: w.caught_up_s,
    })
}

/// "2100 [2050 … 2200]" (the median of the trials' values with its interval).
fn rate(values: Vec<f64>, confidence: f64) -> String {
    match estimate(&values, confidence) {
        Some(e) if e.n > 1 => format!("{:.0} [{:.0} … {:.0}]", e.median, e.ci_low, e.ci_high),
        Some(e) => format!("{:.0}", e.median),
        None => "– (no whole second)".into(),
    }
}

/// The sentence on whether commits hung at `level`.
pub(crate) fn hang_sentence(
    level: SyncCommit,
    expected: bool,
    hung: bool,
    standby: &str,
    gone: &str,
) -> String {
    let l = level.as_str();
    match (expected, hung) {
        (true, true) => format!(
            "commits HUNG while {standby} was {gone}: synchronous_commit={l} waits for it, the only synchronous standby, so no commit returned until it came back; a statement_timeout or Ctrl-C would have ended the wait (the commit then stays local, with a WARNING)"
        ),
        (true, false) => format!(
            "no commit hung, although {l} waits for {standby}: another standby took its place, or the fault was too short to show"
        ),
        (false, true) => format!(
            "commits stalled although {l} does not wait for {standby} here: something else held them (the machine, a checkpoint, the fault's own work)"
        ),
        (false, false) => format!("no commit hung: {l} does not wait for {standby} here"),
    }
}

/// One finding per configuration run with a fault that happened; `unit` of the rate.
pub(crate) fn findings(trials: &[FaultTrial], unit: &str, confidence: f64) -> Vec<String> {
    let key = |t: &FaultTrial| (t.subject.clone(), t.level, t.rest.clone());
    let mut keys = Vec::new();
    for t in trials.iter().filter(|t| t.fault.is_some()) {
        if !keys.contains(&key(t)) {
            keys.push(key(t));
        }
    }
    let mut out = Vec::new();
    for k in keys {
        let of: Vec<&FaultTrial> = trials.iter().filter(|t| key(t) == k).collect();
        let Some(w) = of.iter().find_map(|t| t.fault) else {
            continue;
        };
        let seen: Vec<Seen> = of.iter().filter_map(|t| seen(t)).collect();
        if seen.is_empty() {
            out.push(format!(
                "{}{} {}: standby fault {} never happened (every load ended before it was due)",
                k.0,
                rest(&k.2),
                k.1.as_str(),
                w.fault
            ));
            continue;
        }
        out.push(config_finding(&of, &seen, (w, unit), confidence));
    }
    out
}

/// " wal_compression=on" (nothing when there is no rest).
fn rest(r: &str) -> String {
    if r.is_empty() {
        String::new()
    } else {
        format!(" {r}")
    }
}

fn config_finding(
    of: &[&FaultTrial],
    seen: &[Seen],
    (w, unit): (&FaultWindow, &str),
    confidence: f64,
) -> String {
    let t = of[0];
    let level = t.level;
    let expected = waits(level, w, of.iter().any(|t| synchronous(t.replicas)));
    let gone_word = if w.fault.starts_with("pause-replay") {
        "paused"
    } else {
        "gone"
    };
    let longest = seen.iter().map(|s| s.longest_ms).fold(0.0, f64::max);
    let zero: Vec<String> = seen
        .iter()
        .map(|s| s.phases.zero_during.to_string())
        .collect();
    let hung = longest >= HUNG_MS || seen.iter().any(|s| s.phases.zero_during > 0);
    let gone: Vec<String> = seen
        .iter()
        .map(|s| format!("{:.1}–{:.1} s", s.from, s.to))
        .collect();
    let caught: Vec<String> = seen
        .iter()
        .map(|s| s.caught_up.map_or("–".into(), |c| format!("{c:.1} s")))
        .collect();
    let problems: Vec<&String> = of
        .iter()
        .filter_map(|t| t.fault)
        .flat_map(|f| f.problems.iter())
        .collect();
    format!(
        "{}{} {} under standby fault {} ({}, {gone_word} {}): {} s with zero commits meanwhile (per trial: {}), longest commit {:.0} ms; {}; {unit} before {}, during {}, after {}; caught up after its return in {}{}",
        t.subject,
        rest(&t.rest),
        level.as_str(),
        w.fault,
        w.standby,
        gone.join(", "),
        seen.iter().map(|s| s.phases.zero_during).sum::<u32>(),
        zero.join(", "),
        longest,
        hang_sentence(level, expected, hung, &w.standby, gone_word),
        rate(
            seen.iter().filter_map(|s| s.phases.before).collect(),
            confidence
        ),
        rate(
            seen.iter().filter_map(|s| s.phases.during).collect(),
            confidence
        ),
        rate(
            seen.iter().filter_map(|s| s.phases.after).collect(),
            confidence
        ),
        caught.join(", "),
        if problems.is_empty() {
            String::new()
        } else {
            format!(
                "; problems: {}",
                problems
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_splits_at_the_fault_by_the_middle_of_each_second() {
        let s = [100.0, 110.0, 0.0, 0.0, 0.0, 90.0, 95.0];
        let p = phases(&s, 2.1, 5.0);
        assert_eq!(p.before, Some(105.0));
        assert_eq!(p.during, Some(0.0));
        assert_eq!(p.zero_during, 3);
        assert_eq!(p.after, Some(92.5));
        // A fault after the load's last second: nothing during or after.
        let q = phases(&s, 9.0, 10.0);
        assert_eq!((q.during, q.after, q.zero_during), (None, None, 0));
    }

    #[test]
    fn only_the_levels_that_wait_for_the_standby_are_expected_to_hang() {
        let stop = FaultWindow {
            fault: "stop-at=2s,for=2s".into(),
            ..Default::default()
        };
        let pause = FaultWindow {
            fault: "pause-replay-at=2s".into(),
            ..Default::default()
        };
        assert!(waits(SyncCommit::On, &stop, true));
        assert!(waits(SyncCommit::RemoteWrite, &stop, true));
        assert!(!waits(SyncCommit::Local, &stop, true));
        assert!(!waits(SyncCommit::On, &stop, false));
        assert!(waits(SyncCommit::RemoteApply, &pause, true));
        assert!(!waits(SyncCommit::On, &pause, true));
        let s = hang_sentence(SyncCommit::On, true, true, "pglab_standby_1", "gone");
        assert!(s.contains("HUNG") && s.contains("statement_timeout"), "{s}");
        let s = hang_sentence(SyncCommit::Local, false, false, "pglab_standby_1", "gone");
        assert!(s.starts_with("no commit hung"), "{s}");
    }
}
