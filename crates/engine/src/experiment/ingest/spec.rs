//! ingest parameters: what the editor, the flags and the presets set, and what a run costs.
//! The configurations they expand to are in `plan`, the vocabulary in `kinds`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::experiment::lab::checkpoint::CheckpointMode;
use crate::experiment::lab::decision::{self, DecisionParams, Repeat};
use crate::experiment::lab::field::{
    Cost, FieldDef, FieldErrors, FieldKind, FieldReader, ParamText,
};
use crate::experiment::lab::standby_fault::StandbyFault;
use crate::experiment::lab::whatif::SettingsSweep;
use crate::measure::units::{Size, format_count, parse_count_list, parse_duration, parse_size};

use super::kinds::{
    BYTES_CAP, INDEX_BYTES_PER_ROW, INDEXES_MAX, METHODS, Method, PAYLOAD_MAX, PayloadType,
    ROW_OVERHEAD_BYTES, SYNC_VALUES, SyncCommit, VALUES_MAX_BATCH, VALUES_MAX_STATEMENT_BYTES,
};

pub const FIELDS: &[FieldDef] = &[
    FieldDef {
        key: "method",
        help: "insert (1 row per commit), insert-tx (B inserts per transaction), values (one INSERT of B rows), copy (binary COPY of B rows); a list",
        default: "insert-tx,copy",
        kind: FieldKind::ChoiceList(METHODS),
    },
    FieldDef {
        key: "batch",
        help: "rows per transaction or statement: 100, a list 1,10,100, a range 1..1024*2, or sqrt2 (1,2,4,5,8,11,…,1024); insert always uses 1",
        default: "1,16,256",
        kind: FieldKind::CountList,
    },
    FieldDef {
        key: "clients",
        help: "concurrent sessions loading at once, each on its own connection: 1, or a list 1,2,3",
        default: "1",
        kind: FieldKind::CountList,
    },
    FieldDef {
        key: "sync-commit",
        help: "synchronous_commit of the loading sessions (SET, this session only): on, off, or on,off",
        default: "on",
        kind: FieldKind::ChoiceList(SYNC_VALUES),
    },
    FieldDef {
        key: "rows",
        help: "rows per trial, split exactly among the clients (10k, 1M)",
        default: "1M",
        kind: FieldKind::Count,
    },
    FieldDef {
        key: "duration",
        help: "stop each trial after this long even if rows remain (30s, 2min); off: until all rows are in",
        default: "2s",
        kind: FieldKind::Duration,
    },
    FieldDef {
        key: "payload",
        help: "bytes of payload per row (100B, 1kB, 16kB): the text, or the whole JSON document",
        default: "100B",
        kind: FieldKind::Size,
    },
    FieldDef {
        key: "payload-type",
        help: "text column, or a jsonb document",
        default: "text",
        kind: FieldKind::Choice(&["text", "json"]),
    },
    FieldDef {
        key: "indexes",
        help: "secondary btree indexes 0..8: the first on id, the others on 8-byte keys from the payload",
        default: "0",
        kind: FieldKind::Count,
    },
    FieldDef {
        key: "append",
        help: "on: every trial appends to one table, to see decay as it grows; off: a fresh table per trial",
        default: "off",
        kind: FieldKind::Bool,
    },
    FieldDef {
        key: "pipeline",
        help: "insert-tx sends a transaction's inserts without waiting for each reply (on/off)",
        default: "off",
        kind: FieldKind::Bool,
    },
    FieldDef {
        key: "warmup",
        help: "one untimed trial after each restart of the sandbox (--set with a restart setting), so the timed ones do not start on cold caches (on/off)",
        default: "off",
        kind: FieldKind::Bool,
    },
    crate::experiment::lab::whatif::SET,
    crate::experiment::lab::standby_fault::FIELD,
    crate::experiment::lab::standby_rtt::FIELD,
    decision::repeat_field(
        "trials per configuration (median of these), or auto: until the verdicts are decided",
        "5",
    ),
    decision::MAX_REPEAT,
    decision::MIN_EFFECT,
    decision::CONFIDENCE,
    crate::experiment::lab::checkpoint::FIELD,
    crate::experiment::lab::distribute::field(
        &["none", "id"],
        "Citus: none (a plain table) or id (each trial's table distributed by id; the coordinator routes the rows)",
    ),
    crate::experiment::lab::lab_writes::FIELD,
];

/// A valid ingest specification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngestSpec {
    pub methods: Vec<Method>,
    pub batches: Vec<u64>,
    pub clients: Vec<u32>,
    pub sync: Vec<SyncCommit>,
    /// Rows per trial (all clients together).
    pub rows: u64,
    /// Time limit per trial in seconds (None: until `rows` are in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    pub payload: Size,
    pub payload_type: PayloadType,
    pub indexes: u32,
    pub append: bool,
    pub pipeline: bool,
    /// One untimed trial after each restart of the sandbox (records before it: off).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmup: bool,
    /// Trials per configuration (records before repeats had one).
    #[serde(default = "one_repeat")]
    pub repeat: Repeat,
    #[serde(flatten)]
    pub decision: DecisionParams,
    /// Server settings swept as one more dimension (`--set`).
    #[serde(default, skip_serializing_if = "SettingsSweep::is_empty")]
    pub set: SettingsSweep,
    /// A `CHECKPOINT` before each trial: auto (pglab's sandbox only), on, off.
    #[serde(default, skip_serializing_if = "CheckpointMode::is_auto")]
    pub checkpoint: CheckpointMode,
    /// The disk's fsync rate (8 kB write + fdatasync per second) when the caller already
    /// probed it (the TUI's Host pane); not a field. When absent and a local data directory
    /// is known, the run probes it for 2 s itself before `insert` trials that wait for flush.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync_ops_per_s: Option<f64>,
    /// The disk's sequential write rate (bytes/s, written and fdatasynced) when the caller
    /// probed it (the TUI's Host pane); not a field. With the WAL bytes a row costs, it is the
    /// ceiling drawn on the rows/s chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_write_bytes_per_s: Option<f64>,
    /// Citus: each trial's table distributed by `id` (false: a plain table).
    #[serde(default)]
    pub distribute: bool,
    /// The sandbox's standby stopped or paused during each trial (`--standby-fault`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<StandbyFault>,
    /// `writes = lab`: on a server pglab did not start, the run may create its tables there
    /// (in the lab schema, dropped at the end); without it the run is refused there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub writes_lab: bool,
}

fn one_repeat() -> Repeat {
    Repeat::Fixed(1)
}

fn list_of<T: PartialEq>(
    s: &str,
    what: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    if s.is_empty() {
        return Err(format!("the {what} list is empty: give at least one"));
    }
    let mut v = Vec::new();
    for item in s.split(',') {
        let x = parse(item.trim())?;
        if !v.contains(&x) {
            v.push(x);
        }
    }
    Ok(v)
}

fn parse_limit(s: &str) -> Result<Option<f64>, String> {
    if matches!(s, "" | "off" | "none" | "0") {
        return Ok(None);
    }
    let d: Duration = parse_duration(s).map_err(|e| e.0)?;
    if d.is_zero() {
        return Ok(None);
    }
    if d < Duration::from_millis(100) {
        return Err(format!(
            "'{s}' is too short to measure: give at least 100ms, or off"
        ));
    }
    Ok(Some(d.as_secs_f64()))
}

/// `batch`: rows per transaction or statement, 1..1M, each once and in order.
fn batches_of(s: &str) -> Result<Vec<u64>, String> {
    let mut v: Vec<u64> = Vec::new();
    for n in parse_count_list(s).map_err(|e| e.0)? {
        if n == 0 {
            return Err("batch 0 holds no rows: a batch is at least 1 row".into());
        }
        if n > 1_000_000 {
            return Err(format!("batch {n} is above the limit of 1M rows"));
        }
        if !v.contains(&n) {
            v.push(n);
        }
    }
    Ok(v)
}

/// `clients`: concurrent loading sessions, 1..1000, each once and in order.
fn clients_of(s: &str) -> Result<Vec<u32>, String> {
    let mut v: Vec<u32> = Vec::new();
    for n in parse_count_list(s).map_err(|e| e.0)? {
        if n == 0 {
            return Err("0 clients load nothing: give at least 1".into());
        }
        if n > 1000 {
            return Err(format!("{n} clients is above the limit of 1000"));
        }
        if !v.contains(&(n as u32)) {
            v.push(n as u32);
        }
    }
    Ok(v)
}

/// `payload`: bytes per row, at most [`PAYLOAD_MAX`].
fn payload_of(s: &str) -> Result<Size, String> {
    let size = parse_size(s).map_err(|e| e.0)?;
    if size.bytes > PAYLOAD_MAX {
        return Err(format!(
            "{} per row is above the limit of 64MB (PostgreSQL fields stop at 1GB, and every row is built in memory)",
            size.text
        ));
    }
    Ok(size)
}

/// `distribute`: whether each trial's table is distributed by `id`.
fn distribute_of(s: &str) -> Result<bool, String> {
    match s {
        // Missing from the text form of a run on one server: none.
        "none" | "" => Ok(false),
        "id" => Ok(true),
        other => Err(format!("'{other}' is not one of none, id")),
    }
}

/// Every client loads at least one row.
fn check_rows_per_client(r: &mut FieldReader<'_>, rows: u64, clients: &[u32]) {
    let max_clients = clients.iter().copied().max().unwrap_or(1) as u64;
    if rows < max_clients {
        r.errors.push((
            "rows".into(),
            format!(
                "{rows} rows cannot be split among {max_clients} clients: give at least one row per client"
            ),
        ));
    }
}

/// With `values`, every batch fits one INSERT: its parameters and its statement size.
fn check_values_batches(
    r: &mut FieldReader<'_>,
    methods: &[Method],
    batches: &[u64],
    payload: &Size,
) {
    if !methods.contains(&Method::Values) {
        return;
    }
    if let Some(b) = batches.iter().find(|b| **b > VALUES_MAX_BATCH) {
        r.errors.push((
            "batch".into(),
            format!(
                "batch {b} is too large for values: one INSERT takes at most {VALUES_MAX_BATCH} rows (65535 parameters, 2 per row); use copy for larger batches"
            ),
        ));
    } else if let Some(b) = batches
        .iter()
        .find(|b| **b * payload.bytes > VALUES_MAX_STATEMENT_BYTES)
    {
        r.errors.push((
            "batch".into(),
            format!(
                "batch {b} of {} rows makes one values statement larger than 256MB: use smaller batches or copy",
                payload.text
            ),
        ));
    }
}

impl IngestSpec {
    /// Read every field (one sentence per bad field, in the fields' order); the checks across
    /// the load's fields (rows per client, values batches) come before the measuring ones.
    pub fn parse(p: &ParamText) -> Result<IngestSpec, FieldErrors> {
        let mut r = FieldReader::new(p);
        let methods = r.get("method", vec![Method::Copy], |s| {
            list_of(s, "method", Method::parse)
        });
        let batches = r.get("batch", vec![1], batches_of);
        let clients = r.get("clients", vec![1], clients_of);
        let sync = r.get("sync-commit", vec![SyncCommit::On], |s| {
            list_of(s, "synchronous_commit", SyncCommit::parse)
        });
        let rows = r.count("rows", 1, 1_000_000_000_000);
        let duration_s = r.get("duration", None, parse_limit);
        let payload = r.get("payload", Size::from_bytes(100), payload_of);
        let payload_type = r.choice(
            "payload-type",
            &[("text", PayloadType::Text), ("json", PayloadType::Json)],
        );
        let indexes = r.count("indexes", 0, INDEXES_MAX) as u32;
        let append = r.bool("append");
        let pipeline = r.bool("pipeline");
        let warmup = r.bool("warmup");
        check_rows_per_client(&mut r, rows, &clients);
        check_values_batches(&mut r, &methods, &batches, &payload);
        let repeat = r.get("repeat", Repeat::Fixed(1), |s| Repeat::parse(s, 100));
        let decision = DecisionParams::read(&mut r);
        let mut set = r.settings(&[("synchronous_commit", "sync-commit")]);
        crate::experiment::lab::standby_fields::read_rtt(&mut r, &mut set);
        let checkpoint = CheckpointMode::read(&mut r);
        let distribute = r.get("distribute", false, distribute_of);
        let fault = r.get("standby-fault", None, |s| {
            let f = StandbyFault::parse(s)?;
            f.map_or(Ok(()), |f| f.check(duration_s))?;
            Ok(f)
        });
        let writes_lab = crate::experiment::lab::lab_writes::read(&mut r);
        r.finish(IngestSpec {
            methods,
            batches,
            clients,
            sync,
            rows,
            duration_s,
            payload,
            payload_type,
            indexes,
            append,
            pipeline,
            warmup,
            repeat,
            decision,
            set,
            checkpoint,
            fsync_ops_per_s: None,
            seq_write_bytes_per_s: None,
            distribute,
            fault,
            writes_lab,
        })
    }

    pub(crate) fn to_text(&self) -> ParamText {
        let b = |v: bool| if v { "on" } else { "off" }.to_string();
        let join = |v: Vec<String>| v.join(",");
        let mut t = ParamText::from([
            (
                "method".into(),
                join(
                    self.methods
                        .iter()
                        .map(|m| m.as_str().to_string())
                        .collect(),
                ),
            ),
            (
                "batch".into(),
                if self.batches == crate::measure::units::sqrt2_ladder(1024) {
                    "sqrt2".to_string()
                } else {
                    join(self.batches.iter().map(|n| n.to_string()).collect())
                },
            ),
            (
                "clients".into(),
                join(self.clients.iter().map(|n| n.to_string()).collect()),
            ),
            (
                "sync-commit".into(),
                join(self.sync.iter().map(|s| s.as_str().to_string()).collect()),
            ),
            ("rows".into(), format_count(self.rows as f64)),
            (
                "duration".into(),
                match self.duration_s {
                    None => "off".into(),
                    Some(s) if s.fract() == 0.0 => format!("{s}s"),
                    Some(s) => format!("{}ms", (s * 1000.0).round()),
                },
            ),
            ("payload".into(), self.payload.text.clone()),
            ("payload-type".into(), self.payload_type.as_str().into()),
            ("indexes".into(), self.indexes.to_string()),
            ("append".into(), b(self.append)),
            ("pipeline".into(), b(self.pipeline)),
            ("repeat".into(), self.repeat.text()),
        ]);
        if self.warmup {
            t.insert("warmup".into(), "on".into());
        }
        self.decision.write(&mut t);
        if !self.set.is_empty() {
            t.insert("set".into(), self.set.text());
        }
        // Written only when used, so the spec keys of runs on one server stay as they were.
        if !self.checkpoint.is_auto() {
            t.insert("checkpoint".into(), self.checkpoint.as_str().into());
        }
        if self.distribute {
            t.insert("distribute".into(), "id".into());
        }
        if let Some(f) = &self.fault {
            t.insert("standby-fault".into(), f.text());
        }
        if self.writes_lab {
            t.insert("writes".into(), "lab".into());
        }
        t
    }

    pub(crate) fn max_clients(&self) -> u32 {
        self.clients.iter().copied().max().unwrap_or(1)
    }

    /// Heap bytes of one row: the payload (at least the JSON skeleton) plus overhead.
    pub(crate) fn row_bytes(&self) -> u64 {
        let min_doc = match self.payload_type {
            PayloadType::Text => 0,
            PayloadType::Json => super::payload::json_skeleton_bytes(self.indexes),
        };
        self.payload.bytes.max(min_doc) + ROW_OVERHEAD_BYTES
    }

    pub(crate) fn estimate(&self) -> Cost {
        let trials = self.trials() as u64;
        // Fresh tables are dropped after each trial; an appended one holds every trial's rows.
        let largest_rows = if self.append {
            self.rows.saturating_mul(trials)
        } else {
            self.rows
        };
        let table_bytes = largest_rows.saturating_mul(self.row_bytes());
        let index_bytes = largest_rows.saturating_mul(self.indexes as u64 * INDEX_BYTES_PER_ROW);
        // Absurd specs saturate here rather than overflow where the parts are added up.
        let cap = |b: u64| b.min(BYTES_CAP);
        Cost {
            trials: trials as usize,
            rows: self.rows.saturating_mul(trials),
            table_bytes: cap(table_bytes),
            index_bytes: cap(index_bytes),
            temp_bytes: 0,
            // WAL of one trial's load: the rows and their index entries, before a checkpoint
            // recycles it.
            wal_bytes: cap(self
                .rows
                .saturating_mul(self.row_bytes() + self.indexes as u64 * INDEX_BYTES_PER_ROW)),
            // The loading sessions and one control session.
            // The runner's control session (advisory lock), the experiment's own, one per client.
            connections: self.max_clients() + 2,
            trial_rows: self.rows,
            trial_cap_s: self.duration_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::spec::{ExperimentKind, ExperimentSpec};

    fn parse(pairs: &[(&str, &str)]) -> Result<IngestSpec, FieldErrors> {
        let p: ParamText = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        match ExperimentKind::Ingest.parse_spec(&p)? {
            ExperimentSpec::Ingest(s) => Ok(s),
            _ => panic!("not an ingest spec"),
        }
    }

    #[test]
    fn defaults_parse_and_round_trip() {
        let s = parse(&[]).unwrap();
        assert_eq!(s.methods, [Method::InsertTx, Method::Copy]);
        assert_eq!(s.batches, [1, 16, 256]);
        assert_eq!(s.clients, [1]);
        assert_eq!(s.sync, [SyncCommit::On]);
        // A million rows or 2 s, whichever comes first: no trial of the defaults is under
        // 100 ms (the short-trial confounder) and none takes long.
        assert_eq!(s.rows, 1_000_000);
        assert_eq!(s.duration_s, Some(2.0));
        // Three batches at once need 5 trials each to decide at 95%.
        assert_eq!(s.repeat, Repeat::Fixed(5));
        assert_eq!(s.plan().len(), 6);
        assert_eq!(s.trials(), 6 * 5);
        assert_eq!(IngestSpec::parse(&s.to_text()).unwrap(), s);
    }

    #[test]
    fn sqrt2_ladder_expands_to_the_couchdb_batches() {
        let s = parse(&[("batch", "sqrt2"), ("clients", "1,2,3")]).unwrap();
        assert_eq!(
            s.batches,
            [
                1, 2, 4, 5, 8, 11, 16, 22, 32, 45, 64, 90, 128, 181, 256, 362, 512, 724, 1024
            ]
        );
        assert_eq!(s.trials(), 2 * 19 * 3 * 5);
        assert_eq!(s.to_text()["batch"], "sqrt2");
        assert_eq!(IngestSpec::parse(&s.to_text()).unwrap(), s);
    }

    #[test]
    fn bad_values_name_their_field() {
        let e = parse(&[
            ("method", "upsert"),
            ("batch", "0"),
            ("clients", "0"),
            ("sync-commit", "maybe"),
        ])
        .unwrap_err();
        let keys: Vec<_> = e.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["method", "batch", "clients", "sync-commit"], "{e:?}");
        assert!(e[0].1.contains("unknown method 'upsert'"), "{e:?}");
        assert!(e[1].1.contains("batch 0"), "{e:?}");
        assert!(e[2].1.contains("0 clients"), "{e:?}");

        let e = parse(&[("method", "values"), ("batch", "40000")]).unwrap_err();
        assert_eq!(e[0].0, "batch");
        assert!(e[0].1.contains("65535"), "{e:?}");
        let e = parse(&[("payload", "1GB")]).unwrap_err();
        assert_eq!(e[0].0, "payload");
        let e = parse(&[("rows", "2"), ("clients", "3")]).unwrap_err();
        assert_eq!(e[0].0, "rows");
        let e = parse(&[("duration", "10 parsecs")]).unwrap_err();
        assert_eq!(e[0].0, "duration");
        let e = parse(&[("indexes", "9")]).unwrap_err();
        assert_eq!(e[0].0, "indexes");
    }

    #[test]
    fn durations_and_off() {
        assert_eq!(parse(&[("duration", "off")]).unwrap().duration_s, None);
        assert_eq!(parse(&[("duration", "0")]).unwrap().duration_s, None);
        let s = parse(&[("duration", "2min")]).unwrap();
        assert_eq!(s.duration_s, Some(120.0));
        assert_eq!(IngestSpec::parse(&s.to_text()).unwrap(), s);
        let s = parse(&[("duration", "1500ms")]).unwrap();
        assert_eq!(IngestSpec::parse(&s.to_text()).unwrap(), s);
    }

    #[test]
    fn estimate_counts_connections_and_disk() {
        let s = parse(&[("clients", "1,3"), ("rows", "1M"), ("payload", "1kB")]).unwrap();
        let c = s.estimate();
        assert_eq!(c.connections, 5);
        assert_eq!(c.table_bytes, 1_000_000 * (1024 + ROW_OVERHEAD_BYTES));
        assert_eq!(c.index_bytes, 0);
        let huge = parse(&[("rows", "1e12"), ("payload", "64MB")]).unwrap();
        assert!(huge.estimate().disk_bytes() >= 1 << 60);
        let appended = parse(&[("append", "on"), ("indexes", "2")]).unwrap();
        let c = appended.estimate();
        // Every trial of every round appends: 6 configurations × 5 repeats of up to 1M rows.
        assert_eq!(c.table_bytes, 30 * 1_000_000 * appended.row_bytes());
        assert_eq!(c.index_bytes, 30 * 1_000_000 * 2 * INDEX_BYTES_PER_ROW);
    }
}
