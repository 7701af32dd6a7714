//! `pglab clean [--dry-run] [--datasets]`: list and drop what interrupted runs left in the lab
//! schema. Only tables carrying a pglab mark are ever considered; a live run's are skipped.

use color_eyre::eyre::Result;

use crate::cli::CleanArgs;
use crate::experiment::leftovers::{LabObjectKind, drop_leftovers, lab_objects};
use crate::measure::units::format_bytes;
use crate::session::{Ctx, EXIT_FAILED, EXIT_USAGE, user_error};

pub async fn run(ctx: &Ctx, a: CleanArgs) -> Result<i32> {
    // Before the target is even opened: look-only lists nothing (listing takes and gives back
    // each run's advisory lock) and drops nothing.
    if ctx.global.observe {
        return Err(user_error(
            EXIT_USAGE,
            "look-only (--observe): clean drops tables, so it does not run, not even --dry-run; drop --observe to list or clean leftovers",
        ));
    }
    let (opened, client) = ctx.open_target().await?;
    let schema = &ctx.global.schema;
    let objects = lab_objects(&client, schema)
        .await
        .map_err(|e| user_error(EXIT_FAILED, e))?;
    let (candidates, kept): (Vec<_>, Vec<_>) = objects
        .into_iter()
        .partition(|o| !o.live && (o.kind != LabObjectKind::Dataset || a.datasets));
    for o in &kept {
        let why = if o.live {
            "a pglab run is still going"
        } else {
            "reusable dataset (--datasets drops it)"
        };
        println!(
            "keep  {schema}.{}  {}  ({why})",
            o.name,
            format_bytes(o.bytes.max(0) as u64)
        );
    }
    if candidates.is_empty() {
        println!("nothing to clean in schema {schema}");
    } else if a.dry_run {
        for o in &candidates {
            println!(
                "would drop  {schema}.{}  {}  ({})",
                o.name,
                format_bytes(o.bytes.max(0) as u64),
                o.comment
            );
        }
    } else {
        let (dropped, note) = drop_leftovers(&client, schema, &candidates)
            .await
            .map_err(|e| user_error(EXIT_FAILED, e))?;
        for name in &dropped {
            println!("dropped  {schema}.{name}");
        }
        if let Some(n) = note {
            println!("note: {n}");
        }
    }
    drop(client);
    opened.close().await;
    Ok(0)
}
