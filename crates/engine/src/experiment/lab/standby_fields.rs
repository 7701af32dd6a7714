//! The standby what-ifs of the experiments whose `synchronous_commit` is a server setting
//! like any other (query, growth): `--sync-commit off,local,on` is shorthand for `--set
//! synchronous_commit=off,local,on`, and `--standby-rtt 0ms,2ms` for `--set
//! pglab.standby_rtt=0ms,2ms` (see [`super::standby_rtt`]). Both become items of the run's
//! settings sweep, so labels, verdicts, the record and the text form are the sweep's; the
//! text form writes them back as `set`.

use super::field::{FieldDef, FieldKind, FieldReader};
use super::standby_rtt;
use super::sync_commit::SyncCommit;
use super::whatif::SettingsSweep;
use super::whatif::sweep::SweptSetting;

pub(crate) const SYNC_COMMIT: &str = "synchronous_commit";

/// The `sync-commit` field of query and growth.
pub(crate) const SYNC_FIELD: FieldDef = FieldDef {
    key: "sync-commit",
    help: "synchronous_commit levels in turn, shorthand for --set synchronous_commit=… (off,local,remote_write,on,remote_apply); with a sandbox standby streaming, the waiting levels wait for it; server: as the server has it",
    default: "server",
    kind: FieldKind::Text,
};

/// `off,local,on` as the sweep's values, each level once, in the order given; `server` (or
/// nothing): none.
pub(crate) fn parse_levels(s: &str) -> Result<Vec<String>, String> {
    each_once(s, "server", |item| {
        SyncCommit::parse(item).map(|l| l.as_str().to_string())
    })
}

/// A list of values, each read by `item` and listed once; `none` (or nothing): empty.
pub(crate) fn each_once(
    s: &str,
    none: &str,
    item: impl Fn(&str) -> Result<String, String>,
) -> Result<Vec<String>, String> {
    let s = s.trim();
    if s.is_empty() || s == none {
        return Ok(Vec::new());
    }
    let mut out: Vec<String> = Vec::new();
    for given in s.split(',').map(str::trim) {
        let v = item(given)?;
        if out.contains(&v) {
            return Err(format!("{given} is listed twice"));
        }
        out.push(v);
    }
    Ok(out)
}

/// Add `name=values` to the sweep unless it is empty; refused (a sentence on `field`) when
/// `--set` names the setting too.
fn fold(
    r: &mut FieldReader,
    set: &mut SettingsSweep,
    field: &str,
    name: &str,
    values: Vec<String>,
) {
    if values.is_empty() {
        return;
    }
    if set.items.iter().any(|i| i.name == name) {
        r.errors.push((
            field.to_string(),
            format!("--{field} and --set {name}=… both set {name}: give one of them"),
        ));
        return;
    }
    set.items.push(SweptSetting {
        name: name.into(),
        values,
    });
}

/// Read `standby-rtt` into the sweep (as `pglab.standby_rtt`).
pub(crate) fn read_rtt(r: &mut FieldReader, set: &mut SettingsSweep) {
    let rtts = r.get(standby_rtt::FIELD.key, Vec::new(), standby_rtt::parse_list);
    fold(r, set, standby_rtt::FIELD.key, standby_rtt::NAME, rtts);
}

/// Read `sync-commit` and `standby-rtt` into the sweep.
pub(crate) fn read(r: &mut FieldReader, set: &mut SettingsSweep) {
    let levels = r.get(SYNC_FIELD.key, Vec::new(), parse_levels);
    fold(r, set, SYNC_FIELD.key, SYNC_COMMIT, levels);
    read_rtt(r, set);
}

/// The `synchronous_commit` levels a sweep runs at (empty: not swept; a value PostgreSQL
/// takes that is not one of the five names, such as `true`, is left out).
pub(crate) fn levels_of(set: &SettingsSweep) -> Vec<SyncCommit> {
    set.items
        .iter()
        .filter(|i| i.name == SYNC_COMMIT)
        .flat_map(|i| i.values.iter())
        .filter_map(|v| SyncCommit::parse(&v.to_ascii_lowercase()).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::field::ParamText;

    fn read_of(pairs: &[(&str, &str)]) -> (SettingsSweep, Vec<(String, String)>) {
        let p: ParamText = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut r = FieldReader::new(&p);
        let mut set = r.settings(&[]);
        read(&mut r, &mut set);
        (set, r.errors)
    }

    #[test]
    fn levels_and_distances_become_swept_settings() {
        let (set, e) = read_of(&[
            ("sync-commit", "local, on,remote_apply"),
            ("standby-rtt", "0ms,4ms"),
            ("set", "wal_compression=on"),
        ]);
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(
            set.text(),
            "wal_compression=on synchronous_commit=local,on,remote_apply pglab.standby_rtt=0ms,4ms"
        );
        assert_eq!(
            levels_of(&set),
            [SyncCommit::Local, SyncCommit::On, SyncCommit::RemoteApply]
        );
        let (set, e) = read_of(&[("sync-commit", "server"), ("standby-rtt", "off")]);
        assert!(e.is_empty() && set.is_empty(), "{e:?} {set:?}");
        assert!(levels_of(&set).is_empty());
    }

    #[test]
    fn the_shorthand_and_set_together_are_refused() {
        let (_, e) = read_of(&[
            ("sync-commit", "local,on"),
            ("set", "synchronous_commit=off"),
        ]);
        assert_eq!(e[0].0, "sync-commit");
        assert!(
            e[0].1
                .contains("--sync-commit and --set synchronous_commit=… both set"),
            "{e:?}"
        );
        let (_, e) = read_of(&[("standby-rtt", "2ms"), ("set", "pglab.standby_rtt=0ms")]);
        assert_eq!(e[0].0, "standby-rtt");
        let (_, e) = read_of(&[("sync-commit", "on,on")]);
        assert!(e[0].1.contains("twice"), "{e:?}");
        let (_, e) = read_of(&[("sync-commit", "always")]);
        assert_eq!(e[0].0, "sync-commit");
    }
}
