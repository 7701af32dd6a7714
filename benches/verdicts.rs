//! How often pglab's verdict rules are wrong: simulated (`--simulate`) and on real trials.
//!
//! **Simulated** (`cargo bench --bench verdicts -- --simulate`): seeded lognormal trials
//! (`measure::simulate`, σ 3%, 5%, 10%), for 2, 3, 5, 8 and 10 settings and 3 to 10 trials
//! each, `SIM_RUNS` runs per case (default 2000). It prints, per case, the share of A/A runs
//! (identical settings) in which the core calls any setting faster or slower, beside two
//! naive rules (every comparison with the data's best at 95%, and Bonferroni over the k−1
//! comparisons with it); the share of runs finding a real 20% difference; and `--repeat auto`
//! (at most 10) on A/A and on a 20% difference: false calls, power and trials spent against a
//! fixed 10 each.
//!
//! **Real** (the files: `pglab run index-build … --format json` reports of A/A sweeps, any
//! number of identical settings, each with a fixed number of repeats; `benches/verdicts.sh`
//! makes them on the sandbox):
//!
//! - **A/A**: the first `PER_SIDE` trials of every setting decided as a sweep, and of the
//!   first two settings alone: any `faster` or `slower` is a false call (goal ≤ 5% of runs).
//! - **auto**: each run's trials replayed in their real order as `--repeat auto` would take
//!   them (3 each, then one more of every setting the core still needs per round, at most the
//!   recorded count): false calls, and trials spent against the fixed count.
//! - **resampled**: `RESAMPLE` sweeps per file drawn from the run's pool of trials (all
//!   settings' trials together, since they are identical): each resampled sweep takes
//!   `PER_SIDE` trials per setting without replacement, for 2 settings and for all of them,
//!   as they are (A/A) and with every setting's trials but the last × 1.2 (the last truly
//!   20% faster: power).
//!   The real noise, outliers and drift of the machine stay in the trials; their order does
//!   not.

use std::collections::BTreeMap;

use pglab::measure::finding::{Finding, SettingTrials, decide, needs_more};
use pglab::measure::rules::Rules;
use pglab::measure::simulate::{
    self, Naive, Noise, Sweep, as_settings, calls_a_difference, draw, naive_calls,
};
use pglab::measure::verdict::Better;
use rand::SeedableRng;
use rand::seq::SliceRandom;

/// Trials per setting, in the order they ran.
struct Run {
    name: String,
    settings: Vec<(String, Vec<f64>)>,
}

fn load(path: &str) -> Result<Run, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{path}: not JSON: {e}"))?;
    let trials = v["trials"]
        .as_array()
        .ok_or_else(|| format!("{path}: no trials (is it an index-build report?)"))?;
    let mut by: BTreeMap<u64, (String, Vec<f64>)> = BTreeMap::new();
    for t in trials {
        if t["warmup"].as_bool() == Some(true) {
            continue;
        }
        let bytes = t["maintenance_work_mem_bytes"].as_u64().unwrap_or(0);
        let label = t["maintenance_work_mem"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        let secs = t["seconds"]
            .as_f64()
            .ok_or(format!("{path}: a trial without seconds"))?;
        by.entry(bytes)
            .or_insert_with(|| (label, vec![]))
            .1
            .push(secs);
    }
    if by.len() < 2 {
        return Err(format!(
            "{path}: {} setting; an A/A run has two or more",
            by.len()
        ));
    }
    Ok(Run {
        name: path.to_string(),
        settings: by.into_values().collect(),
    })
}

fn sweep_of(values: &[Vec<f64>]) -> Vec<SettingTrials> {
    as_settings(values)
}

/// `--repeat auto` replayed on recorded trials (in their order): (trials spent, finding).
fn auto_replay(values: &[Vec<f64>], rules: &Rules) -> (usize, Finding) {
    let cap = values.iter().map(Vec::len).min().unwrap_or(0);
    let rules = rules.with_auto(cap as u32);
    let mut n = vec![3usize.min(cap); values.len()];
    let mut rounds = 3;
    let take = |n: &[usize]| -> Vec<Vec<f64>> {
        values
            .iter()
            .zip(n)
            .map(|(v, &k)| v[..k].to_vec())
            .collect()
    };
    while rounds < cap {
        let more: Vec<usize> = needs_more(&sweep_of(&take(&n)), Better::Lower, &rules)
            .into_iter()
            .filter(|&i| n[i] < cap)
            .collect();
        if more.is_empty() {
            break;
        }
        for i in more {
            n[i] += 1;
        }
        rounds += 1;
    }
    let f = decide(&sweep_of(&take(&n)), Better::Lower, &rules);
    (n.iter().sum(), f)
}

/// A/A false calls of one finding: [any faster/slower, a winner named, some setting slower].
fn false_calls(f: &Finding) -> [usize; 3] {
    let slower = f.settings.iter().any(|s| {
        s.vs_best
            .as_ref()
            .is_some_and(|c| c.verdict == pglab::measure::verdict::Verdict::Slower)
    });
    [
        usize::from(calls_a_difference(f)),
        usize::from(f.winner.is_some()),
        usize::from(slower),
    ]
}

fn add(to: &mut [usize; 3], f: &Finding) {
    for (t, c) in to.iter_mut().zip(false_calls(f)) {
        *t += c;
    }
}

fn pct(k: usize, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        100.0 * k as f64 / n as f64
    }
}

fn simulate_grid() {
    let runs: usize = std::env::var("SIM_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let rules = Rules::default();
    println!("== simulated: lognormal noise, {runs} runs per case, seeded (measure::simulate)");
    println!(
        "{:>5} {:>3} {:>3} {:>9} {:>7} {:>12} {:>12} {:>10} {:>12}",
        "noise",
        "k",
        "n",
        "A/A core",
        "bound",
        "A/A naive95",
        "A/A k-1 Bonf",
        "power 20%",
        "pair level"
    );
    let mut worst = (0.0f64, String::new());
    for sigma in [0.03, 0.05, 0.10] {
        for k in [2usize, 3, 5, 8, 10] {
            for n in 3..=10usize {
                let mut noise = Noise::new((sigma * 1000.0) as u64 * 10_000 + (k * 100 + n) as u64);
                let same = Sweep::same(k, sigma);
                let (mut core, mut naive, mut bonf) = (0, 0, 0);
                for _ in 0..runs {
                    let values = draw(&mut noise, &same, n);
                    let f = decide(&as_settings(&values), Better::Lower, &rules);
                    core += usize::from(calls_a_difference(&f));
                    naive += usize::from(naive_calls(&values, &rules, Naive::Uncorrected));
                    bonf += usize::from(naive_calls(&values, &rules, Naive::VsBestOnly));
                }
                // Power: the last setting truly 20% faster than the others; found when it
                // is named the winner.
                let mut truth = vec![1.2; k];
                truth[k - 1] = 1.0;
                let real = Sweep { truth, sigma };
                let want = format!("s{}", k - 1);
                let found = (0..runs)
                    .filter(|_| {
                        simulate::fixed(&mut noise, &real, n, &rules)
                            .winner
                            .as_deref()
                            == Some(want.as_str())
                    })
                    .count();
                let level = simulate::family(k, &rules).pair_confidence;
                if pct(core, runs) > worst.0 {
                    worst = (pct(core, runs), format!("σ {sigma}, k {k}, n {n}"));
                }
                println!(
                    "{:>4.0}% {:>3} {:>3} {:>8.2}% {:>6.2}% {:>11.2}% {:>11.2}% {:>9.1}% {:>11.3}%",
                    sigma * 100.0,
                    k,
                    n,
                    pct(core, runs),
                    100.0 * simulate::aa_bound(k, n, &rules),
                    pct(naive, runs),
                    pct(bonf, runs),
                    pct(found, runs),
                    level * 100.0
                );
            }
        }
    }
    println!(
        "worst A/A rate of the core: {:.2}% ({}; ±{:.2}% sampling error at {runs} runs); goal ≤ 5%. `bound`: the exact Bonferroni bound, pairs × (1 − the coverage each pair's interval reaches)",
        worst.0,
        worst.1,
        100.0 * (0.05f64 * 0.95 / runs as f64).sqrt()
    );
    println!();
    println!("== simulated repeat auto (at most 10 each) against a fixed 10 each, {runs} runs");
    println!(
        "{:>5} {:>3} {:>22} {:>14} {:>22} {:>14} {:>18}",
        "noise",
        "k",
        "A/A false calls",
        "A/A trials",
        "20% found (auto)",
        "20% trials",
        "20% found fixed 10"
    );
    for sigma in [0.03, 0.05, 0.10] {
        for k in [2usize, 8] {
            let mut noise = Noise::new(7_000 + (sigma * 1000.0) as u64 + k as u64);
            let same = Sweep::same(k, sigma);
            let (mut calls, mut spent) = (0, 0);
            for _ in 0..runs {
                let (f, n) = simulate::auto(&mut noise, &same, 10, &rules);
                calls += usize::from(calls_a_difference(&f));
                spent += n;
            }
            let mut truth = vec![1.2; k];
            truth[k - 1] = 1.0;
            let real = Sweep { truth, sigma };
            let want = format!("s{}", k - 1);
            let (mut found, mut spent20, mut fixed_found) = (0, 0, 0);
            for _ in 0..runs {
                let (f, n) = simulate::auto(&mut noise, &real, 10, &rules);
                found += usize::from(f.winner.as_deref() == Some(want.as_str()));
                spent20 += n;
                let f = simulate::fixed(&mut noise, &real, 10, &rules);
                fixed_found += usize::from(f.winner.as_deref() == Some(want.as_str()));
            }
            let fixed = runs * k * 10;
            println!(
                "{:>4.0}% {:>3} {:>21.2}% {:>13.0}% {:>21.1}% {:>13.0}% {:>17.1}%",
                sigma * 100.0,
                k,
                pct(calls, runs),
                pct(spent, fixed),
                pct(found, runs),
                pct(spent20, fixed),
                pct(fixed_found, runs)
            );
        }
    }
}

fn real_trials(files: &[String]) {
    let per_side: usize = std::env::var("PER_SIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let resample: usize = std::env::var("RESAMPLE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let rules = Rules::default();
    let mut runs = Vec::new();
    for f in files {
        match load(f) {
            Ok(r) => runs.push(r),
            Err(e) => eprintln!("skipped {e}"),
        }
    }
    println!(
        "{:<28} {:>3} {:>10} {:>32} {:>16}",
        "run", "k", "medians", "fixed count: verdict", "auto trials"
    );
    let (mut aa_calls, mut aa_runs, mut two_calls) = ([0usize; 3], 0, [0usize; 3]);
    let (mut auto_calls, mut auto_spent, mut auto_fixed) = ([0usize; 3], 0, 0);
    // [2 settings, all settings] × A/A false calls [any, winner, slower], resampled.
    let mut res = [[0usize; 3]; 2];
    let mut found = [0usize; 2];
    let mut res_runs = [0usize; 2];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    for r in &runs {
        let values: Vec<Vec<f64>> = r.settings.iter().map(|s| s.1.clone()).collect();
        if values.iter().any(|v| v.len() < per_side) {
            eprintln!("skipped {}: fewer than {per_side} trials a setting", r.name);
            continue;
        }
        let k = values.len();
        let first: Vec<Vec<f64>> = values.iter().map(|v| v[..per_side].to_vec()).collect();
        let f = decide(&sweep_of(&first), Better::Lower, &rules);
        aa_runs += 1;
        add(&mut aa_calls, &f);
        let two = decide(&sweep_of(&first[..2]), Better::Lower, &rules);
        add(&mut two_calls, &two);
        let (spent, af) = auto_replay(&values, &rules);
        add(&mut auto_calls, &af);
        auto_spent += spent;
        auto_fixed += values.iter().map(Vec::len).sum::<usize>();
        let medians: Vec<f64> = f
            .settings
            .iter()
            .filter_map(|s| s.estimate.map(|e| e.median))
            .collect();
        let spread = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            / medians.iter().copied().fold(f64::INFINITY, f64::min);
        let name = std::path::Path::new(&r.name)
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        println!(
            "{:<28} {:>3} {:>9.3}× {:>32} {:>16}",
            name,
            k,
            spread,
            f.verdict.map_or("–".to_string(), |v| v.to_string()),
            format!("{spent} of {}", values.iter().map(Vec::len).sum::<usize>())
        );
        let pool: Vec<f64> = values.iter().flatten().copied().collect();
        for (which, size) in [(0usize, 2usize), (1, k)] {
            if pool.len() < size * per_side {
                continue;
            }
            for _ in 0..resample {
                let mut p = pool.clone();
                p.shuffle(&mut rng);
                let drawn: Vec<Vec<f64>> =
                    p.chunks(per_side).take(size).map(|c| c.to_vec()).collect();
                let f = decide(&sweep_of(&drawn), Better::Lower, &rules);
                add(&mut res[which], &f);
                // The last setting 20% faster: found when named the winner.
                let mut ab = drawn.clone();
                for v in ab.iter_mut().take(size - 1) {
                    for x in v.iter_mut() {
                        *x *= 1.2;
                    }
                }
                let f = decide(&sweep_of(&ab), Better::Lower, &rules);
                let want = format!("s{}", size - 1);
                found[which] += usize::from(f.winner.as_deref() == Some(want.as_str()));
                res_runs[which] += 1;
            }
        }
    }
    if aa_runs == 0 {
        println!("no usable runs");
        return;
    }
    println!();
    let calls = |c: &[usize; 3], n: usize| {
        format!(
            "a false call in {} of {n} ({:.1}%): a winner named {:.1}%, something slower {:.1}%",
            c[0],
            pct(c[0], n),
            pct(c[1], n),
            pct(c[2], n)
        )
    };
    println!(
        "real A/A sweeps, {per_side} trials a setting: {} (goal ≤ 5%)",
        calls(&aa_calls, aa_runs)
    );
    println!(
        "real A/A, the first 2 settings of each run, {per_side} trials each: {}",
        calls(&two_calls, aa_runs)
    );
    println!(
        "real A/A, repeat auto replayed: {}; {auto_spent} trials against {auto_fixed} fixed ({:.0}%)",
        calls(&auto_calls, aa_runs),
        pct(auto_spent, auto_fixed)
    );
    for (which, what) in ["2 settings", "all settings"].into_iter().enumerate() {
        println!(
            "resampled from the real pools, {what}, {per_side} trials each: A/A {}; a 20% difference found {:.1}%",
            calls(&res[which], res_runs[which]),
            pct(found[which], res_runs[which])
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let files: Vec<String> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .cloned()
        .collect();
    if args.iter().any(|a| a == "--simulate") {
        simulate_grid();
    }
    if !files.is_empty() {
        real_trials(&files);
    }
    if files.is_empty() && !args.iter().any(|a| a == "--simulate") {
        println!(
            "verdicts: no reports given; run `bash benches/verdicts.sh`, or `cargo bench --bench verdicts -- --simulate`"
        );
    }
}
