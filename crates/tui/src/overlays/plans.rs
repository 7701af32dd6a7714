//! The plan view (`e`, as in EXPLAIN, after a query run): the plan tree of one statement under one
//! combination, each node on its line, `*` and the warning colour on the nodes that are not
//! in every combination's plan. `←→` steps through the combinations, `Tab` through the
//! statements, `↑↓ PgUp PgDn Home End` scroll, `Esc` closes. A node whose label and
//! measurements do not fit the width gets its measurements on the line below, so 80×24 shows
//! the whole tree by scrolling and 200×60 at a glance.

use std::collections::BTreeSet;

use crossterm::event::KeyCode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::experiment::query::QueryReport;
use crate::experiment::query::summary::changed_keys;
use crate::tui::app::App;
use crate::tui::render::overlay_box;
use crate::tui::text::{fit, width, wrap};

/// Where the view is: which statement, which of its combinations, how far down.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanCursor {
    pub statement: usize,
    /// Position among the combinations that have a plan of the statement.
    pub combo: usize,
    pub scroll: usize,
}

/// The combinations with a plan of statement `s`, in order.
fn combos_of(r: &QueryReport, s: usize) -> Vec<usize> {
    let mut v: Vec<usize> = r
        .plans
        .iter()
        .filter(|p| p.statement == s)
        .map(|p| p.combo)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The statements that have a plan.
fn statements_of(r: &QueryReport) -> Vec<usize> {
    let mut v: Vec<usize> = r.plans.iter().map(|p| p.statement).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The cursor after `key`; None closes the view.
pub(crate) fn step(
    r: &QueryReport,
    c: PlanCursor,
    key: KeyCode,
    page: usize,
) -> Option<PlanCursor> {
    let statements = statements_of(r);
    let si = statements
        .iter()
        .position(|&s| s == c.statement)
        .unwrap_or(0);
    let combos = combos_of(r, c.statement).len().max(1);
    let mut n = c;
    match key {
        KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('e') => return None,
        KeyCode::Right | KeyCode::Char('l') => {
            n.combo = (c.combo + 1) % combos;
            n.scroll = 0;
        }
        KeyCode::Left => {
            n.combo = (c.combo + combos - 1) % combos;
            n.scroll = 0;
        }
        KeyCode::Tab | KeyCode::BackTab if !statements.is_empty() => {
            let next = if key == KeyCode::Tab {
                (si + 1) % statements.len()
            } else {
                (si + statements.len() - 1) % statements.len()
            };
            n.statement = statements[next];
            n.combo = c
                .combo
                .min(combos_of(r, n.statement).len().saturating_sub(1));
            n.scroll = 0;
        }
        KeyCode::Down | KeyCode::Char('j') => n.scroll += 1,
        KeyCode::Up | KeyCode::Char('k') => n.scroll = c.scroll.saturating_sub(1),
        KeyCode::PageDown => n.scroll += page.max(1),
        KeyCode::PageUp => n.scroll = c.scroll.saturating_sub(page.max(1)),
        KeyCode::Home => n.scroll = 0,
        KeyCode::End => n.scroll = usize::MAX / 2,
        _ => {}
    }
    Some(n)
}

/// The view's first cursor: the first statement with a plan, its first combination.
pub(crate) fn first(r: &QueryReport) -> Option<PlanCursor> {
    let s = *statements_of(r).first()?;
    Some(PlanCursor {
        statement: s,
        combo: 0,
        scroll: 0,
    })
}

/// The tree's lines at `cols` columns: (changed, text) per screen line.
fn tree(
    r: &QueryReport,
    s: usize,
    combo: usize,
    changed: &BTreeSet<String>,
    cols: usize,
) -> Vec<(bool, String)> {
    let Some(p) = r.plan(s, combo) else {
        return vec![(false, "no plan for this combination".into())];
    };
    let mut out = Vec::new();
    for l in &p.facts.lines {
        let mark = changed.contains(&l.key);
        let head = format!(
            "{} {}{}{}",
            if mark { "*" } else { " " },
            "  ".repeat(l.depth),
            if l.depth > 0 { "-> " } else { "" },
            l.label
        );
        let together = format!("{head}  ({})", l.detail);
        if width(&together) <= cols {
            out.push((mark, together));
        } else {
            // The measurements (time, rows, loops, buffers, temp blocks) under the label,
            // on as many lines as they take: scrolled to, never cut.
            out.push((mark, head));
            let pad = "  ".repeat(l.depth.min(8)) + "     ";
            let room = cols.saturating_sub(width(&pad)).max(20);
            for part in wrap(&format!("({})", l.detail), room, 50) {
                out.push((mark, format!("{pad}{part}")));
            }
        }
    }
    out
}

pub(crate) fn render(app: &App, f: &mut Frame, area: Rect, c: &PlanCursor) {
    let theme = app.theme;
    let Some(r) = app.run.query.as_deref() else {
        return;
    };
    let combos = combos_of(r, c.statement);
    let combo = combos.get(c.combo).copied().unwrap_or(0);
    let name = r
        .plans
        .iter()
        .find(|p| p.statement == c.statement)
        .map(|p| p.name.clone())
        .unwrap_or_default();
    let title = format!(" Plan · {name} ");
    let inner = overlay_box(app, f, area, &title, 200);
    let cols = inner.width as usize;
    let rows = inner.height as usize;
    let changed = changed_keys(r, c.statement);
    let plan = r.plan(c.statement, combo);
    let mut head = vec![Line::from(vec![
        Span::styled(
            format!("{}/{} ", c.combo + 1, combos.len().max(1)),
            theme.key(),
        ),
        Span::styled(
            fit(&r.combo_label(combo), cols.saturating_sub(6)),
            theme.title(),
        ),
    ])];
    let mut facts = Vec::new();
    if let Some(p) = plan {
        if p.estimate_only {
            facts.push("planner estimate, not measured (hypothetical index)".to_string());
        }
        if p.facts.temp_bytes > 0 {
            facts.push(format!(
                "spill {}",
                crate::measure::units::format_bytes(p.facts.temp_bytes)
            ));
        }
        facts.push(format!(
            "buffers hit {} read {}",
            p.facts.shared_hit, p.facts.shared_read
        ));
        if let Some(j) = p.facts.jit_ms {
            facts.push(format!("JIT {j:.1} ms"));
        }
        if r.current_combo == Some(combo) {
            facts.push("the server's own settings".into());
        }
    }
    for l in wrap(&facts.join(" · "), cols, 3) {
        head.push(Line::styled(l, theme.dim()));
    }
    let hint = if cols >= 100 {
        "←→ combination · Tab statement · ↑↓ PgUp PgDn Home End scroll · * changes between combinations · Esc close"
    } else {
        "←→ combination · Tab statement · ↑↓ scroll · * changed · Esc"
    };
    let body = tree(r, c.statement, combo, &changed, cols);
    // The keys under the tree, wrapped (never cut); the tree scrolls in what is left.
    let foot_for = |room: usize| {
        let more = if body.len() > room {
            format!(
                "lines {}–{} of {} · ",
                c.scroll.min(body.len().saturating_sub(room)) + 1,
                (c.scroll.min(body.len().saturating_sub(room)) + room).min(body.len()),
                body.len()
            )
        } else {
            String::new()
        };
        wrap(&format!("{more}{hint}"), cols, 2)
    };
    let foot_h = foot_for(rows.saturating_sub(head.len() + 2)).len();
    let room = rows.saturating_sub(head.len() + foot_h);
    let foot = foot_for(room);
    let top = c.scroll.min(body.len().saturating_sub(room));
    let mut lines = head;
    for (mark, text) in body.iter().skip(top).take(room) {
        let style = if *mark { theme.warn() } else { theme.plain() };
        lines.push(Line::styled(fit(text, cols), style));
    }
    while lines.len() < rows.saturating_sub(foot.len()) {
        lines.push(Line::default());
    }
    for l in foot {
        lines.push(Line::styled(l, theme.dim()));
    }
    f.render_widget(Paragraph::new(lines), inner);
}
