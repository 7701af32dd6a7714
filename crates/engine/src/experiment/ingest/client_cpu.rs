//! The load generator's share of the CPU as an ingest confounder: the window itself is
//! [`crate::experiment::lab::cpu`], shared with the query experiment's throughput trials.

use super::report::IngestTrial;
use crate::experiment::lab::cpu::CLIENT_CPU_LIMIT;

/// The confounder for the trials whose load generator used more than [`CLIENT_CPU_LIMIT`]
/// of the host's CPU: named once, by the worst of them.
pub(crate) fn confounder(trials: &[IngestTrial]) -> Option<String> {
    let over: Vec<&IngestTrial> = trials
        .iter()
        .filter(|t| t.client_cpu_share > CLIENT_CPU_LIMIT)
        .collect();
    let worst = over
        .iter()
        .max_by(|a, b| a.client_cpu_share.total_cmp(&b.client_cpu_share))?;
    let others = match over.len() {
        1 => String::new(),
        2 => format!(
            ", and above {:.0}% in 1 other trial",
            CLIENT_CPU_LIMIT * 100.0
        ),
        n => format!(
            ", and above {:.0}% in {} other trials",
            CLIENT_CPU_LIMIT * 100.0,
            n - 1
        ),
    };
    Some(format!(
        "the load generator used {:.0}% of the CPU ({} #{}{others}): the server may be faster than shown",
        worst.client_cpu_share * 100.0,
        worst.series_name(),
        worst.repeat
    ))
}
