//! index-build results: one record per trial, the datasets they ran on, and the summary a
//! DBA reads first (per order: each setting's median with its interval, and the finding).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::experiment::lab::distribute::Distribution;
use crate::sql::quote::ident;

use super::spec::{IndexBuildSpec, Order};
use crate::measure::finding::Finding;
use crate::measure::verdict::Verdict;

/// A dataset the trials ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetInfo {
    pub table: String,
    pub order: Order,
    pub rows: u64,
    pub key_type: String,
    pub heap_bytes: i64,
    /// `pg_stats.correlation` of the key column: ≈1 sorted, ≈−1 reverse, ≈0 random.
    pub correlation: Option<f64>,
    /// True when an existing table with the same spec was reused.
    pub reused: bool,
    /// Seconds spent generating (0 when reused).
    pub generate_seconds: f64,
    /// Citus: how the dataset is distributed (none: a plain table).
    #[serde(default)]
    pub distribution: Distribution,
    /// The schema of an existing table built on in place (None: the lab schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The indexed columns (empty: `id`, a generated dataset's key).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
    /// The index the trials build (empty: `<table>_idx`; on a dataset of pglab's own,
    /// `<table>_idx_<run id>`, see [`super::trial::run_index_name`]).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub index: String,
}

impl DatasetInfo {
    /// The schema the table (and so its index) lives in.
    pub(crate) fn schema_in<'a>(&'a self, lab: &'a str) -> &'a str {
        self.schema.as_deref().unwrap_or(lab)
    }

    /// `"schema"."table"`.
    pub(crate) fn qualified(&self, lab: &str) -> String {
        format!("{}.{}", ident(self.schema_in(lab)), ident(&self.table))
    }

    /// The index's name (it lives in the table's schema).
    pub(crate) fn index_name(&self) -> String {
        if self.index.is_empty() {
            super::trial::index_name(&self.table)
        } else {
            self.index.clone()
        }
    }

    pub(crate) fn index_qualified(&self, lab: &str) -> String {
        format!(
            "{}.{}",
            ident(self.schema_in(lab)),
            ident(&self.index_name())
        )
    }

    /// `(id)` or `("a", "b")`: what the index is on.
    pub(crate) fn columns_sql(&self) -> String {
        if self.columns.is_empty() {
            return "(id)".into();
        }
        let cols: Vec<String> = self.columns.iter().map(|c| ident(c)).collect();
        format!("({})", cols.join(", "))
    }
}

/// One timed `CREATE INDEX`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexTrial {
    pub order: Order,
    pub rows: u64,
    pub key_type: String,
    /// As given, e.g. "64MB".
    pub maintenance_work_mem: String,
    pub maintenance_work_mem_bytes: u64,
    pub workers_requested: u32,
    /// Parallel workers the server actually launched.
    pub workers_launched: u32,
    /// 1-based repeat number (0 for a warm-up).
    pub repeat: u32,
    pub warmup: bool,
    pub seconds: f64,
    /// Seconds per `pg_stat_progress_create_index` phase.
    pub phase_seconds: BTreeMap<String, f64>,
    pub index_bytes: i64,
    /// Temporary file bytes written during the build (`pg_stat_database.temp_bytes` delta).
    pub temp_bytes: i64,
    pub checkpoint: bool,
    /// How the sort went, from `trace_sort` (e.g. "external sort, 14 runs").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<String>,
    /// The sort's method and its bytes as a typed fact, what sentences are built from (None:
    /// `trace_sort` said nothing, or a record from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_method: Option<super::SortMethod>,
    /// What other processes took from the host during the build (None: not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::host::load::TrialHost>,
    /// Which combination of the swept server settings (`--set`) the build ran with: an index
    /// into the spec's combinations (0 when nothing is swept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub combo: usize,
    /// The swept settings as `SHOW` reported them in the builder's session.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// The dataset's distribution and the cluster's node count.
    #[serde(default)]
    pub distribution: Distribution,
    /// The `maintenance_work_mem` the build ran with when it is not the setting's: a sample of
    /// fraction f builds the setting M at M·f (PostgreSQL's least, 1MB, at the lowest), so it
    /// sorts as the whole table would at M. None: built at the setting itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub built_at_bytes: Option<u64>,
}

impl IndexTrial {
    /// Whether the build ran beside a busy neighbour (see [`crate::host::load::TrialHost::busy`]).
    pub fn beside_busy_neighbour(&self) -> bool {
        self.host.is_some_and(|h| h.busy())
    }

    /// How this build sorted: the recorded method, else an external sort when it wrote
    /// temporary files (the bytes it wrote); None when nothing says.
    pub(crate) fn sort_fact(&self) -> Option<super::SortMethod> {
        self.sort_method.or_else(|| {
            (self.temp_bytes > 0).then_some(super::SortMethod::External {
                disk_kb: self.temp_bytes as u64 / 1024,
            })
        })
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[cfg(any(test, feature = "fixtures"))]
impl IndexTrial {
    #[cfg(test)]
    /// A timed build for tests: `seconds` at `mwm` with the workers asked for and launched,
    /// nothing else recorded.
    pub(crate) fn example(
        order: Order,
        rows: u64,
        mwm: &crate::measure::units::Size,
        workers: (u32, u32),
        repeat: u32,
        seconds: f64,
    ) -> IndexTrial {
        IndexTrial {
            order,
            rows,
            key_type: "int4".into(),
            maintenance_work_mem: mwm.text.clone(),
            maintenance_work_mem_bytes: mwm.bytes,
            workers_requested: workers.0,
            workers_launched: workers.1,
            repeat,
            warmup: false,
            seconds,
            phase_seconds: Default::default(),
            index_bytes: 1,
            temp_bytes: 0,
            checkpoint: true,
            sort: None,
            sort_method: None,
            host: None,
            combo: 0,
            settings: Default::default(),
            distribution: Default::default(),
            built_at_bytes: None,
        }
    }
}

/// One setting of an order — a `maintenance_work_mem` at a worker count — over its repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MwmStat {
    pub maintenance_work_mem: String,
    pub maintenance_work_mem_bytes: u64,
    /// Timed builds.
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// The confidence interval of the median: two of the trials themselves (order statistics).
    #[serde(default)]
    pub ci_low: f64,
    #[serde(default)]
    pub ci_high: f64,
    /// Confidence `[ci_low, ci_high]` actually reaches, 0..1: below the requested confidence
    /// when there are too few trials for it (then the interval is `[min, max]`).
    #[serde(default)]
    pub level: f64,
    /// This setting against the best of its order: `slower`, `no significant difference` or
    /// `too few trials`. None for the best itself and when the order has one setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_best: Option<Verdict>,
    /// Shown as good as the best of its order: within the smallest effect of every setting
    /// that could be the best (the best itself when it is shown so).
    #[serde(default)]
    pub equivalent: bool,
    /// Spread (max−min)/median above 10%.
    pub noisy: bool,
}

/// The settings of one order at one worker count (one line of the chart).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    pub order: Order,
    pub workers: u32,
    /// The swept server settings of this line (`--set`), e.g. `wal_compression=pglz`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub settings: String,
    /// Least memory first.
    pub by_mwm: Vec<MwmStat>,
}

/// A setting of a sweep: what `SET` applies it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingRef {
    pub workers: u32,
    pub maintenance_work_mem: String,
    pub maintenance_work_mem_bytes: u64,
    /// The combination of swept server settings (`--set`): its index and its values.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub combo: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: crate::experiment::lab::whatif::Combo,
}

/// What one order's sweep found: every (workers, maintenance_work_mem) setting that ran,
/// cheapest first, decided by the statistics core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderSummary {
    pub order: Order,
    /// Aligned with `finding.settings`: what each label stands for.
    pub settings: Vec<SettingRef>,
    pub finding: Finding,
}

impl OrderSummary {
    /// The setting a label of the finding stands for.
    pub(crate) fn setting(&self, label: &str) -> Option<&SettingRef> {
        let i = self
            .finding
            .settings
            .iter()
            .position(|s| s.label == label)?;
        self.settings.get(i)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexSummary {
    pub groups: Vec<GroupSummary>,
    /// One per order that ran, with its finding.
    #[serde(default)]
    pub orders: Vec<OrderSummary>,
    /// Things that may have skewed the numbers.
    pub confounders: Vec<String>,
    /// One sentence per order, e.g. "random: 16MB..1GB are within 5% of the best (no
    /// significant difference); 16MB is enough, more bought nothing measurable".
    pub findings: Vec<String>,
}

/// The index-build part of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredReport")]
pub struct IndexBuildReport {
    pub params: IndexBuildSpec,
    pub datasets: Vec<DatasetInfo>,
    pub trials: Vec<IndexTrial>,
    pub summary: IndexSummary,
    /// The existing table built on (`table`), with where its data came from and, for a
    /// sampled run, the projections to the whole table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own: Option<super::own_table::OwnTableInfo>,
    /// What the run measured, in the words every report's first line uses: "projection from a
    /// 10% sample of public.ev (k), 3M rows: …" (empty: generated data, said by its rows).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub headline: String,
}

impl IndexBuildReport {
    pub fn new(spec: &IndexBuildSpec) -> Self {
        IndexBuildReport {
            params: spec.clone(),
            datasets: vec![],
            trials: vec![],
            summary: IndexSummary::default(),
            own: None,
            headline: String::new(),
        }
    }
}

/// A report as stored. Records written before verdicts existed carry no per-order findings:
/// they are summarized again from their trials on load, so old runs read in the same words.
#[derive(Deserialize)]
struct StoredReport {
    params: IndexBuildSpec,
    datasets: Vec<DatasetInfo>,
    trials: Vec<IndexTrial>,
    summary: IndexSummary,
    #[serde(default)]
    own: Option<super::own_table::OwnTableInfo>,
    #[serde(default)]
    headline: String,
}

impl From<StoredReport> for IndexBuildReport {
    fn from(s: StoredReport) -> IndexBuildReport {
        let mut r = IndexBuildReport {
            params: s.params,
            datasets: s.datasets,
            trials: s.trials,
            summary: s.summary,
            own: s.own,
            headline: s.headline,
        };
        if r.summary.orders.is_empty() && r.trials.iter().any(|t| !t.warmup) {
            let kept = r.summary.confounders.clone();
            r.summarize(&kept);
        }
        r
    }
}
