//! The search path and settings of the sessions the DBA's statements run in. pglab's own
//! sessions resolve names in `pg_catalog` and the lab schema only; the DBA's statements name
//! their tables as they do in psql, so their sessions see the lab schema first (what the setup
//! creates, and where an unqualified `CREATE TABLE` goes), then PostgreSQL's default path
//! (`"$user", public`); `pg_catalog` is not named, so PostgreSQL searches it before all of
//! them. pglab's own statements on those sessions are schema-qualified
//! (`pg_catalog.set_config`).

use super::guard::TxMode;
use crate::experiment::lab::RunCtx;
use crate::sql::quote::ident;
use crate::sql::settings::SessionSettings;

/// `"lab", "$user", public`.
pub(crate) fn user_search_path(schema: &str) -> String {
    format!("{}, \"$user\", public", ident(schema))
}

/// A measuring session's settings: the lab session's (timeouts, the combination in effect),
/// the DBA's search path, the transaction mode's default.
pub(crate) fn measuring_settings(ctx: &RunCtx, mode: TxMode) -> SessionSettings {
    let mut s = ctx.session_settings();
    s.set("search_path", user_search_path(&ctx.opts.schema));
    mode.add_settings(&mut s);
    super::belts::add_settings(ctx, &mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_schema_comes_before_the_default_path() {
        assert_eq!(user_search_path("lab"), "\"lab\", \"$user\", public");
    }
}
