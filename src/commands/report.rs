//! `pglab report ID [--out FILE.md]`: a Markdown report of a past run, its chart beside it.

use std::path::PathBuf;

use color_eyre::eyre::Result;

use crate::cli::ReportArgs;
use crate::session::{Ctx, EXIT_FAILED, EXIT_USAGE, user_error};

pub async fn run(ctx: &Ctx, args: ReportArgs) -> Result<i32> {
    let runs = super::history::load(ctx);
    let r = super::history::find(&runs, &args.id)?;
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from(format!("pglab-{}.md", r.run_id)));
    // A typo in --out must not leave a report in a directory nobody meant to create.
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(user_error(
            EXIT_USAGE,
            format!(
                "--out {}: the directory {} does not exist; create it first (mkdir -p {}) or choose another path",
                out.display(),
                dir.display(),
                dir.display()
            ),
        ));
    }
    let written = crate::report::write(r, &out).map_err(|e| {
        user_error(
            EXIT_FAILED,
            format!("cannot write the report to {}: {e}", out.display()),
        )
    })?;
    println!("wrote {}", written.markdown.display());
    for c in &written.charts {
        println!("wrote {}", c.display());
    }
    Ok(0)
}
