//! `pglab history list|show|export|compare`.

use color_eyre::eyre::Result;

use crate::cli::{HistoryAction, OutputFormat};
use crate::experiment::lab::decision::{parse_confidence, parse_min_effect};
use crate::experiment::{ExperimentKind, RunReport};
use crate::history::{self, HistoryFilter};
use crate::measure::rules::Rules;
use crate::report::{self, history_table::list_table};
use crate::session::{Ctx, EXIT_USAGE, user_error};

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
                        "--experiment: unknown experiment '{e}': use index-build, ingest, growth or query"
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

/// `--confidence` and `--min-effect` over the candidate run's own rules, and `--vary`.
fn compare_options(
    candidate: &RunReport,
    confidence: Option<&str>,
    min_effect: Option<&str>,
    vary: Vec<String>,
) -> Result<history::CompareOptions> {
    let own = history::compare::decision(candidate).rules();
    // The same parsers and sentences as the experiments' own fields.
    let pct = |flag: &str, v: Option<&str>, parse: fn(&str) -> Result<f64, String>, default| {
        v.map(|s| parse(s).map_err(|e| user_error(EXIT_USAGE, format!("{flag}: {e}"))))
            .transpose()
            .map(|v| v.unwrap_or(default))
    };
    let rules = if confidence.is_none() && min_effect.is_none() {
        None
    } else {
        Some(Rules {
            confidence: pct("--confidence", confidence, parse_confidence, own.confidence)?,
            min_effect: pct("--min-effect", min_effect, parse_min_effect, own.min_effect)?,
            auto_max: None,
        })
    };
    Ok(history::CompareOptions {
        rules,
        vary: vary
            .into_iter()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect(),
    })
}

pub async fn run(ctx: &Ctx, action: HistoryAction) -> Result<i32> {
    match action {
        HistoryAction::List {
            experiment,
            preset,
            since,
            format,
        } => {
            let f = filter(experiment.as_deref(), preset, since.as_deref())?;
            let runs = load(ctx);
            let shown = f.apply(&runs);
            let scripted = !matches!(format, OutputFormat::Text | OutputFormat::Table);
            if shown.is_empty() && !scripted {
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
            print!(
                "{}",
                crate::report::history_table::list(&shown, format.into())
            );
            Ok(0)
        }
        HistoryAction::Show { id, format } => {
            let runs = load(ctx);
            let r = find(&runs, &id)?;
            print!("{}", report::render(r, format.into()));
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
                other => report::render_many(&shown, other.into()),
            };
            print!("{text}");
            Ok(0)
        }
        HistoryAction::Compare {
            baseline,
            candidate,
            format,
            confidence,
            min_effect,
            vary,
        } => {
            let runs = load(ctx);
            let a = find(&runs, &baseline)?;
            let b = find(&runs, &candidate)?;
            let options = compare_options(b, confidence.as_deref(), min_effect.as_deref(), vary)?;
            let c = history::compare_with(a, b, &options).map_err(|e| user_error(EXIT_USAGE, e))?;
            print!("{}", report::comparison::render(&c, format.into()));
            Ok(0)
        }
    }
}
