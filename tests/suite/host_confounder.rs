//! The host as a confounder: an index-build sweep and an ingest sweep with a CPU hog beside half of its trials
//! (the test starts one busy process per core after the first half) marks those trials as
//! beside a busy neighbour and says the run is confounded by host load; a comparison of the
//! quiet half's run with a busy run names the difference in host load before any verdict.

use crate::common;

use std::process::{Child, Command};

use pglab::experiment::{
    self, ExperimentKind, ExperimentSpec, ParamText, ReportBody, RunEvent, RunOptions, RunReport,
};

fn spec(pairs: &[(&str, &str)]) -> ExperimentSpec {
    spec_of(ExperimentKind::IndexBuild, pairs)
}

fn spec_of(kind: ExperimentKind, pairs: &[(&str, &str)]) -> ExperimentSpec {
    let p: ParamText = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    kind.parse_spec(&p).unwrap()
}

/// One busy shell loop per core: a neighbour pglab did not start.
fn hogs() -> Vec<Child> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    (0..cores)
        .map(|_| {
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .expect("sh")
        })
        .collect()
}

fn stop(hogs: &mut Vec<Child>) {
    for h in hogs.iter_mut() {
        let _ = h.kill();
        let _ = h.wait();
    }
    hogs.clear();
}

/// Run `spec`; start the hogs once `hog_after` trials have finished (None: never).
async fn run(spec: ExperimentSpec, schema: &str, hog_after: Option<usize>) -> RunReport {
    let opts = RunOptions {
        schema: schema.into(),
        ..RunOptions::default()
    };
    let mut h = experiment::spawn(common::lab().target(), spec, opts);
    let mut running = Vec::new();
    let mut samples = 0;
    let report = loop {
        match h.events.recv().await {
            Some(RunEvent::Sample(s)) if !s.projected => {
                samples += 1;
                if Some(samples) == hog_after {
                    running = hogs();
                }
            }
            Some(RunEvent::Finished(r)) => break *r,
            Some(RunEvent::Failed { error, .. }) => {
                stop(&mut running);
                panic!("run failed: {error}")
            }
            Some(RunEvent::Cancelled(_)) | None => {
                stop(&mut running);
                panic!("no finished run")
            }
            _ => {}
        }
    };
    stop(&mut running);
    report
}

#[tokio::test]
async fn a_hog_beside_half_the_trials_confounds_the_run() {
    let s = spec(&[
        ("rows", "200k"),
        ("order", "random"),
        ("mwm", "1MB,64MB"),
        ("repeat", "4"),
        ("warmup", "false"),
    ]);
    let r = run(s, "hostload", Some(4)).await;
    let ReportBody::IndexBuild(b) = &r.body else {
        panic!("not index-build")
    };
    let timed: Vec<_> = b.trials.iter().filter(|t| !t.warmup).collect();
    assert_eq!(timed.len(), 8);
    assert!(
        timed.iter().all(|t| t.host.is_some()),
        "every trial read the host"
    );
    // The trials after the hogs started ran beside them. The fifth may already have been
    // under way when the fourth's sample reached the test and the hogs were spawned: only
    // the ones after it are sure to have run beside them.
    for t in &timed[5..] {
        assert!(t.beside_busy_neighbour(), "{:?}", t.host);
    }
    let quiet = timed[..4].iter().any(|t| !t.beside_busy_neighbour());
    let said = b.summary.confounders.join("\n");
    if quiet {
        assert!(said.contains("confounded by host load: "), "{said}");
    } else {
        // The shared host was busy before the hogs too: said as such.
        assert!(said.contains("busy neighbour"), "{said}");
    }
}

#[tokio::test]
async fn an_ingest_sweep_with_a_hog_beside_half_its_trials_is_confounded() {
    let s = spec_of(
        ExperimentKind::Ingest,
        &[
            ("rows", "100k"),
            ("method", "copy"),
            ("batch", "100,1000"),
            ("repeat", "2"),
        ],
    );
    let r = run(s, "hostload_ingest", Some(2)).await;
    let ReportBody::Ingest(b) = &r.body else {
        panic!("not ingest")
    };
    assert_eq!(b.trials.len(), 4);
    assert!(
        b.trials.iter().all(|t| t.host.is_some()),
        "every trial read the host"
    );
    // The third trial may have started before the hogs (see above): the fourth ran beside them.
    for t in &b.trials[3..] {
        assert!(t.host.is_some_and(|h| h.busy()), "{:?}", t.host);
    }
    let quiet = b.trials[..2]
        .iter()
        .any(|t| t.host.is_some_and(|h| !h.busy()));
    let said = b.summary.confounders.join("\n");
    if quiet {
        assert!(said.contains("confounded by host load: "), "{said}");
    } else {
        assert!(said.contains("busy neighbour"), "{said}");
    }
}
