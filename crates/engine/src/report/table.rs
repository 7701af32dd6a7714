//! The plain-text report: aligned tables and short blocks, for a terminal or a log.

use super::content::{Content, content};
use super::grid::Grid;
use crate::experiment::RunReport;

/// Display width of a cell (characters; the cells pglab writes have no wide glyphs).
fn width(s: &str) -> usize {
    s.chars().count()
}

/// An aligned table with a header and a rule under it.
pub fn grid(g: &Grid) -> String {
    let cols = g.headers.len();
    let mut widths: Vec<usize> = g.headers.iter().map(|h| width(h)).collect();
    for row in &g.rows {
        for (i, c) in row.iter().enumerate().take(cols) {
            widths[i] = widths[i].max(width(c));
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (i, w) in widths.iter().enumerate() {
            let c = cells.get(i).map(String::as_str).unwrap_or("");
            let pad = w.saturating_sub(width(c));
            if i > 0 {
                s.push_str("  ");
            }
            if g.numeric.get(i).copied().unwrap_or(false) {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            } else {
                s.push_str(c);
                if i + 1 < cols {
                    s.push_str(&" ".repeat(pad));
                }
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&g.headers);
    let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    out.push_str(&rule.join("  "));
    out.push('\n');
    for row in &g.rows {
        out.push_str(&line(row));
    }
    out
}

/// `key  value` lines with the keys aligned.
fn pairs(items: &[(String, String)], indent: &str) -> String {
    let w = items.iter().map(|(k, _)| width(k)).max().unwrap_or(0);
    items
        .iter()
        .map(|(k, v)| format!("{indent}{k}{}  {v}\n", " ".repeat(w - width(k))))
        .collect()
}

fn bullets(title: &str, items: &[String], out: &mut String) {
    if items.is_empty() {
        return;
    }
    out.push_str(&format!("\n{title}\n"));
    for i in items {
        out.push_str(&format!("  - {i}\n"));
    }
}

pub(crate) fn render_content(c: &Content) -> String {
    let mut out = format!("{}\n", c.title);
    let mut facts = c.run.clone();
    if let Some(e) = &c.error {
        facts.push(("error".into(), e.clone()));
    }
    if !c.params.is_empty() {
        let joined: Vec<String> = c
            .params
            .iter()
            .map(|(k, v)| format!("{k}={}", v.replace('\n', " ")))
            .collect();
        facts.push(("params".into(), joined.join(" ")));
    }
    let server: Vec<String> = c.server.iter().map(|(_, v)| v.clone()).collect();
    facts.push(("server".into(), server.join(" · ")));
    if !c.settings.is_empty() {
        let s: Vec<String> = c.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        facts.push(("settings".into(), s.join(" ")));
    }
    let host: Vec<String> = c
        .host
        .iter()
        .filter(|(k, _)| k != "hostname")
        .map(|(_, v)| v.clone())
        .collect();
    facts.push(("host".into(), host.join(" · ")));
    out.push_str(&pairs(&facts, "  "));
    for g in &c.grids {
        out.push_str(&format!("\n{}\n", g.title));
        out.push_str(&grid(g));
    }
    for (title, text) in &c.blocks {
        out.push_str(&format!("\n{title}\n"));
        for line in text.lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    if let Some(d) = &c.decision {
        out.push_str(&format!("\nDecision\n  {}\n", d.headline()));
        for s in &d.set {
            out.push_str(&format!("      {s}\n"));
        }
    }
    bullets("Findings", &c.findings, &mut out);
    if !c.recommendations.is_empty() {
        out.push_str("\nRecommendation\n");
        for r in &c.recommendations {
            out.push_str(&format!("  {}\n", r.text));
            for s in &r.sql {
                out.push_str(&format!("      {s}\n"));
            }
        }
    }
    bullets("Confounders", &c.confounders, &mut out);
    bullets("Notes", &c.notes, &mut out);
    out
}

pub(crate) fn render(report: &RunReport) -> String {
    render_content(&content(report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align() {
        let mut g = Grid::new("t", &[("name", false), ("seconds", true)]);
        g.rows.push(vec!["random".into(), "11.60".into()]);
        g.rows.push(vec!["sorted".into(), "6.7".into()]);
        let s = grid(&g);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "name    seconds");
        assert_eq!(lines[2], "random    11.60");
        assert_eq!(lines[3], "sorted      6.7");
    }
}
