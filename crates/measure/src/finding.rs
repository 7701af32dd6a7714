//! A sweep: which of several settings is best, which are shown as good, and which one to use.
//! [`decide`] is the one entry point: every report, table, TUI mark, recommendation and `SET`
//! line reads the [`Finding`] it returns, so they cannot disagree.
//!
//! **The family.** All pairs of settings get the Hodges–Lehmann interval of their ratio at the
//! level that makes every interval of the sweep hold together ([`super::family`]: Bonferroni
//! over the `k(k−1)/2` pairs, and over the looks of `--repeat auto`). Every claim below is read
//! from those simultaneous intervals, so all of them hold together at the stated confidence
//! whichever setting the data picked as the best.
//!
//! **Each setting against the best** (the setting with the best median; its `vs_best`
//! comparison carries the interval and the decided verdict):
//!
//! - `slower`: shown worse than the best, by more than the smallest effect (as for two
//!   settings, [`super::verdict`]).
//! - `no significant difference`: **shown equivalent** — within the smallest effect of the
//!   best both ways, and no more than the smallest effect worse than *every other setting that
//!   could be the best* (every setting not itself shown worse than some other). Comparing with
//!   the best of these trials alone would not do: a setting 4% behind it may be 9% behind a
//!   setting whose interval still allows it to be the true best.
//! - `too few trials`: neither — with about how many trials each would decide
//!   ([`super::needed`], an estimate).
//!
//! The best itself is **shown as good as the best** when it is no more than the smallest effect
//! worse than every other candidate for the best (always, when all others are shown worse).
//!
//! **The answer.** The *recommendation* is the cheapest setting shown as good as the best
//! (least memory, fewest workers, smallest batch — the caller ranks the costs), provided no
//! cheaper setting is still undecided: a cheaper setting that might be as good blocks it, and
//! the finding then names the blocking settings and about how many trials would settle them
//! ([`Finding::blocking`], [`Finding::more_repeats_needed`]). A **winner** (`faster`) is named
//! when every other setting is `slower`. When every setting is shown equivalent nothing needs
//! choosing (`no significant difference`, no recommendation). Otherwise the verdict is `too few
//! trials`.
//!
//! **What made the difference.** With settings on a grid (`coords`: the position of each
//! dimension's value, e.g. `[combo, workers, mwm]`), [`Finding::matters`] lists the dimensions
//! whose value in the recommendation matters: those where some other value (the rest held at
//! the recommendation's) is not shown as good as the best. A dimension whose every value was
//! shown equivalent there is left out of the recommendation (no `SET` for it).
//!
//! **`--repeat auto`.** [`needs_more`] lists the settings that get another trial: every
//! setting not shown `slower`, until the answer is decided (a winner, a recommendation, or all
//! equivalent). Before the family's first look every setting runs (nothing can be decided yet).
//!
//! Only finite, positive trial values count (the comparison is a ratio). The finding reads
//! as one line through [`Finding::sentence`] (see [`super::wording`]).

use serde::{Deserialize, Serialize};

use super::family::Family;
use super::interval::{Estimate, estimate};
use super::rules::Rules;
use super::verdict::{Better, Comparison, MIN_TRIALS, Shift, Verdict, shift, usable};

/// The trials of one setting of a sweep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SettingTrials {
    pub label: String,
    /// Lower is cheaper: less memory, fewer workers, smaller batch.
    pub cost_rank: usize,
    pub values: Vec<f64>,
    /// Where the setting sits on a grid of swept dimensions: the index of its value in each
    /// (e.g. `[combo, workers, mwm]`). Empty: a one-dimensional sweep.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coords: Vec<usize>,
}

/// One setting's estimate and its comparison with the best.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingResult {
    pub label: String,
    pub cost_rank: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coords: Vec<usize>,
    /// None when the setting has no usable trial.
    pub estimate: Option<Estimate>,
    /// This setting (A) against the best (B), at the family's pairwise level, with the verdict
    /// decided for the whole sweep: `slower`, `no significant difference` (shown equivalent)
    /// or `too few trials`. None for the best itself and for a setting without usable trials.
    pub vs_best: Option<Comparison>,
}

/// What a sweep found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub better: Better,
    pub rules: Rules,
    /// How many pairs and looks the verdicts hold together over, and each interval's level.
    pub family: Family,
    /// In the order given.
    pub settings: Vec<SettingResult>,
    /// The setting with the best median (the first one on equal medians). Not a claim.
    pub best: Option<String>,
    /// Every setting shown as good as the best (within the smallest effect of every setting
    /// that could be the best), the best itself included when it is shown so; in the order
    /// given.
    pub equivalent: Vec<String>,
    /// The best, when every other setting is `slower`.
    pub winner: Option<String>,
    /// The cheapest setting shown as good as the best, when no cheaper one is undecided and
    /// not every setting is equivalent.
    pub recommendation: Option<String>,
    /// The dimensions of `coords` whose value in the recommendation was shown to matter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matters: Vec<usize>,
    /// `faster` (a winner), `no significant difference` (a recommendation, or all
    /// equivalent), `too few trials`; None when there is nothing to compare.
    pub verdict: Option<Verdict>,
    /// Settings whose standing against the best is `too few trials` (or that have no usable
    /// trial).
    pub undecided: Vec<String>,
    /// The undecided settings that stand between these trials and an answer: those cheaper
    /// than the cheapest setting shown as good as the best, or all undecided ones when no
    /// setting is.
    #[serde(default)]
    pub blocking: Vec<String>,
    /// When `blocking` is not empty: about how many trials per setting would settle it
    /// (estimated from the spread so far); None there when no count up to
    /// [`super::needed::LIMIT`] would.
    pub more_repeats_needed: Option<usize>,
    /// The set that may hold the best (Gupta's subset, read from the simultaneous intervals):
    /// every setting not shown worse than some other, in the order given. The true best is
    /// among them at the family's confidence.
    #[serde(default)]
    pub may_be_best: Vec<String>,
    /// The settings shown `slower` than the best (by more than the smallest effect).
    #[serde(default)]
    pub shown_worse: Vec<String>,
    /// When the run separates something (some setting shown worse) but decides no winner or
    /// recommendation: the cheapest setting that may be best whose interval against the best
    /// (its `vs_best`) is not too wide to say ([`TOO_WIDE`]), else the best. Not a claim that it
    /// is as good.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<String>,
}

/// Every pair's shift, the best and each setting's standing: what [`decide`] and
/// [`needs_more`] read.
struct Analysis {
    better: Better,
    rules: Rules,
    family: Family,
    estimates: Vec<Option<Estimate>>,
    best: Option<usize>,
    /// `raw[i][j]`: the same shift as measured (`ln(v_i/v_j)`), for the ratios shown.
    raw: Vec<Vec<Option<Shift>>>,
    /// Each setting's verdict against the best (None for the best and unusable ones).
    standing: Vec<Option<Verdict>>,
    /// Shown as good as the best (the best included when it is).
    as_good: Vec<bool>,
    /// Not shown worse than any other setting: may be the best.
    candidate: Vec<bool>,
}

fn analyse(settings: &[SettingTrials], better: Better, rules: &Rules) -> Analysis {
    let rules = rules.effective();
    let usable: Vec<Vec<f64>> = settings.iter().map(|s| usable(&s.values)).collect();
    let logs: Vec<Vec<f64>> = usable
        .iter()
        .map(|v| v.iter().map(|x| x.ln()).collect())
        .collect();
    let estimates: Vec<Option<Estimate>> = usable
        .iter()
        .map(|v| estimate(v, rules.confidence))
        .collect();
    let k = estimates.iter().filter(|e| e.is_some()).count();
    let family = Family::of(k, &rules);
    let n = settings.len();
    let mut raw = vec![vec![None; n]; n];
    let mut cost = vec![vec![None; n]; n];
    for i in 0..n {
        for j in (i + 1)..n {
            if logs[i].is_empty() || logs[j].is_empty() {
                continue;
            }
            let mut s = shift(&logs[i], &logs[j], family.pair_confidence);
            s.decisive &= family.may_decide(logs[i].len(), logs[j].len());
            raw[i][j] = Some(s);
            raw[j][i] = Some(s.flipped());
            cost[i][j] = Some(s.as_cost(better));
            cost[j][i] = Some(s.flipped().as_cost(better));
        }
    }
    let best = best_index(&estimates, better);
    let margin = rules.margin();
    let usable_at = |i: usize| estimates[i].is_some();
    // Settings that could still be the best: not shown worse than any other (a setting
    // without usable trials could be anything).
    let candidate: Vec<bool> = (0..n)
        .map(|i| !(0..n).any(|j| cost[i][j].is_some_and(|s| s.shown_worse())))
        .collect();
    // No more than the margin worse than every other candidate.
    let near_all_candidates = |i: usize| {
        (0..n)
            .filter(|&j| j != i && candidate[j])
            .all(|j| cost[i][j].is_some_and(|s| s.not_worse_by(margin)))
    };
    let mut standing = vec![None; n];
    let mut as_good = vec![false; n];
    if let Some(b) = best {
        // With one setting there is nothing it could be as good as.
        as_good[b] = n >= 2 && near_all_candidates(b);
        for i in (0..n).filter(|&i| i != b && usable_at(i)) {
            let vs = cost[i][b].expect("both usable");
            standing[i] = Some(if vs.slower_by_more_than(margin) {
                Verdict::Slower
            } else if vs.within(margin) && near_all_candidates(i) {
                as_good[i] = true;
                Verdict::NoSignificantDifference
            } else {
                Verdict::TooFewTrials
            });
        }
    }
    Analysis {
        better,
        rules,
        family,
        estimates,
        best,
        raw,
        standing,
        as_good,
        candidate,
    }
}

impl Analysis {
    /// Undecided: no usable trial, or `too few trials` against the best.
    fn undecided(&self, i: usize) -> bool {
        Some(i) != self.best && matches!(self.standing[i], None | Some(Verdict::TooFewTrials))
    }
}

/// Decide a sweep: estimates, every setting against the best, the winner or the cheapest
/// setting shown as good as the best, what made the difference, and what is still open.
pub fn decide(settings: &[SettingTrials], better: Better, rules: &Rules) -> Finding {
    let a = analyse(settings, better, rules);
    let n = settings.len();
    let label = |i: usize| settings[i].label.clone();
    let margin = a.rules.margin();
    let undecided: Vec<usize> = (0..n).filter(|&i| a.undecided(i)).collect();
    let cheapest_good = (0..n)
        .filter(|&i| a.as_good[i])
        .min_by_key(|&i| settings[i].cost_rank);
    let blocking: Vec<usize> = match cheapest_good {
        Some(g) => undecided
            .iter()
            .copied()
            .filter(|&i| settings[i].cost_rank < settings[g].cost_rank)
            .collect(),
        None => undecided.clone(),
    };
    let others: Vec<usize> = (0..n).filter(|&i| Some(i) != a.best).collect();
    let all_slower = !others.is_empty()
        && others
            .iter()
            .all(|&i| a.standing[i] == Some(Verdict::Slower));
    let all_equivalent = a.as_good.iter().all(|&g| g);
    let (verdict, winner, recommendation) = if n < 2 {
        (None, None, None)
    } else if all_slower {
        (Some(Verdict::Faster), a.best, a.best)
    } else if cheapest_good.is_some() && blocking.is_empty() {
        let rec = cheapest_good.filter(|_| !all_equivalent);
        (Some(Verdict::NoSignificantDifference), None, rec)
    } else {
        (Some(Verdict::TooFewTrials), None, None)
    };

    let results: Vec<SettingResult> = (0..n)
        .map(|i| SettingResult {
            label: label(i),
            cost_rank: settings[i].cost_rank,
            coords: settings[i].coords.clone(),
            estimate: a.estimates[i],
            vs_best: match (a.best, a.standing[i]) {
                (Some(b), Some(v)) if b != i => {
                    let s = a.raw[i][b].expect("both usable");
                    Some(Comparison::from_shift(
                        a.estimates[i].expect("usable"),
                        a.estimates[b].expect("usable"),
                        &s,
                        v,
                        a.family.pair_confidence,
                        margin,
                    ))
                }
                _ => None,
            },
        })
        .collect();
    let more_repeats_needed = trials_to_settle(&results, &blocking, &a.family);
    let set = SetOfBest::of(settings, &a, verdict);
    let matters = recommendation
        .map(|r| matters(settings, r, &a.as_good))
        .unwrap_or_default();
    Finding {
        better,
        rules: a.rules,
        family: a.family,
        settings: results,
        best: a.best.map(label),
        equivalent: (0..n).filter(|&i| a.as_good[i]).map(label).collect(),
        winner: winner.map(label),
        recommendation: recommendation.map(label),
        matters,
        verdict,
        undecided: undecided.iter().map(|&i| label(i)).collect(),
        blocking: blocking.iter().map(|&i| label(i)).collect(),
        more_repeats_needed,
        may_be_best: set.members.iter().map(|&i| label(i)).collect(),
        shown_worse: set.worse.iter().map(|&i| label(i)).collect(),
        pick: set.pick.map(label),
    }
}

/// The widest interval of a ratio that still says something: from its low end to its high
/// end at most this factor (e.g. ×0.5 to ×2). A wider one is "too wide to say".
pub const TOO_WIDE: f64 = 4.0;

/// The settings that may be best, those shown worse, and the cheapest of the first when the
/// run separated something but decided nothing else (multiple comparisons with the best read
/// from the all-pairs intervals: a setting leaves the set only when some other is shown better).
struct SetOfBest {
    members: Vec<usize>,
    worse: Vec<usize>,
    pick: Option<usize>,
}

impl SetOfBest {
    fn of(settings: &[SettingTrials], a: &Analysis, verdict: Option<Verdict>) -> SetOfBest {
        let n = settings.len();
        let members: Vec<usize> = (0..n)
            .filter(|&i| a.candidate[i] && a.estimates[i].is_some())
            .collect();
        let worse: Vec<usize> = (0..n)
            .filter(|&i| a.standing[i] == Some(Verdict::Slower))
            .collect();
        // The cheapest member whose interval against the best is narrow enough to say
        // something ([`TOO_WIDE`]); the best itself when no cheaper member qualifies. Not its
        // median against the best's: the best is picked from these trials, so its median is
        // flattered, and when two settings are alike a rule on that point flips between two
        // runs of the same command. Every member could be the best, so the cheapest is the
        // answer, said with its interval; advice never names what the run shows worse.
        let usable = |i: usize| {
            Some(i) == a.best
                || a.best.and_then(|b| a.raw[i][b]).is_some_and(|s| {
                    let c = s.as_cost(a.better);
                    (c.high - c.low) <= TOO_WIDE.ln()
                })
        };
        let pick = (verdict == Some(Verdict::TooFewTrials) && !worse.is_empty())
            .then(|| {
                members
                    .iter()
                    .copied()
                    .filter(|&i| usable(i))
                    .min_by_key(|&i| settings[i].cost_rank)
            })
            .flatten();
        SetOfBest {
            members,
            worse,
            pick,
        }
    }
}

/// About how many trials per setting would settle the settings `open` (indices): the most
/// any of them needs against the best (a setting without usable trials: the count that can
/// reach the level). None when `open` is empty or any of them needs more than the estimate's
/// limit.
fn trials_to_settle(results: &[SettingResult], open: &[usize], family: &Family) -> Option<usize> {
    if open.is_empty() {
        return None;
    }
    open.iter()
        .map(|&i| match &results[i].vs_best {
            Some(c) => c.trials_needed,
            None => Some(family.first_look.max(MIN_TRIALS)),
        })
        .collect::<Option<Vec<usize>>>()
        .and_then(|v| v.into_iter().max())
}

/// The dimensions whose value in `rec` matters: some other value there (the other
/// dimensions held at `rec`'s) was not shown as good as the best.
fn matters(settings: &[SettingTrials], rec: usize, as_good: &[bool]) -> Vec<usize> {
    let at = &settings[rec].coords;
    (0..at.len())
        .filter(|&d| {
            let siblings = (0..settings.len()).filter(|&i| {
                i != rec
                    && settings[i].coords.len() == at.len()
                    && settings[i].coords[d] != at[d]
                    && (0..at.len()).all(|e| e == d || settings[i].coords[e] == at[e])
            });
            siblings.into_iter().any(|i| !as_good[i])
        })
        .collect()
}

/// For `--repeat auto`: the indices of the settings that get another trial. Until the sweep's
/// answer is decided (a winner, a recommendation, or every setting equivalent): every setting
/// not shown `slower` than the best (a setting without usable trials included), and any setting
/// with fewer than 3 trials. Empty when decided; the caller also stops at its repeat cap and
/// after at most that many rounds, so that the looks stay within the family's count.
pub fn needs_more(settings: &[SettingTrials], better: Better, rules: &Rules) -> Vec<usize> {
    let finding = decide(settings, better, rules);
    let count = |i: usize| finding.settings[i].estimate.map_or(0, |e| e.n);
    let open = settings.len() >= 2
        && !matches!(
            finding.verdict,
            Some(Verdict::Faster | Verdict::NoSignificantDifference)
        );
    (0..settings.len())
        .filter(|&i| {
            let slower = finding.settings[i]
                .vs_best
                .as_ref()
                .is_some_and(|c| c.verdict == Verdict::Slower);
            count(i) < MIN_TRIALS || (open && !slower)
        })
        .collect()
}

fn best_index(estimates: &[Option<Estimate>], better: Better) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, e) in estimates.iter().enumerate() {
        let Some(e) = e else { continue };
        let improves = match best {
            None => true,
            Some((_, m)) => match better {
                Better::Lower => e.median < m,
                Better::Higher => e.median > m,
            },
        };
        if improves {
            best = Some((i, e.median));
        }
    }
    best.map(|(i, _)| i)
}

impl Finding {
    /// The result of the setting labelled `label`.
    pub fn setting(&self, label: &str) -> Option<&SettingResult> {
        self.settings.iter().find(|s| s.label == label)
    }

    /// About how many trials per setting would settle the settings labelled `open` (see
    /// [`Finding::more_repeats_needed`], which is this for [`Finding::blocking`]).
    pub(crate) fn trials_to_settle(&self, open: &[String]) -> Option<usize> {
        let idx: Vec<usize> = open
            .iter()
            .filter_map(|l| self.settings.iter().position(|s| &s.label == l))
            .collect();
        trials_to_settle(&self.settings, &idx, &self.family)
    }

    /// Whether `label` is shown as good as the best.
    pub fn is_equivalent(&self, label: &str) -> bool {
        self.equivalent.iter().any(|l| l == label)
    }
}

#[cfg(test)]
#[path = "finding_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "finding_set_tests.rs"]
mod set_tests;
