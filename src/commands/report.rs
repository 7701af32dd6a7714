//! `pglab report ID [--out FILE] [--format json|csv|table|md] [--force]`: a past run's report.
//! Without `--format`, Markdown in a file with its charts beside it; with `--format`, the
//! report in that format on stdout (or in `--out`). A file that is there is never replaced
//! without `--force` (see `outputs`).

use std::path::Path;

use color_eyre::eyre::Result;

use crate::cli::ReportArgs;
use crate::outputs::OutputSet;
use crate::report::Format;
use crate::session::{Ctx, EXIT_FAILED, EXIT_USAGE, user_error};

pub async fn run(ctx: &Ctx, args: ReportArgs) -> Result<i32> {
    let runs = super::history::load(ctx);
    let r = super::history::find(&runs, &args.id)?;
    let format = args.format.map(Format::from);
    let out = match (&args.out, format) {
        (None, Some(f)) => {
            print!("{}", crate::report::render(r, f));
            return Ok(0);
        }
        (Some(out), _) => out.clone(),
        (None, None) => crate::report::files::default_path(Path::new(""), r),
    };
    check_dir(&out)?;
    let chosen = args.out.is_some().then_some("--out");
    if matches!(format, None | Some(Format::Md)) {
        // The same writer as the TUI's report key.
        let w =
            crate::report::files::write_markdown(r, &out, chosen, args.force).map_err(
                |e| match e {
                    crate::report::files::WriteError::There(_) => {
                        user_error(EXIT_USAGE, e.to_string())
                    }
                    crate::report::files::WriteError::Io { .. } => {
                        user_error(EXIT_FAILED, e.to_string())
                    }
                },
            )?;
        if let Some(s) = w.said {
            eprintln!("pglab: {s}");
        }
        for f in &w.files {
            println!("wrote {}", f.display());
        }
        return Ok(0);
    }
    let (set, said) = crate::outputs::resolve(&OutputSet::new(vec![out]), chosen, args.force)
        .map_err(|e| user_error(EXIT_USAGE, e))?;
    if let Some(s) = said {
        eprintln!("pglab: {s}");
    }
    let out = &set.files[0];
    if let Some(f) = format {
        crate::paths::write_atomic(out, crate::report::render(r, f).as_bytes()).map_err(|e| {
            user_error(
                EXIT_FAILED,
                format!("cannot write the report to {}: {e}", out.display()),
            )
        })?;
        println!("wrote {}", out.display());
    }
    Ok(0)
}

/// A typo in --out must not leave a report in a directory nobody meant to create.
fn check_dir(out: &Path) -> Result<()> {
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
    Ok(())
}
