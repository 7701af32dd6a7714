//! The decision check: over the report fixtures and generated runs (index-build sweeps with
//! spills at every place, ingest batch × sync sweeps at every noise, a query sweep), the
//! headline, the per-series advice, the `SET` lines, the JSON, the Markdown and the history's
//! result column all say the one [`Decision`] — and no advice anywhere in the report
//! recommends a setting the headline's own comparison shows worse.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::Format;
use super::claims_parse::{Claim, claims};
use super::claims_tests::{check, generated, ingest_batches, mwm_500k};
use super::decision::{Decision, decision};
use crate::experiment::ingest::{Method, SyncCommit};
use crate::experiment::lab::findings::decided;
use crate::experiment::{ReportBody, RunReport};
use crate::measure::finding::Finding;

/// The value of a `SET name = 'value';` or `ALTER SYSTEM SET name = 'value';` line.
fn set_value(line: &str) -> Option<&str> {
    let (_, v) = line.split_once(" = ")?;
    let v = v.split(';').next()?.trim();
    Some(v.trim_matches('\''))
}

/// Every place the decision shows, checked against it; the errors.
fn disagreements(r: &RunReport, d: &Decision, f: &Finding) -> Vec<String> {
    let mut e = Vec::new();
    let head = d.headline();
    // The text table: the Decision line, then its SQL.
    let table = super::render(r, Format::Table);
    let mut block = format!("\nDecision\n  {head}\n");
    for s in &d.set {
        block.push_str(&format!("      {s}\n"));
    }
    if !table.contains(&block) {
        e.push(format!("the table does not show the decision {block:?}"));
    }
    let md = super::render(r, Format::Md);
    if !md.contains("## Decision") || !md.contains(&d.set.join("\n")) {
        e.push("the Markdown does not show the decision".into());
    }
    // The JSON carries the same decision.
    let json: serde_json::Value =
        serde_json::from_str(&super::render(r, Format::Json)).expect("json");
    let back: Option<Decision> = serde_json::from_value(json["decision"].clone()).ok();
    if back.as_ref() != Some(d) {
        e.push(format!("the JSON's decision differs: {back:?}"));
    }
    // The history's result column (its JSON form, uncut) is the headline.
    let list: serde_json::Value =
        serde_json::from_str(&super::history_table::list(&[r], Format::Json)).expect("json");
    if list[0]["result"] != serde_json::Value::String(head.clone()) {
        e.push(format!("history's result is {}", list[0]["result"]));
    }
    // The decision against its own comparison.
    if let Some(rec) = &d.recommended {
        if d.shown_worse.contains(rec) {
            e.push(format!("recommends {rec}, which it shows worse"));
        }
        if f.recommendation.as_ref() != Some(rec) {
            e.push(format!("recommends {rec}, the core {:?}", f.recommendation));
        }
        for s in &d.set {
            if let Some(v) = set_value(s)
                && !rec.contains(v)
            {
                e.push(format!("SET line {s} is not the recommended {rec}"));
            }
        }
    } else if d.set.iter().any(|s| s.starts_with("SET ")) {
        e.push(format!("a SET line with no recommendation: {:?}", d.set));
    }
    for c in claims(&head) {
        if let Err(x) = check(&c, f, None) {
            e.push(format!("the headline: {x}"));
        }
    }
    // No advice anywhere in the report names what the headline's comparison shows worse.
    let content = super::content::content(r);
    let advice = content
        .recommendations
        .iter()
        .map(|x| x.text.clone())
        .chain(content.findings.iter().cloned());
    for t in advice {
        for c in claims(&t) {
            if let Claim::Use(words) = &c
                && let Some(l) = d
                    .shown_worse
                    .iter()
                    .find(|l| words == *l || words.starts_with(&format!("{l} ")))
                && t.starts_with(&d.question)
            {
                e.push(format!(
                    "advises {l}, which the headline shows worse\n    in: {t}"
                ));
            }
        }
    }
    e
}

fn check_decision(r: &RunReport) -> Vec<String> {
    let Some(d) = decision(r) else {
        return Vec::new();
    };
    let Some(f) = decided(r)
        .into_iter()
        .find(|x| x.question == d.question)
        .map(|x| x.finding)
    else {
        return vec![format!(
            "no finding for the decision's question {}",
            d.question
        )];
    };
    disagreements(r, &d, &f)
        .into_iter()
        .map(|x| format!("{}: {x}\n    decision: {}", r.run_id, d.headline()))
        .collect()
}

/// Ingest runs: copy at batches 1, 100 and 1000, sync on and off, rates and spreads drawn.
fn generated_ingest() -> Vec<RunReport> {
    let mut out = Vec::new();
    for seed in 0..16u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
        let mut rows = Vec::new();
        for sync in [SyncCommit::On, SyncCommit::Off] {
            let lift = if sync == SyncCommit::Off { 1.5 } else { 1.0 };
            for (batch, base) in [(1, 2_000.0), (100, 40_000.0), (1000, 150_000.0)] {
                let r = base * lift * rng.random_range(0.5..2.0);
                rows.push((Method::Copy, batch, sync, r));
            }
        }
        let spread = [0.02, 0.2, 0.8][rng.random_range(0..3)];
        let n = rng.random_range(3..7);
        let noise: Vec<f64> = (0..n)
            .map(|_| 1.0 + spread * (rng.random::<f64>() - 0.5))
            .collect();
        let b = crate::experiment::ingest::summary::tests::report(&rows, &noise);
        let mut r = crate::report::example::with_body(ReportBody::Ingest(Box::new(b)));
        r.run_id = format!("ingest-{seed}");
        out.push(r);
    }
    out
}

fn every_run() -> Vec<RunReport> {
    let mut all = vec![
        crate::report::example::cybertec_10m("c"),
        crate::report::example::decided_10m("d"),
        crate::report::example::growth("g"),
        mwm_500k(),
        crate::report::example::with_body(ReportBody::Ingest(Box::new(ingest_batches()))),
    ];
    all.extend(generated());
    all.extend(generated_ingest());
    all
}

#[test]
fn headline_advice_set_json_and_history_say_one_decision() {
    let runs = every_run();
    let decided_runs = runs.iter().filter(|r| decision(r).is_some()).count();
    assert!(
        decided_runs >= runs.len() - 1,
        "{decided_runs} of {}",
        runs.len()
    );
    let errors: Vec<String> = runs.iter().flat_map(check_decision).collect();
    assert!(
        errors.is_empty(),
        "{} disagreements:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn the_mwm_500k_decision_never_names_the_slower_in_memory_sort() {
    let r = mwm_500k();
    let d = decision(&r).expect("decided");
    assert_eq!(d.question, "random");
    assert!(d.shown_worse.contains(&"64MB".to_string()), "{d:?}");
    assert!(!d.headline().contains("use 64MB"), "{}", d.headline());
    match &d.recommended {
        Some(rec) => {
            assert!(d.interval.is_some());
            assert_eq!(d.set, [format!("SET maintenance_work_mem = '{rec}';")]);
        }
        None => {
            assert!(d.set.is_empty(), "{d:?}");
            assert!(
                d.headline().starts_with("random: not decided yet: "),
                "{}",
                d.headline()
            );
        }
    }
}

#[test]
fn the_check_fails_on_a_report_whose_parts_disagree() {
    // The check must be able to fail: a decision that is not the report's.
    let r = mwm_500k();
    let mut d = decision(&r).unwrap();
    let f = decided(&r).remove(0).finding;
    d.recommended = Some("64MB".into());
    d.set = vec!["SET maintenance_work_mem = '64MB';".into()];
    let e = disagreements(&r, &d, &f);
    assert!(e.iter().any(|x| x.contains("shows worse")), "{e:?}");
    assert!(
        e.iter().any(|x| x.contains("the table does not show")),
        "{e:?}"
    );
    assert!(e.iter().any(|x| x.contains("JSON")), "{e:?}");
    assert!(e.iter().any(|x| x.contains("history's result")), "{e:?}");
}
