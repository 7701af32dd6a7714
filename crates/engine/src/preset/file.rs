//! The preset file format: TOML with `name`, `description`, `experiment`, optional `source`
//! and a `[params]` table in the experiments' text form. Parsing keeps toml's spans so every
//! problem names the file, the line and the field.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::{Preset, PresetError, Problem, check_name};
use crate::experiment::{ExperimentKind, ParamText};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPreset {
    name: Spanned<String>,
    #[serde(default)]
    description: Option<String>,
    experiment: Spanned<String>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    params: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The field a serde message is about: "unknown field `x`", "missing field `x`".
fn field_in_message(message: &str) -> Option<String> {
    for marker in ["unknown field `", "missing field `", "duplicate key `"] {
        if let Some(rest) = message.split(marker).nth(1) {
            return rest.split('`').next().map(str::to_string);
        }
    }
    None
}

/// A parameter value as text: strings as written, numbers in decimal, booleans as on/off,
/// arrays comma-joined.
fn value_text(v: &toml::Value) -> Result<String, String> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(if *b { "on" } else { "off" }.to_string()),
        toml::Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                if matches!(item, toml::Value::Array(_) | toml::Value::Table(_)) {
                    return Err("a list item must be a single value, not a list or table".into());
                }
                out.push(value_text(item)?);
            }
            Ok(out.join(","))
        }
        toml::Value::Datetime(_) => {
            Err("a date is not a parameter value: quote it if it is meant as text".into())
        }
        toml::Value::Table(_) => {
            Err("nested tables are not parameters: write `key = value` lines under [params]".into())
        }
    }
}

/// `set = { wal_compression = ["off", "pglz"], max_wal_size = "1GB" }` in the sweep's text
/// form (`wal_compression=off,pglz max_wal_size=1GB`).
fn settings_text(t: &toml::map::Map<String, toml::Value>) -> Result<String, String> {
    let mut items = Vec::new();
    for (name, v) in t {
        let values = value_text(v).map_err(|e| format!("set.{name}: {e}"))?;
        items.push(format!("{name}={values}"));
    }
    Ok(items.join(" "))
}

/// Parse and validate a preset file. `file` names it in messages; `expected_name` is the
/// name it was looked up by (its file stem), which the `name` field must repeat.
pub fn parse(text: &str, file: &str, expected_name: Option<&str>) -> Result<Preset, PresetError> {
    let invalid = |problems: Vec<Problem>| PresetError::Invalid {
        file: file.to_string(),
        problems,
    };
    let raw: RawPreset = toml::from_str(text).map_err(|e| {
        let message = e.message().trim().to_string();
        invalid(vec![Problem {
            line: e.span().map(|s| line_of(text, s.start)),
            field: field_in_message(&message),
            message,
        }])
    })?;
    let mut problems = Vec::new();
    let at = |span: std::ops::Range<usize>| Some(line_of(text, span.start));

    let name = raw.name.get_ref().clone();
    if let Err(PresetError::BadName { why, .. }) = check_name(&name) {
        problems.push(Problem::new(at(raw.name.span()), "name", why));
    } else if let Some(expected) = expected_name
        && expected != name
    {
        problems.push(Problem::new(
            at(raw.name.span()),
            "name",
            format!("the file is {expected}.toml but its name is '{name}': make them the same"),
        ));
    }

    let kind = ExperimentKind::parse(raw.experiment.get_ref());
    if kind.is_none() {
        problems.push(Problem::new(
            at(raw.experiment.span()),
            "experiment",
            format!(
                "unknown experiment '{}': use {}",
                raw.experiment.get_ref(),
                ExperimentKind::ALL.map(|k| k.as_str()).join(", ")
            ),
        ));
    }

    let mut params = ParamText::new();
    let mut key_lines: BTreeMap<String, usize> = BTreeMap::new();
    for (key, value) in &raw.params {
        let line = line_of(text, key.span().start);
        key_lines.insert(key.get_ref().clone(), line);
        let text = if key.get_ref() == "set"
            && let toml::Value::Table(t) = value.get_ref()
        {
            settings_text(t)
        } else {
            value_text(value.get_ref())
        };
        match text {
            Ok(v) => {
                params.insert(key.get_ref().clone(), v);
            }
            Err(e) => problems.push(Problem::new(Some(line), key.get_ref(), e)),
        }
    }

    if let Some(kind) = kind
        && let Err(errors) = kind.parse_spec(&params)
    {
        for (key, message) in errors {
            problems.push(Problem {
                line: key_lines.get(&key).copied(),
                field: Some(key),
                message,
            });
        }
    }

    problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
    match kind {
        Some(experiment) if problems.is_empty() => Ok(Preset {
            name,
            description: raw.description.unwrap_or_default(),
            experiment,
            params,
            source: raw.source.filter(|s| !s.trim().is_empty()),
        }),
        _ => Err(invalid(problems)),
    }
}

/// A TOML string or bare key.
fn key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        k.to_string()
    } else {
        quoted(k)
    }
}

fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The file text of a preset (what `save` writes). Values are written as strings, the one
/// form every parameter takes.
pub fn to_toml(p: &Preset) -> String {
    let mut out = String::new();
    out.push_str(&format!("name = {}\n", quoted(&p.name)));
    out.push_str(&format!("description = {}\n", quoted(&p.description)));
    out.push_str(&format!("experiment = {}\n", quoted(p.experiment.as_str())));
    if let Some(s) = &p.source {
        out.push_str(&format!("source = {}\n", quoted(s)));
    }
    out.push_str("\n[params]\n");
    for (k, v) in &p.params {
        out.push_str(&format!("{} = {}\n", key(k), quoted(v)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"name = "mine"
description = "d"
experiment = "index-build"

[params]
rows = 20000
order = ["sorted", "random"]
warmup = true
mwm = "1MB..64MB*4"
"#;

    #[test]
    fn values_take_every_toml_form() {
        let p = parse(GOOD, "mine.toml", Some("mine")).unwrap();
        assert_eq!(p.params["rows"], "20000");
        assert_eq!(p.params["order"], "sorted,random");
        assert_eq!(p.params["warmup"], "on");
        assert_eq!(p.params["mwm"], "1MB..64MB*4");
        let again = parse(&to_toml(&p), "mine.toml", Some("mine")).unwrap();
        assert_eq!(again, p);
    }

    #[test]
    fn problems_name_line_and_field() {
        let bad = GOOD.replace("mwm = \"1MB..64MB*4\"", "mwm = \"512kB\"");
        let e = parse(&bad, "mine.toml", Some("mine"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("mine.toml:9: mwm: "), "{e}");
        let e = parse(&format!("colour = \"red\"\n{GOOD}"), "f.toml", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("f.toml:1: colour: unknown field"), "{e}");
        let e = parse(&GOOD.replace("rows", "rowz"), "f.toml", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("f.toml:6: rowz: unknown parameter"), "{e}");
        let e = parse(
            &GOOD.replace("name = \"mine\"", "name = \"../x\""),
            "f",
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("f:1: name: "), "{e}");
        let e = parse(GOOD, "other.toml", Some("other"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("make them the same"), "{e}");
        let e = parse("name = \"x\"\nexperiment = \n", "f.toml", None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f.toml:2: "), "{e}");
    }
}
