//! The rules of a verdict: how sure, and how large a difference must be, before pglab calls
//! it. Defaults: 95% confidence, 5% smallest effect worth acting on. With `--repeat auto` the
//! rules also carry the most trials per setting, so that the verdicts pay for every look the
//! adaptive repeats take (see [`super::family`]).

use serde::{Deserialize, Serialize};

/// How sure and how large a difference must be before pglab calls it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rules {
    /// Confidence of every interval, in (0.5, 0.999]; 0.95 means 95%. For a sweep it is the
    /// confidence that all of its verdicts hold together (see [`super::family`]).
    pub confidence: f64,
    /// Smallest ratio change worth acting on, in [0, 1); 0.05 means 5%. A setting is
    /// `faster`/`slower` only beyond it, and `no significant difference` only when the whole
    /// interval lies within it.
    pub min_effect: f64,
    /// With `--repeat auto`: the most trials per setting. The trials were added while looking
    /// at the verdicts, so each look gets its share of the error (None: a fixed count, one
    /// look).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_max: Option<u32>,
}

impl Default for Rules {
    fn default() -> Rules {
        Rules {
            confidence: 0.95,
            min_effect: 0.05,
            auto_max: None,
        }
    }
}

/// Why a [`Rules`] was refused, as a sentence for the user.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RulesError {
    #[error("confidence must be above 0.5 and at most 0.999 (got {0}); 0.95 means 95% sure")]
    Confidence(f64),
    #[error(
        "the smallest effect must be at least 0 and below 1 (got {0}); 0.05 means a 5% difference"
    )]
    MinEffect(f64),
}

impl Rules {
    /// Rules checked for range, for a fixed number of trials.
    pub fn new(confidence: f64, min_effect: f64) -> Result<Rules, RulesError> {
        let rules = Rules {
            confidence,
            min_effect,
            auto_max: None,
        };
        rules.validate().map(|()| rules)
    }

    /// The same rules for trials added by `--repeat auto` up to `max` per setting.
    pub fn with_auto(self, max: u32) -> Rules {
        Rules {
            auto_max: Some(max),
            ..self
        }
    }

    /// The same rules for a fixed number of trials (one look).
    pub fn fixed(self) -> Rules {
        Rules {
            auto_max: None,
            ..self
        }
    }

    /// Ok when `confidence` is in (0.5, 0.999] and `min_effect` in [0, 1).
    pub fn validate(&self) -> Result<(), RulesError> {
        if !(self.confidence > 0.5 && self.confidence <= 0.999) {
            return Err(RulesError::Confidence(self.confidence));
        }
        if !(self.min_effect >= 0.0 && self.min_effect < 1.0) {
            return Err(RulesError::MinEffect(self.min_effect));
        }
        Ok(())
    }

    /// The rules as used: out-of-range values clamped into range, NaN replaced by the
    /// default, so unvalidated rules never produce nonsense.
    pub fn effective(&self) -> Rules {
        let d = Rules::default();
        let pick = |v: f64, lo: f64, hi: f64, default: f64| {
            if v.is_nan() { default } else { v.clamp(lo, hi) }
        };
        Rules {
            confidence: pick(self.confidence, 0.501, 0.999, d.confidence),
            min_effect: pick(self.min_effect, 0.0, 0.999, d.min_effect),
            auto_max: self.auto_max.map(|m| m.max(1)),
        }
    }

    /// The smallest effect on the log scale: `ln(1 + min_effect)`.
    pub fn margin(&self) -> f64 {
        self.effective().min_effect.ln_1p()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_validated_with_a_sentence() {
        assert_eq!(Rules::default(), Rules::new(0.95, 0.05).unwrap());
        let e = Rules::new(1.2, 0.05).unwrap_err();
        assert_eq!(
            e.to_string(),
            "confidence must be above 0.5 and at most 0.999 (got 1.2); 0.95 means 95% sure"
        );
        assert!(Rules::new(0.5, 0.05).is_err());
        assert!(Rules::new(f64::NAN, 0.05).is_err());
        assert!(Rules::new(0.999, 0.0).is_ok());
        assert_eq!(
            Rules::new(0.9, 1.0).unwrap_err(),
            RulesError::MinEffect(1.0)
        );
        assert!(Rules::new(0.9, -0.1).is_err());
    }

    #[test]
    fn unvalidated_rules_are_clamped() {
        let r = Rules {
            confidence: 2.0,
            min_effect: f64::NAN,
            auto_max: Some(0),
        }
        .effective();
        assert_eq!((r.confidence, r.min_effect), (0.999, 0.05));
        assert_eq!(r.auto_max, Some(1));
        assert_eq!(Rules::default().effective(), Rules::default());
    }

    #[test]
    fn auto_rules_round_trip_and_old_records_read_as_fixed() {
        let r = Rules::default().with_auto(10);
        assert_eq!(r.auto_max, Some(10));
        assert_eq!(r.fixed(), Rules::default());
        let json = serde_json::to_value(r).unwrap();
        assert_eq!(json["auto_max"], 10);
        let old: Rules = serde_json::from_str(r#"{"confidence":0.95,"min_effect":0.05}"#).unwrap();
        assert_eq!(old, Rules::default());
        assert!(
            serde_json::to_value(Rules::default())
                .unwrap()
                .get("auto_max")
                .is_none()
        );
    }
}
