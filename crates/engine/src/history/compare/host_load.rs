//! A difference in host load between two runs, named before any winner: the CPU other
//! processes took beside each run's trials (recorded per trial, [`crate::host::load`]). Two
//! runs on the same machine are on "the same host" only when the machine was in the same
//! state.

use crate::experiment::RunReport;
use crate::host::load::{BUSY_CORES, TrialHost};
use crate::measure::stats::median;

/// The host readings of a run's timed trials.
fn hosts(r: &RunReport) -> Vec<TrialHost> {
    r.body.facts().hosts()
}

/// "host load differed: other processes took 0.1 cores beside the baseline's trials and 1.4
/// beside the candidate's (medians; 0 and 8 of 8 trials beside a busy neighbour), so a
/// difference below may be the neighbours'". None when neither run recorded its host, or
/// the two loads are alike.
pub(crate) fn differed(baseline: &RunReport, candidate: &RunReport) -> Option<String> {
    let (a, b) = (hosts(baseline), hosts(candidate));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let cores =
        |h: &[TrialHost]| median(&h.iter().map(TrialHost::others_cores).collect::<Vec<_>>());
    let busy = |h: &[TrialHost]| h.iter().filter(|t| t.busy()).count();
    let (ca, cb) = (cores(&a)?, cores(&b)?);
    let (ba, bb) = (busy(&a), busy(&b));
    let share = |n: usize, of: usize| n as f64 / of as f64;
    if (ca - cb).abs() < BUSY_CORES && (share(ba, a.len()) - share(bb, b.len())).abs() < 0.5 {
        return None;
    }
    Some(format!(
        "host load differed: other processes took {ca:.1} cores beside the baseline's trials and {cb:.1} beside the candidate's (medians; {ba} of {} and {bb} of {} trials beside a busy neighbour), so a difference below may be the neighbours'",
        a.len(),
        b.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::ReportBody;

    /// The example run with every trial's host reading `others` cores.
    fn run(id: &str, others: f64, slower: f64) -> RunReport {
        use crate::experiment::index_build::Order;
        let t = |x: f64| [x, x * 1.01, x * 0.99, x * 1.005, x * 0.995, x];
        let mut r = crate::report::example::index_build(
            id,
            1_000_000,
            &[
                (Order::Random, 0, "1MB", &t(1.0 * slower)),
                (Order::Random, 0, "64MB", &t(0.8 * slower)),
            ],
        );
        if let ReportBody::IndexBuild(b) = &mut r.body {
            for tr in &mut b.trials {
                tr.host = Some(TrialHost {
                    seconds: tr.seconds,
                    others_cpu_s: others * tr.seconds,
                    steal_s: 0.0,
                    memory_stall_s: None,
                });
            }
        }
        r
    }

    #[test]
    fn a_busy_run_against_a_quiet_one_names_the_load_before_the_verdict() {
        let quiet = run("quiet", 0.05, 1.0);
        let busy = run("busy", 1.6, 2.0);
        let c = crate::history::compare::compare(&quiet, &busy).unwrap();
        assert!(
            c.verdict.starts_with("host load differed: "),
            "{}",
            c.verdict
        );
        let load = c.verdict.find("host load").unwrap();
        let slower = c.verdict.find("slower").unwrap();
        assert!(load < slower, "{}", c.verdict);
        // Alike loads: nothing said.
        assert!(differed(&quiet, &run("quiet2", 0.1, 1.0)).is_none());
    }
}
