//! The plans' section of `tune.md`: what each statement's plan showed, and why each setting
//! was or was not measured.

use super::state::TuneState;

/// `## Plans` (empty when the tune read no plans).
pub(crate) fn markdown(st: &TuneState) -> String {
    let Some(r) = st.plans.as_ref().filter(|r| !r.facts.is_empty()) else {
        return String::new();
    };
    let mut s = String::from(
        "## Plans\n\nRead before the first pass: each statement's EXPLAIN (ANALYZE, BUFFERS, SETTINGS) at the starting configuration.\n\n",
    );
    for f in &r.facts {
        s.push_str(&format!("- {}\n", f.sentence()));
    }
    s.push_str("\n| setting | measured | values | why |\n|---|---|---|---|\n");
    for x in &r.settings {
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            x.setting,
            if x.tried { "yes" } else { "no" },
            x.values.join(", "),
            x.why.replace('|', "\\|")
        ));
    }
    if !r.design.is_empty() {
        s.push_str(&format!("\nDesign: {}.\n", r.design));
    }
    s.push('\n');
    s
}
