//! Plans as text for the reports: per statement, the plan of the best combination beside the
//! plan of the current one (the server's own settings, no candidate index), each node on a
//! line of its tree, with `*` before the nodes that are not in every combination's plan.

use crate::experiment::query::summary::changed_keys;
use crate::experiment::query::{ComboPlan, QueryReport};

/// A plan's lines: indent, the change mark, the node, what it measured.
pub(crate) fn plan_lines(
    p: &ComboPlan,
    changed: &std::collections::BTreeSet<String>,
) -> Vec<String> {
    p.facts
        .lines
        .iter()
        .map(|l| {
            let mark = if changed.contains(&l.key) { "*" } else { " " };
            format!(
                "{mark} {}{}{}  ({})",
                "  ".repeat(l.depth),
                if l.depth > 0 { "-> " } else { "" },
                l.label,
                l.detail
            )
        })
        .collect()
}

/// Two columns of text side by side, the left padded to its widest line.
pub(crate) fn side_by_side(left: &[String], right: &[String], titles: (&str, &str)) -> String {
    let width = left
        .iter()
        .map(|l| l.chars().count())
        .chain([titles.0.chars().count()])
        .max()
        .unwrap_or(0);
    let pad = |s: &str| format!("{s}{}", " ".repeat(width - s.chars().count()));
    let mut out = format!("{} │ {}\n", pad(titles.0), titles.1);
    out.push_str(&format!(
        "{}─┼─{}\n",
        "─".repeat(width),
        "─".repeat(titles.1.chars().count().max(8))
    ));
    for i in 0..left.len().max(right.len()) {
        let l = left.get(i).map(String::as_str).unwrap_or("");
        let r = right.get(i).map(String::as_str).unwrap_or("");
        out.push_str(format!("{} │ {r}", pad(l)).trim_end());
        out.push('\n');
    }
    out
}

/// Per statement with a plan: (title, text) of the best and the current combination's plans.
pub(crate) fn blocks(b: &QueryReport) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (s, name) in b.plan_names().iter().enumerate() {
        let changed = changed_keys(b, s);
        // The best of this statement's unit (statement mode), else of the first unit.
        let unit = if b.params.throughput() {
            b.summary.units.first()
        } else {
            b.summary.units.iter().find(|u| &u.name == name)
        };
        let best = unit
            .and_then(|u| u.finding.best.as_deref().and_then(|l| u.combo_of(l)))
            .or_else(|| b.plans.iter().find(|p| p.statement == s).map(|p| p.combo));
        // Without a combination of the server's own settings, the first one stands in.
        let current = b.current_combo.or(Some(0));
        let current_word = if b.current_combo.is_some() {
            "current"
        } else {
            "first"
        };
        let (Some(bc), Some(cc)) = (best, current) else {
            continue;
        };
        let (Some(bp), Some(cp)) = (b.plan(s, bc), b.plan(s, cc)) else {
            continue;
        };
        let text = if bc == cc {
            let mut t = format!("best = {current_word}: {}\n", b.combo_label(bc));
            for l in plan_lines(bp, &changed) {
                t.push_str(&l);
                t.push('\n');
            }
            t
        } else {
            side_by_side(
                &plan_lines(bp, &changed),
                &plan_lines(cp, &changed),
                (
                    &format!("best: {}", b.combo_label(bc)),
                    &format!("{current_word}: {}", b.combo_label(cc)),
                ),
            )
        };
        out.push((
            format!("Plans of {name} (* changes between combinations)"),
            text,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up() {
        let t = side_by_side(
            &["a".into(), "bbb".into()],
            &["x".into()],
            ("best", "current"),
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "best │ current");
        assert_eq!(lines[2], "a    │ x");
        assert_eq!(lines[3], "bbb  │");
    }
}
