//! The SQL that applies a recommended setting: `SET` for a session setting, `ALTER SYSTEM
//! SET` with the reload or restart it needs for a server setting. Only for the swept
//! dimensions the statistics core showed to matter ([`crate::measure::finding::Finding::matters`]):
//! a dimension whose values were all shown equivalent gets no line.

use crate::experiment::lab::whatif::Apply;
use crate::sql::settings::{alter_system_line, set_line};

/// One swept setting's value in a recommendation and how it is applied.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SweptValue {
    pub name: String,
    pub value: String,
    pub how: Apply,
}

/// The statements for `settings`: the session `SET`s first, then the `ALTER SYSTEM SET`s,
/// then one reload when a `sighup` setting is among them, and the restart a `postmaster`
/// setting needs.
pub(crate) fn lines(settings: &[SweptValue]) -> Vec<String> {
    let mut out = Vec::new();
    for s in settings.iter().filter(|s| s.how == Apply::Session) {
        out.push(set_line(&s.name, &s.value));
    }
    let server: Vec<&SweptValue> = settings
        .iter()
        .filter(|s| s.how != Apply::Session)
        .collect();
    for s in &server {
        out.push(alter_system_line(&s.name, &s.value));
    }
    let restart: Vec<&str> = server
        .iter()
        .filter(|s| s.how == Apply::Restart)
        .map(|s| s.name.as_str())
        .collect();
    if !restart.is_empty() {
        out.push(format!(
            "-- then restart the server: {} take{} effect only at a restart",
            restart.join(", "),
            if restart.len() == 1 { "s" } else { "" }
        ));
    } else if !server.is_empty() {
        out.push("SELECT pg_reload_conf();".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str, value: &str, how: Apply) -> SweptValue {
        SweptValue {
            name: name.into(),
            value: value.into(),
            how,
        }
    }

    #[test]
    fn session_settings_set_and_server_settings_say_what_they_need() {
        assert_eq!(
            lines(&[
                s("shared_buffers", "1GB", Apply::Restart),
                s("maintenance_work_mem", "64MB", Apply::Session),
                s("max_parallel_maintenance_workers", "2", Apply::Session),
            ]),
            [
                "SET maintenance_work_mem = '64MB';",
                "SET max_parallel_maintenance_workers = 2;",
                "ALTER SYSTEM SET shared_buffers = '1GB';",
                "-- then restart the server: shared_buffers takes effect only at a restart",
            ]
        );
        assert_eq!(
            lines(&[s("max_wal_size", "16GB", Apply::Reload)]),
            [
                "ALTER SYSTEM SET max_wal_size = '16GB';",
                "SELECT pg_reload_conf();"
            ]
        );
        assert!(lines(&[]).is_empty());
        assert_eq!(
            lines(&[s("wal_compression", "it's", Apply::Session)]),
            ["SET wal_compression = 'it''s';"]
        );
    }
}
