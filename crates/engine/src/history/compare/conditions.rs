//! Like with like: what differs between two runs besides the settings compared, and which of
//! those differences make them `not comparable`.
//!
//! Every difference is listed, each with one of three roles:
//!
//! - **setting**: the dimensions a run sweeps, which a comparison matches setting by setting
//!   (index-build `order`, `mwm`, `workers`; ingest `method`, `batch`, `clients`,
//!   `sync-commit`; growth `design`, `steps`), the server settings the experiment sets itself
//!   in its sessions (`maintenance_work_mem` and `max_parallel_maintenance_workers` for
//!   index-build, `synchronous_commit` for ingest), and whatever the user names with
//!   `--vary` (`--vary shared_buffers` to compare a server change). Different lists only
//!   mean some settings ran in one run only.
//! - **other**: how the run was done, not what it measured: `repeat`, `max-repeat`,
//!   `min-effect`, `confidence` (they decide how many trials and how they are judged; the
//!   trials themselves are compared), `seed` (another seed draws another sample of the same
//!   data — the same rows in another shuffle, other versions read — not other conditions),
//!   index-build `shuffle` (the order the trials ran in), growth `fill-limit`,
//!   `target-rows` and `baseline` (which steps are filled or projected, extra timings); the
//!   pglab version, the server's location, data directory and connection limits, the host's
//!   name, OS and kernel.
//! - **condition**: everything else — rows, key, index method, `concurrently`, warm-up,
//!   ingest's duration, payload, payload type, indexes, append and pipeline, growth's units,
//!   indexes, churn, write method and grow mode, the server version and every other server
//!   setting, the host's CPU, cores, memory (beyond 2%) and data filesystem, and any
//!   parameter pglab does not know yet. One differing condition makes every setting
//!   `not comparable`: both runs' numbers are still shown, without a faster/slower verdict.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::experiment::{ExperimentKind, ParamText, ReportBody, RunReport};
use crate::host::HostFingerprint;
use crate::measure::units::format_bytes_short;

/// What a difference means for the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Must be equal for a verdict.
    Condition,
    /// What is compared (matched setting by setting, or named with `--vary`).
    Setting,
    /// Shown for the record; does not bear on what was measured.
    Other,
}

/// Something that differs between the two runs (None: absent on that side).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// A parameter key (`rows`), a server setting (`shared_buffers`), `server version`, or a
    /// host field (`logical_cores`): the name `--vary` takes.
    pub name: String,
    pub baseline: Option<String>,
    pub candidate: Option<String>,
    pub role: Role,
}

impl Difference {
    /// "rows 200k vs 2M".
    pub(crate) fn reason(&self) -> String {
        let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
        format!(
            "{} {} vs {}",
            self.name,
            side(&self.baseline),
            side(&self.candidate)
        )
    }
}

const DECISION: &[&str] = &["repeat", "max-repeat", "min-effect", "confidence", "seed"];

/// Data sizes within this fraction of each other are the same data.
const DATA_TOLERANCE: f64 = 0.10;

/// query runs compare only with the same statement text, setup and data size.
fn query_differences(a: &RunReport, b: &RunReport, out: &mut Vec<Difference>) {
    let (ReportBody::Query(qa), ReportBody::Query(qb)) = (&a.body, &b.body) else {
        return;
    };
    let mut push = |name: &str, va: String, vb: String| {
        out.push(Difference {
            name: name.into(),
            baseline: Some(va),
            candidate: Some(vb),
            role: Role::Condition,
        })
    };
    if qa.statements_digest != qb.statements_digest {
        push(
            "statements",
            format!("text {}", qa.statements_digest),
            format!("text {}", qb.statements_digest),
        );
    }
    let setup = |q: &crate::experiment::query::QueryReport| {
        q.setup
            .as_ref()
            .map_or_else(|| "none".to_string(), |s| format!("text {}", s.digest))
    };
    if setup(qa) != setup(qb) {
        push("setup", setup(qa), setup(qb));
    }
    let (da, db) = (qa.data_bytes as f64, qb.data_bytes as f64);
    if (da - db).abs() > DATA_TOLERANCE * da.max(db) {
        push("data size", format_bytes_short(da), format_bytes_short(db));
    }
}

/// Whether a run took a CHECKPOINT before its trials, as its trials recorded it (None: a query
/// run, or a record from before pglab said). `checkpoint = auto` means yes on the sandbox and
/// no elsewhere, so the parameter text alone cannot tell two runs' conditions apart.
fn took_checkpoints(r: &RunReport) -> Option<bool> {
    r.body.facts().took_checkpoints()
}

/// A run whose trials followed a CHECKPOINT and one whose trials did not measured under
/// different conditions (dirty buffers written inside the trial or not).
fn checkpoint_difference(a: &RunReport, b: &RunReport, out: &mut Vec<Difference>) {
    if let (Some(ca), Some(cb)) = (took_checkpoints(a), took_checkpoints(b))
        && ca != cb
    {
        let words = |c: bool| if c { "before each trial" } else { "none" }.to_string();
        out.push(Difference {
            name: "checkpoint taken".into(),
            baseline: Some(words(ca)),
            candidate: Some(words(cb)),
            role: Role::Condition,
        });
    }
}

/// Server settings that do not bear on the speed of what pglab measures.
const HARMLESS_SETTINGS: &[&str] = &[
    "data_directory",
    "statement_timeout",
    "default_transaction_read_only",
    "max_connections",
    "superuser_reserved_connections",
];

/// Memory sizes within this fraction of each other are the same machine's.
const MEMORY_TOLERANCE: f64 = 0.02;

fn param_role(kind: ExperimentKind, key: &str) -> Role {
    if kind.info().swept.contains(&key) {
        Role::Setting
    } else if DECISION.contains(&key) || kind.info().procedural.contains(&key) {
        Role::Other
    } else {
        Role::Condition
    }
}

/// The run's parameters in their normal text form (from the stored spec, so `1GB` and
/// `1024MB` read alike).
fn params(r: &RunReport) -> ParamText {
    r.body.facts().spec().to_text()
}

fn diff_maps(
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
    role: &dyn Fn(&str) -> Role,
    out: &mut Vec<Difference>,
) {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for k in keys {
        if a.get(k) != b.get(k) {
            out.push(Difference {
                name: k.clone(),
                baseline: a.get(k).cloned(),
                candidate: b.get(k).cloned(),
                role: role(k),
            });
        }
    }
}

fn host_fields(h: &HostFingerprint) -> Vec<(&'static str, String, Role)> {
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    vec![
        ("cpu_model", h.cpu_model.clone(), Role::Condition),
        (
            "logical_cores",
            h.logical_cores.to_string(),
            Role::Condition,
        ),
        (
            "physical_cores",
            h.physical_cores
                .map_or_else(|| "unknown".into(), |c| c.to_string()),
            Role::Condition,
        ),
        ("filesystem", opt(&h.filesystem), Role::Condition),
        ("hostname", h.hostname.clone(), Role::Other),
        ("os", h.os.clone(), Role::Other),
        ("kernel", h.kernel.clone(), Role::Other),
    ]
}

fn host_differences(a: &HostFingerprint, b: &HostFingerprint, out: &mut Vec<Difference>) {
    for ((name, va, role), (_, vb, _)) in host_fields(a).into_iter().zip(host_fields(b)) {
        if va != vb {
            out.push(Difference {
                name: name.into(),
                baseline: Some(va),
                candidate: Some(vb),
                role,
            });
        }
    }
    let (ma, mb) = (a.total_memory as f64, b.total_memory as f64);
    if (ma - mb).abs() > MEMORY_TOLERANCE * ma.max(mb) {
        out.push(Difference {
            name: "total_memory".into(),
            baseline: Some(format_bytes_short(a.total_memory as f64)),
            candidate: Some(format_bytes_short(b.total_memory as f64)),
            role: Role::Condition,
        });
    }
}

/// Every difference between the runs, parameters first, then the server, then the host.
/// Names in `vary` are what the user compares: their role becomes [`Role::Setting`].
pub(crate) fn differences(a: &RunReport, b: &RunReport, vary: &[String]) -> Vec<Difference> {
    let kind = a.kind();
    let mut out = Vec::new();
    diff_maps(&params(a), &params(b), &|k| param_role(kind, k), &mut out);
    query_differences(a, b, &mut out);
    checkpoint_difference(a, b, &mut out);
    match (&a.server, &b.server) {
        (Some(sa), Some(sb)) => {
            if sa.version_num != sb.version_num || sa.version != sb.version {
                out.push(Difference {
                    name: "server version".into(),
                    baseline: Some(sa.version.clone()),
                    candidate: Some(sb.version.clone()),
                    role: Role::Condition,
                });
            }
            // A single server and a Citus cluster, or clusters of other sizes, are different
            // machines: not comparable unless the shape is what is compared (--vary cluster).
            if sa.cluster != sb.cluster {
                out.push(Difference {
                    name: "cluster".into(),
                    baseline: Some(crate::server::ClusterShape::label_of(sa.cluster)),
                    candidate: Some(crate::server::ClusterShape::label_of(sb.cluster)),
                    role: Role::Condition,
                });
            }
            if sa.location != sb.location {
                out.push(Difference {
                    name: "server location".into(),
                    baseline: Some(sa.location.clone()),
                    candidate: Some(sb.location.clone()),
                    role: Role::Other,
                });
            }
            let setting_role = |k: &str| {
                if kind.info().own_settings.iter().any(|(s, _)| *s == k) {
                    Role::Setting
                } else if HARMLESS_SETTINGS.contains(&k) {
                    Role::Other
                } else {
                    Role::Condition
                }
            };
            diff_maps(&sa.settings, &sb.settings, &setting_role, &mut out);
        }
        (None, None) => {}
        (sa, sb) => out.push(Difference {
            name: "server version".into(),
            baseline: sa.as_ref().map(|s| s.version.clone()),
            candidate: sb.as_ref().map(|s| s.version.clone()),
            role: Role::Condition,
        }),
    }
    host_differences(&a.host, &b.host, &mut out);
    if a.pglab_version != b.pglab_version {
        out.push(Difference {
            name: "pglab version".into(),
            baseline: Some(a.pglab_version.clone()),
            candidate: Some(b.pglab_version.clone()),
            role: Role::Other,
        });
    }
    for d in &mut out {
        // `--vary checkpoint` also names what the checkpoint parameter did to the trials.
        if vary
            .iter()
            .any(|v| v == &d.name || (v == "checkpoint" && d.name == "checkpoint taken"))
        {
            d.role = Role::Setting;
        }
    }
    out
}

/// The differences that make the runs `not comparable`, as "rows 200k vs 2M".
pub(crate) fn reasons(differences: &[Difference]) -> Vec<String> {
    differences
        .iter()
        .filter(|d| d.role == Role::Condition)
        .map(Difference::reason)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_have_one_role_each() {
        use ExperimentKind::*;
        assert_eq!(param_role(IndexBuild, "mwm"), Role::Setting);
        assert_eq!(param_role(IndexBuild, "rows"), Role::Condition);
        assert_eq!(param_role(IndexBuild, "seed"), Role::Other);
        assert_eq!(param_role(IndexBuild, "shuffle"), Role::Other);
        assert_eq!(param_role(Ingest, "batch"), Role::Setting);
        assert_eq!(param_role(Ingest, "payload-type"), Role::Condition);
        assert_eq!(param_role(Ingest, "repeat"), Role::Other);
        assert_eq!(param_role(Growth, "steps"), Role::Setting);
        assert_eq!(param_role(Growth, "churn"), Role::Condition);
        assert_eq!(param_role(Growth, "fill-limit"), Role::Other);
        // A parameter pglab does not know yet is a condition until it is classified.
        assert_eq!(param_role(Growth, "something-new"), Role::Condition);
    }

    #[test]
    fn a_difference_reads_as_a_reason() {
        let d = Difference {
            name: "rows".into(),
            baseline: Some("200k".into()),
            candidate: Some("2M".into()),
            role: Role::Condition,
        };
        assert_eq!(d.reason(), "rows 200k vs 2M");
        let d = Difference {
            baseline: None,
            ..d
        };
        assert_eq!(d.reason(), "rows none vs 2M");
    }

    #[test]
    fn trials_with_and_without_a_checkpoint_are_not_comparable() {
        let a = crate::report::example::cybertec_10m("a");
        let mut b = crate::report::example::cybertec_10m("b");
        let ReportBody::IndexBuild(ib) = &mut b.body else {
            panic!("an index-build example")
        };
        let before = took_checkpoints(&a).expect("the example records it");
        for t in &mut ib.trials {
            t.checkpoint = !before;
        }
        let d = differences(&a, &b, &[]);
        let c = d
            .iter()
            .find(|d| d.name == "checkpoint taken")
            .expect("the conditions differ");
        assert_eq!(c.role, Role::Condition);
        assert!(
            reasons(&d)
                .iter()
                .any(|r| r.starts_with("checkpoint taken"))
        );
        assert!(
            differences(&a, &a, &[])
                .iter()
                .all(|d| d.name != "checkpoint taken")
        );
    }

    #[test]
    fn another_cluster_shape_is_a_condition_unless_it_is_what_is_compared() {
        let a = crate::report::example::cybertec_10m("a");
        let mut b = crate::report::example::cybertec_10m("b");
        if let Some(s) = b.server.as_mut() {
            s.cluster = Some(crate::server::ClusterShape { workers: 2 });
        }
        let d = differences(&a, &b, &[]);
        let c = d
            .iter()
            .find(|d| d.name == "cluster")
            .expect("the shape differs");
        assert_eq!(c.role, Role::Condition);
        assert!(!reasons(&d).is_empty());
        let d = differences(&a, &b, &["cluster".to_string()]);
        let c = d.iter().find(|d| d.name == "cluster").unwrap();
        assert_eq!(c.role, Role::Setting);
        // The same shape on both sides is no difference at all.
        assert!(differences(&b, &b, &[]).iter().all(|d| d.name != "cluster"));
    }
}
