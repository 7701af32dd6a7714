//! The tune's figure: the tuned configuration (a `tune.sql`) against the server's defaults and
//! against the pgtune-formula values of the same settings for this host, each a pass of the
//! same workload, interleaved round by round (ABC, BCA, CAB, …) on pglab's sandbox, with the
//! verdict core's words. Run by benches/tune.sh:
//!
//!   cargo bench --profile dev --bench tune_compare -- TUNE.SQL ROUNDS SETTINGS WORKLOAD KEY=VALUE…
//!
//! SETTINGS: the settings the tune searched (comma-separated): the pgtune side sets those of
//! them pgtune has a formula for. WORKLOAD and KEY=VALUE: as `pglab tune --workload W --param
//! KEY=VALUE` (an experiment, a preset — a query preset too — or a file). The three pairwise
//! verdicts are held together: each interval at 1 − 0.05/3 (Bonferroni over the 3 pairs).

use std::sync::Arc;
use std::time::{Duration, Instant};

use pglab::experiment::RunOptions;
use pglab::measure::interval::estimate;
use pglab::measure::rules::Rules;
use pglab::measure::verdict::compare;
use pglab::tune::{candidates, objective::Objective, output, rounds};

type Config = Vec<(String, String)>;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.is_empty() {
        // `cargo test --all-targets` runs every bench once without arguments.
        eprintln!("tune_compare: no tune.sql given; run `bash benches/tune.sh`");
        return;
    }
    if args.len() < 4 {
        eprintln!("usage: tune_compare TUNE.SQL ROUNDS SETTINGS WORKLOAD [KEY=VALUE…]");
        std::process::exit(2);
    }
    let tuned = output::parse_script(&std::fs::read_to_string(&args[0]).expect("tune.sql"));
    let rounds_n: usize = args[1].parse().expect("ROUNDS");
    let searched: Vec<String> = args[2].split(',').map(String::from).collect();
    let paths = pglab::paths::Paths::resolve(None);
    let (workload, note) =
        pglab::tune::setup::workload(&paths, &args[3], &args[4..]).expect("workload");
    if let Some(n) = note {
        println!("workload: {n}");
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async move {
        let opts = pglab::server::TargetOptions {
            force_sandbox: true,
            keep_sandbox: true,
            ..Default::default()
        };
        let (opened, client) = pglab::server::open(&opts, &paths, None)
            .await
            .expect("sandbox");
        let max_conn: u64 = client
            .query_one("SHOW max_connections", &[])
            .await
            .unwrap()
            .get::<_, String>(0)
            .parse()
            .unwrap_or(100);
        drop(client);
        let probe = opened.sandbox.as_ref().map(|s| s.sandbox.root.clone());
        let (hw, host, _) = pglab::tune::setup::hardware(
            probe,
            max_conn,
            candidates::GivenHardware {
                local: true,
                ..Default::default()
            },
        )
        .await;
        let pg = candidates::pgtune(&hw);
        let pgtune: Config = searched
            .iter()
            .filter_map(|n| pg.get(n.as_str()).map(|v| (n.clone(), v.clone())))
            .collect();
        let configs: [(&str, Config); 3] = [
            ("defaults", Vec::new()),
            ("pgtune", pgtune),
            ("tuned", tuned),
        ];
        println!("host: {host}");
        for (name, c) in &configs {
            let list: Vec<String> = c.iter().map(|(n, v)| format!("{n}={v}")).collect();
            println!(
                "{name}: {}",
                if list.is_empty() {
                    "(the server's own)".into()
                } else {
                    list.join(" ")
                }
            );
        }
        let run = RunOptions {
            recorder: Some(pglab::history::recorder(paths.history_file())),
            sandbox: opened.sandbox.as_ref().map(|s| s.sandbox.clone()),
            ..RunOptions::default()
        };
        let target: Arc<_> = opened.target.clone();
        let cancel = tokio_util::sync::CancellationToken::new();
        let mut trials: [Vec<f64>; 3] = Default::default();
        let started = Instant::now();
        for r in 0..rounds_n {
            for k in 0..3 {
                let i = (r + k) % 3;
                let spec = rounds::round_spec(&workload, &configs[i].1, None, true);
                let far = Instant::now() + Duration::from_secs(3600);
                match rounds::run(target.clone(), spec, run.clone(), far, &cancel, |_| {}).await {
                    Ok(round) => trials[i].extend(round.measures.get(&0)),
                    Err(e) => panic!("{} round {r}: {e:?}", configs[i].0),
                }
            }
            eprintln!(
                "round {}/{rounds_n} done ({:.0} s)",
                r + 1,
                started.elapsed().as_secs_f64()
            );
        }
        let obj = Objective::of(&workload);
        // Three pairs from the same trials: each interval at 1 − α/3, so the three verdicts
        // hold together at 95%.
        let rules = Rules::new(1.0 - 0.05 / 3.0, Rules::default().min_effect).unwrap();
        println!("\n| configuration | median | interval (its level) | trials |\n|---|---|---|---|");
        for (i, (name, _)) in configs.iter().enumerate() {
            let e = estimate(&trials[i], rules.confidence).unwrap();
            println!(
                "| {name} | {} | {} … {} ({:.1}%) | {} |",
                obj.format(e.median),
                obj.format(e.ci_low),
                obj.format(e.ci_high),
                e.level * 100.0,
                e.n
            );
        }
        println!();
        for (a, b) in [(2, 0), (2, 1), (1, 0)] {
            let c = compare(&trials[a], &trials[b], obj.better, &rules).unwrap();
            println!(
                "{} against {}: {}",
                configs[a].0,
                configs[b].0,
                output::comparison_text(&c)
            );
        }
        opened.close().await;
    });
}
