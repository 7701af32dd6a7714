//! `pglab clean [--dry-run] [--datasets] [--drop-schema]`: list and drop what interrupted runs
//! left in the lab schema, and the run-marked objects they left in any other schema (a
//! trial index on the user's own table). Only tables carrying a pglab mark are ever considered; a live run's
//! are skipped. `--drop-schema` also drops every dataset and then the schema itself, only when
//! pglab created it and nothing but pglab's objects is in it. `--observe` lists, as
//! `--dry-run` does, and drops nothing.

use color_eyre::eyre::Result;
use tokio_postgres::Client;

use crate::cli::CleanArgs;
use crate::experiment::lab::leftovers::{
    LabObject, LabObjectKind, drop_leftovers, drop_schema, foreign_objects, lab_objects,
    schema_comment,
};
use crate::experiment::lab::leftovers_elsewhere::{Elsewhere, drop_elsewhere, marked_elsewhere};
use crate::measure::units::format_bytes_short;
use crate::session::{Ctx, EXIT_FAILED, EXIT_USAGE, user_error};
use crate::sql::lab::MARK;

pub async fn run(ctx: &Ctx, a: CleanArgs) -> Result<i32> {
    let (opened, client) = ctx.open_target().await?;
    let result = clean(ctx, &a, &client).await;
    drop(client);
    opened.close().await;
    result
}

/// Only look: `--dry-run`, or `--observe` (which writes nothing in any command).
fn looking(ctx: &Ctx, a: &CleanArgs) -> bool {
    a.dry_run || ctx.global.observe
}

/// Keep what a live run uses (and datasets unless asked), then list what would go or drop
/// it; `--drop-schema` first makes sure the schema is pglab's own and holds nothing else.
async fn clean(ctx: &Ctx, a: &CleanArgs, client: &Client) -> Result<i32> {
    let schema = &ctx.global.schema;
    if a.drop_schema && !schema_may_go(client, schema).await? {
        return Ok(0);
    }
    let objects = lab_objects(client, schema)
        .await
        .map_err(|e| user_error(EXIT_FAILED, e))?;
    if a.drop_schema
        && let Some(live) = objects.iter().find(|o| o.live)
    {
        return Err(user_error(
            EXIT_USAGE,
            format!(
                "a pglab run is still using schema {schema} ({} is its): let it finish or cancel it, then drop the schema",
                live.name
            ),
        ));
    }
    let datasets = a.datasets || a.drop_schema;
    let (candidates, kept): (Vec<_>, Vec<_>) = objects
        .into_iter()
        .partition(|o| !o.live && (o.kind != LabObjectKind::Dataset || datasets));
    let elsewhere = elsewhere(client, schema).await?;
    for o in &kept {
        let why = if o.live {
            "a pglab run is still going"
        } else {
            "reusable dataset (--datasets drops it)"
        };
        println!("keep  {schema}.{}  {}  ({why})", o.name, size(o));
    }
    if looking(ctx, a) {
        list_would_drop(ctx, a, &candidates, &elsewhere);
        return Ok(0);
    }
    drop_all(client, a, schema, &candidates, &elsewhere).await
}

/// For `--drop-schema`: true when the schema is there and pglab's own with nothing foreign in
/// it; false (said so) when it does not exist; the sentence why not otherwise.
async fn schema_may_go(client: &Client, schema: &str) -> Result<bool> {
    match schema_comment(client, schema)
        .await
        .map_err(|e| user_error(EXIT_FAILED, e))?
    {
        None => {
            println!("schema {schema} does not exist: nothing to drop");
            return Ok(false);
        }
        Some(c) if !c.starts_with(MARK) => {
            return Err(user_error(
                EXIT_USAGE,
                format!(
                    "schema {schema} was not created by pglab (it carries no pglab mark), so --drop-schema leaves it: pglab drops only a schema of its own; `pglab clean --datasets` empties pglab's part of it"
                ),
            ));
        }
        Some(_) => {}
    }
    let foreign = foreign_objects(client, schema)
        .await
        .map_err(|e| user_error(EXIT_FAILED, e))?;
    if !foreign.is_empty() {
        return Err(user_error(
            EXIT_USAGE,
            format!(
                "schema {schema} also holds {} that {} not pglab's, so it stays: {}; drop or move {} first, or keep the schema (`pglab clean --datasets` empties pglab's part)",
                if foreign.len() == 1 {
                    "an object".to_string()
                } else {
                    format!("{} objects", foreign.len())
                },
                if foreign.len() == 1 { "is" } else { "are" },
                foreign.join(", "),
                if foreign.len() == 1 { "it" } else { "them" }
            ),
        ));
    }
    Ok(true)
}

/// `--dry-run` or `--observe`: what would be dropped, here and in other schemas, and under
/// `--observe` that nothing was.
fn list_would_drop(ctx: &Ctx, a: &CleanArgs, candidates: &[LabObject], elsewhere: &[Elsewhere]) {
    let schema = &ctx.global.schema;
    for o in candidates {
        println!(
            "would drop  {schema}.{}  {}  ({})",
            o.name,
            size(o),
            o.comment
        );
    }
    for o in elsewhere {
        println!(
            "would drop  {}.{}  {}  ({})",
            o.schema,
            o.name,
            format_bytes_short(o.bytes.max(0) as f64),
            o.comment
        );
    }
    if a.drop_schema {
        println!("would drop schema {schema}");
    } else if candidates.is_empty() && elsewhere.is_empty() {
        println!("nothing to clean in schema {schema}");
    }
    if ctx.global.observe {
        println!(
            "look-only (--observe): nothing was dropped; drop --observe to clean{}",
            if a.drop_schema {
                " and drop the schema"
            } else {
                ""
            }
        );
    }
}

/// Drop the leftovers in other schemas, then the lab schema's, then (for `--drop-schema`)
/// the schema itself, saying each as it goes.
async fn drop_all(
    client: &Client,
    a: &CleanArgs,
    schema: &str,
    candidates: &[LabObject],
    elsewhere: &[Elsewhere],
) -> Result<i32> {
    for name in drop_elsewhere(client, elsewhere)
        .await
        .map_err(|e| user_error(EXIT_FAILED, e))?
    {
        println!("dropped  {name}");
    }
    if candidates.is_empty() && !a.drop_schema {
        if elsewhere.is_empty() {
            println!("nothing to clean in schema {schema}");
        }
        return Ok(0);
    }
    let (dropped, note) = drop_leftovers(client, schema, candidates)
        .await
        .map_err(|e| user_error(EXIT_FAILED, e))?;
    for name in &dropped {
        println!("dropped  {schema}.{name}");
    }
    if let Some(n) = note {
        println!("note: {n}");
    }
    if a.drop_schema {
        drop_schema(client, schema).await.map_err(|e| {
            user_error(
                EXIT_FAILED,
                format!("schema {schema} was emptied of pglab's objects but not dropped: {e}"),
            )
        })?;
        println!("dropped schema {schema}");
    }
    Ok(0)
}

/// The run-marked objects outside the lab schema whose run is gone (a live run's are
/// listed as kept).
async fn elsewhere(client: &Client, schema: &str) -> Result<Vec<Elsewhere>> {
    let (gone, busy): (Vec<_>, Vec<_>) = marked_elsewhere(client, schema)
        .await
        .map_err(|e| user_error(EXIT_FAILED, e))?
        .into_iter()
        .partition(|o| !o.live);
    for o in &busy {
        println!(
            "keep  {}.{}  {}  (a pglab run is still going)",
            o.schema,
            o.name,
            format_bytes_short(o.bytes.max(0) as f64)
        );
    }
    Ok(gone)
}

fn size(o: &LabObject) -> String {
    format_bytes_short(o.bytes.max(0) as f64)
}
