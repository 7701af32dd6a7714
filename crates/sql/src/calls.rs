//! The functions a statement calls, read from its parse tree: each by its name as the parser
//! resolved the spelling (lower case unless quoted, schema-qualified when written so) and its
//! number of arguments, so the catalog can tell which function of that name it is. And the
//! names a user vouches for (`--allow-function SCHEMA.NAME`).

use serde_json::Value;

/// One function call of a statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Call {
    /// The schema as written (None: found through the search path).
    pub schema: Option<String>,
    pub name: String,
    /// Arguments given (`count(*)`: 0).
    pub args: usize,
}

/// Every function `sql` calls, each once, sorted; empty when it does not parse.
pub fn calls(sql: &str) -> Vec<Call> {
    let Ok(statements) = super::tree::parse(sql) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in &statements {
        let mut nodes = Vec::new();
        super::tree::nodes(&s.json, &mut nodes);
        out.extend(
            nodes
                .iter()
                .filter(|(k, _)| *k == "FuncCall")
                .filter_map(|(_, f)| call_of(f)),
        );
    }
    out.sort();
    out.dedup();
    out
}

fn call_of(f: &Value) -> Option<Call> {
    let parts: Vec<String> = f["funcname"]
        .as_array()?
        .iter()
        .filter_map(|n| n["node"]["String"]["sval"].as_str().map(str::to_string))
        .collect();
    let (schema, name) = match parts.as_slice() {
        [name] => (None, name.clone()),
        [.., schema, name] => (Some(schema.clone()), name.clone()),
        [] => return None,
    };
    let args = f["args"].as_array().map_or(0, Vec::len);
    Some(Call { schema, name, args })
}

/// `--allow-function a.f,b.g`: each SCHEMA.NAME, lower-cased as PostgreSQL folds an unquoted
/// name; or the sentence naming the one that is not.
pub fn allowed_names(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let ok = item.split('.').count() == 2
            && item.split('.').all(|p| {
                !p.is_empty()
                    && p.chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            });
        if !ok {
            return Err(format!(
                "'{item}' is not SCHEMA.NAME (a function as the catalog names it, e.g. public.quiet_reload)"
            ));
        }
        out.push(item.to_lowercase());
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(schema: Option<&str>, name: &str, args: usize) -> Call {
        Call {
            schema: schema.map(str::to_string),
            name: name.into(),
            args,
        }
    }

    #[test]
    fn calls_are_found_everywhere_in_the_tree_with_their_argument_counts() {
        let got = calls(
            "WITH x AS (SELECT Public.Quiet_Reload()) SELECT count(*), \"Odd\"(1, 2) FROM t WHERE a = (SELECT lower('A'))",
        );
        assert_eq!(
            got,
            vec![
                call(None, "Odd", 2),
                call(None, "count", 0),
                call(None, "lower", 1),
                call(Some("public"), "quiet_reload", 0),
            ]
        );
        assert!(calls("SELECT FROM WHERE").is_empty());
    }

    #[test]
    fn allowed_names_are_schema_qualified() {
        assert_eq!(
            allowed_names("public.Quiet_Reload, app.f").unwrap(),
            vec!["app.f".to_string(), "public.quiet_reload".to_string()]
        );
        assert!(
            allowed_names("quiet_reload")
                .unwrap_err()
                .contains("SCHEMA.NAME")
        );
        assert!(allowed_names("a.b.c").is_err());
        assert_eq!(allowed_names("").unwrap(), Vec::<String>::new());
    }
}
