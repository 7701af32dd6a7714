//! Units, statistics and fits: the arithmetic every experiment and report shares.
//!
//! # How pglab decides
//!
//! Every verdict pglab prints comes from one statistics core, in the same words everywhere:
//! `faster`, `slower`, `no significant difference`, `too few trials`, `not comparable`. It
//! assumes nothing about how trial times are distributed (they are few, skewed, and now and
//! then disturbed by the host), uses no randomness, and gives the same answer for the same
//! trials every time.
//!
//! **One setting** ([`interval`]). pglab reports the median of the trials and a confidence
//! interval for it made of two of the trials themselves: sorted, `x(j)` and `x(n+1-j)` cover
//! the true median with probability `1 − 2·P(Bin(n, ½) < j)`, for any distribution. It takes
//! the narrowest such pair that is still 95% sure. Five trials cannot be 95% sure of anything
//! (the range `[min, max]` is 93.75% sure, three trials only 75%); the estimate then shows the
//! full range and the confidence actually reached.
//!
//! **Two settings** ([`verdict`]). The difference is a ratio, `a/b`. pglab takes the logarithm
//! of every trial and reports `exp` of the difference of the mean logarithms as the ratio (the
//! ratio of the geometric means). Its interval is Welch's t interval on the logarithms
//! ([`welch`]): times are positive and their noise multiplies, so their logarithms are close
//! to normal, and the interval reaches any level its spread allows.
//! A is `faster` or `slower` only when the interval
//! excludes 1 **and** the ratio is more than 5% from 1: a difference that is real but smaller
//! than that is not worth a configuration change. `no significant difference` means
//! equivalence was *shown*: the whole interval lies within 5% either way (a
//! two-one-sided-tests reading of the same interval). Anything else is `too few trials`, with
//! about how many trials per setting would decide at the spread seen so far ([`needed`], an
//! estimate). Runs that differ in more than the setting (server version, dataset) are `not
//! comparable`. The confidence (95%) and the smallest effect (5%) are [`rules::Rules`].
//!
//! **A sweep** ([`finding`], [`family`]). Every pair of settings gets its ratio interval at the
//! level that makes all of them hold together (Bonferroni over the `k(k−1)/2` pairs, and over
//! the looks of `--repeat auto`), because the best is picked from the same trials. A setting is
//! `slower` than the best, shown equivalent to it (within the smallest effect of every setting
//! that could be the best), or undecided. pglab recommends the cheapest setting shown as good
//! as the best (least memory, fewest workers) when no cheaper one is undecided; otherwise it
//! says which are undecided and about how many trials would settle them, and recommends
//! nothing. It names a winner only when every other setting is `slower`, and recommends
//! nothing when every setting is shown equivalent. [`finding::decide`] is the one entry point:
//! the findings, recommendations, `SET` lines, tables, TUI marks and JSON all read the
//! [`finding::Finding`] it returns. With `--repeat auto`, [`finding::needs_more`] says which
//! settings get another trial until the answer is decided or the repeat limit is reached.
//!
//! **Public API for experiments** (what a new experiment, such as `query`, uses):
//! [`finding::decide`] on a `Vec<`[`finding::SettingTrials`]`>` (label, cost rank, values and,
//! for a grid of swept dimensions, `coords`) with [`verdict::Better`] and [`rules::Rules`]
//! (`Rules::with_auto(max)` when trials were added by `--repeat auto`); render the
//! [`finding::Finding`] (`sentence_with`, `level_words`, `recommendation`, `matters`,
//! `blocking`, each setting's `vs_best`). [`finding::needs_more`] drives `--repeat auto`: the
//! caller runs every index it returns once more per round, stops at the cap, and runs at most
//! `max` rounds in all. [`verdict::compare`] is the two-setting case (a family of one pair);
//! [`verdict::compare_paired`] the same for rounds that ran both settings one after the other
//! (the tune), on the within-round ratios ([`paired`]).

// The module names the code uses for its own crate and its neighbours (`crate::sql::…`),
// kept from when the layers were modules of one crate.
#[allow(unused_imports)]
use crate as measure;

pub mod family;
pub mod finding;
pub mod fit;
pub mod interval;
pub mod needed;
pub mod normal;
pub mod paired;
pub mod projection;
pub mod rules;
pub mod short;
#[cfg(any(test, feature = "fixtures"))]
pub mod simulate;
pub mod spending;
pub mod stats;
pub mod units;
pub mod verdict;
pub mod welch;
pub mod welch_means;
pub mod wording;
