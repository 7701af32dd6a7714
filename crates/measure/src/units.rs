//! Units the way PostgreSQL and DBAs write them: sizes (`kB`, `MB`, `GB`, `TB`, case-sensitive,
//! `1MB` = 1024 kB), counts (`10k`, `5M`, `1e9`, `1_000_000`), durations (`90s`, `5min`),
//! value lists (`1MB,16MB`) and geometric ranges (`1MB..4GB*4`).
//!
//! Every parser returns a sentence on bad input; none of them panics (see the property tests).

use std::fmt;
use std::time::Duration;

/// A parse error: one sentence a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError(msg.into()))
}

const KB: u64 = 1024;
const SIZE_UNITS: [(&str, u64); 5] = [
    ("B", 1),
    ("kB", KB),
    ("MB", KB * KB),
    ("GB", KB * KB * KB),
    ("TB", KB * KB * KB * KB),
];

/// A byte size as the user wrote it and as bytes, e.g. `"64MB"` = 67108864.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Size {
    pub text: String,
    pub bytes: u64,
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Size {
    pub fn from_bytes(bytes: u64) -> Size {
        Size {
            text: format_size_setting(bytes),
            bytes,
        }
    }
    /// The value as a PostgreSQL setting literal in kB (what `SET maintenance_work_mem` takes).
    pub fn as_kb_setting(&self) -> String {
        format!("{}kB", self.bytes / KB)
    }
}

/// Parse a size with a PostgreSQL unit: `1MB`, `32 MB`, `1.5GB`, `8192kB`, `0`.
pub fn parse_size(input: &str) -> Result<Size, ParseError> {
    let s = input.trim();
    if s.is_empty() {
        return err("empty size: write a number with a unit, e.g. 64MB");
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(s.len());
    let (num, unit) = (s[..split].replace('_', ""), s[split..].trim());
    if num.is_empty() {
        return err(format!(
            "'{s}' is not a size: it must start with a number, e.g. 64MB"
        ));
    }
    let value: f64 = match num.parse() {
        Ok(v) => v,
        Err(_) => return err(format!("'{num}' is not a number")),
    };
    if unit.is_empty() {
        if value == 0.0 {
            return Ok(Size {
                text: "0".into(),
                bytes: 0,
            });
        }
        return err(format!(
            "'{s}' has no unit: add one of kB, MB, GB, TB (e.g. {s}MB)"
        ));
    }
    let Some(&(_, mult)) = SIZE_UNITS.iter().find(|(u, _)| *u == unit) else {
        let hint = SIZE_UNITS
            .iter()
            .find(|(u, _)| u.eq_ignore_ascii_case(unit))
            .map(|(u, _)| format!(": did you mean {u}? (PostgreSQL units are case-sensitive)"))
            .unwrap_or_else(|| ": use B, kB, MB, GB or TB".into());
        return err(format!("unknown size unit '{unit}'{hint}"));
    };
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes > 9.0e18 {
        return err(format!("'{s}' is too large"));
    }
    Ok(Size {
        text: format!("{}{}", num, unit),
        bytes: bytes.round() as u64,
    })
}

/// Format bytes as `pg_size_pretty` rounds them (`kB`/`MB`/`GB`/`TB`, whole numbers), with
/// `B` for plain bytes as PostgreSQL's settings and every other size pglab prints write it.
pub fn format_bytes(bytes: u64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 10.0 * 1024.0 && i < units.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{:.0} {}", v, units[i])
    }
}

/// Format bytes compactly with one decimal where it helps: `346 MB`, `1.5 GB`, `12 kB`.
pub fn format_bytes_short(bytes: f64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut v = bytes;
    let mut i = 0;
    while v.abs() >= 1024.0 && i < units.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if v.abs() >= 100.0 || i == 0 {
        format!("{:.0} {}", v, units[i])
    } else {
        format!("{:.1} {}", v, units[i])
    }
}

/// A ratio as a signed change in percent: `+37%`, `-3%`, and one decimal below 10% where it
/// matters (`+0.5%`, not `+0%`).
pub fn format_change(ratio: f64) -> String {
    let p = (ratio - 1.0) * 100.0;
    if p.abs() < 9.95 && (p - p.round()).abs() >= 0.05 {
        format!("{p:+.1}%")
    } else {
        format!("{:+.0}%", p.round())
    }
}

/// Format a byte count as a setting literal: the largest unit that divides it exactly.
pub fn format_size_setting(bytes: u64) -> String {
    if bytes == 0 {
        return "0".into();
    }
    for &(unit, mult) in SIZE_UNITS.iter().rev() {
        if bytes.is_multiple_of(mult) {
            return format!("{}{}", bytes / mult, unit);
        }
    }
    format!("{bytes}B")
}

/// Parse a count: `10000`, `10k`, `5M`, `2.5M`, `1G`, `1e9`, `1_000_000`.
pub fn parse_count(input: &str) -> Result<u64, ParseError> {
    let s = input.trim().replace('_', "");
    if s.is_empty() {
        return err("empty count: write a number such as 10000, 10k, 5M or 1e6");
    }
    let (num, mult) = match s.chars().last() {
        Some('k') | Some('K') => (&s[..s.len() - 1], 1e3),
        Some('M') => (&s[..s.len() - 1], 1e6),
        Some('G') | Some('B') => (&s[..s.len() - 1], 1e9),
        Some('m') => {
            return err(format!(
                "'{s}': use M for millions (m is ambiguous), e.g. 5M"
            ));
        }
        _ => (s.as_str(), 1.0),
    };
    if num.is_empty() || num.starts_with(['-', '+']) {
        return err(format!(
            "'{}' is not a count: use a whole number like 10k or 5M",
            input.trim()
        ));
    }
    let value: f64 = match num.parse() {
        Ok(v) => v,
        Err(_) => {
            return err(format!(
                "'{}' is not a count: use a whole number like 10000, 10k, 5M or 1e6",
                input.trim()
            ));
        }
    };
    let v = value * mult;
    if !v.is_finite() || v < 0.0 {
        return err(format!("'{}' is not a count", input.trim()));
    }
    if v > 1e15 {
        return err(format!("'{}' is too large (at most 1e15)", input.trim()));
    }
    if (v - v.round()).abs() > 1e-6 {
        return err(format!("'{}' is not a whole number", input.trim()));
    }
    Ok(v.round() as u64)
}

/// Format a count compactly: `950`, `12.3k`, `10M`, `1.5G`.
pub fn format_count(n: f64) -> String {
    let a = n.abs();
    let (v, suffix) = if a >= 1e9 {
        (n / 1e9, "G")
    } else if a >= 1e6 {
        (n / 1e6, "M")
    } else if a >= 1e4 {
        (n / 1e3, "k")
    } else {
        return if (n - n.round()).abs() < 1e-9 {
            format!("{}", n.round() as i64)
        } else {
            format!("{n:.1}")
        };
    };
    if (v - v.round()).abs() < 0.05 {
        format!("{:.0}{suffix}", v)
    } else {
        format!("{v:.1}{suffix}")
    }
}

/// A rate (rows/s, tuples/s, commits/s) in three significant digits, the same everywhere:
/// `4.70k`, `16.1k`, `983k`, `1.23M`, `42.5`, `740`. Counts that must read back exactly
/// (rows in a parameter) use [`format_count`] instead.
pub fn format_rate(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let a = v.abs();
    let (x, suffix) = if a >= 999.5e6 {
        (v / 1e9, "G")
    } else if a >= 999.5e3 {
        (v / 1e6, "M")
    } else if a >= 999.5 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let ax = x.abs();
    let s = if ax >= 99.95 || (suffix.is_empty() && ax >= 10.0) {
        format!("{x:.0}")
    } else if ax >= 9.995 || (suffix.is_empty() && ax >= 1.0) {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    };
    format!("{s}{suffix}")
}

/// Parse a duration: `30` (seconds), `30s`, `250ms`, `5min`, `2h`.
pub fn parse_duration(input: &str) -> Result<Duration, ParseError> {
    let s = input.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = (&s[..split], s[split..].trim());
    let value: f64 = match num.parse() {
        Ok(v) => v,
        Err(_) => {
            return err(format!(
                "'{s}' is not a duration: use e.g. 30s, 250ms, 5min or 2h"
            ));
        }
    };
    let secs = match unit {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "min" | "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return err(format!(
                "unknown duration unit '{unit}': use ms, s, min or h"
            ));
        }
    };
    if !secs.is_finite() || secs > 1e9 {
        return err(format!("'{s}' is too long"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Format seconds for people: `812 ms`, `8.2 s`, `3m 12s`, `1h 05m`.
pub fn format_seconds(secs: f64) -> String {
    if !secs.is_finite() {
        return "–".into();
    }
    if secs < 1.0 {
        format!("{:.0} ms", secs * 1000.0)
    } else if secs < 100.0 {
        format!("{secs:.1} s")
    } else if secs < 3600.0 {
        format!("{}m {:02}s", (secs / 60.0) as u64, (secs % 60.0) as u64)
    } else {
        format!(
            "{}h {:02}m",
            (secs / 3600.0) as u64,
            ((secs % 3600.0) / 60.0) as u64
        )
    }
}

/// How list items map to numbers and back, for geometric ranges.
pub(crate) type RangeMap<'a, T> = (&'a dyn Fn(&T) -> f64, &'a dyn Fn(f64) -> T);

/// Parse a list of values (`a,b,c`) where each item may also be a geometric range
/// `FROM..TO*FACTOR` (e.g. `1MB..4GB*4` = 1MB,4MB,16MB,…,4GB). `parse_one` parses one item;
/// `to_f64`/`from_f64` map items to numbers for ranges.
pub fn parse_list<T: Clone>(
    input: &str,
    what: &str,
    parse_one: impl Fn(&str) -> Result<T, ParseError>,
    range: Option<RangeMap<'_, T>>,
) -> Result<Vec<T>, ParseError> {
    let s = input.trim();
    if s.is_empty() {
        return err(format!("the {what} list is empty: give at least one value"));
    }
    let mut out = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return err(format!(
                "the {what} list has an empty item: remove the extra comma"
            ));
        }
        if let Some((from, rest)) = item.split_once("..") {
            let Some((to_fn, from_fn)) = range else {
                return err(format!("{what} does not take ranges; list the values"));
            };
            let (to, factor) = match rest.rsplit_once(['*', 'x']) {
                Some((to, f)) => (to, f),
                None => {
                    return err(format!(
                        "range '{item}' needs a factor: FROM..TO*FACTOR, e.g. 1MB..4GB*4"
                    ));
                }
            };
            let a = parse_one(from)?;
            let b = parse_one(to)?;
            let factor: f64 = match factor.trim().parse() {
                Ok(f) if f > 1.0 && f <= 1e6 => f,
                _ => {
                    return err(format!(
                        "range factor '{}' must be a number above 1, e.g. *2 or *4",
                        factor.trim()
                    ));
                }
            };
            let (lo, hi) = (to_fn(&a), to_fn(&b));
            if lo <= 0.0 || hi < lo {
                return err(format!(
                    "range '{item}' must go from a positive value up to a larger one"
                ));
            }
            let mut v = lo;
            let mut n = 0;
            while v <= hi * (1.0 + 1e-9) {
                out.push(from_fn(v));
                v *= factor;
                n += 1;
                if n > 1000 {
                    return err(format!("range '{item}' expands to more than 1000 values"));
                }
            }
            if out.len() > 10_000 {
                return err(format!("the {what} list has more than 10000 values"));
            }
        } else {
            out.push(parse_one(item)?);
        }
        if out.len() > 10_000 {
            return err(format!("the {what} list has more than 10000 values"));
        }
    }
    Ok(out)
}

/// A list of sizes, e.g. `1MB,16MB,256MB` or `1MB..4GB*4`.
pub fn parse_size_list(input: &str) -> Result<Vec<Size>, ParseError> {
    parse_list(
        input,
        "size",
        parse_size,
        Some((&|s: &Size| s.bytes as f64, &|v: f64| {
            Size::from_bytes(v.round() as u64)
        })),
    )
}

/// A list of counts, e.g. `1,2,4` or `1..1024*2`, or `sqrt2` for the √2 ladder 1..1024.
pub fn parse_count_list(input: &str) -> Result<Vec<u64>, ParseError> {
    if input.trim() == "sqrt2" {
        return Ok(sqrt2_ladder(1024));
    }
    parse_list(
        input,
        "count",
        parse_count,
        Some((&|n: &u64| *n as f64, &|v: f64| v.round() as u64)),
    )
}

/// The √2 ladder the CouchDB post used: 1, 2, 4, 5, 8, 11, 16, 22, 32, 45, 64, 90, 128, 181,
/// 256, 362, 512, 724, 1024 (2^(k/2), truncated).
pub fn sqrt2_ladder(max: u64) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for k in 0..128u32 {
        let v = (2f64.powf(k as f64 / 2.0) + 1e-9).floor() as u64;
        if v > max {
            break;
        }
        if out.last() != Some(&v) {
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_postgres() {
        assert_eq!(parse_size("1MB").unwrap().bytes, 1 << 20);
        assert_eq!(parse_size("32 MB").unwrap().bytes, 32 << 20);
        assert_eq!(parse_size("1.5GB").unwrap().bytes, 1536 << 20);
        assert_eq!(parse_size("8192kB").unwrap().bytes, 8 << 20);
        let e = parse_size("1mb").unwrap_err().0;
        assert!(e.contains("did you mean MB"), "{e}");
        assert!(parse_size("64").unwrap_err().0.contains("no unit"));
        assert!(parse_size("").is_err());
        assert!(parse_size("MB").is_err());
        assert_eq!(parse_size("64MB").unwrap().as_kb_setting(), "65536kB");
    }

    #[test]
    fn counts_take_suffixes() {
        assert_eq!(parse_count("10k").unwrap(), 10_000);
        assert_eq!(parse_count("5M").unwrap(), 5_000_000);
        assert_eq!(parse_count("2.5M").unwrap(), 2_500_000);
        assert_eq!(parse_count("1e9").unwrap(), 1_000_000_000);
        assert_eq!(parse_count("1_000_000").unwrap(), 1_000_000);
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("-3").is_err());
        assert!(parse_count("5m").is_err());
        assert!(parse_count("ten").is_err());
    }

    #[test]
    fn ranges_expand_geometrically() {
        let v = parse_size_list("1MB..4GB*4").unwrap();
        let t: Vec<_> = v.iter().map(|s| s.text.clone()).collect();
        assert_eq!(t, ["1MB", "4MB", "16MB", "64MB", "256MB", "1GB", "4GB"]);
        assert_eq!(parse_count_list("1,2, 3").unwrap(), [1, 2, 3]);
        assert!(parse_size_list("").is_err());
        assert!(parse_size_list("1MB,,2MB").is_err());
        assert!(parse_size_list("4GB..1MB*2").is_err());
        assert!(parse_size_list("1MB..4GB").is_err());
    }

    #[test]
    fn sqrt2_ladder_matches_the_couchdb_post() {
        assert_eq!(
            sqrt2_ladder(1024),
            [
                1, 2, 4, 5, 8, 11, 16, 22, 32, 45, 64, 90, 128, 181, 256, 362, 512, 724, 1024
            ]
        );
        assert_eq!(parse_count_list("sqrt2").unwrap().len(), 19);
    }

    #[test]
    fn formats() {
        assert_eq!(format_bytes(346 * 1024 * 1024), "346 MB");
        // One unit for bytes everywhere: `0 B`, never `0 bytes` beside it.
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(0), format_bytes_short(0.0));
        assert_eq!(format_change(1.005), "+0.5%");
        assert_eq!(format_change(1.37), "+37%");
        assert_eq!(format_change(0.97), "-3%");
        assert_eq!(format_change(0.965), "-3.5%");
        assert_eq!(format_change(1.0), "+0%");
        assert_eq!(format_change(1.1), "+10%");
        assert_eq!(format_size_setting(4 << 30), "4GB");
        assert_eq!(format_count(10_000_000.0), "10M");
        assert_eq!(format_seconds(8.24), "8.2 s");
        assert_eq!(parse_duration("5min").unwrap().as_secs(), 300);
        assert_eq!(parse_duration("250ms").unwrap().as_millis(), 250);
    }

    #[test]
    fn rates_have_three_significant_digits_everywhere() {
        assert_eq!(format_rate(4704.6), "4.70k");
        assert_eq!(format_rate(983_100.0), "983k");
        assert_eq!(format_rate(843_000.0), "843k");
        assert_eq!(format_rate(16_100.0), "16.1k");
        assert_eq!(format_rate(1_234_567.0), "1.23M");
        assert_eq!(format_rate(999_999.0), "1.00M");
        assert_eq!(format_rate(740.0), "740");
        assert_eq!(format_rate(42.46), "42");
        assert_eq!(format_rate(6.04), "6.0");
        assert_eq!(format_rate(0.5), "0.50");
    }
}
