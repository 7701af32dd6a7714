//! Combinations of a run on a standby whose every read the standby cancelled for conflicts
//! with recovery. Their trials have no finished read (0 transactions/s, or no statement
//! timing), which the statistics core cannot use (its comparisons are ratios), so they would
//! stand in the Summary as "undecided". They are a result, the worst one: the Summary leaves
//! them out of the verdicts and says of each that every read was cancelled, how many, and that
//! it is worse than every combination whose reads finished.

use serde::{Deserialize, Serialize};

use super::QueryReport;
use crate::measure::units::format_count;

/// A combination of a unit whose every read was cancelled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct AllCancelled {
    pub combo: usize,
    /// Its trials on the standby (all without a finished read).
    pub trials: usize,
    /// Statements the standby cancelled over them.
    pub cancelled: u64,
}

impl QueryReport {
    /// The combinations of unit `u` (a client count with `--clients`; one session otherwise)
    /// whose every trial on the standby had reads cancelled and none finished. Empty for a run
    /// on the target.
    pub(crate) fn all_cancelled(&self, u: usize) -> Vec<AllCancelled> {
        if self.params.on_standby.is_none() {
            return Vec::new();
        }
        let clients = if self.params.throughput() {
            match self.params.client_counts().get(u) {
                Some(&n) => Some(n),
                None => return Vec::new(),
            }
        } else {
            None
        };
        self.combos
            .iter()
            .filter_map(|c| {
                let mine: Vec<_> = self
                    .standby_reads
                    .iter()
                    .filter(|t| t.combo == c.combo && t.clients == clients)
                    .collect();
                let cancelled: u64 = mine.iter().map(|t| t.cancelled).sum();
                let none_finished = mine.iter().all(|t| t.executions == 0);
                (!mine.is_empty() && none_finished && cancelled > 0).then_some(AllCancelled {
                    combo: c.combo,
                    trials: mine.len(),
                    cancelled,
                })
            })
            .collect()
    }

    /// What the Summary says of unit `name`'s combination `c`, worse than `finished` (the
    /// labels of the unit's combinations whose reads finished).
    pub(crate) fn all_cancelled_sentence(
        &self,
        name: &str,
        c: &AllCancelled,
        finished: &[String],
    ) -> String {
        let than = if finished.is_empty() {
            "no combination had a read finish".to_string()
        } else {
            format!(
                "worse than every combination whose reads finished ({})",
                finished.join(", ")
            )
        };
        format!(
            "{name}: at {} every read was cancelled by conflicts with recovery ({} statement{} cancelled over {} trial{}, none finished): {than}",
            self.combo_label(c.combo),
            format_count(c.cancelled as f64),
            if c.cancelled == 1 { "" } else { "s" },
            c.trials,
            if c.trials == 1 { "" } else { "s" },
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::experiment::query::report::{ComboInfo, QueryTrial};
    use crate::experiment::query::standby_reads::StandbyReadTrial;
    use crate::experiment::query::{QueryReport, test_spec};
    use crate::measure::verdict::Verdict;

    /// A run on standby 1 with 4 clients over three feedback/delay combinations.
    fn report() -> QueryReport {
        let spec = test_spec(&[
            ("sql", "-- name: q\nSELECT count(*) FROM t"),
            ("set", "max_standby_streaming_delay=0,10ms,30s"),
            ("clients", "4"),
            ("on-standby", "1"),
        ]);
        let mut r = QueryReport::new(&spec);
        for (c, v) in ["0", "10ms", "30s"].iter().enumerate() {
            r.combos.push(ComboInfo {
                combo: c,
                label: format!("max_standby_streaming_delay={v}"),
                index_value: 0,
                settings: vec![("max_standby_streaming_delay".into(), v.to_string())],
            });
        }
        r
    }

    /// One trial of 4 clients at `tps` (0: every read cancelled, `cancelled` of them).
    fn trial(r: &mut QueryReport, combo: usize, repeat: u32, tps: f64, cancelled: u64) {
        let mut q = QueryTrial::test(combo, 10.0, repeat);
        q.clients = Some(4);
        q.tps = Some(tps);
        r.trials.push(q);
        r.standby_reads.push(StandbyReadTrial {
            combo,
            repeat,
            clients: Some(4),
            tps: Some(tps),
            executions: (tps * 10.0) as u64,
            cancelled,
            ..StandbyReadTrial::default()
        });
    }

    #[test]
    fn every_read_cancelled_is_the_worst_result_not_undecided() {
        let mut r = report();
        for rep in 1..=5 {
            trial(&mut r, 0, rep, 0.0, 12 + rep as u64);
            trial(&mut r, 1, rep, 100.0 + rep as f64, 3);
            trial(&mut r, 2, rep, 200.0 + rep as f64, 0);
        }
        r.summarize(&[]);
        let u = &r.summary.units[0];
        // The cancelled combination is out of the verdicts: it blocks nothing.
        assert!(u.finding.undecided.is_empty(), "{:?}", u.finding);
        assert_eq!(u.combos, [1, 2]);
        assert_eq!(u.all_cancelled, [0]);
        assert_eq!(u.finding.verdict, Some(Verdict::Faster));
        assert_eq!(
            u.finding.winner.as_deref(),
            Some("max_standby_streaming_delay=30s")
        );
        let said: Vec<&String> = r
            .summary
            .findings
            .iter()
            .filter(|f| f.contains("every read was cancelled"))
            .collect();
        assert_eq!(
            said,
            [
                "4 clients: at max_standby_streaming_delay=0 every read was cancelled by conflicts with recovery (75 statements cancelled over 5 trials, none finished): worse than every combination whose reads finished (max_standby_streaming_delay=10ms, max_standby_streaming_delay=30s)"
            ]
        );
        // The report's Summary table shows it, marked worse.
        let grid = crate::report::query::grids(&r).remove(0);
        let row = grid
            .rows
            .iter()
            .find(|row| row[1] == "max_standby_streaming_delay=0")
            .expect("a row for the cancelled combination");
        assert_eq!(row[2], "5");
        assert_eq!(row[6], "worse: all 75 reads cancelled");
    }

    #[test]
    fn a_combination_with_one_finished_read_stays_in_the_verdicts() {
        let mut r = report();
        for rep in 1..=3 {
            trial(&mut r, 0, rep, if rep == 1 { 0.5 } else { 0.0 }, 9);
            trial(&mut r, 1, rep, 100.0, 0);
        }
        r.summarize(&[]);
        assert!(r.all_cancelled(0).is_empty());
        assert_eq!(r.summary.units[0].combos, [0, 1]);
        assert!(r.summary.units[0].all_cancelled.is_empty());
    }

    #[test]
    fn when_no_read_finished_anywhere_it_is_said_without_a_verdict() {
        let mut r = report();
        trial(&mut r, 0, 1, 0.0, 1);
        r.summarize(&[]);
        assert!(r.summary.units.is_empty());
        assert_eq!(
            r.summary.findings,
            [
                "4 clients: at max_standby_streaming_delay=0 every read was cancelled by conflicts with recovery (1 statement cancelled over 1 trial, none finished): no combination had a read finish"
            ]
        );
    }
}
