//! query parameters: the DBA's statements (or a pgbench-style script), what to sweep (server
//! settings, candidate indexes), how to measure (cache, repeats, throughput clients) and how
//! safely (the transaction the statements run in). Files named with `@FILE`, `--file` and
//! `--script` are read when the parameters are parsed (their readers are in `spec_values`), so a
//! missing file is a sentence before
//! anything runs, and the record keeps the text that ran.

use serde::{Deserialize, Serialize};

use super::protocol::{self, Protocol};
use super::script::Script;
use super::spec_values::{
    CACHES, WRITES, clients_of, duration_of, format_duration, given, read_candidates,
    read_file_statements, read_script, read_statements,
};
use super::sqltext::{self, Statement};
use crate::experiment::lab::decision::{DecisionParams, Repeat};
use crate::experiment::lab::field::{Cost, FieldErrors, FieldReader, ParamText};
use crate::experiment::lab::standby_fault::StandbyFault;
use crate::experiment::lab::standby_fields;
use crate::experiment::lab::whatif::SettingsSweep;

/// How warm the caches are when a timed execution starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cache {
    /// One untimed execution per combination first.
    Warm,
    /// A restart of the sandbox (and the OS page cache dropped where pglab may) before every
    /// timed execution.
    Cold,
}

impl Cache {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Cache::Warm => "warm",
            Cache::Cold => "cold",
        }
    }
}

/// The transaction the DBA's statements run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Writes {
    /// As written on pglab's sandbox; `READ ONLY` transactions on any other server.
    Auto,
    /// `READ ONLY` transactions everywhere: the server refuses writes.
    ReadOnly,
    /// Every execution in a transaction that is rolled back.
    Rollback,
}

impl Writes {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Writes::Auto => "auto",
            Writes::ReadOnly => "read-only",
            Writes::Rollback => "rollback",
        }
    }
}

/// A valid query specification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuerySpec {
    /// The `sql` field as given (SQL, or `@FILE`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sql: String,
    /// The `file` field as given.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file: String,
    /// The statements measured (from `sql`, then `file`), in order.
    #[serde(default)]
    pub statements: Vec<Statement>,
    /// The `setup` field as given (SQL, or `@FILE`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub setup: String,
    /// The setup's SQL as it runs.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub setup_sql: String,
    #[serde(default)]
    pub keep_setup: bool,
    /// Candidate indexes (`CREATE INDEX …`), each one value of the index dimension after none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub index: Vec<String>,
    #[serde(default, skip_serializing_if = "SettingsSweep::is_empty")]
    pub set: SettingsSweep,
    pub cache: Cache,
    pub writes: Writes,
    pub repeat: Repeat,
    #[serde(flatten)]
    pub decision: DecisionParams,
    /// Throughput mode: client counts (empty: single timed executions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<u32>,
    /// Throughput mode: seconds per trial.
    pub duration_s: f64,
    /// The `script` field as given (a file name).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub script_file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<Script>,
    pub seed: u64,
    /// How throughput clients send the statements (a record without it ran `simple`).
    #[serde(default = "Protocol::recorded_before")]
    pub protocol: Protocol,
    /// Reads on a standby of the sandbox while the primary churns (`--on-standby`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_standby: Option<super::standby_reads::StandbyReads>,
    /// Throughput mode: the sandbox's standby stopped or paused during each trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<StandbyFault>,
    /// VOLATILE functions the user vouches for (`--allow-function SCHEMA.NAME`): on a server
    /// pglab did not start, statements may call them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_functions: Vec<String>,
    /// A tune's round: the cache kept warm between configurations (see
    /// [`super::kept_warm`]); None for an ordinary run, which warms every combination up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_warm: Option<super::kept_warm::KeptWarm>,
}

/// At most this many candidate indexes (each a block of the run with a build of its own).
pub(crate) const MAX_CANDIDATES: usize = 8;
/// At most this many clients in throughput mode.
pub(crate) const MAX_CLIENTS: u64 = 1000;

impl QuerySpec {
    /// The tables the measured statements name (the script's too), each once, sorted.
    pub(crate) fn tables(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .statements
            .iter()
            .flat_map(|s| crate::sql::tree::tables(&s.sql))
            .chain(
                super::bench::plan_statements(self)
                    .into_iter()
                    .flat_map(|(_, sql)| crate::sql::tree::tables(&sql)),
            )
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Read every field (one sentence per bad field, files read here), then, when they all
    /// read, the checks across them.
    pub fn parse(p: &ParamText) -> Result<QuerySpec, FieldErrors> {
        let mut r = FieldReader::new(p);
        let mut statements = r.get("sql", Vec::new(), read_statements);
        statements.extend(r.get("file", Vec::new(), read_file_statements));
        let setup_sql = r.get("setup", String::new(), sqltext::resolve);
        let keep_setup = r.bool("keep-setup");
        let index = r.get("index", Vec::new(), read_candidates);
        let mut set = r.settings(&[]);
        standby_fields::read(&mut r, &mut set);
        let cache = r.choice("cache", CACHES);
        let writes = r.choice("writes", WRITES);
        let repeat = r.get("repeat", Repeat::Fixed(1), |s| Repeat::parse(s, 1000));
        let decision = DecisionParams::read(&mut r);
        let clients = r.get("clients", Vec::new(), clients_of);
        let duration_s = r.get("duration", 10.0, duration_of);
        let script = r.get("script", None, read_script);
        let seed = r.whole("seed", 42);
        let protocol = r.get("protocol", Protocol::Prepared, protocol::read);
        let on_standby = super::standby_reads::StandbyReads::read(&mut r);
        let fault = r.get("standby-fault", None, |s| {
            let f = StandbyFault::parse(s)?;
            f.map_or(Ok(()), |f| f.check(Some(duration_s)))?;
            Ok(f)
        });
        let allow_functions = r.get(
            "allow-function",
            Vec::new(),
            crate::sql::calls::allowed_names,
        );
        let spec = QuerySpec {
            sql: given(p, "sql"),
            file: given(p, "file"),
            statements,
            setup: given(p, "setup"),
            setup_sql,
            keep_setup,
            index,
            set,
            cache,
            writes,
            repeat,
            decision,
            clients,
            duration_s,
            script_file: given(p, "script"),
            script,
            seed,
            protocol,
            on_standby,
            fault,
            allow_functions,
            kept_warm: None,
        };
        if r.errors.is_empty() {
            spec.check_together(&mut r.errors);
        }
        r.finish(spec)
    }

    /// The checks across fields: something to measure, a script or statements (not both),
    /// a setup to keep, cold cache only for single timed executions.
    fn check_together(&self, errors: &mut FieldErrors) {
        if self.statements.is_empty() && self.script.is_none() {
            errors.push((
                "sql".into(),
                "nothing to measure: give a statement (--sql \"SELECT …\"), a file of them (--file q.sql) or a pgbench-style --script".into(),
            ));
        }
        if self.script.is_some() && !self.statements.is_empty() {
            errors.push((
                "script".into(),
                "a script runs instead of the statements: give --script or --sql/--file, not both"
                    .into(),
            ));
        }
        if self.keep_setup && self.setup_sql.is_empty() {
            errors.push((
                "keep-setup".into(),
                "there is no setup to keep: give --setup too".into(),
            ));
        }
        errors.extend(super::standby_reads::spec::problems(self));
        // On a standby the fault is refused as such (see standby_reads::spec::problems).
        if self.on_standby.is_some() {
        } else if self.fault.is_some() && !self.throughput() {
            errors.push((
                "standby-fault".into(),
                "a standby fault runs beside throughput trials: give --clients (or a --script)"
                    .into(),
            ));
        } else if self.fault.is_some() && standby_fields::levels_of(&self.set).is_empty() {
            errors.push((
                "standby-fault".into(),
                "a standby fault shows what each synchronous_commit level does meanwhile: give the levels with --sync-commit (e.g. local,on)".into(),
            ));
        }
        if self.cache == Cache::Cold && (!self.clients.is_empty() || self.script.is_some()) {
            errors.push((
                "cache".into(),
                "cold applies to single timed executions: a throughput trial runs warm after its first seconds".into(),
            ));
        }
    }

    pub(crate) fn to_text(&self) -> ParamText {
        let b = |v: bool| if v { "on" } else { "off" }.to_string();
        let mut t = ParamText::from([
            ("sql".into(), self.sql.clone()),
            ("file".into(), self.file.clone()),
            ("setup".into(), self.setup.clone()),
            ("keep-setup".into(), b(self.keep_setup)),
            ("index".into(), self.index.join(";\n")),
            ("cache".into(), self.cache.as_str().into()),
            ("writes".into(), self.writes.as_str().into()),
            ("repeat".into(), self.repeat.text()),
            (
                "clients".into(),
                if self.clients.is_empty() {
                    "off".into()
                } else {
                    self.clients
                        .iter()
                        .map(|c| c.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                },
            ),
            ("duration".into(), format_duration(self.duration_s)),
            ("script".into(), self.script_file.clone()),
            ("seed".into(), self.seed.to_string()),
            ("allow-function".into(), self.allow_functions.join(",")),
        ]);
        t.retain(|_, v| !v.is_empty());
        // Single timed executions always go on the simple protocol: only throughput says one.
        if self.throughput() {
            t.insert("protocol".into(), self.protocol.as_str().into());
        }
        self.decision.write(&mut t);
        if let Some(s) = &self.on_standby {
            s.write(&mut t);
        }
        if !self.set.is_empty() {
            t.insert("set".into(), self.set.text());
        }
        if let Some(f) = self.fault {
            t.insert("standby-fault".into(), f.text());
        }
        t
    }

    /// Throughput mode: clients run the statements (or the script) in a loop.
    pub(crate) fn throughput(&self) -> bool {
        !self.clients.is_empty() || self.script.is_some()
    }

    /// The client counts of throughput mode (a script alone runs with one client).
    pub(crate) fn client_counts(&self) -> Vec<u32> {
        if self.clients.is_empty() {
            vec![1]
        } else {
            self.clients.clone()
        }
    }

    /// Values of the index dimension: none, then each candidate.
    pub(crate) fn index_values(&self) -> usize {
        1 + self.index.len()
    }

    /// Combinations: index values × settings combinations.
    pub(crate) fn combo_count(&self) -> usize {
        self.index_values() * self.set.combo_count()
    }

    /// Combination `c` as (index value, settings combination).
    pub(crate) fn split_combo(&self, c: usize) -> (usize, usize) {
        let n = self.set.combo_count().max(1);
        (c / n, c % n)
    }

    /// What one combination runs per round: the statements, or the client counts.
    pub(crate) fn units(&self) -> usize {
        if self.throughput() {
            self.client_counts().len()
        } else {
            self.statements.len()
        }
    }

    /// Timed trials at the most.
    pub(crate) fn trials(&self) -> usize {
        if let Some(n) = super::standby_reads::trials(self) {
            return n;
        }
        self.combo_count() * self.units() * self.repeat.most(self.decision.max_repeat) as usize
    }

    pub(crate) fn estimate(&self) -> Cost {
        let peak = if self.throughput() {
            self.client_counts().into_iter().max().unwrap_or(1)
        } else {
            1
        };
        Cost {
            trials: self.trials(),
            // The control session (holding the run's lock), the measuring one, the clients.
            connections: 2 + peak,
            ..Cost::default()
        }
    }
}

/// A spec from these fields and the defaults of the rest (tests).
#[cfg(any(test, feature = "fixtures"))]
pub fn test_spec(pairs: &[(&str, &str)]) -> QuerySpec {
    let p: ParamText = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match crate::experiment::ExperimentKind::Query.parse_spec(&p) {
        Ok(crate::experiment::ExperimentSpec::Query(s)) => *s,
        other => panic!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::spec::{ExperimentKind, ExperimentSpec};

    fn parse(pairs: &[(&str, &str)]) -> Result<QuerySpec, FieldErrors> {
        let p: ParamText = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        match ExperimentKind::Query.parse_spec(&p) {
            Ok(ExperimentSpec::Query(s)) => Ok(*s),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e),
        }
    }

    #[test]
    fn statements_settings_and_indexes_round_trip() {
        let s = parse(&[
            ("sql", "-- name: q1\nSELECT 1;\nSELECT 2"),
            ("set", "work_mem=1MB,64MB"),
            (
                "index",
                "CREATE INDEX ON t (a); CREATE INDEX i2 ON t (b, c)",
            ),
            ("repeat", "4"),
        ])
        .unwrap();
        assert_eq!(s.statements.len(), 2);
        assert_eq!(s.statements[0].name, "q1");
        assert_eq!(s.index.len(), 2);
        assert_eq!(s.combo_count(), 3 * 2);
        assert_eq!(s.split_combo(3), (1, 1));
        assert_eq!(s.trials(), 6 * 2 * 4);
        assert!(!s.throughput());
        let again = QuerySpec::parse(&s.to_text()).unwrap();
        assert_eq!(again, s);
    }

    #[test]
    fn nothing_to_measure_and_bad_fields_are_sentences() {
        let e = parse(&[]).unwrap_err();
        assert_eq!(e[0].0, "sql");
        assert!(e[0].1.starts_with("nothing to measure"), "{e:?}");
        let e = parse(&[("sql", "@/nonexistent/q.sql")]).unwrap_err();
        assert_eq!(e[0].1, "cannot read /nonexistent/q.sql: no such file");
        let e = parse(&[("sql", "SELECT 1"), ("setup", "@/nonexistent/s.sql")]).unwrap_err();
        assert_eq!(
            e[0],
            (
                "setup".into(),
                "cannot read /nonexistent/s.sql: no such file".into()
            )
        );
        let e = parse(&[("sql", "SELECT 1"), ("index", "DROP TABLE t")]).unwrap_err();
        assert_eq!(e[0].0, "index");
        let e = parse(&[("sql", "SELECT 1"), ("clients", "0,4")]).unwrap_err();
        assert_eq!(e[0].0, "clients");
        // 0 is not a quiet "off": it says so and how to write off.
        let e = parse(&[("sql", "SELECT 1"), ("clients", "0")]).unwrap_err();
        assert_eq!(e[0].0, "clients");
        assert!(
            e[0].1.contains("write off to time single executions"),
            "{e:?}"
        );
        assert!(
            parse(&[("sql", "SELECT 1"), ("clients", "off")])
                .unwrap()
                .clients
                .is_empty()
        );
        let e = parse(&[("sql", "SELECT 1"), ("keep-setup", "on")]).unwrap_err();
        assert_eq!(e[0].0, "keep-setup");
    }

    #[test]
    fn throughput_mode_takes_clients_or_a_script() {
        let dir = std::env::temp_dir().join(format!("pglab-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("s.sql");
        std::fs::write(&f, "\\set a random(1, 10)\nSELECT :a;\n").unwrap();
        let s = parse(&[("script", f.to_str().unwrap()), ("duration", "2s")]).unwrap();
        assert!(s.throughput());
        assert_eq!(s.client_counts(), [1]);
        assert_eq!(s.duration_s, 2.0);
        assert_eq!(QuerySpec::parse(&s.to_text()).unwrap(), s);
        std::fs::write(&f, "SELECT 1;\n\\sleep 1\n").unwrap();
        let e = parse(&[("script", f.to_str().unwrap())]).unwrap_err();
        assert_eq!(e[0].0, "script");
        assert!(e[0].1.starts_with("line 2: \\sleep"), "{e:?}");
        let s = parse(&[("sql", "SELECT 1"), ("clients", "1,4,16")]).unwrap();
        assert_eq!(s.units(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
