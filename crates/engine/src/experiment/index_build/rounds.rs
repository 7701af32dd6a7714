//! Which builds run, in what order: an optional warm-up, then rounds in which every setting
//! builds once (so drift over the run spreads over all settings instead of favouring one),
//! shuffled within the sweep when asked. With `repeat = auto`, after the first rounds the
//! statistics core says which settings of an order are still undecided
//! ([`crate::measure::finding::needs_more`]) and each further round builds just those once
//! more, until none is undecided or each has `max-repeat` builds.

use rand::SeedableRng;
use rand::seq::SliceRandom;

use super::report::{IndexBuildReport, IndexTrial};
use super::spec::{IndexBuildSpec, Order};
use super::summary::sweep_of;
use crate::experiment::lab::whatif::{WhatIf, distinct_blocks, round_blocks};
use crate::measure::finding::needs_more;
use crate::measure::units::Size;
use crate::measure::verdict::Better;

/// One build to run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Planned {
    /// 1-based repeat number of this setting; 0 for the warm-up.
    pub repeat: u32,
    pub warmup: bool,
    pub workers: u32,
    pub mwm: Size,
    /// The combination of swept server settings (`--set`).
    pub combo: usize,
}

/// The restart block of each settings combination of `spec` (see [`WhatIf::blocks`]).
pub(crate) fn blocks(spec: &IndexBuildSpec, whatif: &WhatIf) -> Vec<usize> {
    whatif.blocks(spec.set.combo_count())
}

/// Order the builds of one round (round `round`, 0-based) by restart block, the blocks in
/// the order [`round_blocks`] gives that round (stable: the interleaving inside a block
/// stays), with a warm-up at the start of each block when asked: a restart leaves the caches
/// cold. `last` is the block the sandbox is in (the previous round's last), updated.
fn by_block(
    spec: &IndexBuildSpec,
    timed: Vec<Planned>,
    blocks: &[usize],
    round: usize,
    last: &mut Option<usize>,
) -> Vec<Planned> {
    let block = |p: &Planned| blocks.get(p.combo).copied().unwrap_or(0);
    let mut out = Vec::new();
    for b in round_blocks(&distinct_blocks(blocks), round) {
        let segment: Vec<&Planned> = timed.iter().filter(|p| block(p) == b).collect();
        let Some(first) = segment.first() else {
            continue;
        };
        if spec.warmup && *last != Some(b) {
            out.push(Planned {
                repeat: 0,
                warmup: true,
                ..(*first).clone()
            });
        }
        *last = Some(b);
        out.extend(segment.into_iter().cloned());
    }
    out
}

/// True when the combinations fall into more than one restart block.
fn restarts(blocks: &[usize]) -> bool {
    blocks.iter().any(|&b| Some(&b) != blocks.first())
}

/// The first builds of one dataset: an optional warm-up, then `repeat.initial()` rounds of
/// every setting (the swept server settings included), shuffled when asked. When a swept
/// setting needs a restart, each round visits every restart block once (one restart each,
/// a warm-up after it when asked): a value's repeats are spread over the rounds, never run
/// all in one block.
pub(crate) fn plan(spec: &IndexBuildSpec, blocks: &[usize]) -> Vec<Planned> {
    let round_of = |repeat: u32| {
        let mut round = Vec::new();
        for combo in 0..spec.set.combo_count() {
            for &workers in &spec.workers {
                for m in &spec.mwm {
                    round.push(Planned {
                        repeat,
                        warmup: false,
                        workers,
                        mwm: m.clone(),
                        combo,
                    });
                }
            }
        }
        round
    };
    if restarts(blocks) {
        let mut out = Vec::new();
        let mut last = None;
        for repeat in 1..=spec.repeat.initial() {
            let mut round = round_of(repeat);
            if spec.shuffle {
                let mut rng =
                    rand_chacha::ChaCha8Rng::seed_from_u64(spec.seed ^ 0x5eed ^ repeat as u64);
                round.shuffle(&mut rng);
            }
            out.extend(by_block(
                spec,
                round,
                blocks,
                repeat as usize - 1,
                &mut last,
            ));
        }
        return out;
    }
    let mut timed: Vec<Planned> = (1..=spec.repeat.initial()).flat_map(round_of).collect();
    if spec.shuffle {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(spec.seed ^ 0x5eed);
        timed.shuffle(&mut rng);
    }
    by_block(spec, timed, blocks, 0, &mut None)
}

/// Builds per dataset at the most: the warm-ups (one, or one per block and round when a
/// setting needs a restart) and `repeat.most(max_repeat)` of each setting.
pub(crate) fn most_per_dataset(spec: &IndexBuildSpec, blocks: &[usize]) -> usize {
    let rounds = spec.repeat.most(spec.decision.max_repeat) as usize;
    let warmups = if spec.warmup && !spec.workers.is_empty() && !spec.mwm.is_empty() {
        if restarts(blocks) {
            distinct_blocks(blocks).len() * rounds
        } else {
            1
        }
    } else {
        0
    };
    warmups + spec.set.combo_count() * spec.workers.len() * spec.mwm.len() * rounds
}

/// With `repeat = auto`: the next round for `order` after `rounds_run` rounds — one more
/// build of every setting the core still needs, leaving out those at `max-repeat`. Empty when
/// the order is decided, the cap is reached, `max-repeat` rounds have run (so the verdicts'
/// looks stay within what they paid for, see [`crate::measure::family`]), or the repeat count
/// is fixed.
pub(crate) fn next_round(
    report: &IndexBuildReport,
    order: Order,
    blocks: &[usize],
    rounds_run: usize,
) -> Vec<Planned> {
    let spec = &report.params;
    if !spec.repeat.is_auto() {
        return Vec::new();
    }
    let most = spec.repeat.most(spec.decision.max_repeat) as usize;
    if rounds_run >= most {
        return Vec::new();
    }
    let (trials, refs) = sweep_of(report, order);
    let need = needs_more(
        &trials,
        Better::Lower,
        &spec.decision.rules_for(spec.repeat),
    );
    let mut round: Vec<Planned> = need
        .into_iter()
        .filter(|&i| trials[i].values.len() < most)
        .map(|i| Planned {
            repeat: trials[i].values.len() as u32 + 1,
            warmup: false,
            workers: refs[i].workers,
            mwm: Size {
                text: refs[i].maintenance_work_mem.clone(),
                bytes: refs[i].maintenance_work_mem_bytes,
            },
            combo: refs[i].combo,
        })
        .collect();
    if spec.shuffle {
        let done = trials.iter().map(|t| t.values.len() as u64).sum::<u64>();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(spec.seed ^ 0x5eed ^ done);
        round.shuffle(&mut rng);
    }
    // Later rounds take no warm-up of their own unless they cross a restart; they go on
    // through the blocks where the first rounds left off.
    if restarts(blocks) {
        let done: Vec<&IndexTrial> = report
            .trials
            .iter()
            .filter(|t| t.order == order && !t.warmup)
            .collect();
        let rounds_done = done.iter().map(|t| t.repeat).max().unwrap_or(0) as usize;
        let mut last = done.last().and_then(|t| blocks.get(t.combo).copied());
        by_block(spec, round, blocks, rounds_done, &mut last)
    } else {
        round
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::ExperimentSpec;

    /// A spec from these fields and the defaults of the rest.
    fn parse(p: &ParamText) -> IndexBuildSpec {
        match crate::experiment::ExperimentKind::IndexBuild.parse_spec(p) {
            Ok(ExperimentSpec::IndexBuild(s)) => s,
            other => panic!("{other:?}"),
        }
    }
    use crate::experiment::index_build::IndexTrial;
    use crate::experiment::lab::decision::Repeat;
    use crate::experiment::lab::field::ParamText;

    fn spec(pairs: &[(&str, &str)]) -> IndexBuildSpec {
        let p: ParamText = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse(&p)
    }

    fn trial(order: Order, mwm: &Size, repeat: u32, seconds: f64) -> IndexTrial {
        IndexTrial::example(order, 1000, mwm, (0, 0), repeat, seconds)
    }

    /// Run the rounds as the engine does, with `time(setting, repeat)` as the build.
    fn simulate(spec: &IndexBuildSpec, time: impl Fn(usize, u32) -> f64) -> IndexBuildReport {
        let mut r = IndexBuildReport::new(spec);
        let order = spec.orders[0];
        let index = |m: &Size| spec.mwm.iter().position(|x| x == m).unwrap();
        let mut round = plan(spec, &[0]);
        let mut rounds_run = spec.repeat.initial() as usize;
        while !round.is_empty() {
            for p in &round {
                r.trials.push(trial(
                    order,
                    &p.mwm,
                    p.repeat,
                    time(index(&p.mwm), p.repeat),
                ));
            }
            round = next_round(&r, order, &[0], rounds_run);
            rounds_run += 1;
        }
        r
    }

    #[test]
    fn rounds_interleave_every_setting() {
        let s = spec(&[("mwm", "1MB,16MB"), ("workers", "0,2"), ("repeat", "2")]);
        let p = plan(&s, &[0]);
        let key = |p: &Planned| (p.repeat, p.workers, p.mwm.text.clone());
        let keys: Vec<_> = p.iter().map(key).collect();
        assert_eq!(keys[..4].iter().filter(|k| k.0 == 1).count(), 4);
        assert_eq!(keys.len(), 8);
        assert_eq!(most_per_dataset(&s, &[0]), 8);
        let s = spec(&[("mwm", "1MB,16MB"), ("repeat", "auto"), ("max-repeat", "7")]);
        assert_eq!(s.repeat, Repeat::Auto);
        assert_eq!(plan(&s, &[0]).len(), 6);
        assert_eq!(most_per_dataset(&s, &[0]), 14);
    }

    #[test]
    fn auto_adds_rounds_until_decided() {
        // 1MB takes twice as long: decided at the first look, 5 each (two settings at most
        // 10 each: 6 looks, each pays 0.05/6, which 5 against 5 reach first; see
        // measure::family).
        let s = spec(&[("mwm", "1MB,64MB"), ("repeat", "auto"), ("order", "random")]);
        let r = simulate(
            &s,
            |i, rep| if i == 0 { 2.0 } else { 1.0 } + rep as f64 * 0.001,
        );
        assert_eq!(r.trials.iter().filter(|t| t.repeat == 5).count(), 2);
        assert_eq!(r.trials.len(), 10);
        assert!(next_round(&r, Order::Random, &[0], 5).is_empty());
        // However undecided, no more than max-repeat rounds.
        assert!(next_round(&r, Order::Random, &[0], 10).is_empty());
    }

    #[test]
    fn auto_stops_at_max_repeat() {
        // A strict confidence (99.5%) needs 6 per setting; the cap of 5 stops it first.
        let s = spec(&[
            ("mwm", "1MB,64MB,256MB"),
            ("repeat", "auto"),
            ("max-repeat", "5"),
            ("confidence", "99.5%"),
            ("order", "random"),
        ]);
        let r = simulate(&s, |i, rep| 1.0 + i as f64 * 0.01 + rep as f64 * 0.003);
        assert_eq!(r.trials.len(), 15);
        assert!(r.trials.iter().all(|t| t.repeat <= 5));
        // A fixed count never adds rounds.
        let s = spec(&[("mwm", "1MB,64MB"), ("repeat", "3"), ("order", "random")]);
        let r = simulate(&s, |_, _| 1.0);
        assert_eq!(r.trials.len(), 6);
    }

    #[test]
    fn settings_interleave_unless_a_restart_groups_them() {
        let s = spec(&[
            ("mwm", "1MB,16MB"),
            ("repeat", "2"),
            ("set", "synchronous_commit=on,off"),
            ("warmup", "on"),
        ]);
        // Session settings: every round holds both combinations, one warm-up in all.
        let p = plan(&s, &[0, 0]);
        assert_eq!(p.len(), 9);
        assert!(p[0].warmup);
        let combos: Vec<usize> = p[1..].iter().map(|p| p.combo).collect();
        assert_eq!(combos, [0, 0, 1, 1, 0, 0, 1, 1]);
        assert_eq!(most_per_dataset(&s, &[0, 0]), 9);
        // A restart per combination: the combinations alternate round by round (ABAB), never
        // all repeats of one in one block, a warm-up after each restart.
        let p = plan(&s, &[0, 1]);
        let seq: Vec<(usize, bool)> = p.iter().map(|p| (p.combo, p.warmup)).collect();
        assert_eq!(
            seq,
            [
                (0, true),
                (0, false),
                (0, false),
                (1, true),
                (1, false),
                (1, false),
                (0, true),
                (0, false),
                (0, false),
                (1, true),
                (1, false),
                (1, false)
            ]
        );
        assert_eq!(most_per_dataset(&s, &[0, 1]), 12);
        // Each repeat of a setting sits in a round of its own, between the other value's.
        let reps: Vec<(usize, u32)> = p
            .iter()
            .filter(|p| !p.warmup && p.mwm.text == "1MB")
            .map(|p| (p.combo, p.repeat))
            .collect();
        assert_eq!(reps, [(0, 1), (1, 1), (0, 2), (1, 2)]);
    }

    #[test]
    fn restart_values_never_run_all_their_repeats_in_one_block() {
        for (blocks, repeat) in [
            (vec![0, 1], "2"),
            (vec![0, 1], "5"),
            (vec![0, 1, 2], "4"),
            (vec![0, 0, 2, 2], "3"),
        ] {
            // A setting CREATE INDEX reads (work_mem is refused: it sorts in mwm); `blocks`
            // says which values restart.
            let values = &["off", "local", "remote_write", "on"][..blocks.len()];
            let set = format!("synchronous_commit={}", values.join(","));
            let s = spec(&[
                ("mwm", "1MB,16MB"),
                ("repeat", repeat),
                ("set", &set),
                ("warmup", "on"),
            ]);
            let p = plan(&s, &blocks);
            // Runs of one block between restarts.
            let mut runs: Vec<(usize, Vec<u32>)> = Vec::new();
            for t in p.iter().filter(|t| !t.warmup) {
                let b = blocks[t.combo];
                match runs.last_mut() {
                    Some((lb, reps)) if *lb == b => reps.push(t.repeat),
                    _ => runs.push((b, vec![t.repeat])),
                }
            }
            for (b, reps) in &runs {
                let mut r = reps.clone();
                r.sort_unstable();
                r.dedup();
                assert_eq!(r.len(), 1, "{blocks:?}: block {b} holds repeats {reps:?}");
            }
            // A warm-up after every restart, none in between.
            let warmups = p.iter().filter(|t| t.warmup).count();
            assert_eq!(warmups, runs.len(), "{blocks:?}");
            assert_eq!(p.len(), most_per_dataset(&s, &blocks), "{blocks:?}");
        }
    }
}
