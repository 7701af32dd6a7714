//! Which trials run, in what order. A block is the combinations that can interleave without a
//! restart: one value of the index dimension (a built candidate stays for its trials) and one
//! restart block of the swept settings. The restart blocks of one index value interleave
//! round by round ([`group_round`]: every round visits every block, in the order
//! [`round_blocks`] gives, one restart each), and within a block every round runs each unit
//! (statement, or client count) once under every combination, so drift over the run spreads
//! over all of them. With `repeat = auto`, after the first rounds the statistics core says
//! which combinations of each unit are still undecided ([`crate::measure::finding::needs_more`],
//! asked of the unit's whole sweep so far, not of one block) and each further round runs just
//! those, until none is or each has `max-repeat` trials.

use super::report::QueryReport;
use super::spec::QuerySpec;
use crate::experiment::lab::whatif::round_blocks;
use crate::measure::finding::{SettingTrials, needs_more};

/// One trial to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Planned {
    /// The combination (index value × settings combination).
    pub combo: usize,
    /// The statement, or the index of the client count.
    pub unit: usize,
    /// 1-based round.
    pub repeat: u32,
}

/// The blocks of the run, in order: for each index value, the combinations of each restart
/// block of the settings (`blocks[i]`: the restart block of settings combination `i`). With
/// the candidates `interleaved` (all built once, see [`super::visible`]) the index values
/// share their blocks: one block per restart block, every index value in it.
pub(crate) fn blocks(
    spec: &QuerySpec,
    settings_blocks: &[usize],
    interleaved: bool,
) -> Vec<Vec<usize>> {
    let n = spec.set.combo_count().max(1);
    let mut ids: Vec<usize> = settings_blocks.to_vec();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        ids.push(0);
    }
    let values: Vec<Vec<usize>> = if interleaved {
        vec![(0..spec.index_values()).collect()]
    } else {
        (0..spec.index_values()).map(|v| vec![v]).collect()
    };
    let mut out = Vec::new();
    for vs in &values {
        for b in &ids {
            let combos: Vec<usize> = vs
                .iter()
                .flat_map(|&v| {
                    (0..n)
                        .filter(|&sc| settings_blocks.get(sc).copied().unwrap_or(0) == *b)
                        .map(move |sc| v * n + sc)
                })
                .collect();
            if !combos.is_empty() {
                out.push(combos);
            }
        }
    }
    out
}

/// Round `round` (1-based) of one index value's restart blocks (`group`), every block
/// visited once in the rotating order of [`round_blocks`]; `family`: the combinations the
/// core decides over (every combination run so far and this group's).
pub(crate) fn group_round(
    report: &QueryReport,
    group: &[Vec<usize>],
    family: &[usize],
    round_no: u32,
) -> Vec<Planned> {
    let ids: Vec<usize> = (0..group.len()).collect();
    round_blocks(&ids, round_no.saturating_sub(1) as usize)
        .into_iter()
        .flat_map(|b| round(report, &group[b], family, round_no))
        .collect()
}

/// Round `round` (1-based) of a block: every unit under every combination for the first
/// `repeat.initial()` rounds; with `auto`, then what the core still needs of the block's
/// combinations, deciding over `family` (the block's combinations among them), up to
/// `max-repeat` per combination.
pub(crate) fn round(
    report: &QueryReport,
    block: &[usize],
    family: &[usize],
    round: u32,
) -> Vec<Planned> {
    let spec = &report.params;
    let units = spec.units();
    // Each round starts one combination later, so none always runs first after a switch.
    let block: Vec<usize> = round_blocks(block, round.saturating_sub(1) as usize);
    let block = &block[..];
    if round <= spec.repeat.initial() {
        return block
            .iter()
            .flat_map(|&combo| {
                (0..units).map(move |unit| Planned {
                    combo,
                    unit,
                    repeat: round,
                })
            })
            .collect();
    }
    let most = spec.repeat.most(spec.decision.max_repeat) as usize;
    if !spec.repeat.is_auto() || round as usize > most {
        return Vec::new();
    }
    let mut out = Vec::new();
    for unit in 0..units {
        let trials: Vec<SettingTrials> = family
            .iter()
            .map(|&c| SettingTrials {
                label: report.combo_label(c),
                cost_rank: c,
                values: report.values(unit, c),
                coords: report
                    .combos
                    .get(c)
                    .map(|info| report.coords_of(info))
                    .unwrap_or_default(),
            })
            .collect();
        for i in needs_more(
            &trials,
            report.better(),
            &spec.decision.rules_for(spec.repeat),
        ) {
            if block.contains(&family[i]) && trials[i].values.len() < most {
                out.push(Planned {
                    combo: family[i],
                    unit,
                    repeat: round,
                });
            }
        }
    }
    // Combination by combination, as the first rounds go (one SET per combination).
    out.sort_by_key(|p| (block.iter().position(|&c| c == p.combo), p.unit));
    out
}

/// The combinations the core decides over with index value `v`: every one run so far and
/// this value's. (A hypothetical candidate's combinations have no trials: they are not in it.)
pub(crate) fn family(report: &QueryReport, v: usize) -> Vec<usize> {
    report
        .combos
        .iter()
        .filter(|c| c.index_value <= v)
        .filter(|c| {
            c.index_value == 0
                || report
                    .indexes
                    .get(c.index_value - 1)
                    .is_some_and(|i| !i.hypothetical())
        })
        .map(|c| c.combo)
        .collect()
}

/// The blocks grouped by index value, in order: one group's restart blocks interleave round by
/// round; a candidate index is built once for its group and dropped after it.
pub(crate) fn by_index_value(spec: &QuerySpec, blocks: Vec<Vec<usize>>) -> Vec<Vec<Vec<usize>>> {
    let mut groups: Vec<Vec<Vec<usize>>> = Vec::new();
    for b in blocks {
        let v = spec.split_combo(b[0]).0;
        match groups.last_mut() {
            Some(g) if spec.split_combo(g[0][0]).0 == v => g.push(b),
            _ => groups.push(vec![b]),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::query::QueryTrial;

    fn spec(pairs: &[(&str, &str)]) -> QuerySpec {
        crate::experiment::query::test_spec(pairs)
    }

    #[test]
    fn index_values_are_blocks_and_settings_interleave_inside() {
        let s = spec(&[
            ("sql", "SELECT 1; SELECT 2"),
            ("set", "work_mem=1MB,64MB"),
            ("index", "CREATE INDEX ON t (a)"),
            ("repeat", "2"),
        ]);
        assert_eq!(blocks(&s, &[0, 0], false), [vec![0, 1], vec![2, 3]]);
        // A restart per settings combination: each is a block of its own.
        assert_eq!(
            blocks(&s, &[0, 1], false),
            [vec![0], vec![1], vec![2], vec![3]]
        );
        let r = QueryReport::new(&s);
        let first = round(&r, &[0, 1], &[0, 1], 1);
        let seq: Vec<(usize, usize)> = first.iter().map(|p| (p.combo, p.unit)).collect();
        assert_eq!(seq, [(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(round(&r, &[0, 1], &[0, 1], 2).len(), 4);
        assert!(round(&r, &[0, 1], &[0, 1], 3).is_empty());
    }

    /// Candidates interleaved: every index value shares each restart block, and a block of
    /// three or more combinations starts one later each round.
    #[test]
    fn interleaved_candidates_share_the_rounds_and_rotate() {
        let s = spec(&[
            ("sql", "SELECT 1"),
            ("set", "work_mem=1MB,64MB"),
            ("index", "CREATE INDEX ON t (a); CREATE INDEX ON t (a, b)"),
            ("repeat", "3"),
        ]);
        assert_eq!(blocks(&s, &[0, 0], true), [vec![0, 1, 2, 3, 4, 5]]);
        assert_eq!(blocks(&s, &[0, 1], true), [vec![0, 2, 4], vec![1, 3, 5]]);
        let r = QueryReport::new(&s);
        let order = |n| -> Vec<usize> {
            round(&r, &[0, 2, 4], &[0, 2, 4], n)
                .iter()
                .map(|p| p.combo)
                .collect()
        };
        assert_eq!(order(1), [0, 2, 4]);
        assert_eq!(order(2), [2, 4, 0]);
        assert_eq!(order(3), [4, 0, 2]);
    }

    /// Restart blocks are never run all repeats at a time: every round visits every block
    /// (ABAB for two, rotating for three), one restart each.
    #[test]
    fn restart_blocks_interleave_round_by_round() {
        let s = spec(&[
            ("sql", "SELECT 1"),
            ("set", "shared_buffers=16MB,32MB,64MB"),
            ("repeat", "3"),
        ]);
        let r = QueryReport::new(&s);
        let group = blocks(&s, &[0, 1, 2], false);
        assert_eq!(group, [vec![0], vec![1], vec![2]]);
        let order: Vec<Vec<usize>> = (1..=3)
            .map(|n| {
                group_round(&r, &group, &[0, 1, 2], n)
                    .iter()
                    .map(|p| p.combo)
                    .collect()
            })
            .collect();
        assert_eq!(order, [vec![0, 1, 2], vec![1, 2, 0], vec![2, 0, 1]]);
        assert!(group_round(&r, &group, &[0, 1, 2], 4).is_empty());
    }

    /// With auto and one combination per restart block, the core is asked about the whole
    /// sweep: a block of one keeps running while the sweep is undecided (it used to stop at
    /// 3 trials, a family of one being "decided").
    #[test]
    fn auto_decides_over_the_sweep_not_the_block() {
        let s = spec(&[
            ("sql", "SELECT 1"),
            ("set", "shared_buffers=16MB,32MB"),
            ("repeat", "auto"),
        ]);
        let mut r = two_combos(&s);
        for rep in 1..=3 {
            r.trials
                .push(QueryTrial::test(0, 1.0 + rep as f64 * 0.01, rep));
            r.trials
                .push(QueryTrial::test(1, 1.0 + rep as f64 * 0.011, rep));
        }
        let group = blocks(&s, &[0, 1], false);
        let next = group_round(&r, &group, &[0, 1], 4);
        assert_eq!(next.len(), 2, "both blocks go on: {next:?}");
        assert!(
            round(&r, &[0], &[0], 4).is_empty(),
            "alone, a block of one decides nothing"
        );
    }

    /// A report of `s` with two combinations, `c0` and `c1`, and no trials yet.
    fn two_combos(s: &QuerySpec) -> QueryReport {
        let mut r = QueryReport::new(s);
        for c in 0..2 {
            r.combos.push(super::super::report::ComboInfo {
                combo: c,
                label: format!("c{c}"),
                index_value: 0,
                settings: Vec::new(),
            });
        }
        r
    }

    fn s_most(s: &QuerySpec) -> usize {
        s.repeat.most(s.decision.max_repeat) as usize
    }

    #[test]
    fn auto_asks_the_core_until_decided() {
        let s = spec(&[
            ("sql", "SELECT 1"),
            ("set", "work_mem=1MB,64MB"),
            ("repeat", "auto"),
        ]);
        let mut r = two_combos(&s);
        assert_eq!(round(&r, &[0, 1], &[0, 1], 3).len(), 2);
        let push = |r: &mut QueryReport, combo: usize, seconds: f64, repeat: u32| {
            r.trials.push(QueryTrial::test(combo, seconds, repeat));
        };
        for rep in 1..=3 {
            push(&mut r, 0, 2.0 + rep as f64 * 0.001, rep);
            push(&mut r, 1, 1.0 + rep as f64 * 0.001, rep);
        }
        // 3 against 3 are before auto's first planned look (5 each, measure::spending): one
        // more of each, round by round, until the core decides — before the cap, on a 2×
        // difference without noise.
        let most = s_most(&s);
        let mut rep = 4;
        loop {
            let next = round(&r, &[0, 1], &[0, 1], rep);
            if next.is_empty() {
                break;
            }
            assert_eq!(next.len(), 2, "both combinations until decided");
            push(&mut r, 0, 2.0 + rep as f64 * 0.001, rep);
            push(&mut r, 1, 1.0 + rep as f64 * 0.001, rep);
            rep += 1;
            assert!(rep as usize <= most, "decided before the cap of {most}");
        }
        assert!(rep > 4, "3 against 3 come before auto's first look");
        let (trials, _) = r.sweep_of(0);
        let f =
            crate::measure::finding::decide(&trials, r.better(), &s.decision.rules_for(s.repeat));
        assert_eq!(f.winner.as_deref(), Some("c1"));
    }
}
