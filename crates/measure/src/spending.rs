//! One error-spending scheme for every sequential decision: `--repeat auto` in a run
//! ([`super::family`]) and the tune's race of a setting's values (`tune::race`, its looks
//! planned in `tune::looks`).
//!
//! A procedure that looks at its verdicts as trials come in, and stops when one shows, gets
//! as many chances to be wrong as it takes looks. Both procedures therefore **plan** their looks
//! before the first, from nothing the trials show: the first look at [`FIRST_LOOK`] trials per
//! setting (or at the cap, when that is smaller), then one look per round up to the last round
//! the run may take (`--max-repeat`, or what the tune's budget affords), at most [`MAX_LOOKS`].
//! The error `α = 1 − confidence` is split evenly over the `L` planned looks and the `P` pairs
//! of settings (Bonferroni twice: a Pocock-like spending), so each pairwise interval at a look
//! is held to `1 − α/(P·L)` and the whole sequential procedure calls a false difference with
//! probability at most `α`, whichever look it stops at. Nothing is decided before the first
//! planned look: those rounds spend nothing.

/// Trials per setting at the first look, in a run with `--repeat auto` and in a tune's race.
pub const FIRST_LOOK: usize = 5;
/// At most this many looks are planned (a race of two values could afford hundreds).
pub const MAX_LOOKS: usize = 16;

/// The first look of a run that may take at most `last` trials per setting: [`FIRST_LOOK`],
/// or `last` when that is smaller (then the only look).
pub fn first_look(last: usize) -> usize {
    FIRST_LOOK.min(last.max(super::verdict::MIN_TRIALS))
}

/// The looks planned from the first at `first` trials per setting through `last`: one per
/// round, at least one, at most [`MAX_LOOKS`].
pub fn looks(first: usize, last: usize) -> usize {
    (last + 1).saturating_sub(first).clamp(1, MAX_LOOKS)
}

/// The confidence each pairwise interval is held to at a look: `1 − α/(pairs·looks)`.
pub fn pair_level(confidence: f64, pairs: usize, looks: usize) -> f64 {
    1.0 - (1.0 - confidence) / (pairs.max(1) * looks.max(1)) as f64
}

/// Pairs among `k` settings: `k(k − 1)/2`, at least 1.
pub fn pairs(k: usize) -> usize {
    (k * k.saturating_sub(1) / 2).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_is_fixed_before_any_trial() {
        // A run at most 10 each: looks at 5, 6, …, 10.
        assert_eq!((first_look(10), looks(first_look(10), 10)), (5, 6));
        // A cap below the first look: one look, at the cap.
        assert_eq!((first_look(4), looks(first_look(4), 4)), (4, 1));
        assert_eq!(first_look(1), 3);
        // Never more than MAX_LOOKS.
        assert_eq!(looks(5, 100), MAX_LOOKS);
        // Seven settings, 6 looks: each interval at 1 − 0.05/126.
        assert!((pair_level(0.95, pairs(7), 6) - (1.0 - 0.05 / 126.0)).abs() < 1e-15);
        assert_eq!(pairs(1), 1);
    }
}
