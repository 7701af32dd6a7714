//! The import dialog (`i`): a server's conninfo, its tables with their sizes, the sample, then
//! the import's live progress (rows, MB/s, ETA) and what it brought into the sandbox. The
//! conninfo lives in memory only (it may hold a password) and is never saved.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::import::source::Listed;
use crate::import::{ImportProgress, ImportRecord, Sample};
use crate::measure::units::{format_bytes, format_count, format_seconds};
use crate::tui::app::App;
use crate::tui::render::overlay_box;
use crate::tui::secret::{mask, redact};
use crate::tui::text::{fit, fit_middle, pad, pad_left, spinner, wrap};

/// The samples `←`/`→` step through.
pub(crate) const SAMPLES: [Option<f64>; 7] = [
    None,
    Some(50.0),
    Some(20.0),
    Some(10.0),
    Some(5.0),
    Some(1.0),
    Some(0.1),
];

/// Where the dialog is.
#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    /// Typing the source's conninfo.
    Source,
    /// Asking the source for its tables.
    Listing,
    /// Choosing tables, sample and indexes.
    Tables,
    Importing,
    /// Finished: the records; or why not.
    Done(Result<Vec<ImportRecord>, String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ImportDialog {
    pub stage: Stage,
    pub conninfo: String,
    /// Why the last step did not work (shown under the field or the list).
    pub error: Option<String>,
    pub tables: Vec<Listed>,
    pub chosen: Vec<bool>,
    pub cursor: usize,
    /// An index into [`SAMPLES`].
    pub sample: usize,
    pub indexes: bool,
    pub phase: String,
    pub progress: Option<ImportProgress>,
    pub notes: Vec<String>,
    /// A cancel was asked for and not yet answered.
    pub cancelling: bool,
}

impl Default for ImportDialog {
    fn default() -> Self {
        ImportDialog {
            stage: Stage::Source,
            conninfo: String::new(),
            error: None,
            tables: Vec::new(),
            chosen: Vec::new(),
            cursor: 0,
            sample: 0,
            indexes: true,
            phase: String::new(),
            progress: None,
            notes: Vec::new(),
            cancelling: false,
        }
    }
}

impl ImportDialog {
    /// Listing or importing: something moves on screen.
    pub(crate) fn busy(&self) -> bool {
        matches!(self.stage, Stage::Listing | Stage::Importing)
    }

    pub(crate) fn sample(&self) -> Sample {
        match SAMPLES.get(self.sample).copied().flatten() {
            Some(p) => Sample::Percent(p),
            None => Sample::All,
        }
    }

    pub(crate) fn sample_text(&self) -> String {
        match SAMPLES.get(self.sample).copied().flatten() {
            Some(p) => format!("{}% (BERNOULLI, seed 42)", crate::sql::quote::percent(p)),
            None => "all rows".into(),
        }
    }

    /// The tables to import: the ticked ones, else the one under the cursor.
    pub(crate) fn selection(&self) -> Vec<&Listed> {
        let ticked: Vec<&Listed> = self
            .tables
            .iter()
            .zip(&self.chosen)
            .filter(|(_, c)| **c)
            .map(|(t, _)| t)
            .collect();
        if ticked.is_empty() {
            self.tables.get(self.cursor).into_iter().collect()
        } else {
            ticked
        }
    }

    /// Bytes `tables` hold on the source, scaled by the sample.
    pub(crate) fn bytes_of(&self, tables: &[&Listed]) -> u64 {
        let f = SAMPLES
            .get(self.sample)
            .copied()
            .flatten()
            .map_or(1.0, |p| p / 100.0);
        (tables.iter().map(|t| t.bytes.max(0)).sum::<i64>() as f64 * f) as u64
    }

    /// What the import would copy, in words: the sum of the ticked tables; with none ticked,
    /// that Enter takes the highlighted one (and its size). False: nothing is ticked.
    pub(crate) fn to_copy(&self) -> (String, bool) {
        let ticked = self.chosen.iter().filter(|c| **c).count();
        if ticked > 0 {
            let text = format!(
                "≈ {} to copy from {ticked} ticked table{}",
                format_bytes(self.bytes_of(&self.selection())),
                if ticked == 1 { "" } else { "s" }
            );
            return (text, true);
        }
        let under = self.selection();
        let text = match under.first() {
            Some(t) => format!(
                "nothing ticked: Space ticks; Enter alone imports {} (≈ {})",
                t.name,
                format_bytes(self.bytes_of(&under))
            ),
            None => "nothing ticked".into(),
        };
        (text, false)
    }
}

/// The keys the key bar shows for the dialog: (key, what, priority).
pub(crate) fn keys(d: &ImportDialog) -> Vec<(String, String, u8)> {
    let k = |a: &str, b: &str, p: u8| (a.to_string(), b.to_string(), p);
    match &d.stage {
        Stage::Source => vec![k("Enter", "list tables", 0), k("Esc", "close", 0)],
        Stage::Listing => vec![k("Esc", "close", 0)],
        Stage::Tables => vec![
            k("↑↓", "select", 1),
            k("Space", "tick", 0),
            k("←→", "sample", 1),
            k("x", "indexes", 2),
            k("Enter", "import", 0),
            k("Esc", "back", 0),
        ],
        Stage::Importing => vec![k("Esc", "cancel import", 0)],
        Stage::Done(Ok(_)) => vec![k("b", "index-build on it", 1), k("Enter", "close", 0)],
        Stage::Done(Err(_)) => vec![k("Enter", "close", 0)],
    }
}

pub(crate) fn render(app: &App, f: &mut Frame, area: Rect) {
    let d = &app.import;
    let inner = overlay_box(app, f, area, " Import into the sandbox ", 110);
    let cols = inner.width as usize;
    let rows = inner.height as usize;
    let theme = app.theme;
    let mut lines: Vec<Line> = Vec::new();
    let from = if d.conninfo.is_empty() && d.stage == Stage::Source {
        Span::styled("▏postgresql://me@db1/sales or host=… dbname=…", theme.dim())
    } else if d.stage == Stage::Source {
        // The end being typed stays in view: a long conninfo shows its tail after `…`.
        let typed: Vec<char> = mask(&d.conninfo).chars().collect();
        let room = cols.saturating_sub("from  ".len() + 2).max(1);
        let shown: String = if typed.len() > room {
            std::iter::once('…')
                .chain(typed[typed.len() - (room - 1)..].iter().copied())
                .collect()
        } else {
            typed.into_iter().collect()
        };
        Span::styled(format!("{shown}▏"), theme.value())
    } else {
        Span::styled(redact(&d.conninfo), theme.value())
    };
    lines.push(Line::from(vec![
        Span::styled("from  ", theme.label()),
        from,
    ]));
    match &d.stage {
        Stage::Source => {
            for l in wrap(
                "The server is only read: one REPEATABLE READ READ ONLY transaction, nothing created or changed there. PG* variables and ~/.pgpass apply; the conninfo is never saved.",
                cols,
                3,
            ) {
                lines.push(Line::styled(l, theme.dim()));
            }
        }
        Stage::Listing => lines.push(Line::styled(
            format!("{} asking the server for its tables…", spinner(app.tick())),
            theme.dim(),
        )),
        Stage::Tables => table_lines(app, d, cols, rows, &mut lines),
        Stage::Importing => progress_lines(app, d, cols, &mut lines),
        Stage::Done(r) => done_lines(app, r, cols, &mut lines),
    }
    if let Some(e) = &d.error {
        lines.push(Line::default());
        for l in wrap(e, cols, 4) {
            lines.push(Line::styled(l, theme.error()));
        }
    }
    if !matches!(d.stage, Stage::Tables) && !d.notes.is_empty() {
        // The latest notes that fit, two lines each at most.
        let room = rows.saturating_sub(lines.len() + 1);
        let mut shown: Vec<Vec<String>> = Vec::new();
        let mut used = 0;
        for n in d.notes.iter().rev() {
            let w = wrap(&format!("note: {n}"), cols, 2);
            if used + w.len() > room {
                break;
            }
            used += w.len();
            shown.push(w);
        }
        lines.push(Line::default());
        for l in shown.into_iter().rev().flatten() {
            lines.push(Line::styled(l, theme.dim()));
        }
    }
    lines.truncate(rows);
    f.render_widget(Paragraph::new(lines), inner);
}

fn table_lines(
    app: &App,
    d: &ImportDialog,
    cols: usize,
    rows: usize,
    lines: &mut Vec<Line<'static>>,
) {
    let theme = app.theme;
    lines.push(Line::from(vec![
        Span::styled("sample  ", theme.label()),
        Span::styled(d.sample_text(), theme.value()),
        Span::styled("   indexes  ", theme.label()),
        Span::styled(if d.indexes { "on" } else { "off" }, theme.value()),
    ]));
    let (copy, ticked) = d.to_copy();
    let style = if ticked { theme.accent() } else { theme.dim() };
    lines.push(Line::styled(fit(&copy, cols), style));
    if d.tables.is_empty() {
        lines.push(Line::styled(
            "the server has no tables this role can see",
            theme.dim(),
        ));
        return;
    }
    let name_w = d
        .tables
        .iter()
        .map(|t| t.name.to_string().chars().count())
        .max()
        .unwrap_or(0)
        .min(cols.saturating_sub(27));
    lines.push(Line::styled(
        fit(
            &format!(
                "    {}  {:>9}  {:>10}",
                pad("table", name_w),
                "rows",
                "size"
            ),
            cols,
        ),
        theme.label(),
    ));
    // Every row left is the list's: the error and notes of this stage are drawn by `render`
    // below it only when there is one (a line for the gap and up to four of text).
    let below = if d.error.is_some() { 5 } else { 0 };
    let room = rows.saturating_sub(lines.len() + below).max(1);
    let first = d.cursor.saturating_sub(room - 1);
    for (i, t) in d.tables.iter().enumerate().skip(first).take(room) {
        let tick = if d.chosen.get(i).copied().unwrap_or(false) {
            "[x]"
        } else {
            "[ ]"
        };
        // Said in the rows column, so no width cuts it off (a suffix was cut at 80 columns).
        let rows_txt = if !t.readable {
            "no SELECT".into()
        } else if t.rows_estimate < 0.0 {
            "?".into()
        } else {
            format!("≈{}", format_count(t.rows_estimate))
        };
        let text = format!(
            "{tick} {}  {}  {}",
            pad(&fit_middle(&t.name.to_string(), name_w), name_w),
            pad_left(&rows_txt, 9),
            pad_left(&format_bytes(t.bytes.max(0) as u64), 10),
        );
        let style = if i == d.cursor {
            theme.selected()
        } else if t.readable {
            theme.plain()
        } else {
            theme.dim()
        };
        lines.push(Line::styled(fit(&text, cols), style));
    }
}

fn progress_lines(app: &App, d: &ImportDialog, cols: usize, lines: &mut Vec<Line<'static>>) {
    let theme = app.theme;
    lines.push(Line::default());
    let phase = if d.cancelling {
        "cancelling: the sandbox's transaction is rolled back…".to_string()
    } else {
        d.phase.clone()
    };
    lines.push(Line::styled(
        fit(&format!("{} {phase}", spinner(app.tick())), cols),
        theme.accent(),
    ));
    if let Some(p) = &d.progress {
        let frac = p.fraction().unwrap_or(0.0);
        let bar_w = cols.saturating_sub(8).min(50);
        let done = (frac * bar_w as f64).round() as usize;
        lines.push(Line::styled(
            format!(
                "{}{} {:>3.0}%",
                "█".repeat(done),
                "░".repeat(bar_w - done.min(bar_w)),
                frac * 100.0
            ),
            theme.value(),
        ));
        lines.push(Line::styled(fit(&p.line(), cols), theme.plain()));
    }
}

fn done_lines(
    app: &App,
    r: &Result<Vec<ImportRecord>, String>,
    cols: usize,
    lines: &mut Vec<Line<'static>>,
) {
    let theme = app.theme;
    lines.push(Line::default());
    match r {
        Ok(records) => {
            for rec in records {
                let text = format!(
                    "imported {}: {} rows ({}), {} with indexes, in {}",
                    rec.table,
                    format_count(rec.rows as f64),
                    rec.sample_text(),
                    format_bytes((rec.table_bytes + rec.index_bytes).max(0) as u64),
                    format_seconds(rec.seconds)
                );
                for l in wrap(&text, cols, 2) {
                    lines.push(Line::styled(l, theme.accent()));
                }
            }
            lines.push(Line::styled(
                fit(
                    "b: index-build on the first of them (its table field); every experiment on the sandbox can use them",
                    cols,
                ),
                theme.dim(),
            ));
        }
        Err(e) => {
            for l in wrap(e, cols, 4) {
                lines.push(Line::styled(l, theme.error()));
            }
        }
    }
}
