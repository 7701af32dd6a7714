//! Built-in functions that act beyond the statement that calls them: on other sessions, the
//! server, files, sequences, the WAL or the statistics. A rollback undoes none of that, so on a
//! server pglab did not start a statement that calls one is never run. Functions that only
//! read (`pg_read_file`, `pg_ls_dir`, `pg_sleep` …) are not here.

/// Names refused outright (lower case, without schema).
const EXACT: &[&str] = &[
    "pg_reload_conf",
    "pg_cancel_backend",
    "pg_terminate_backend",
    "pg_switch_wal",
    "pg_switch_xlog",
    "set_config",
    "nextval",
    "setval",
    "pg_notify",
    "pg_rotate_logfile",
    "pg_promote",
    "pg_logical_emit_message",
    "pg_log_backend_memory_contexts",
    "pg_log_standby_snapshot",
    "txid_current",
    "pg_current_xact_id",
    "lo_import",
    "lo_export",
    "lo_create",
    "lo_creat",
    "lo_unlink",
    "lo_put",
    "lo_from_bytea",
    "lowrite",
    "lo_truncate",
    "lo_truncate64",
    "pg_file_write",
    "pg_file_rename",
    "pg_file_unlink",
    "pg_file_sync",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_backup_start",
    "pg_backup_stop",
    "pg_import_system_collations",
    "pg_truncate_visibility_map",
    "brin_summarize_new_values",
    "brin_summarize_range",
    "brin_desummarize_range",
    "gin_clean_pending_list",
    "pg_replication_slot_advance",
    "pg_logical_slot_get_changes",
    "pg_logical_slot_get_binary_changes",
    // These run SQL given as text, which no check here can see.
    "query_to_xml",
    "query_to_xmlschema",
    "query_to_xml_and_xmlschema",
    "ts_stat",
];

/// Families refused by the start of their name.
const PREFIXES: &[&str] = &[
    "pg_advisory_",
    "pg_try_advisory_",
    "pg_stat_reset",
    "dblink",
    "pg_create_",
    "pg_drop_",
    "pg_copy_",
    "pg_replication_origin_",
    "pg_wal_replay_",
];

/// Whether a call of `name` (any case, possibly schema-qualified) acts beyond its statement:
/// Some(what it does, for the sentence), None when it only reads.
pub(crate) fn side_effect(name: &str) -> Option<&'static str> {
    let base = name.rsplit('.').next().unwrap_or(name).to_ascii_lowercase();
    let b = base.as_str();
    let known =
        EXACT.contains(&b) || PREFIXES.iter().any(|p| b.starts_with(p)) || b.ends_with("_reset");
    if !known {
        return None;
    }
    Some(match b {
        "set_config" => "changes a setting of the session pglab measures in",
        "nextval" | "setval" => "moves a sequence, which no rollback undoes",
        "txid_current" | "pg_current_xact_id" => "assigns a transaction id, a write",
        "query_to_xml" | "query_to_xmlschema" | "query_to_xml_and_xmlschema" | "ts_stat" => {
            "runs SQL given as text, which pglab cannot check"
        }
        _ if b.starts_with("pg_advisory_") || b.starts_with("pg_try_advisory_") => {
            "takes an advisory lock other sessions wait on"
        }
        _ if b.starts_with("dblink") => "works on another connection, outside the transaction",
        _ if b.starts_with("pg_stat_reset") || b.ends_with("_reset") => {
            "resets statistics the server and its DBA rely on"
        }
        "pg_cancel_backend" | "pg_terminate_backend" => "acts on another session",
        _ => "acts on the server beyond this statement, and a rollback does not undo it",
    })
}
