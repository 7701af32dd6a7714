//! What a tune predicted, read from its `tune.sql`: the confirmation's per-statement line
//! (`--   tuned set, per statement (…): faster: a ×0.62 (×0.55 … ×0.70); not shown
//! different: c`) gives each named statement's ratio of time per execution, tuned over the
//! start, the same direction as verify's after over before. Statements the lab did not name
//! faster or slower carry no ratio there, and get none here.

use std::collections::BTreeMap;

/// The line of `tune.sql` that holds the tuned set's per-statement ratios.
const LINE: &str = "--   tuned set, per statement";

/// Each statement's lab ratio, by name (empty: the file records none).
pub fn lab_ratios(tune_sql: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for line in tune_sql.lines().filter(|l| l.starts_with(LINE)) {
        let Some((_, list)) = line.split_once("): ") else {
            continue;
        };
        for part in list.split(';') {
            let part = part.trim();
            let Some(named) = part
                .strip_prefix("faster: ")
                .or_else(|| part.strip_prefix("slower: "))
            else {
                continue;
            };
            // "a ×0.62 (×0.55 … ×0.70), b ×1.40 (×1.2 … ×1.6)"
            for item in named.split("), ") {
                let mut words = item.split_whitespace();
                let (Some(name), Some(ratio)) = (words.next(), words.next()) else {
                    continue;
                };
                if let Some(r) = ratio.strip_prefix('×').and_then(|r| r.parse::<f64>().ok()) {
                    out.insert(name.to_string(), r);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tuned_sets_named_statements_give_their_ratios() {
        let text = "-- evidence\n--   tuned set, per statement (time per execution against the start's, each interval at 99.17% for the 6 comparisons made): faster: select_big_1a2b3c4d ×0.41 (×0.35 … ×0.48), select_acc_0f0f0f0f ×0.90 (×0.85 … ×0.95); slower: update_acc_11112222 ×1.30 (×1.10 … ×1.52); not shown different: insert_hist_33334444\n--   pgtune's set, per statement (…): faster: select_big_1a2b3c4d ×0.70 (×0.6 … ×0.8)\n";
        let r = lab_ratios(text);
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(
            r["select_big_1a2b3c4d"], 0.41,
            "the tuned set's, not pgtune's"
        );
        assert_eq!(r["update_acc_11112222"], 1.30);
        assert!(!r.contains_key("insert_hist_33334444"));
    }
}
