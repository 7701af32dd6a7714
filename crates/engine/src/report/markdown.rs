//! The Markdown report: what was run, where, the results, the summary and recommendation —
//! a document to paste into a ticket or a wiki, with the chart beside it.

use super::content::{Content, content};
use super::grid::Grid;
use crate::experiment::RunReport;

fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub(crate) fn grid(g: &Grid) -> String {
    let mut out = format!(
        "| {} |\n",
        g.headers
            .iter()
            .map(|h| esc(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let rule: Vec<&str> = g
        .numeric
        .iter()
        .map(|n| if *n { "---:" } else { "---" })
        .collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for row in &g.rows {
        let cells: Vec<String> = (0..g.headers.len())
            .map(|i| esc(row.get(i).map(String::as_str).unwrap_or("")))
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

fn pairs_table(head: (&str, &str), items: &[(String, String)]) -> String {
    let mut g = Grid::new("", &[(head.0, false), (head.1, false)]);
    g.rows = items
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    grid(&g)
}

fn list(items: &[String]) -> String {
    items.iter().map(|i| format!("- {i}\n")).collect()
}

/// A chart written beside the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChartLink {
    pub title: String,
    /// File name, relative to the document.
    pub file: String,
}

/// The document. `chart` is the chart's file name (relative to the document), when one was
/// written beside it.
pub(crate) fn document(report: &RunReport, chart: Option<&str>) -> String {
    let c = content(report);
    let links: Vec<ChartLink> = chart
        .map(|f| ChartLink {
            title: c.title.clone(),
            file: f.to_string(),
        })
        .into_iter()
        .collect();
    render_content(&c, &links)
}

/// The document with every chart written beside it, the main one first.
pub(crate) fn document_with_charts(report: &RunReport, charts: &[ChartLink]) -> String {
    render_content(&content(report), charts)
}

pub(crate) fn render_content(c: &Content, charts: &[ChartLink]) -> String {
    let get = |k: &str| {
        c.run
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    };
    let mut out = format!("# {}\n\n", c.title);
    out.push_str(&format!(
        "Run `{}` {} — started {}, took {} (pglab {}).\n",
        get("run"),
        get("outcome"),
        get("started"),
        get("took"),
        get("pglab")
    ));
    if let Some(e) = &c.error {
        out.push_str(&format!("\n> **Error:** {}\n", esc(e)));
    }

    out.push_str("\n## What was run\n\n");
    if !get("preset").is_empty() {
        out.push_str(&format!("Preset `{}`. ", get("preset")));
    }
    out.push_str("Parameters (as `pglab run` flags and presets write them):\n\n");
    out.push_str(&pairs_table(("parameter", "value"), &c.params));

    out.push_str("\n## Where\n\n");
    out.push_str(&format!("Target `{}`.\n\n", get("target")));
    let mut server = c.server.clone();
    server.extend(c.settings.iter().cloned());
    out.push_str(&pairs_table(("server", "value"), &server));
    out.push('\n');
    out.push_str(&pairs_table(("host", "value"), &c.host));

    out.push_str("\n## Results\n\n");
    for (i, ch) in charts.iter().enumerate() {
        // The main chart keeps the report's title as its text; the others say what they show.
        let alt = if i == 0 { &c.title } else { &ch.title };
        out.push_str(&format!("![{}]({})\n\n", esc(alt), ch.file));
    }
    if c.grids.is_empty() {
        out.push_str("No trial finished.\n");
    }
    let mut rest = Vec::new();
    for g in &c.grids {
        // The long per-trial table goes last, after the conclusions.
        if g.title == "Trials" {
            rest.push(g);
            continue;
        }
        out.push_str(&format!("### {}\n\n{}\n", g.title, grid(g)));
    }

    for (title, text) in &c.blocks {
        out.push_str(&format!("### {}\n\n```text\n{}```\n\n", esc(title), text));
    }
    if let Some(d) = &c.decision {
        out.push_str(&format!("## Decision\n\n{}\n", esc(&d.headline())));
        if !d.set.is_empty() {
            out.push_str(&format!("\n```sql\n{}\n```\n", d.set.join("\n")));
        }
        out.push('\n');
    }
    if !c.findings.is_empty() || !c.recommendations.is_empty() {
        out.push_str("## Summary and recommendation\n\n");
        out.push_str(&list(&c.findings));
        for r in &c.recommendations {
            out.push_str(&format!("\n{}\n", r.text));
            if !r.sql.is_empty() {
                out.push_str(&format!("\n```sql\n{}\n```\n", r.sql.join("\n")));
            }
        }
    }
    if !c.confounders.is_empty() {
        out.push_str("\n## What may have skewed the numbers\n\n");
        out.push_str(&list(&c.confounders));
    }
    for g in rest {
        out.push_str(&format!("\n## {}\n\n{}", g.title, grid(g)));
    }
    if !c.notes.is_empty() {
        out.push_str("\n## Notes\n\n");
        out.push_str(&list(&c.notes));
    }
    out
}

pub fn render(report: &RunReport) -> String {
    document(report, None)
}
