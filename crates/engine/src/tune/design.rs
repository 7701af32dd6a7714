//! A search sized to the budget. Once the plans are read (one pass at the starting
//! configuration), the pace says how many configurations the budget left holds, and the tune
//! picks the design that fits, and says so before its next pass: the screening and then races
//! when the budget holds both; the races alone, the plan-guided shortlist in order, when it
//! holds them but not the screening; the plan-guided set confirmed as a whole against the
//! start and pgtune's set when it holds the confirmation but no race; and when it holds not
//! even the confirmation, nothing more is run and the sentence says what budget would do.

use super::looks::FIRST_LOOK;
use super::screen::SCREEN_ROUNDS;

/// The design a budget holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Design {
    /// Screen every setting, race those that move.
    ScreenThenRace,
    /// Race the shortlist in the plans' order, no screening.
    Race,
    /// Confirm the plans' values as one set (no race fits).
    PlanSet,
    /// Nothing useful fits.
    TooSmall,
}

/// What the design is chosen from, in configurations (one pass of the workload each).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sizing {
    /// Configurations the budget left holds at the pace measured.
    pub holds: usize,
    /// The confirmation's: its sides × its fewest rounds.
    pub confirm: usize,
    /// Each setting of the shortlist: its number of values (in plan order).
    pub values: Vec<usize>,
    /// The plans sized values to try as a set (a plan-guided set exists).
    pub plan_set: bool,
}

impl Sizing {
    /// A race of `values` values decides nothing before its first look.
    fn race(values: usize) -> usize {
        values * FIRST_LOOK
    }

    /// The screening of the shortlist: groups of two, four configurations each, a few rounds.
    fn screening(&self) -> usize {
        self.values.len().div_ceil(2) * 4 * SCREEN_ROUNDS
    }

    /// The design that fits, and the configurations it plans.
    pub(crate) fn choose(&self) -> (Design, usize) {
        let races: usize = self.values.iter().map(|v| Sizing::race(*v)).sum();
        let first = self.values.first().map_or(0, |v| Sizing::race(*v));
        let left = self.holds.saturating_sub(self.confirm);
        if self.holds < self.confirm || (self.values.is_empty() && !self.plan_set) {
            return (Design::TooSmall, 0);
        }
        // Two settings already screen as one group (their interaction measured), as a tune
        // without plans does: only the budget takes the screening away.
        if self.values.len() >= 2 && left >= self.screening() + races / 2 {
            return (Design::ScreenThenRace, self.screening() + races / 2);
        }
        if first > 0 && left >= first {
            return (Design::Race, races.min(left));
        }
        if self.plan_set {
            return (Design::PlanSet, 0);
        }
        (Design::TooSmall, 0)
    }

    /// The configurations a useful tune needs: the confirmation and the first race (or, with
    /// a plan-guided set, the confirmation alone).
    pub(crate) fn useful(&self) -> usize {
        let first = self.values.first().map_or(2, |v| Sizing::race(*v));
        self.confirm + if self.plan_set { 0 } else { first }
    }

    /// The sentence said before the next pass.
    pub(crate) fn sentence(&self, per_config_s: f64, spent_s: f64) -> String {
        let fmt = crate::measure::units::format_seconds;
        let (design, planned) = self.choose();
        let head = format!(
            "the budget left holds about {} configurations at the measured pace ({} a configuration on a warm cache); the confirmation needs {}",
            self.holds,
            fmt(per_config_s),
            self.confirm
        );
        let tail = match design {
            Design::ScreenThenRace => format!(
                "screening the {} settings left, then racing those that move ({planned} configurations planned)",
                self.values.len()
            ),
            Design::Race => format!(
                "no screening (it would need {} configurations): the {} setting{} of the plans' shortlist raced in order ({planned} configurations planned)",
                self.screening(),
                self.values.len(),
                if self.values.len() == 1 { "" } else { "s" }
            ),
            Design::PlanSet => format!(
                "no race fits (the first would need {}): the values the plans sized are confirmed as one set against the start and pgtune's",
                self.values.first().map_or(0, |v| Sizing::race(*v))
            ),
            Design::TooSmall => {
                let need = spent_s + self.useful() as f64 * per_config_s;
                format!(
                    "too small for anything useful: nothing more is run; a budget of about {} would hold the confirmation{}",
                    fmt(need),
                    if self.plan_set { "" } else { " and one race" }
                )
            }
        };
        format!("{head}: {tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizing(holds: usize, values: Vec<usize>, plan_set: bool) -> Sizing {
        Sizing {
            holds,
            confirm: 12,
            values,
            plan_set,
        }
    }

    #[test]
    fn the_design_shrinks_with_the_budget() {
        assert_eq!(
            sizing(200, vec![2, 2, 3, 2], true).choose().0,
            Design::ScreenThenRace
        );
        assert_eq!(sizing(40, vec![2, 2, 3, 2], true).choose().0, Design::Race);
        assert_eq!(sizing(40, vec![2], true).choose().0, Design::Race);
        // Two settings are screened (one group) when the budget holds it, raced when not.
        assert_eq!(
            sizing(60, vec![2, 2], true).choose().0,
            Design::ScreenThenRace
        );
        assert_eq!(sizing(30, vec![2, 2], true).choose().0, Design::Race);
        assert_eq!(sizing(15, vec![2, 2], true).choose().0, Design::PlanSet);
        assert_eq!(sizing(15, vec![2, 2], false).choose().0, Design::TooSmall);
        assert_eq!(sizing(8, vec![2], true).choose().0, Design::TooSmall);
        let s = sizing(8, vec![2], false).sentence(30.0, 100.0);
        // 12 + 10 configurations of 30 s after the 100 s spent.
        assert!(s.contains("too small") && s.contains("12m 40s"), "{s}");
    }
}
