//! How a sweep decides, as parameters every experiment shares: how many repeats (a count or
//! `auto`), the cap on `auto`, and the verdict rules (`confidence`, `min-effect`). They are
//! fields like any other, so they are flags (`--repeat auto --max-repeat 12 --min-effect 3%`),
//! preset keys and editor fields alike.

use serde::{Deserialize, Serialize};

use super::field::{FieldDef, FieldKind, FieldReader, ParamText};
use crate::measure::rules::Rules;
use crate::measure::verdict::MIN_TRIALS;

/// `--repeat`: a fixed count per setting, or `auto`: at least [`MIN_TRIALS`] each, then more
/// for the settings whose verdicts are still undecided, up to `max-repeat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "RepeatText", try_from = "RepeatText")]
pub enum Repeat {
    Fixed(u32),
    Auto,
}

/// The stored form of [`Repeat`]: a number (as records before `auto` have it) or `"auto"`.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum RepeatText {
    Count(u32),
    Word(String),
}

impl From<Repeat> for RepeatText {
    fn from(r: Repeat) -> RepeatText {
        match r {
            Repeat::Fixed(n) => RepeatText::Count(n),
            Repeat::Auto => RepeatText::Word("auto".into()),
        }
    }
}

impl TryFrom<RepeatText> for Repeat {
    type Error = String;
    fn try_from(t: RepeatText) -> Result<Repeat, String> {
        match t {
            RepeatText::Count(n) => Ok(Repeat::Fixed(n)),
            RepeatText::Word(w) => Repeat::parse(&w, u32::MAX),
        }
    }
}

impl Repeat {
    /// `3`, `auto`; a count must be 1..=`max`.
    pub fn parse(s: &str, max: u32) -> Result<Repeat, String> {
        let s = s.trim();
        if s == "auto" {
            return Ok(Repeat::Auto);
        }
        let n = crate::measure::units::parse_count(s)
            .map_err(|_| format!("'{s}' is not a count or 'auto'"))?;
        if n < 1 {
            return Err("must be at least 1 (or 'auto')".into());
        }
        if n > max as u64 {
            return Err(format!("must be at most {max} (or 'auto')"));
        }
        Ok(Repeat::Fixed(n as u32))
    }

    pub(crate) fn text(self) -> String {
        match self {
            Repeat::Fixed(n) => n.to_string(),
            Repeat::Auto => "auto".into(),
        }
    }

    /// Trials per setting at the start: the count, or the minimum a verdict needs.
    pub(crate) fn initial(self) -> u32 {
        match self {
            Repeat::Fixed(n) => n,
            Repeat::Auto => MIN_TRIALS as u32,
        }
    }

    /// Trials per setting at the most (for cost estimates and progress totals).
    pub(crate) fn most(self, max_repeat: u32) -> u32 {
        match self {
            Repeat::Fixed(n) => n,
            Repeat::Auto => max_repeat.max(MIN_TRIALS as u32),
        }
    }

    pub(crate) fn is_auto(self) -> bool {
        self == Repeat::Auto
    }
}

impl std::fmt::Display for Repeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

/// The `--repeat` field, with the help an experiment gives it.
pub(crate) const fn repeat_field(help: &'static str, default: &'static str) -> FieldDef {
    FieldDef {
        key: "repeat",
        help,
        default,
        kind: FieldKind::Count,
    }
}

pub(crate) const MAX_REPEAT: FieldDef = FieldDef {
    key: "max-repeat",
    help: "with repeat auto: trials per setting at the most",
    default: "10",
    kind: FieldKind::Count,
};

pub(crate) const MIN_EFFECT: FieldDef = FieldDef {
    key: "min-effect",
    help: "smallest difference called faster/slower: 5% (or 0.05); equivalence is shown within it",
    default: "5%",
    kind: FieldKind::Percent,
};

pub(crate) const CONFIDENCE: FieldDef = FieldDef {
    key: "confidence",
    help: "confidence of every verdict, all of a sweep's together: 95% (or 0.95)",
    default: "95%",
    kind: FieldKind::Percent,
};

/// The decision parameters of a spec.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DecisionParams {
    /// Cap on trials per setting with `repeat = auto`.
    #[serde(default = "default_max_repeat")]
    pub max_repeat: u32,
    /// As a fraction: 0.05 is 5%.
    #[serde(default = "default_min_effect")]
    pub min_effect: f64,
    /// As a fraction: 0.95 is 95%.
    #[serde(default = "default_confidence")]
    pub confidence: f64,
}

fn default_max_repeat() -> u32 {
    10
}
fn default_min_effect() -> f64 {
    Rules::default().min_effect
}
fn default_confidence() -> f64 {
    Rules::default().confidence
}

impl Default for DecisionParams {
    fn default() -> DecisionParams {
        DecisionParams {
            max_repeat: default_max_repeat(),
            min_effect: default_min_effect(),
            confidence: default_confidence(),
        }
    }
}

/// A percentage as a fraction, read the same way for every percent field (`min-effect`,
/// `confidence`, on the command line, in presets, in the editor and in `history compare`):
/// `5%` and `0.5%` are percent; a bare number of 1 or more is percent too (`5`, `95`); a bare
/// number below 1 is already a fraction (`0.05` is 5%, `0.95` is 95%). So `5%`, `5` and `0.05`
/// all mean 5%.
pub(crate) fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, percent) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (t, false),
    };
    let v: f64 = num
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("'{t}' is not a percentage: write e.g. 5% (or 0.05)"))?;
    let fraction = if percent || v >= 1.0 { v / 100.0 } else { v };
    // 99.9 / 100 is 0.9990000000000001 in binary: round away what the division adds.
    Ok((fraction * 1e9).round() / 1e9)
}

/// 0.05 → `5%`, 0.995 → `99.5%`.
pub(crate) fn format_percent(f: f64) -> String {
    let p = f * 100.0;
    let s = format!("{p:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

/// `--min-effect`: `5%` or `0.05` → 0.05; 0% to below 100%.
pub fn parse_min_effect(s: &str) -> Result<f64, String> {
    let v = parse_percent(s)?;
    if !(0.0..1.0).contains(&v) {
        return Err(format!(
            "'{}' is out of range: the smallest effect is 0% (any real difference counts) to below 100%; 5% (or 0.05) is usual",
            s.trim()
        ));
    }
    Ok(v)
}

/// `--confidence`: `95%` or `0.95` → 0.95; above 50% and at most 99.9%.
pub fn parse_confidence(s: &str) -> Result<f64, String> {
    let v = parse_percent(s)?;
    if !(v > 0.5 && v <= 0.999) {
        return Err(format!(
            "'{}' is out of range: the confidence is above 50% and at most 99.9%; 95% (or 0.95) is usual",
            s.trim()
        ));
    }
    Ok(v)
}

impl DecisionParams {
    /// Read `max-repeat`, `min-effect` and `confidence`; one sentence per bad field.
    pub(crate) fn read(r: &mut FieldReader) -> DecisionParams {
        let d = DecisionParams::default();
        let max_repeat = r.count("max-repeat", MIN_TRIALS as u64, 1000) as u32;
        let min_effect = r.get("min-effect", d.min_effect, parse_min_effect);
        let confidence = r.get("confidence", d.confidence, parse_confidence);
        DecisionParams {
            max_repeat,
            min_effect,
            confidence,
        }
    }

    /// The fields in text form, added to `t`.
    pub(crate) fn write(&self, t: &mut ParamText) {
        t.insert("max-repeat".into(), self.max_repeat.to_string());
        t.insert("min-effect".into(), format_percent(self.min_effect));
        t.insert("confidence".into(), format_percent(self.confidence));
    }

    /// The verdict rules for a fixed number of trials (one look at them).
    pub fn rules(&self) -> Rules {
        Rules {
            confidence: self.confidence,
            min_effect: self.min_effect,
            auto_max: None,
        }
    }

    /// The verdict rules of a run with `repeat`: with `auto`, the looks up to `max-repeat`
    /// are paid for (see [`crate::measure::family`]).
    pub(crate) fn rules_for(&self, repeat: Repeat) -> Rules {
        match repeat {
            Repeat::Fixed(_) => self.rules(),
            Repeat::Auto => self.rules().with_auto(repeat.most(self.max_repeat)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeat_reads_counts_and_auto_and_stores_both_forms() {
        assert_eq!(Repeat::parse("3", 1000), Ok(Repeat::Fixed(3)));
        assert_eq!(Repeat::parse(" auto ", 1000), Ok(Repeat::Auto));
        assert!(Repeat::parse("0", 1000).unwrap_err().contains("at least 1"));
        assert!(Repeat::parse("often", 1000).unwrap_err().contains("'auto'"));
        assert!(Repeat::parse("2000", 1000).unwrap_err().contains("at most"));
        assert_eq!(serde_json::to_string(&Repeat::Fixed(3)).unwrap(), "3");
        assert_eq!(serde_json::to_string(&Repeat::Auto).unwrap(), "\"auto\"");
        let back: Repeat = serde_json::from_str("5").unwrap();
        assert_eq!(back, Repeat::Fixed(5));
        let back: Repeat = serde_json::from_str("\"auto\"").unwrap();
        assert_eq!(back, Repeat::Auto);
        assert_eq!(Repeat::Auto.initial(), 3);
        assert_eq!(Repeat::Auto.most(10), 10);
        assert_eq!(Repeat::Fixed(2).most(10), 2);
    }

    #[test]
    fn percentages_round_trip_and_refuse_what_cannot_be() {
        assert_eq!(parse_percent("5%"), Ok(0.05));
        assert_eq!(parse_percent("5"), Ok(0.05));
        assert_eq!(parse_percent("99.9%"), Ok(0.999));
        // A bare number below 1 is a fraction, for both fields alike.
        assert_eq!(parse_percent("0.05"), Ok(0.05));
        assert_eq!(parse_percent("0.95"), Ok(0.95));
        assert_eq!(parse_percent("0.5%"), Ok(0.005));
        assert_eq!(parse_min_effect("0.05"), parse_min_effect("5%"));
        assert_eq!(parse_confidence("0.95"), parse_confidence("95%"));
        assert_eq!(parse_confidence("0.999"), Ok(0.999));
        // One sentence each when refused, the same shape for both.
        assert_eq!(
            parse_percent("five").unwrap_err(),
            "'five' is not a percentage: write e.g. 5% (or 0.05)"
        );
        assert!(parse_percent("-5%").is_err());
        assert!(parse_confidence("0.4").unwrap_err().contains("above 50%"));
        assert!(parse_confidence("1").unwrap_err().contains("95% (or 0.95)"));
        assert!(
            parse_min_effect("100%")
                .unwrap_err()
                .contains("5% (or 0.05)")
        );
        assert_eq!(format_percent(0.05), "5%");
        assert_eq!(format_percent(0.995), "99.5%");
        assert_eq!(format_percent(0.0), "0%");
        let mut p = ParamText::new();
        DecisionParams::default().write(&mut p);
        let mut r = FieldReader::new(&p);
        assert_eq!(DecisionParams::read(&mut r), DecisionParams::default());
        assert!(r.errors.is_empty());
        let p = ParamText::from([
            ("max-repeat".to_string(), "2".to_string()),
            ("min-effect".to_string(), "150%".to_string()),
            ("confidence".to_string(), "40%".to_string()),
        ]);
        let mut r = FieldReader::new(&p);
        DecisionParams::read(&mut r);
        let keys: Vec<&str> = r.errors.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            ["max-repeat", "min-effect", "confidence"],
            "{r:?}",
            r = r.errors
        );
    }

    #[test]
    fn auto_rules_pay_for_their_looks() {
        let d = DecisionParams::default();
        assert_eq!(d.rules_for(Repeat::Fixed(5)), d.rules());
        assert_eq!(d.rules_for(Repeat::Auto).auto_max, Some(10));
    }

    #[test]
    fn old_records_without_the_fields_read_as_defaults() {
        let d: DecisionParams = serde_json::from_str("{}").unwrap();
        assert_eq!(d, DecisionParams::default());
    }
}
