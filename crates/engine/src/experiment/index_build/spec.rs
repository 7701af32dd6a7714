//! index-build parameters: what the editor, the flags and the presets set.

use serde::{Deserialize, Serialize};

use crate::experiment::lab::checkpoint::CheckpointMode;
use crate::experiment::lab::decision::{self, DecisionParams, Repeat};
use crate::experiment::lab::field::{
    Cost, FieldDef, FieldErrors, FieldKind, FieldReader, ParamText,
};
use crate::experiment::lab::whatif::SettingsSweep;
use crate::measure::units::{Size, format_count};

use super::spec_values::{check_citus, distribute_of, mwm_of, orders_of, own_table_of, shards_of};

pub(crate) const ORDERS: &[&str] = &["sorted", "random", "reverse", "partial:5"];

pub const FIELDS: &[FieldDef] = &[
    FieldDef {
        key: "rows",
        help: "rows in the table (10k, 5M, 1e8)",
        default: "1M",
        kind: FieldKind::Count,
    },
    FieldDef {
        key: "key",
        help: "type of the indexed column",
        default: "int4",
        kind: FieldKind::Choice(&["int4", "int8", "text", "uuid"]),
    },
    FieldDef {
        key: "order",
        help: "input order(s): sorted, random, reverse, partial:P (P% displaced)",
        default: "sorted,random",
        kind: FieldKind::ChoiceList(ORDERS),
    },
    super::table_spec::TABLE,
    super::table_spec::COLUMN,
    super::table_spec::SAMPLE,
    super::table_spec::WRITES,
    FieldDef {
        key: "mwm",
        help: "maintenance_work_mem: 64MB, a list 1MB,16MB or a range 1MB..4GB*4",
        default: "1MB,16MB,64MB,256MB,1GB",
        kind: FieldKind::SizeList,
    },
    FieldDef {
        key: "workers",
        help: "max_parallel_maintenance_workers: 0, or a list 0,2",
        default: "0",
        kind: FieldKind::CountList,
    },
    crate::experiment::lab::whatif::SET,
    decision::repeat_field(
        "timed builds per setting (median of these), or auto: until the verdicts are decided",
        "6",
    ),
    decision::MAX_REPEAT,
    decision::MIN_EFFECT,
    decision::CONFIDENCE,
    crate::experiment::lab::checkpoint::FIELD,
    FieldDef {
        key: "warmup",
        help: "one untimed build per dataset first (on/off)",
        default: "off",
        kind: FieldKind::Bool,
    },
    FieldDef {
        key: "shuffle",
        help: "shuffle the trials of each round (seeded) on top of interleaving the settings (on/off)",
        default: "off",
        kind: FieldKind::Bool,
    },
    FieldDef {
        key: "method",
        help: "index access method",
        default: "btree",
        kind: FieldKind::Choice(&["btree", "hash", "brin"]),
    },
    FieldDef {
        key: "concurrently",
        help: "CREATE INDEX CONCURRENTLY (on/off)",
        default: "off",
        kind: FieldKind::Bool,
    },
    FieldDef {
        key: "seed",
        help: "seed of the shuffles (same seed, same data)",
        default: "42",
        kind: FieldKind::Number,
    },
    crate::experiment::lab::distribute::field(
        &["none", "id"],
        "Citus: none (a plain table) or id (the dataset distributed by id; CREATE INDEX propagates to the shards)",
    ),
    FieldDef {
        key: "shards",
        help: "Citus: shards of the distributed dataset, or default (the server's citus.shard_count)",
        default: "default",
        kind: FieldKind::Count,
    },
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum KeyType {
    Int4,
    Int8,
    Text,
    Uuid,
}

impl KeyType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            KeyType::Int4 => "int4",
            KeyType::Int8 => "int8",
            KeyType::Text => "text",
            KeyType::Uuid => "uuid",
        }
    }
    /// Approximate heap bytes per `(id KEY, name text)` row including line pointer.
    pub(crate) fn heap_bytes_per_row(self) -> u64 {
        match self {
            KeyType::Int4 => 37,
            KeyType::Int8 => 41,
            KeyType::Text => 49,
            KeyType::Uuid => 53,
        }
    }
    /// Approximate btree bytes per row at the default fill factor.
    pub(crate) fn index_bytes_per_row(self) -> u64 {
        match self {
            KeyType::Int4 | KeyType::Int8 => 23,
            KeyType::Text => 31,
            KeyType::Uuid => 35,
        }
    }
}

/// The order rows are stored in, relative to the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Order {
    Sorted,
    Random,
    Reverse,
    /// P% of rows displaced from their sorted position.
    Partial(u8),
    /// An existing table itself (`table`, on the sandbox).
    Table,
    /// A copy of an existing table's rows in the lab schema: this many millionths of them.
    Copy(u32),
}

impl Order {
    pub fn parse(s: &str) -> Result<Order, String> {
        match s.trim() {
            "sorted" => Ok(Order::Sorted),
            "random" => Ok(Order::Random),
            "reverse" => Ok(Order::Reverse),
            other => {
                if other == "table" {
                    return Ok(Order::Table);
                }
                if other == "copy" {
                    return Ok(Order::Copy(1_000_000));
                }
                if let Some(p) = other.strip_prefix("copy:") {
                    let v = crate::experiment::lab::decision::parse_percent(p)?;
                    return Ok(Order::Copy((v * 1_000_000.0).round().clamp(1.0, 1e6) as u32));
                }
                if let Some(p) = other
                    .strip_prefix("partial:")
                    .or_else(|| other.strip_prefix("partial"))
                {
                    let p = p.trim_start_matches(':').trim_end_matches('%');
                    let p: u8 = p.parse().map_err(|_| {
                        format!(
                            "'{other}': write partial:P with P a percentage 1..99, e.g. partial:5"
                        )
                    })?;
                    if !(1..=99).contains(&p) {
                        return Err(format!("'{other}': P must be 1..99"));
                    }
                    Ok(Order::Partial(p))
                } else {
                    Err(format!(
                        "unknown order '{other}': use sorted, random, reverse or partial:P"
                    ))
                }
            }
        }
    }
    pub fn name(self) -> String {
        match self {
            Order::Sorted => "sorted".into(),
            Order::Random => "random".into(),
            Order::Reverse => "reverse".into(),
            Order::Partial(p) => format!("partial:{p}"),
            Order::Table => "table".into(),
            Order::Copy(1_000_000) => "copy".into(),
            Order::Copy(ppm) => format!(
                "copy:{}",
                crate::experiment::lab::decision::format_percent(ppm as f64 / 1e6)
            ),
        }
    }

    /// The share of an existing table's rows a copy holds (1 for the table itself).
    pub fn fraction(self) -> Option<f64> {
        match self {
            Order::Table => Some(1.0),
            Order::Copy(ppm) => Some(ppm as f64 / 1e6),
            _ => None,
        }
    }
}

impl From<Order> for String {
    fn from(o: Order) -> String {
        o.name()
    }
}

impl TryFrom<String> for Order {
    type Error = String;
    fn try_from(s: String) -> Result<Order, String> {
        Order::parse(&s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexMethod {
    Btree,
    Hash,
    Brin,
}

impl IndexMethod {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            IndexMethod::Btree => "btree",
            IndexMethod::Hash => "hash",
            IndexMethod::Brin => "brin",
        }
    }
}

/// A valid index-build specification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexBuildSpec {
    pub rows: u64,
    pub key: KeyType,
    pub orders: Vec<Order>,
    pub mwm: Vec<Size>,
    pub workers: Vec<u32>,
    pub repeat: Repeat,
    #[serde(flatten)]
    pub decision: DecisionParams,
    /// Server settings swept as one more dimension (`--set`).
    #[serde(default, skip_serializing_if = "SettingsSweep::is_empty")]
    pub set: SettingsSweep,
    /// A `CHECKPOINT` before each trial: auto (pglab's sandbox only), on, off.
    #[serde(default, skip_serializing_if = "CheckpointMode::is_auto")]
    pub checkpoint: CheckpointMode,
    pub warmup: bool,
    pub shuffle: bool,
    pub method: IndexMethod,
    pub concurrently: bool,
    pub seed: u64,
    /// Citus: the dataset distributed by `id` (false: a plain table).
    #[serde(default)]
    pub distribute: bool,
    /// Citus: shards of the distributed dataset (None: the server's `citus.shard_count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<u32>,
    /// Build on an existing table instead of a generated dataset (`table`, `column`,
    /// `sample`); then `rows`, `key` and `order` are not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<super::table_spec::OwnTable>,
    /// `writes = lab`: on a server pglab did not start, the run may write there (its
    /// generated datasets, or an existing table's copies, in the lab schema, dropped at the
    /// end); without it the run is refused there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub writes_lab: bool,
}

/// PostgreSQL's limits for maintenance_work_mem: 1MB .. 2147483647 kB.
pub const MWM_MIN: u64 = 1024 * 1024;
pub const MWM_MAX: u64 = 2_147_483_647 * 1024;

/// The `key` field's values.
const KEYS: &[(&str, KeyType)] = &[
    ("int4", KeyType::Int4),
    ("int8", KeyType::Int8),
    ("text", KeyType::Text),
    ("uuid", KeyType::Uuid),
];

/// The `method` field's values.
const METHODS: &[(&str, IndexMethod)] = &[
    ("btree", IndexMethod::Btree),
    ("hash", IndexMethod::Hash),
    ("brin", IndexMethod::Brin),
];

impl IndexBuildSpec {
    /// Read every field (one sentence per bad field, in the fields' order), then the checks
    /// across fields: Citus, the existing table, the key's row limit.
    pub fn parse(p: &ParamText) -> Result<IndexBuildSpec, FieldErrors> {
        let mut r = FieldReader::new(p);
        let rows = r.count("rows", 1, 4_000_000_000);
        let key = r.choice("key", KEYS);
        let orders = r.get("order", vec![Order::Sorted], orders_of);
        let mwm = r.get("mwm", vec![], mwm_of);
        let workers = r
            .count_list("workers", 0, 1024)
            .into_iter()
            .map(|w| w as u32)
            .collect();
        let repeat = r.get("repeat", Repeat::Fixed(1), |s| Repeat::parse(s, 1000));
        let decision = DecisionParams::read(&mut r);
        let set = r.settings_read(
            &[
                ("maintenance_work_mem", "mwm"),
                ("max_parallel_maintenance_workers", "workers"),
            ],
            super::UNREAD_SETTINGS,
        );
        let checkpoint = CheckpointMode::read(&mut r);
        let warmup = r.bool("warmup");
        let shuffle = r.bool("shuffle");
        let method = r.choice("method", METHODS);
        let concurrently = r.bool("concurrently");
        let seed = r.whole("seed", 42);
        let distribute = r.get("distribute", false, distribute_of);
        let shards = r.get("shards", None, shards_of);
        check_citus(&mut r, distribute, shards, concurrently);
        let table = own_table_of(&mut r, distribute, method);
        let writes_lab = crate::experiment::lab::lab_writes::read(&mut r);
        if key == KeyType::Uuid && rows > u32::MAX as u64 {
            r.errors.push(("rows".into(), "at most 4G rows".into()));
        }
        r.finish(IndexBuildSpec {
            rows,
            key,
            orders,
            mwm,
            workers,
            repeat,
            decision,
            set,
            checkpoint,
            warmup,
            shuffle,
            method,
            concurrently,
            seed,
            distribute,
            shards,
            table,
            writes_lab,
        })
    }

    pub fn to_text(&self) -> ParamText {
        let b = |v: bool| if v { "on" } else { "off" }.to_string();
        let mut t = ParamText::from([
            ("rows".into(), format_count(self.rows as f64)),
            ("key".into(), self.key.as_str().into()),
            (
                "order".into(),
                self.orders
                    .iter()
                    .map(|o| o.name())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            (
                "mwm".into(),
                self.mwm
                    .iter()
                    .map(|m| m.text.clone())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            (
                "workers".into(),
                self.workers
                    .iter()
                    .map(|w| w.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            ("repeat".into(), self.repeat.text()),
            ("warmup".into(), b(self.warmup)),
            ("shuffle".into(), b(self.shuffle)),
            ("method".into(), self.method.as_str().into()),
            ("concurrently".into(), b(self.concurrently)),
            ("seed".into(), self.seed.to_string()),
        ]);
        // Written only when used, so the spec keys of runs on one server stay as they were.
        if !self.checkpoint.is_auto() {
            t.insert("checkpoint".into(), self.checkpoint.as_str().into());
        }
        if self.distribute {
            t.insert("distribute".into(), "id".into());
        }
        if let Some(n) = self.shards {
            t.insert("shards".into(), n.to_string());
        }
        // On an existing table the generated dataset's fields mean nothing: they are left
        // out, so the spec key names the table instead.
        if let Some(own) = &self.table {
            for k in ["rows", "key", "order"] {
                t.remove(k);
            }
            t.extend(own.text());
        }
        if self.writes_lab {
            t.insert("writes".into(), "lab".into());
        }
        self.decision.write(&mut t);
        if !self.set.is_empty() {
            t.insert("set".into(), self.set.text());
        }
        t
    }

    /// Timed trials at the most (warm-ups not counted; `repeat = auto` may stop earlier).
    pub fn trials(&self) -> usize {
        self.datasets()
            * self.set.combo_count()
            * self.mwm.len()
            * self.workers.len()
            * self.repeat.most(self.decision.max_repeat) as usize
    }

    /// Datasets the run builds on: one per order, or the existing table's (see
    /// [`super::table_spec::OwnTable::orders`]).
    pub(crate) fn datasets(&self) -> usize {
        match &self.table {
            Some(t) => t.datasets(),
            None => self.orders.len(),
        }
    }

    pub(crate) fn heap_bytes(&self) -> u64 {
        self.rows * self.key.heap_bytes_per_row()
    }

    pub(crate) fn estimate(&self) -> Cost {
        if self.table.is_some() {
            // The table's size is known only on the server: the run checks its disk there.
            return Cost {
                trials: self.trials(),
                connections: 3,
                ..Cost::default()
            };
        }
        let heap = self.heap_bytes();
        let index = self.rows * self.key.index_bytes_per_row();
        Cost {
            trials: self.trials(),
            rows: self.rows * self.orders.len() as u64,
            // One table per order, kept for reuse.
            table_bytes: heap * self.orders.len() as u64,
            index_bytes: index,
            // An external sort spills about the index's size; WAL of the load and one build.
            temp_bytes: index,
            wal_bytes: heap + index,
            // The run's control session (holding its advisory lock), the builder, the watcher.
            connections: 3,
            trial_rows: self.rows,
            trial_cap_s: None,
        }
    }
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
