//! `pglab history list|show|export|compare`.

use color_eyre::eyre::Result;

use super::{Ctx, EXIT_USAGE, user_error};
use crate::cli::{HistoryAction, OutputFormat};
use crate::experiment::{ExperimentKind, RunReport};
use crate::history::{self, HistoryFilter};
use crate::measure::units::format_seconds;
use crate::report::{self, content::Grid};

/// The history, with its warnings on stderr.
pub fn load(ctx: &Ctx) -> Vec<RunReport> {
    let (runs, warnings) = history::read(&ctx.paths.history_file());
    for w in &warnings {
        eprintln!("pglab: warning: {w}");
    }
    runs
}

/// A run by id, prefix or `last`, as a user error when it is not there.
pub fn find<'a>(runs: &'a [RunReport], id: &str) -> Result<&'a RunReport> {
    history::find(runs, id).map_err(|e| user_error(EXIT_USAGE, e.to_string()))
}

fn filter(
    experiment: Option<&str>,
    preset: Option<String>,
    since: Option<&str>,
) -> Result<HistoryFilter> {
    let experiment = experiment
        .map(|e| {
            ExperimentKind::parse(e).ok_or_else(|| {
                user_error(
                    EXIT_USAGE,
                    format!(
                        "--experiment: unknown experiment '{e}': use index-build, ingest or growth"
                    ),
                )
            })
        })
        .transpose()?;
    let since = since
        .map(|s| {
            history::parse_since(s, chrono::Utc::now())
                .map_err(|e| user_error(EXIT_USAGE, format!("--since: {e}")))
        })
        .transpose()?;
    Ok(HistoryFilter {
        experiment,
        preset,
        since,
        ..HistoryFilter::default()
    })
}

/// The `history list` table: one row a run, in the order given (the TUI shows it too).
pub fn list_table(runs: &[&RunReport]) -> String {
    let mut g = Grid::new(
        "",
        &[
            ("id", false),
            ("started (UTC)", false),
            ("experiment", false),
            ("preset", false),
            ("outcome", false),
            ("took", true),
            ("result", false),
        ],
    );
    for r in runs {
        let mut headline = report::headline(r);
        if headline.chars().count() > 90 {
            headline = headline.chars().take(89).collect::<String>() + "…";
        }
        g.rows.push(vec![
            r.run_id.clone(),
            r.started_at.format("%Y-%m-%d %H:%M").to_string(),
            r.kind().to_string(),
            r.preset.clone().unwrap_or_default(),
            r.outcome.as_str().to_string(),
            format_seconds(r.seconds()),
            headline,
        ]);
    }
    report::table::grid(&g)
}

pub async fn run(ctx: &Ctx, action: HistoryAction) -> Result<i32> {
    match action {
        HistoryAction::List {
            experiment,
            preset,
            since,
        } => {
            let f = filter(experiment.as_deref(), preset, since.as_deref())?;
            let runs = load(ctx);
            let shown = f.apply(&runs);
            if shown.is_empty() {
                if runs.is_empty() {
                    println!(
                        "no runs yet in {} (pglab run … records one)",
                        ctx.paths.history_file().display()
                    );
                } else {
                    println!("no run matches ({} in the history)", runs.len());
                }
                return Ok(0);
            }
            print!("{}", list_table(&shown));
            Ok(0)
        }
        HistoryAction::Show { id, format } => {
            let runs = load(ctx);
            let r = find(&runs, &id)?;
            print!("{}", report::render(r, format));
            Ok(0)
        }
        HistoryAction::Export {
            format,
            since,
            experiment,
        } => {
            let f = filter(experiment.as_deref(), None, since.as_deref())?;
            let runs = load(ctx);
            let shown = f.apply(&runs);
            let text = match format {
                OutputFormat::Text | OutputFormat::Table => list_table(&shown),
                other => report::render_many(&shown, other),
            };
            print!("{text}");
            Ok(0)
        }
        HistoryAction::Compare {
            baseline,
            candidate,
        } => {
            let runs = load(ctx);
            let a = find(&runs, &baseline)?;
            let b = find(&runs, &candidate)?;
            let c = history::compare(a, b).map_err(|e| user_error(EXIT_USAGE, e))?;
            print!("{}", report::comparison::render(&c, OutputFormat::Table));
            Ok(0)
        }
    }
}
