//! The imported tables `pglab sandbox status` lists: read from the running sandbox (each
//! table's record), or from `imports.json` beside it while it is stopped.

use chrono::Utc;

use crate::import::{ImportRecord, imported_tables};
use crate::measure::units::{format_bytes, format_count};
use crate::server::{Sandbox, Target};
use crate::sql::imported::load_cache;

/// "imported tables: …" lines (empty when there are none).
pub async fn listing(sb: &Sandbox) -> String {
    let (records, whence) = match sb.live_postmaster() {
        Some((_, port)) => match live(sb, port).await {
            Ok(r) => (r, ""),
            Err(e) => {
                tracing::warn!("listing the imported tables: {e}");
                (
                    load_cache(&sb.root.join("imports.json")),
                    " (as of the last import: the sandbox did not answer)",
                )
            }
        },
        None => (
            load_cache(&sb.root.join("imports.json")),
            " (as of the last import: the sandbox is stopped)",
        ),
    };
    lines(&records, whence)
}

async fn live(sb: &Sandbox, port: u16) -> Result<Vec<ImportRecord>, String> {
    let target = Target::new(sb.conn_params(port), true).map_err(|e| e.to_string())?;
    let c = target.connect().await.map_err(|e| e.to_string())?;
    imported_tables(&c).await
}

pub fn lines(records: &[ImportRecord], whence: &str) -> String {
    if records.is_empty() {
        return String::new();
    }
    let width = records
        .iter()
        .map(|r| r.table.to_string().chars().count())
        .max()
        .unwrap_or(0);
    let mut out = format!("imported tables{whence}:\n");
    for r in records {
        out.push_str(&format!(
            "  {:<width$}  {} rows, {} · {} · from {} · snapshot {} ago\n",
            r.table.to_string(),
            format_count(r.rows as f64),
            format_bytes((r.table_bytes + r.index_bytes).max(0) as u64),
            r.sample_text(),
            r.source.target,
            age((Utc::now() - r.snapshot_at).num_seconds())
        ));
    }
    out
}

/// "40 s", "12 min", "5 h", "3 d".
pub fn age(secs: i64) -> String {
    let s = secs.max(0);
    match s {
        0..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        7200..=172_799 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86_400),
    }
}
