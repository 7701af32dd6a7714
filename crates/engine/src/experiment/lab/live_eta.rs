//! How long a running run still has, from what it measured so far: the TUI's and the headless
//! progress line's `run eta`.
//!
//! A trial's duration is measured start to start (the work between trials, a CHECKPOINT or a
//! restart, recurs with every trial, so it belongs to it). A trial still to come is expected to
//! take:
//!
//! 1. with the kind's trial weights (growth's steps fill ever more rows): its weight at the
//!    seconds per weight the finished trials ran at, plus the seconds it spends beyond its
//!    weight (growth's standby fault holds each filled step up for its `for`, however few rows
//!    the step adds), which are taken out of the finished trials' time before the pace is
//!    read — else a fault at the first, smallest step would make the pace far too high;
//! 2. else, once a label came round again (the first round is complete: the rounds repeat the
//!    same combinations, in a rotating order), each label's trials still to come at the mean
//!    of its finished ones;
//! 3. else the mean of every finished trial; before any has finished, the running trial's own
//!    projection from its measured fraction.
//!
//! A label's first trial is left out of its mean once others finished (it carries the
//! warm-ups). The running trial has what its label's trials took, less what it has run; a label not seen
//! finished yet goes by its measured fraction. So an interleaved run of a fast and a slow
//! setting is right once each has run once, and a run corrects itself trial by trial.

use std::time::Instant;

use super::event::TrialRef;

/// Less done than this share of the weighted work, and the pace says too little.
const MIN_DONE_SHARE: f64 = 0.01;
/// A running trial's fraction is projected only past this much of it and this long.
const MIN_FRACTION: f64 = 0.02;
const MIN_TRIAL_SECONDS: f64 = 0.3;

#[derive(Debug, Clone)]
struct Started {
    index: usize,
    label: String,
    at: Instant,
}

/// A trial's combination: its label without the round the kinds add (`copy · 100 · #3`).
fn combination(label: &str) -> &str {
    match label.rsplit_once(" · #") {
        Some((head, round)) if !round.is_empty() && round.bytes().all(|b| b.is_ascii_digit()) => {
            head
        }
        _ => label,
    }
}

/// The live estimate of a run's remaining seconds.
#[derive(Debug, Clone, Default)]
pub struct LiveEta {
    /// Planned trials (may grow: `repeat auto`).
    total: usize,
    /// One per planned trial, or empty: no prior on how trials differ.
    weights: Vec<f64>,
    /// Seconds each planned trial spends beyond its weight's pace, or empty: none.
    fixed: Vec<f64>,
    /// Trials seen starting, in order.
    started: Vec<Started>,
    /// The last trial seen is finished (a result came, or the run left it).
    last_done: bool,
    /// The running trial's measured fraction and when it was read.
    fraction: Option<f64>,
}

impl LiveEta {
    pub(crate) fn new(total: usize, weights: Vec<f64>) -> LiveEta {
        LiveEta {
            total,
            weights,
            ..LiveEta::default()
        }
    }

    /// The estimate for a run of `spec` planning `total` trials: its trial weights and the
    /// seconds its trials spend beyond them.
    pub fn of(total: usize, spec: &super::spec::ExperimentSpec) -> LiveEta {
        LiveEta {
            fixed: spec.trial_fixed_seconds(),
            ..LiveEta::new(total, spec.trial_weights())
        }
    }

    /// The run said how many trials it plans.
    pub fn set_total(&mut self, total: usize) {
        self.total = total;
    }

    /// A phase or progress of `trial` (None: between trials).
    pub fn trial(&mut self, trial: Option<&TrialRef>, fraction: Option<f64>, now: Instant) {
        let Some(t) = trial else {
            self.done();
            return;
        };
        self.total = self.total.max(t.total);
        let new = self.started.last().is_none_or(|s| s.index != t.index);
        if new {
            self.started.push(Started {
                index: t.index,
                label: combination(&t.label).to_string(),
                at: now,
            });
            self.last_done = false;
            self.fraction = None;
        }
        if let Some(f) = fraction {
            self.fraction = Some(f.clamp(0.0, 1.0));
        }
    }

    /// The running trial gave its result.
    pub fn done(&mut self) {
        if !self.started.is_empty() {
            self.last_done = true;
            self.fraction = None;
        }
    }

    /// Seconds the run still has, None while nothing measured says.
    pub fn remaining(&self, now: Instant) -> Option<f64> {
        let last = self.started.last()?;
        let finished = self.finished(now);
        let ran = now.saturating_duration_since(last.at).as_secs_f64();
        // Before any trial finished, the running one's projection stands for every trial.
        let projected = self.projected(ran);
        let mut left = 0.0;
        if !self.last_done {
            left += self.running_left(last, ran, &finished, projected)?;
        }
        Some(left + self.future(last.index, &finished, projected)?)
    }

    /// Finished trials: (index, label, seconds start to start, or to now for the last done).
    fn finished(&self, now: Instant) -> Vec<(usize, &str, f64)> {
        let mut out: Vec<(usize, &str, f64)> = self
            .started
            .windows(2)
            .map(|w| {
                let secs = w[1].at.saturating_duration_since(w[0].at).as_secs_f64();
                (w[0].index, w[0].label.as_str(), secs)
            })
            .collect();
        if self.last_done
            && let Some(s) = self.started.last()
        {
            let secs = now.saturating_duration_since(s.at).as_secs_f64();
            out.push((s.index, s.label.as_str(), secs));
        }
        out
    }

    /// What the running trial still has.
    fn running_left(
        &self,
        t: &Started,
        ran: f64,
        finished: &[(usize, &str, f64)],
        projected: Option<f64>,
    ) -> Option<f64> {
        let by_label = self.label_mean(&t.label, finished);
        match (by_label, projected) {
            (Some(m), _) if !self.weighted() => Some((m - ran).max(0.0)),
            (_, Some(p)) => Some((p - ran).max(0.0)),
            _ => {
                let secs: Vec<f64> = finished.iter().map(|f| f.2).collect();
                let mean = secs.iter().sum::<f64>() / secs.len().max(1) as f64;
                let by_weight = self.weighted().then(|| self.by_weight(t.index, finished));
                let e = by_weight.unwrap_or((!secs.is_empty()).then_some(mean))?;
                Some((e - ran).max(0.0))
            }
        }
    }

    /// The running trial's whole time, projected from its measured fraction.
    fn projected(&self, ran: f64) -> Option<f64> {
        if self.last_done {
            return None;
        }
        self.fraction
            .filter(|f| *f >= MIN_FRACTION && ran >= MIN_TRIAL_SECONDS)
            .map(|f| ran / f)
    }

    fn weighted(&self) -> bool {
        self.total > 0 && self.weights.len() == self.total
    }

    /// What the trials after `last` (not started) are expected to take together.
    fn future(
        &self,
        last: usize,
        finished: &[(usize, &str, f64)],
        projected: Option<f64>,
    ) -> Option<f64> {
        let count = self.total.saturating_sub(last);
        if count == 0 {
            return Some(0.0);
        }
        if self.weighted() {
            return (last + 1..=self.total)
                .map(|i| self.by_weight(i, finished))
                .sum();
        }
        if let Some(s) = self.by_rounds(count, finished) {
            return Some(s);
        }
        let secs: Vec<f64> = finished.iter().map(|f| f.2).collect();
        let mean = if secs.is_empty() {
            projected?
        } else {
            secs.iter().sum::<f64>() / secs.len() as f64
        };
        Some(mean * count as f64)
    }

    /// Once a label came round again the first round is complete: every combination ran
    /// once, and each runs as often as the others. The `count` trials still to come are
    /// each label's share not yet started, at its own mean (scaled to `count` when
    /// `repeat auto` made the run uneven).
    fn by_rounds(&self, count: usize, finished: &[(usize, &str, f64)]) -> Option<f64> {
        let mut labels: Vec<&str> = Vec::new();
        let mut seen: Vec<usize> = Vec::new();
        for s in &self.started {
            match labels.iter().position(|l| *l == s.label) {
                Some(i) => seen[i] += 1,
                None => {
                    labels.push(&s.label);
                    seen.push(1);
                }
            }
        }
        if seen.iter().all(|n| *n < 2) {
            return None;
        }
        let per = self.total.div_ceil(labels.len());
        let mut sum = 0.0;
        let mut n = 0usize;
        for (l, k) in labels.iter().zip(&seen) {
            let rest = per.saturating_sub(*k);
            sum += rest as f64 * self.label_mean(l, finished)?;
            n += rest;
        }
        Some(if n == 0 {
            0.0
        } else {
            sum * count as f64 / n as f64
        })
    }

    /// Weight × the seconds per weight of the finished trials (their fixed seconds taken
    /// out), plus the trial's own fixed seconds.
    fn by_weight(&self, index: usize, finished: &[(usize, &str, f64)]) -> Option<f64> {
        let w = |i: usize| self.weights.get(i.checked_sub(1)?).copied();
        let fixed = |i: usize| {
            i.checked_sub(1)
                .and_then(|i| self.fixed.get(i))
                .copied()
                .unwrap_or(0.0)
        };
        let all: f64 = self.weights.iter().sum();
        let done_w: f64 = finished.iter().filter_map(|f| w(f.0)).sum();
        let done_s: f64 = finished.iter().map(|f| (f.2 - fixed(f.0)).max(0.0)).sum();
        if all <= 0.0 || done_w / all < MIN_DONE_SHARE || done_w <= 0.0 {
            return None;
        }
        Some(w(index)? * done_s / done_w + fixed(index))
    }

    /// The mean of a label's finished trials, its first left out once there are others: the
    /// first carries the run's warm-ups, its first connection, a dataset's first reads.
    fn label_mean(&self, label: &str, finished: &[(usize, &str, f64)]) -> Option<f64> {
        let secs: Vec<f64> = finished
            .iter()
            .filter(|f| f.1 == label)
            .map(|f| f.2)
            .collect();
        let later = if secs.len() >= 2 {
            &secs[1..]
        } else {
            &secs[..]
        };
        (!later.is_empty()).then(|| later.iter().sum::<f64>() / later.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(t0: Instant, s: f64) -> Instant {
        t0 + Duration::from_secs_f64(s)
    }

    fn trial(index: usize, total: usize, label: &str) -> TrialRef {
        TrialRef {
            index,
            total,
            label: label.into(),
        }
    }

    /// Play trials of `secs` (label, seconds) one after the other from t = `setup`, with
    /// `gap` seconds between them and progress at each tenth; at every reading from the
    /// second round on, the predicted end is within `tolerance` of the real one.
    fn check(plan: &[(&str, f64)], weights: Vec<f64>, setup: f64, tolerance: f64) {
        let t0 = Instant::now();
        let total = plan.len();
        let gap = 0.2;
        let end = setup + plan.iter().map(|p| p.1 + gap).sum::<f64>();
        let mut eta = LiveEta::new(total, weights);
        let mut t = setup;
        let round = plan
            .iter()
            .skip(1)
            .position(|p| p.0 == plan[0].0)
            .map_or(total, |i| i + 1);
        for (i, (label, secs)) in plan.iter().enumerate() {
            for tenth in 0..10 {
                let now = at(t0, t + secs * tenth as f64 / 10.0);
                let r = trial(i + 1, total, label);
                eta.trial(Some(&r), Some(tenth as f64 / 10.0), now);
                if i >= round {
                    let left = eta.remaining(now).expect("an estimate once a round ran");
                    let real = end - (t + secs * tenth as f64 / 10.0);
                    let predicted_end = end - real + left;
                    let miss = (predicted_end - end).abs() / end;
                    assert!(
                        miss <= tolerance,
                        "trial {} at {tenth}/10: {left:.1} s left, really {real:.1} s",
                        i + 1
                    );
                }
            }
            t += secs;
            eta.done();
            t += gap;
        }
    }

    #[test]
    fn a_fast_and_a_slow_setting_in_rotating_rounds_are_timed_each_at_its_own_pace() {
        // copy 1 s against insert-tx 9 s, the rounds rotating: A B, B A, A B, …
        let (a, b) = (("copy", 1.0), ("insert-tx", 9.0));
        let plan = [a, b, b, a, a, b, b, a];
        check(&plan, Vec::new(), 1.0, 0.10);
    }

    #[test]
    fn the_round_in_a_label_is_not_part_of_its_combination() {
        assert_eq!(combination("q1 · work_mem=1MB · #3"), "q1 · work_mem=1MB");
        assert_eq!(combination("copy · 100 · on"), "copy · 100 · on");
        assert_eq!(combination("a · #x"), "a · #x");
        let t0 = Instant::now();
        let mut eta = LiveEta::new(6, Vec::new());
        let secs = [1.0, 3.0, 1.0, 3.0];
        let mut t = 0.0;
        for (i, s) in secs.iter().enumerate() {
            let label = format!("{} · #{}", if i % 2 == 0 { "a" } else { "b" }, i / 2 + 1);
            eta.trial(Some(&trial(i + 1, 6, &label)), None, at(t0, t));
            t += s;
        }
        eta.trial(Some(&trial(5, 6, "a · #3")), None, at(t0, t));
        // Trial 5 (a, 1 s) has just started, trial 6 (b, 3 s) is to come.
        let left = eta.remaining(at(t0, t)).unwrap();
        assert!((left - 4.0).abs() < 1e-6, "{left}");
    }

    #[test]
    fn three_settings_in_rotating_rounds() {
        let (a, b, c) = (("1MB", 3.0), ("64MB", 1.0), ("1GB", 0.5));
        let plan = [a, b, c, b, c, a, c, a, b, a, b, c];
        check(&plan, Vec::new(), 2.0, 0.10);
    }

    #[test]
    fn a_first_round_slowed_by_warm_ups_does_not_stay_in_the_pace() {
        // Every combination's first trial carries an untimed warm-up: 3 s instead of 1 s.
        let t0 = Instant::now();
        let mut eta = LiveEta::new(8, Vec::new());
        let secs = [3.0, 3.0, 1.0, 1.0];
        let mut t = 0.0;
        for (i, s) in secs.iter().enumerate() {
            let label = if i % 2 == 0 { "a" } else { "b" };
            eta.trial(Some(&trial(i + 1, 8, label)), None, at(t0, t));
            t += s;
        }
        eta.trial(Some(&trial(5, 8, "a")), None, at(t0, t));
        // Four more trials of 1 s, the running one included.
        let left = eta.remaining(at(t0, t)).unwrap();
        assert!((left - 4.0).abs() < 1e-6, "{left}");
    }

    #[test]
    fn growing_steps_go_by_their_weights() {
        let plan = [
            ("s1", 1.0),
            ("s2", 2.0),
            ("s3", 4.0),
            ("s4", 8.0),
            ("s5", 16.0),
        ];
        let weights = vec![1.0, 2.0, 4.0, 8.0, 16.0];
        let t0 = Instant::now();
        let mut eta = LiveEta::new(5, weights);
        let mut t = 0.0;
        for (i, (label, secs)) in plan.iter().enumerate().take(2) {
            eta.trial(Some(&trial(i + 1, 5, label)), None, at(t0, t));
            t += secs;
        }
        // Trials 1 and 2 took 3 s for 3 units: trial 3 started just now, 4+8+16 = 28 s to go
        // (its own 4 s included).
        eta.trial(Some(&trial(3, 5, "s3")), None, at(t0, t));
        let left = eta.remaining(at(t0, t)).unwrap();
        assert!((left - 28.0).abs() < 1e-6, "{left}");
    }

    #[test]
    fn a_standby_faults_seconds_are_not_spread_over_the_versions() {
        // Growth: 1 + 2 + 4 + 8 + 16 versions at 1 s each, and a fault holding every step up
        // 30 s; the first trial (1 version) took 31 s.
        let weights = vec![1.0, 2.0, 4.0, 8.0, 16.0];
        let t0 = Instant::now();
        let mut eta = LiveEta::new(5, weights.clone());
        eta.fixed = vec![30.0; 5];
        eta.trial(Some(&trial(1, 5, "s1")), None, at(t0, 0.0));
        eta.trial(Some(&trial(2, 5, "s2")), None, at(t0, 31.0));
        // Trial 2 has just begun: 2+4+8+16 = 30 s of versions and 4 faults of 30 s to go.
        let left = eta.remaining(at(t0, 31.0)).unwrap();
        assert!((left - 150.0).abs() < 1e-6, "{left}");
        // Without the fault known, the 31 s of the first version set the pace: 31 s a
        // version, 930 s for the 30 to come.
        let mut blind = LiveEta::new(5, weights);
        blind.trial(Some(&trial(1, 5, "s1")), None, at(t0, 0.0));
        blind.trial(Some(&trial(2, 5, "s2")), None, at(t0, 31.0));
        let left = blind.remaining(at(t0, 31.0)).unwrap();
        assert!((left - 930.0).abs() < 1e-6, "{left}");
    }

    #[test]
    fn a_growth_specs_fault_gives_each_filled_step_its_for() {
        let mut p = crate::experiment::lab::spec::ExperimentKind::Growth.defaults();
        for (k, v) in [
            ("steps", "0,10,100"),
            ("design", "snapshot,ranges"),
            ("target-rows", "1e9"),
            ("sync-commit", "local,on"),
            ("standby-fault", "stop-at=0s,for=4s"),
        ] {
            p.insert(k.into(), v.into());
        }
        let spec = crate::experiment::lab::spec::ExperimentKind::Growth
            .parse_spec(&p)
            .unwrap();
        // One level of two waits: 4 s a filled step, 2 s for each of its two designs; the
        // projected point (the target rows) runs no fault.
        let eta = LiveEta::of(8, &spec);
        assert_eq!(eta.fixed, [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 0.0]);
        assert_eq!(eta.weights.len(), 8);
    }

    #[test]
    fn before_a_trial_finished_only_the_running_fraction_says_anything() {
        let t0 = Instant::now();
        let mut eta = LiveEta::new(4, Vec::new());
        eta.trial(Some(&trial(1, 4, "a")), None, at(t0, 1.0));
        assert_eq!(
            eta.remaining(at(t0, 2.0)),
            None,
            "no fraction, nothing finished"
        );
        eta.trial(Some(&trial(1, 4, "a")), Some(0.5), at(t0, 3.0));
        // Half of a 4 s trial done: 2 s of it and three more of 4 s.
        let left = eta.remaining(at(t0, 3.0)).unwrap();
        assert!((left - 14.0).abs() < 1e-6, "{left}");
    }

    #[test]
    fn a_finished_run_has_nothing_left_and_a_longer_auto_run_more() {
        let t0 = Instant::now();
        let mut eta = LiveEta::new(2, Vec::new());
        eta.trial(Some(&trial(1, 2, "a")), None, at(t0, 0.0));
        eta.trial(Some(&trial(2, 2, "b")), None, at(t0, 1.0));
        eta.done();
        assert_eq!(eta.remaining(at(t0, 2.0)), Some(0.0));
        // repeat auto planned two more trials of `a`.
        eta.trial(Some(&trial(3, 4, "a")), None, at(t0, 2.0));
        let left = eta.remaining(at(t0, 2.0)).unwrap();
        assert!(left > 1.5, "{left}");
    }
}
