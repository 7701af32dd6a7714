//! The growth decision's time claims, one timing (writing or reading one version) at a time:
//! the statistics core's verdict at the largest step both designs measured, weighed with
//! whether the projections to the target are told apart by their intervals, and the sentence
//! that says which carried the answer.

use crate::experiment::growth::{GrowthReport, GrowthStep, Timed};
use crate::measure::fit::{Projected, Shape, extrapolated, reach_words};
use crate::measure::units::format_count;
use crate::measure::verdict::Verdict;

use super::growth::time;

/// The core's verdict for ranges at the largest step both designs measured, for a timing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Measured {
    pub verdict: Verdict,
    pub ratio: f64,
    pub versions: u64,
    pub trials_needed: Option<usize>,
}

/// The core's last word on `timed`: its comparison at the largest step, first combination.
pub(super) fn measured(b: &GrowthReport, timed: Timed) -> Option<Measured> {
    b.summary
        .comparisons
        .iter()
        .filter(|c| c.timed == timed && c.combo == 0)
        .max_by_key(|c| c.versions)
        .map(|c| Measured {
            verdict: c.verdict,
            ratio: c.ratio,
            versions: c.versions,
            trials_needed: c.trials_needed,
        })
}

/// The projections of ranges and snapshot at the target, as their intervals tell them apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Apart {
    /// Ranges' whole interval lies above snapshot's.
    RangesSlower,
    /// Ranges' whole interval lies below snapshot's.
    RangesFaster,
    /// The intervals overlap: the projections cannot tell the designs apart.
    Overlap,
}

pub(crate) fn apart(ranges: &Projected, snapshot: &Projected) -> Apart {
    if ranges.low > snapshot.high {
        Apart::RangesSlower
    } else if ranges.high < snapshot.low {
        Apart::RangesFaster
    } else {
        Apart::Overlap
    }
}

/// What one timing says about ranges at the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtTarget {
    Faster,
    Slower,
    /// Shown equivalent: the core's `no significant difference`, the projections not apart.
    Equivalent,
    /// Undecided: too few trials, nothing compared, or measurement and projection disagree.
    Open,
}

/// The answer for one timing and whether it rests on a projection alone. The measured verdict
/// comes from the core unchanged; a projection counts only where its interval separates the
/// designs, and where it contradicts the measurement the answer is open.
pub(crate) fn weigh(m: Option<&Measured>, p: Option<Apart>) -> (AtTarget, bool) {
    let v = m.map(|m| m.verdict);
    match (v, p) {
        (Some(Verdict::Faster), Some(Apart::RangesSlower))
        | (Some(Verdict::Slower), Some(Apart::RangesFaster)) => (AtTarget::Open, false),
        (Some(Verdict::Slower), _) => (AtTarget::Slower, false),
        (Some(Verdict::Faster), _) => (AtTarget::Faster, false),
        (_, Some(Apart::RangesSlower)) => (AtTarget::Slower, true),
        (_, Some(Apart::RangesFaster)) => (AtTarget::Faster, true),
        (Some(Verdict::NoSignificantDifference), _) => (AtTarget::Equivalent, false),
        _ => (AtTarget::Open, false),
    }
}

/// One timing: its answer, whether it rests on a projection, whether more repeats (rather
/// than larger steps) would settle it, and the sentence.
pub(super) struct Timing {
    pub(super) timed: Timed,
    pub(super) at: AtTarget,
    pub(super) on_projection: bool,
    pub(super) repeats_decide: bool,
    pub(super) sentence: String,
}

/// What the evidence says of `timed` for ranges against snapshot (`target`: their steps at
/// the target), weighed by [`weigh`], a flat ranges read carried far kept open as a floor.
pub(super) fn timing(b: &GrowthReport, timed: Timed, target: (&GrowthStep, &GrowthStep)) -> Timing {
    let (s, r) = target;
    let what = match timed {
        Timed::Write => "writing one version",
        _ => "reading one version",
    };
    let m = measured(b, timed);
    let pick = |st: &GrowthStep| {
        b.projection(st).and_then(|p| match timed {
            Timed::Write => p.write,
            _ => p.read,
        })
    };
    let projections = pick(r).zip(pick(s));
    let p = projections.map(|(pr, ps)| apart(&pr, &ps));
    let (mut at, on_projection) = weigh(m.as_ref(), p);
    // Ranges reads scan every range added before the version read: growth no measured step
    // could show. Carried flat far past the measurements, their projection is a floor, and a
    // floor cannot show that ranges keeps up.
    let floor = timed == Timed::Read
        && projections.is_some_and(|(pr, _)| pr.shape == Shape::Flat)
        && r.reach.is_some_and(extrapolated)
        && at != AtTarget::Slower;
    if floor {
        at = AtTarget::Open;
    }
    let mut sentence = format!("{what}: ");
    sentence.push_str(&measured_words(m));
    if let (Some(projections), Some(p)) = (projections, p) {
        sentence.push_str(&projected_words(m, p, projections, (s, r)));
    }
    if floor {
        sentence.push_str(
            " — but ranges' reads scan every range added before the version read, which steps this small cannot show, so its flat projection is a floor, not an estimate",
        );
    }
    let repeats_decide = at == AtTarget::Open
        && !floor
        && matches!(m, Some(m) if m.verdict == Verdict::TooFewTrials)
        && !matches!(p, Some(Apart::RangesFaster | Apart::RangesSlower));
    Timing {
        timed,
        at,
        on_projection,
        repeats_decide,
        sentence,
    }
}

/// What the core measured for ranges at the largest step both designs ran.
fn measured_words(m: Option<Measured>) -> String {
    match m {
        Some(m) => {
            let step = format_count(m.versions as f64);
            match m.verdict {
                Verdict::Faster | Verdict::Slower => format!(
                    "ranges {} at {step} versions ({:.2}× snapshot's time, measured)",
                    m.verdict, m.ratio
                ),
                Verdict::NoSignificantDifference => {
                    format!("no significant difference at {step} versions (measured)")
                }
                v => format!(
                    "{v} at {step} versions{}",
                    m.trials_needed
                        .map(|n| format!(" ({n} each would decide)"))
                        .unwrap_or_default()
                ),
            }
        }
        None => "not measured on both designs".into(),
    }
}

/// What the projections of ranges (`pr`) and snapshot (`ps`) say at the target, and whether
/// that goes with the measurement ("and") or against it ("but").
fn projected_words(
    m: Option<Measured>,
    p: Apart,
    (pr, ps): (Projected, Projected),
    (s, r): (&GrowthStep, &GrowthStep),
) -> String {
    let words = reach_words(s.reach.unwrap_or(f64::INFINITY).max(r.reach.unwrap_or(0.0)));
    let both = format!(
        "ranges {} against snapshot {}, {words}",
        pr.show(&time),
        ps.show(&time)
    );
    let target = format_count(s.versions as f64);
    match p {
        Apart::RangesSlower | Apart::RangesFaster => format!(
            " {} projected {}× {} at {target} versions ({both})",
            match (m.map(|m| m.verdict), p) {
                (Some(Verdict::Faster), Apart::RangesFaster)
                | (Some(Verdict::Slower), Apart::RangesSlower) => "and",
                _ => "but",
            },
            times_figure(if p == Apart::RangesSlower {
                pr.value / ps.value.max(f64::MIN_POSITIVE)
            } else {
                ps.value / pr.value.max(f64::MIN_POSITIVE)
            }),
            if p == Apart::RangesSlower {
                "slower"
            } else {
                "faster"
            }
        ),
        Apart::Overlap => {
            format!(", with projections to {target} versions that overlap ({both})")
        }
    }
}

/// A ratio as a factor: "1.8", "15", "2011".
fn times_figure(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}
