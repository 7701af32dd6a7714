//! What the server says a setting is: its row of `pg_settings` (type, unit, range, enum
//! values, context), and the check of a value against it by PostgreSQL's own rules — units
//! are case-sensitive (`kB`, `MB`, `GB`, `TB`; `us`, `ms`, `s`, `min`, `h`, `d`), an integer
//! setting rounds a fractional value, a number without a unit is in the setting's unit.
//! Unknown names get the closest names the server knows.

use tokio_postgres::Client;

/// One row of `pg_settings`.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingInfo {
    pub name: String,
    /// The current value in the setting's unit, as `pg_settings.setting` has it.
    pub setting: String,
    pub unit: Option<String>,
    /// `internal`, `postmaster`, `sighup`, `superuser-backend`, `backend`, `superuser`, `user`.
    pub context: String,
    /// `bool`, `enum`, `integer`, `real`, `string`.
    pub vartype: String,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub enumvals: Vec<String>,
}

/// Every setting the server has (one query, ~350 rows).
pub async fn read_all(client: &Client) -> Result<Vec<SettingInfo>, tokio_postgres::Error> {
    let rows = client
        .query(
            "SELECT name, setting, unit, context, vartype, min_val, max_val, \
             coalesce(enumvals, '{}'::text[]) FROM pg_settings ORDER BY name",
            &[],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| SettingInfo {
            name: r.get(0),
            setting: r.get::<_, Option<String>>(1).unwrap_or_default(),
            unit: r.get(2),
            context: r.get(3),
            vartype: r.get(4),
            min: r.get::<_, Option<String>>(5).and_then(|s| s.parse().ok()),
            max: r.get::<_, Option<String>>(6).and_then(|s| s.parse().ok()),
            enumvals: r.get(7),
        })
        .collect())
}

/// Up to three known names closest to `name` (typos, a missing underscore, a prefix).
pub(crate) fn closest<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(f64, &str)> = known
        .map(|k| {
            let mut s = strsim::jaro_winkler(name, k);
            if k.contains(name) || name.contains(k) {
                s = s.max(0.9);
            }
            (s, k)
        })
        .filter(|(s, _)| *s >= 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, k)| k.to_string())
        .collect()
}

/// Bytes in one memory unit (`8kB` counts as 8 × 1024), None for other units.
fn unit_bytes(u: &str) -> Option<f64> {
    let (n, base) = split_unit_multiplier(u);
    let b = match base {
        "B" => 1.0,
        "kB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        "GB" => 1024.0 * 1024.0 * 1024.0,
        "TB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(n * b)
}

/// Milliseconds in one time unit, None for other units.
fn unit_ms(u: &str) -> Option<f64> {
    let (n, base) = split_unit_multiplier(u);
    let ms = match base {
        "us" => 0.001,
        "ms" => 1.0,
        "s" => 1000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return None,
    };
    Some(n * ms)
}

/// `8kB` → (8, "kB"); `MB` → (1, "MB").
fn split_unit_multiplier(u: &str) -> (f64, &str) {
    let digits = u.find(|c: char| !c.is_ascii_digit()).unwrap_or(u.len());
    let n = u[..digits].parse::<f64>().unwrap_or(1.0);
    (n, &u[digits..])
}

/// PostgreSQL's `parse_bool`: on/off, true/false, yes/no, 1/0 and unambiguous prefixes
/// (`t`, `f`, `y`, `n`, `of`), any case.
fn parse_bool(v: &str) -> Option<bool> {
    let v = v.trim().to_ascii_lowercase();
    let prefix_of = |word: &str, min: usize| v.len() >= min && word.starts_with(v.as_str());
    if prefix_of("true", 1) || prefix_of("yes", 1) || v == "on" || v == "1" {
        Some(true)
    } else if prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || v == "0" {
        Some(false)
    } else {
        None
    }
}

/// `128MB` → (128.0, Some("MB")); `0.5` → (0.5, None).
fn split_number(v: &str) -> Option<(f64, Option<&str>)> {
    let v = v.trim();
    let end = v
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')
        })
        .unwrap_or(v.len());
    // `1e3` is a number; `1min` must not lose its `m` to the exponent rule above.
    let end = if v[..end].ends_with(['e', 'E']) {
        end - 1
    } else {
        end
    };
    let n: f64 = v[..end].parse().ok()?;
    let unit = v[end..].trim();
    Some((n, (!unit.is_empty()).then_some(unit)))
}

const MEMORY_UNITS: &str = "B, kB, MB, GB, TB";
const TIME_UNITS: &str = "us, ms, s, min, h, d";

impl SettingInfo {
    pub(crate) fn is_memory(&self) -> bool {
        self.unit.as_deref().and_then(unit_bytes).is_some()
    }

    /// A value in the setting's own unit, written back the way a DBA reads it.
    fn show(&self, base: f64) -> String {
        let Some(unit) = self.unit.as_deref() else {
            return trim_float(base);
        };
        if let Some(b) = unit_bytes(unit) {
            let bytes = base * b;
            if bytes >= 0.0 && bytes.fract() == 0.0 {
                let exact = crate::measure::units::format_size_setting(bytes as u64);
                // A large size that is whole only in kB (shared_buffers' maximum,
                // 8589934584kB) is unreadable alone: say it in a large unit first.
                const MB: u64 = 1 << 20;
                if bytes as u64 >= 10 * MB && !(bytes as u64).is_multiple_of(MB) {
                    return format!(
                        "about {} ({exact})",
                        crate::measure::units::format_bytes_short(bytes)
                    );
                }
                return exact;
            }
        }
        format!("{}{unit}", trim_float(base))
    }

    /// Check `value` the way the server would parse it: Ok, or one sentence saying what is
    /// wrong and what would be right.
    pub fn check(&self, value: &str) -> Result<(), String> {
        let name = &self.name;
        match self.vartype.as_str() {
            "bool" => {
                if parse_bool(value).is_some() {
                    Ok(())
                } else {
                    Err(format!("{name} is on or off, not '{value}'"))
                }
            }
            "enum" => {
                // Enums with on/off also take PostgreSQL's hidden boolean spellings.
                let boolish = self.enumvals.iter().any(|e| e == "on" || e == "off")
                    && parse_bool(value).is_some();
                if boolish || self.enumvals.iter().any(|e| e.eq_ignore_ascii_case(value)) {
                    Ok(())
                } else {
                    Err(format!(
                        "'{value}' is not a value of {name}: this server accepts {}",
                        self.enumvals.join(", ")
                    ))
                }
            }
            "integer" | "real" => self.check_number(value),
            _ => Ok(()),
        }
    }

    /// The value as `pg_settings.setting` will show it once applied: a number in the
    /// setting's unit, `on`/`off`, an enum value in lower case. None when it does not check.
    pub(crate) fn normalize(&self, value: &str) -> Option<String> {
        self.check(value).ok()?;
        Some(match self.vartype.as_str() {
            "bool" => if parse_bool(value)? { "on" } else { "off" }.into(),
            "enum" => match (
                self.enumvals.iter().any(|e| e.eq_ignore_ascii_case(value)),
                parse_bool(value),
            ) {
                (false, Some(b)) => if b { "on" } else { "off" }.into(),
                _ => value.to_ascii_lowercase(),
            },
            "integer" | "real" => trim_float(self.base_value(value).ok()?),
            _ => value.to_string(),
        })
    }

    /// True when `pg_settings.setting` (`shown`) is the normalized value `expected`.
    pub(crate) fn same(&self, shown: &str, expected: &str) -> bool {
        match (shown.parse::<f64>(), expected.parse::<f64>()) {
            (Ok(a), Ok(b)) if matches!(self.vartype.as_str(), "integer" | "real") => {
                (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
            }
            _ => shown.eq_ignore_ascii_case(expected),
        }
    }

    fn check_number(&self, value: &str) -> Result<(), String> {
        let name = &self.name;
        let base = self.base_value(value)?;
        // -1 often means "off" or "use another setting" and is inside the range when allowed.
        if let Some(min) = self.min
            && base < min
        {
            return Err(format!(
                "{value} is below the minimum of {name}, {}",
                self.show(min)
            ));
        }
        if let Some(max) = self.max
            && base > max
        {
            return Err(format!(
                "{value} is above the maximum of {name}, {}",
                self.show(max)
            ));
        }
        Ok(())
    }

    /// A number with an optional unit, in the setting's unit (rounded for integers).
    fn base_value(&self, value: &str) -> Result<f64, String> {
        let name = &self.name;
        let unit_hint = match self.unit.as_deref() {
            Some(u) if unit_bytes(u).is_some() => format!(" (a size: {MEMORY_UNITS})"),
            Some(u) if unit_ms(u).is_some() => format!(" (a duration: {TIME_UNITS})"),
            _ => String::new(),
        };
        let Some((n, given)) = split_number(value) else {
            return Err(format!("{name} takes a number{unit_hint}, not '{value}'"));
        };
        let base = match (given, self.unit.as_deref()) {
            (None, _) => n,
            (Some(g), None) => {
                return Err(format!(
                    "{name} has no unit: write a plain number, not '{value}' ({g})"
                ));
            }
            (Some(g), Some(u)) => {
                if let (Some(gb), Some(ub)) = (unit_bytes(g), unit_bytes(u)) {
                    n * gb / ub
                } else if let (Some(gm), Some(um)) = (unit_ms(g), unit_ms(u)) {
                    n * gm / um
                } else if self.is_memory() {
                    return Err(format!(
                        "'{g}' is not a size unit for {name}: use {MEMORY_UNITS} (case matters: MB, not mb)"
                    ));
                } else if unit_ms(u).is_some() {
                    return Err(format!(
                        "'{g}' is not a time unit for {name}: use {TIME_UNITS}"
                    ));
                } else {
                    return Err(format!(
                        "'{g}' is not a unit {name} takes (its unit is {u})"
                    ));
                }
            }
        };
        // PostgreSQL rounds with rint(): halves to even.
        Ok(if self.vartype == "integer" {
            base.round_ties_even()
        } else {
            base
        })
    }
}

fn trim_float(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str, vartype: &str, unit: Option<&str>, min: f64, max: f64) -> SettingInfo {
        SettingInfo {
            name: name.into(),
            setting: String::new(),
            unit: unit.map(String::from),
            context: "user".into(),
            vartype: vartype.into(),
            min: Some(min),
            max: Some(max),
            enumvals: Vec::new(),
        }
    }

    #[test]
    fn sizes_follow_the_servers_units() {
        // As PostgreSQL 15 has them: max_wal_size in MB (2..2147483647), shared_buffers in 8kB.
        let mws = info("max_wal_size", "integer", Some("MB"), 2.0, 2147483647.0);
        assert!(mws.check("16GB").is_ok());
        assert!(mws.check("1024").is_ok());
        assert!(mws.check("1.5GB").is_ok());
        let e = mws.check("1MB").unwrap_err();
        assert!(e.contains("below the minimum of max_wal_size, 2MB"), "{e}");
        let e = mws.check("16gb").unwrap_err();
        assert!(e.contains("case matters"), "{e}");
        let e = mws.check("16ms").unwrap_err();
        assert!(e.contains("not a size unit"), "{e}");
        let e = mws.check("lots").unwrap_err();
        assert!(e.contains("takes a number (a size"), "{e}");
        let sb = info("shared_buffers", "integer", Some("8kB"), 16.0, 1073741823.0);
        assert!(sb.check("128MB").is_ok());
        assert_eq!(sb.normalize("128MB").as_deref(), Some("16384"));
        assert!(sb.same("16384", "16384"));
        assert_eq!(mws.normalize("16GB").as_deref(), Some("16384"));
        let e = sb.check("64kB").unwrap_err();
        assert!(e.contains("minimum of shared_buffers, 128kB"), "{e}");
        // Its maximum is whole only in kB: said in TB first, the exact literal beside it.
        let e = sb.check("9TB").unwrap_err();
        assert!(
            e.ends_with("above the maximum of shared_buffers, about 8.0 TB (8589934584kB)"),
            "{e}"
        );
        let e = mws.check("3000TB").unwrap_err();
        assert!(e.ends_with("maximum of max_wal_size, 2147483647MB"), "{e}");
    }

    #[test]
    fn durations_numbers_bools_and_enums() {
        let ct = info("checkpoint_timeout", "integer", Some("s"), 30.0, 86400.0);
        assert!(ct.check("5min").is_ok());
        assert!(ct.check("300").is_ok());
        assert!(ct.check("2d").unwrap_err().contains("above the maximum"));
        assert!(ct.check("5MB").unwrap_err().contains("not a time unit"));
        let pc = info("parallel_setup_cost", "real", None, 0.0, 1.79e308);
        assert!(pc.check("1e3").is_ok());
        assert!(pc.check("10ms").unwrap_err().contains("has no unit"));
        let fpw = info("full_page_writes", "bool", None, 0.0, 0.0);
        assert!(fpw.check("ON").is_ok());
        for v in ["t", "YES", "of", "0", "f"] {
            assert!(fpw.check(v).is_ok(), "{v}");
        }
        assert!(fpw.check("o").is_err(), "o is ambiguous: on or off");
        assert_eq!(fpw.normalize("y").as_deref(), Some("on"));
        // Integers round halves to even, as PostgreSQL's rint().
        let ct = info("checkpoint_timeout", "integer", Some("s"), 30.0, 86400.0);
        assert_eq!(ct.normalize("90.5s").as_deref(), Some("90"));
        assert!(info("x", "real", None, 0.0, 1e9).check("1E3").is_ok());
        assert!(fpw.check("maybe").unwrap_err().contains("on or off"));
        let mut wc = info("wal_compression", "enum", None, 0.0, 0.0);
        wc.enumvals = vec!["pglz".into(), "lz4".into(), "off".into(), "on".into()];
        assert!(wc.check("PGLZ").is_ok());
        let e = wc.check("zstd").unwrap_err();
        assert_eq!(
            e,
            "'zstd' is not a value of wal_compression: this server accepts pglz, lz4, off, on"
        );
    }

    #[test]
    fn closest_names_for_a_typo() {
        let known = [
            "max_wal_size",
            "min_wal_size",
            "wal_compression",
            "work_mem",
        ];
        assert_eq!(
            closest("max_wal_sise", known.into_iter())[0],
            "max_wal_size"
        );
        assert_eq!(
            closest("wal_compresion", known.into_iter())[0],
            "wal_compression"
        );
        assert!(closest("zzzz", known.into_iter()).is_empty());
    }
}
