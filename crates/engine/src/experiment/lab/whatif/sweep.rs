//! The `set` field every experiment shares: server settings swept as one more dimension of
//! the sweep (`--set wal_compression=off,pglz --set max_wal_size=1GB,16GB`). Its text form
//! is the items separated by spaces, each `name=value,value`; the combinations are the
//! cartesian product, first setting outermost. What the values mean is the server's to say:
//! [`super::catalog`] checks them against its `pg_settings` before anything runs.

use serde::{Deserialize, Serialize};

use crate::experiment::lab::field::{FieldDef, FieldKind, FieldReader};

/// The field: `--set NAME=V1,V2` (repeatable), preset key `set`, the editor's "set".
pub(crate) const SET: FieldDef = FieldDef {
    key: "set",
    help: "server settings to sweep: NAME=V1,V2 (repeat the flag for more; values in PostgreSQL units)",
    default: "",
    kind: FieldKind::Settings,
};

/// At most this many combinations: each is a full pass of the experiment's own sweep.
pub(crate) const MAX_COMBOS: usize = 16;

/// One swept setting and its values, as written (checked later against the server).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweptSetting {
    pub name: String,
    pub values: Vec<String>,
}

/// The settings a run sweeps (empty: none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SettingsSweep {
    pub items: Vec<SweptSetting>,
}

/// One point of the settings sweep: a value for every swept setting, in sweep order.
pub(crate) type Combo = Vec<(String, String)>;

impl SettingsSweep {
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Parse the text form: `name=v1,v2 other=v3` (spaces or `;` between items). A value with
    /// spaces or commas goes in single quotes:
    /// `synchronous_standby_names='FIRST 1 (s1, s2)','ANY 1 (s1, s2)'`.
    pub fn parse(s: &str) -> Result<SettingsSweep, String> {
        let mut items: Vec<SweptSetting> = Vec::new();
        for part in split_outside(s, &ITEM_SEPS)?
            .iter()
            .filter(|p| !p.trim().is_empty())
        {
            let Some((name, values)) = part.split_once('=') else {
                return Err(format!(
                    "'{part}' is not NAME=VALUE: write e.g. wal_compression=off,pglz"
                ));
            };
            let name = name.trim().to_ascii_lowercase();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            {
                return Err(format!("'{name}' is not a setting name"));
            }
            let values: Vec<String> = split_outside(values, &[','])?
                .iter()
                .map(|v| v.trim().trim_matches('\'').to_string())
                .collect();
            if values.iter().any(String::is_empty) {
                return Err(format!(
                    "{name}: an empty value; write the values separated by commas, e.g. {name}=off,on"
                ));
            }
            let mut unique: Vec<String> = Vec::new();
            for v in values {
                if unique.contains(&v) {
                    return Err(format!("{name}: '{v}' is listed twice"));
                }
                unique.push(v);
            }
            if items.iter().any(|i| i.name == name) {
                return Err(format!(
                    "{name} is given twice: list all its values once, e.g. {name}=a,b"
                ));
            }
            items.push(SweptSetting {
                name,
                values: unique,
            });
        }
        let sweep = SettingsSweep { items };
        let n = sweep.combo_count();
        if n > MAX_COMBOS {
            return Err(format!(
                "{n} combinations of settings: at most {MAX_COMBOS} (each is a full pass of the sweep); sweep fewer values"
            ));
        }
        Ok(sweep)
    }

    /// The text form (what presets and history keep).
    pub fn text(&self) -> String {
        self.items
            .iter()
            .map(|i| {
                let values: Vec<String> = i.values.iter().map(|v| quoted(v)).collect();
                format!("{}={}", i.name, values.join(","))
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    pub(crate) fn combo_count(&self) -> usize {
        if self.items.is_empty() {
            return 1;
        }
        // Saturating: sixty-odd settings must read as too many, not wrap to a small number.
        self.items
            .iter()
            .try_fold(1usize, |n, i| n.checked_mul(i.values.len()))
            .unwrap_or(usize::MAX)
    }

    /// Every combination, first setting outermost (`[[]]` when nothing is swept: one pass
    /// with the server as it is).
    pub(crate) fn combos(&self) -> Vec<Combo> {
        let mut out: Vec<Combo> = vec![Vec::new()];
        for item in &self.items {
            let mut next = Vec::with_capacity(out.len() * item.values.len());
            for c in &out {
                for v in &item.values {
                    let mut c = c.clone();
                    c.push((item.name.clone(), v.clone()));
                    next.push(c);
                }
            }
            out = next;
        }
        out
    }

    /// The swept names, in sweep order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.items.iter().map(|i| i.name.clone()).collect()
    }
}

/// A combination as it appears in labels: `wal_compression=pglz max_wal_size=16GB` (empty
/// when nothing is swept).
/// What separates the items of the text form.
const ITEM_SEPS: [char; 4] = [' ', ';', '\t', '\n'];

/// `s` split at any of `seps` that stands outside quotes and parentheses. A single quote
/// quotes only at the start of a value (after `=`, `,` or a separator) and closes at a quote
/// that a separator, `,` or the end follows, so a quote inside a value (`C:\temp\n'x`) stays
/// a character of it. Err when such a quote is not closed.
fn split_outside(s: &str, seps: &[char]) -> Result<Vec<String>, String> {
    let chars: Vec<char> = s.chars().collect();
    let between = |c: char| c == ',' || c == '=' || seps.contains(&c) || ITEM_SEPS.contains(&c);
    let (mut out, mut cur, mut quoted, mut depth) = (Vec::new(), String::new(), false, 0usize);
    for (i, &c) in chars.iter().enumerate() {
        let starts = i == 0 || between(chars[i - 1]);
        let ends = chars.get(i + 1).is_none_or(|n| *n != '=' && between(*n));
        match c {
            '\'' if !quoted && starts => quoted = true,
            '\'' if quoted && ends => quoted = false,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth = depth.saturating_sub(1),
            _ if !quoted && depth == 0 && seps.contains(&c) => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if quoted {
        return Err(format!(
            "an unclosed quote in '{s}': a value with spaces or commas goes in single quotes, e.g. synchronous_standby_names='ANY 1 (s1, s2)'"
        ));
    }
    out.push(cur);
    Ok(out)
}

/// A value as the text form writes it: in single quotes when it holds a separator.
fn quoted(v: &str) -> String {
    if v.contains([' ', ',', ';', '\t', '(', ')']) {
        format!("'{v}'")
    } else {
        v.to_string()
    }
}

pub(crate) fn combo_label(combo: &Combo) -> String {
    combo
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A label with the combination appended when there is one: `64MB · wal_compression=pglz`.
pub(crate) fn with_combo(label: &str, combo: &Combo) -> String {
    if combo.is_empty() {
        label.to_string()
    } else if label.is_empty() {
        combo_label(combo)
    } else {
        format!("{label} · {}", combo_label(combo))
    }
}

impl FieldReader<'_> {
    /// The `set` field. `own` pairs each setting the experiment sweeps itself with its field
    /// (`("maintenance_work_mem", "mwm")`): those are refused here, the field sweeps them.
    pub(crate) fn settings(&mut self, own: &[(&str, &str)]) -> SettingsSweep {
        self.settings_read(own, &[])
    }

    /// The `set` field, also refusing the settings the experiment's work never reads, each
    /// with the sentence that says what it reads instead: `("work_mem", "CREATE INDEX
    /// sorts in maintenance_work_mem…")`.
    pub(crate) fn settings_read(
        &mut self,
        own: &[(&str, &str)],
        unread: &[(&str, &str)],
    ) -> SettingsSweep {
        self.get(SET.key, SettingsSweep::default(), |s| {
            let sweep = SettingsSweep::parse(s)?;
            if let Some((name, why)) = unread
                .iter()
                .find(|(n, _)| sweep.items.iter().any(|i| i.name == *n))
            {
                return Err(format!("{name} does not change this experiment: {why}"));
            }
            if let Some((name, field)) = own
                .iter()
                .find(|(n, _)| sweep.items.iter().any(|i| i.name == *n))
            {
                return Err(format!(
                    "{name} is this experiment's own knob: sweep it with --{field}"
                ));
            }
            Ok(sweep)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_writes_the_text_form() {
        let s = SettingsSweep::parse("wal_compression=off,pglz  Max_Wal_Size=1GB,16GB").unwrap();
        assert_eq!(s.names(), ["wal_compression", "max_wal_size"]);
        assert_eq!(s.text(), "wal_compression=off,pglz max_wal_size=1GB,16GB");
        assert_eq!(SettingsSweep::parse(&s.text()).unwrap(), s);
        assert_eq!(SettingsSweep::parse("a=1;b=2").unwrap().items.len(), 2);
        assert!(SettingsSweep::parse("").unwrap().is_empty());
        assert_eq!(SettingsSweep::parse("").unwrap().combos(), vec![Vec::new()]);
    }

    /// `synchronous_standby_names` takes `FIRST 1 (…)` and `ANY 1 (…)`: in single quotes, a
    /// value keeps its spaces and commas, and the text form writes it back the same way.
    #[test]
    fn a_quoted_value_keeps_its_spaces_and_commas() {
        let s = SettingsSweep::parse(
            "synchronous_standby_names='FIRST 1 (s1, s2)','ANY 1 (s1, s2)' wal_compression=off",
        )
        .unwrap();
        assert_eq!(s.items.len(), 2);
        assert_eq!(s.items[0].values, ["FIRST 1 (s1, s2)", "ANY 1 (s1, s2)"]);
        assert_eq!(s.items[1].values, ["off"]);
        assert_eq!(SettingsSweep::parse(&s.text()).unwrap(), s);
        let err = SettingsSweep::parse("synchronous_standby_names='ANY 1 (s1").unwrap_err();
        assert!(err.contains("unclosed quote"), "{err}");
        // A quote inside a value is a character of it.
        let s = SettingsSweep::parse("application_name=C:\\temp\\n'x").unwrap();
        assert_eq!(s.items[0].values, ["C:\\temp\\n'x"]);
        let s = SettingsSweep::parse("application_name='on',it's").unwrap();
        assert_eq!(s.items[0].values, ["on", "it's"]);
    }

    #[test]
    fn combos_are_the_product_first_setting_outermost() {
        let s = SettingsSweep::parse("a=1,2 b=x,y,z").unwrap();
        let c = s.combos();
        assert_eq!(c.len(), 6);
        assert_eq!(combo_label(&c[0]), "a=1 b=x");
        assert_eq!(combo_label(&c[3]), "a=2 b=x");
        assert_eq!(with_combo("64MB", &c[1]), "64MB · a=1 b=y");
        assert_eq!(with_combo("64MB", &Vec::new()), "64MB");
    }

    #[test]
    fn bad_text_gets_a_sentence() {
        for (text, needle) in [
            ("wal_compression", "is not NAME=VALUE"),
            ("a=1,,2", "empty value"),
            ("a=1,1", "listed twice"),
            ("a=1 a=2", "given twice"),
            ("a-b=1", "not a setting name"),
            ("a=1,2,3,4,5 b=1,2,3,4", "at most 16"),
        ] {
            let e = SettingsSweep::parse(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
