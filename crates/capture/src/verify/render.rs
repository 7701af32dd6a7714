//! A verification in words: the headline, a table for the terminal, Markdown (which links the
//! SVG of [`super::svg`]); JSON is the decision object itself.

use std::fmt::Write;

use super::compare::{Apart, Row, Verification};

/// A ratio as every view of a verification writes it: `×0.31`.
pub fn x(r: f64) -> String {
    format!("×{r:.2}")
}

/// Milliseconds without the unit (`812`, `0.042`): three decimals below 100.
pub fn ms_number(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

fn ms(v: f64) -> String {
    format!("{} ms", ms_number(v))
}

/// One sentence: what the statements counted did, and the total.
pub fn headline(v: &Verification) -> String {
    let counted: Vec<&Row> = v.rows.iter().filter(|r| r.flags.is_empty()).collect();
    if counted.is_empty() {
        return format!(
            "no statement ran at least as often in both windows without something else moving ({} compared, {} flagged)",
            v.rows.len(),
            v.rows.len()
        );
    }
    let named = |w: &str| -> Vec<String> {
        counted
            .iter()
            .filter(|r| r.verdict == w)
            .map(|r| format!("{} {} ({} … {})", r.name, x(r.ratio), x(r.low), x(r.high)))
            .collect()
    };
    let (faster, slower) = (named("faster"), named("slower"));
    let same = counted
        .iter()
        .filter(|r| r.verdict == "no significant difference")
        .count();
    let undecided = counted.len() - faster.len() - slower.len() - same;
    let mut parts = Vec::new();
    if !faster.is_empty() {
        parts.push(format!("faster: {}", faster.join(", ")));
    }
    if !slower.is_empty() {
        parts.push(format!("slower: {}", slower.join(", ")));
    }
    if faster.is_empty() && slower.is_empty() {
        parts.push("no statement faster or slower".into());
    }
    if same > 0 {
        parts.push(format!(
            "{same} shown the same within ±{:.0} % (no significant difference)",
            v.min_effect * 100.0
        ));
    }
    if undecided > 0 {
        parts.push(format!("{undecided} not shown different"));
    }
    let total = v.total.as_ref().map_or(String::new(), |t| {
        format!(
            "; time-weighted total {} ({} … {}), {}",
            x(t.ratio),
            x(t.low),
            x(t.high),
            t.verdict
        )
    });
    format!(
        "{} of {} statements compared ({:.2} % intervals, family-wise {:.0} %): {}{total}",
        counted.len(),
        v.rows.len(),
        v.level * 100.0,
        v.confidence * 100.0,
        parts.join("; ")
    )
}

/// The windows, the settings that changed and the notes, a line each after `bullet`.
pub fn top(v: &Verification, out: &mut String, bullet: &str) {
    let _ = writeln!(
        out,
        "{bullet}before: {} .. {} ({:.0} s, {:.1} calls/s); after: {} .. {} ({:.0} s, {:.1} calls/s)",
        v.before.start,
        v.before.end,
        v.before.seconds,
        v.before.load.calls_per_s,
        v.after.start,
        v.after.end,
        v.after.seconds,
        v.after.load.calls_per_s
    );
    if v.settings.is_empty() {
        let _ = writeln!(out, "{bullet}settings: none changed between the windows");
    }
    for s in &v.settings {
        let pending = if s.pending_restart {
            " (pending restart: not in effect yet)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{bullet}setting changed: {} {} → {}{pending}",
            s.name,
            s.before.as_deref().unwrap_or("(boot value)"),
            s.after.as_deref().unwrap_or("(boot value)")
        );
    }
    for n in &v.notes {
        let _ = writeln!(out, "{bullet}note: {n}");
    }
}

fn row_line(r: &Row) -> String {
    let lab = r.lab.map_or(String::new(), |l| format!("  lab {}", x(l)));
    format!(
        "{:<34} {:>8.0} {:>8.0} {:>10} {:>10}  {:>6} [{:>6} … {:>6}]  {:<26} rows {:.1}→{:.1}  read {:.1}→{:.1}  temp {:.1}→{:.1}{lab}",
        r.name,
        r.calls_before,
        r.calls_after,
        ms(r.mean_ms.before),
        ms(r.mean_ms.after),
        x(r.ratio),
        x(r.low),
        x(r.high),
        r.verdict,
        r.rows.before,
        r.rows.after,
        r.shared_read.before,
        r.shared_read.after,
        r.temp.before,
        r.temp.after
    )
}

fn apart(out: &mut String, what: &str, list: &[Apart]) {
    if list.is_empty() {
        return;
    }
    let _ = writeln!(out, "{what}:");
    for a in list {
        let _ = writeln!(
            out,
            "  {:<34} calls {:.0} → {:.0}",
            a.name, a.calls_before, a.calls_after
        );
    }
}

/// For the terminal.
pub fn table(v: &Verification) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "verify {}: {}", v.database, v.headline);
    top(v, &mut out, "");
    let _ = writeln!(
        out,
        "\n{:<34} {:>8} {:>8} {:>10} {:>10}  {:<26}  {:<26} per call (before→after)",
        "statement", "calls 1", "calls 2", "mean 1", "mean 2", "after/before", "verdict"
    );
    for r in &v.rows {
        let _ = writeln!(out, "{}", row_line(r));
        for f in &r.flags {
            let _ = writeln!(out, "  flagged, not in the headline: {f}");
        }
    }
    apart(
        &mut out,
        "\ntoo few calls in a window to compare",
        &v.too_few,
    );
    apart(&mut out, "\nnew in the second window", &v.new);
    apart(&mut out, "\ngone in the second window", &v.gone);
    out
}

/// Markdown; `svg` names the chart file beside it (None: no chart written).
pub fn markdown(v: &Verification, svg: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# verify {}\n\n{}\n", v.database, v.headline);
    top(v, &mut out, "- ");
    if let Some(path) = svg {
        let _ = writeln!(out, "\n![after/before per statement]({path})");
    }
    let _ = writeln!(
        out,
        "\n| statement | calls 1 | calls 2 | mean 1 | mean 2 | after/before | interval | verdict | rows/call | read/call | temp/call | lab | flags |\n|---|---:|---:|---:|---:|---:|---|---|---|---|---|---|---|"
    );
    for r in &v.rows {
        let _ = writeln!(
            out,
            "| `{}` | {:.0} | {:.0} | {} | {} | {} | {} … {} | {} | {:.1} → {:.1} | {:.1} → {:.1} | {:.1} → {:.1} | {} | {} |",
            r.name,
            r.calls_before,
            r.calls_after,
            ms(r.mean_ms.before),
            ms(r.mean_ms.after),
            x(r.ratio),
            x(r.low),
            x(r.high),
            r.verdict,
            r.rows.before,
            r.rows.after,
            r.shared_read.before,
            r.shared_read.after,
            r.temp.before,
            r.temp.after,
            r.lab.map_or("—".into(), x),
            r.flags.join("; ")
        );
    }
    for (what, list) in [
        ("Too few calls to compare", &v.too_few),
        ("New in the second window", &v.new),
        ("Gone in the second window", &v.gone),
    ] {
        if !list.is_empty() {
            let _ = writeln!(out, "\n## {what}\n");
            for a in list {
                let _ = writeln!(
                    out,
                    "- `{}`: calls {:.0} → {:.0}",
                    a.name, a.calls_before, a.calls_after
                );
            }
        }
    }
    out
}
