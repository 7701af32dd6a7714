//! `pglab verify BEFORE AFTER`: two captured windows compared statement by statement. Reads
//! the two files (and a tune's `tune.sql` with `--expect`); connects to nothing.

use std::collections::BTreeMap;
use std::path::Path;

use color_eyre::eyre::Result;

use crate::capture::file_window::{self, Carried};
use crate::cli::{VerifyArgs, VerifyFormat};
use crate::session::{Ctx, EXIT_FAILED, EXIT_USAGE, user_error};
use crate::verify::{self, Options};

/// `95%` or `0.95` → 0.95, within (0, 1).
fn share(flag: &str, text: &str) -> Result<f64> {
    let t = text.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(user_error(
            EXIT_USAGE,
            format!("{flag} {text}: give a share above 0 and below 100%, e.g. {flag} 95%"),
        )),
    }
}

fn read_text(path: &Path, what: &str) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        user_error(
            EXIT_USAGE,
            format!("{what} {}: cannot read it: {e}", path.display()),
        )
    })
}

fn carried(path: &Path, what: &str) -> Result<Carried> {
    let text = read_text(path, what)?;
    file_window::parse(&text)
        .map_err(|e| user_error(EXIT_USAGE, format!("{what} {}: {e}", path.display())))
}

pub async fn run(_ctx: &Ctx, a: VerifyArgs) -> Result<i32> {
    let opts = Options {
        confidence: share("--confidence", &a.confidence)?,
        min_effect: share("--min-effect", &a.min_effect)?,
        min_calls: a.min_calls.max(2) as f64,
    };
    let before = carried(&a.before, "the first file")?;
    let after = carried(&a.after, "the second file")?;
    let lab: BTreeMap<String, f64> = match &a.expect {
        Some(p) => verify::expect::lab_ratios(&read_text(p, "--expect")?),
        None => BTreeMap::new(),
    };
    let v = verify::verify(&before, &after, opts, &lab)
        .map_err(|e| user_error(EXIT_FAILED, e.to_string()))?;
    let text = match a.format {
        VerifyFormat::Table => verify::render::table(&v),
        VerifyFormat::Json => serde_json::to_string_pretty(&v)? + "\n",
        VerifyFormat::Md => {
            let svg = match (&a.out, verify::svg::ratios(&v)) {
                (Some(out), Some(svg)) => {
                    let path = out.with_extension("svg");
                    crate::paths::write_atomic(&path, svg.as_bytes()).map_err(|e| {
                        user_error(EXIT_FAILED, format!("cannot write {}: {e}", path.display()))
                    })?;
                    path.file_name().map(|f| f.to_string_lossy().into_owned())
                }
                _ => None,
            };
            verify::render::markdown(&v, svg.as_deref())
        }
    };
    match &a.out {
        Some(out) => crate::paths::write_atomic(out, text.as_bytes())
            .map_err(|e| user_error(EXIT_FAILED, format!("cannot write {}: {e}", out.display())))?,
        None => print!("{text}"),
    }
    Ok(0)
}
