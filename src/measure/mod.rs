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
//! of every trial, forms all `n·m` differences between a trial of A and a trial of B, and
//! reports `exp` of their median as the ratio (the Hodges–Lehmann estimate). Its interval is
//! a pair of those sorted differences chosen from the exact distribution of the Mann–Whitney
//! rank statistic ([`ranks`]), counted over all equally likely arrangements of the trials
//! (normal approximation beyond 400 pairs). A is `faster` or `slower` only when the interval
//! excludes 1 **and** the ratio is more than 5% from 1: a difference that is real but smaller
//! than that is not worth a configuration change. Either side with fewer than 3 trials, or
//! trial counts that cannot reach 95% at all (3 against 3 reach at most 90%), give
//! `too few trials` with the number that could decide (4 each). Runs that differ in more
//! than the setting (server version, dataset) are `not comparable`. The confidence (95%) and
//! the smallest effect (5%) are [`rules::Rules`].
//!
//! **A sweep** ([`finding`]). The setting with the best median is the reference; every other
//! setting is compared with it. The best and all settings not significantly and practically
//! worse form the tie group; pglab recommends its cheapest member (least memory, fewest
//! workers), since paying more buys nothing measurable. It names a winner only when the best
//! beats every other setting, and recommends nothing when all settings tie. With
//! `--repeat auto`, [`finding::needs_more`] says which settings need another trial until the
//! sweep is decided or the repeat limit is reached. Decided means `faster`/`slower`, or a tie
//! whose whole interval lies within the smallest effect: a tie with a wide interval (say
//! 0.85×..1.10×) still allows a difference worth acting on, so auto keeps measuring it.

pub mod finding;
pub mod fit;
pub mod interval;
pub mod projection;
pub mod ranks;
pub mod rules;
pub mod stats;
pub mod units;
pub mod verdict;
pub mod wording;
