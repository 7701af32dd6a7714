//! What runs killed outright (kill -9, a lost machine) left on a server pglab did not start:
//! the next run there finds the tables of dead runs in the lab schema (marked `pglab:run=ID`,
//! the run's advisory lock free, so its process is gone) before it starts. A run that writes
//! there itself (`writes = lab`) drops them, and the lab schema with them when pglab made it
//! and nothing else is left in it, and says so; one that only reads writes nothing, so it
//! says what is left and the statements that drop it (or `pglab clean`), as it does when the
//! role may not drop them. Tables of live runs and anything unmarked are never touched.

use tokio_postgres::Client;

use super::leftovers::{self, LabObject, LabObjectKind};
use crate::measure::units::format_bytes;
use crate::sql::lab::MARK;
use crate::sql::quote::ident;

/// The tables of dead runs in `schema`, by [`leftovers::lab_objects`].
async fn dead(client: &Client, schema: &str) -> Result<Vec<LabObject>, String> {
    Ok(leftovers::lab_objects(client, schema)
        .await?
        .into_iter()
        .filter(|o| o.kind == LabObjectKind::RunTable && !o.live)
        .collect())
}

/// "pglab.ib_x_20261207t… (352 kB, run 20261207T…)".
fn listed(schema: &str, objects: &[LabObject]) -> String {
    objects
        .iter()
        .map(|o| {
            format!(
                "{schema}.{} ({}, run {})",
                o.name,
                format_bytes(o.bytes.max(0) as u64),
                o.run_id.as_deref().unwrap_or("unknown")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statements that drop them, for a DBA to run.
fn statements(schema: &str, objects: &[LabObject]) -> String {
    objects
        .iter()
        .map(|o| format!("DROP TABLE {}.{};", ident(schema), ident(&o.name)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Drop the lab schema when pglab made it and nothing is left in it (RESTRICT: whatever
/// appeared meanwhile keeps it). Some(sentence) when it went.
async fn drop_empty_schema(client: &Client, schema: &str) -> Option<String> {
    let comment = leftovers::schema_comment(client, schema).await.ok()??;
    if !comment.starts_with(MARK) {
        return None;
    }
    let left = leftovers::lab_objects(client, schema).await.ok()?;
    let foreign = leftovers::foreign_objects(client, schema).await.ok()?;
    if !left.is_empty() || !foreign.is_empty() {
        return None;
    }
    leftovers::drop_schema(client, schema).await.ok()?;
    Some(format!(
        "dropped schema {schema}, which a dead pglab run had created"
    ))
}

/// Before a run on a server pglab did not start: find the dead runs' tables in `schema` and,
/// when `may_write` (the run writes there itself), drop them. The sentences to say (none
/// when nothing was left). Never fails the run: what cannot be read or dropped is said.
pub(crate) async fn sweep(client: &Client, schema: &str, may_write: bool) -> Vec<String> {
    let found = match dead(client, schema).await {
        Ok(f) => f,
        Err(e) => {
            tracing::info!("leftovers of dead runs not looked for: {e}");
            return Vec::new();
        }
    };
    if found.is_empty() {
        return Vec::new();
    }
    let way_on = |why: &str| {
        format!(
            "left by runs that were killed: {}; {why}: a role that may drops them with {} (or `pglab clean` as such a role)",
            listed(schema, &found),
            statements(schema, &found)
        )
    };
    if !may_write {
        return vec![way_on("this run only reads, so it leaves them")];
    }
    match leftovers::drop_leftovers(client, schema, &found).await {
        Ok((dropped, _)) if !dropped.is_empty() => {
            let mut said = vec![format!(
                "dropped what runs that were killed had left (their process gone, their lock free): {}",
                listed(
                    schema,
                    &found
                        .iter()
                        .filter(|o| dropped.contains(&o.name))
                        .cloned()
                        .collect::<Vec<_>>()
                )
            )];
            said.extend(drop_empty_schema(client, schema).await);
            said
        }
        Ok(_) => Vec::new(),
        Err(e) => vec![way_on(&format!("they could not be dropped ({e})"))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_left_is_named_with_its_run_and_the_statement_that_drops_it() {
        let o = LabObject {
            name: "ingest_20261207t161500z_ab12_t3".into(),
            kind: LabObjectKind::RunTable,
            run_id: Some("20261207T161500Z-ab12".into()),
            bytes: 81920,
            live: false,
            comment: "pglab:run=20261207T161500Z-ab12 ingest trial table".into(),
        };
        assert_eq!(
            listed("pglab", std::slice::from_ref(&o)),
            "pglab.ingest_20261207t161500z_ab12_t3 (80 kB, run 20261207T161500Z-ab12)"
        );
        assert_eq!(
            statements("pglab", &[o]),
            "DROP TABLE \"pglab\".\"ingest_20261207t161500z_ab12_t3\";"
        );
    }
}
