//! libpq's `target_session_attrs` (or `PGTARGETSESSIONATTRS`): which of the hosts of a
//! multi-host connection string a session may stay on. pglab tries the hosts in order (one
//! port for all) and, for anything but `any`, asks each server what it is
//! (`pg_is_in_recovery()`, `transaction_read_only`) before keeping the session, as libpq
//! does; `prefer-standby` takes a standby if there is one, else any server.

use super::TargetError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionAttrs {
    #[default]
    Any,
    ReadWrite,
    ReadOnly,
    Primary,
    Standby,
    PreferStandby,
}

/// What a server says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ServerState {
    pub in_recovery: bool,
    pub read_only: bool,
}

impl SessionAttrs {
    pub(crate) fn parse(s: &str) -> Result<SessionAttrs, TargetError> {
        Ok(match s {
            "any" => SessionAttrs::Any,
            "read-write" => SessionAttrs::ReadWrite,
            "read-only" => SessionAttrs::ReadOnly,
            "primary" => SessionAttrs::Primary,
            "standby" => SessionAttrs::Standby,
            "prefer-standby" => SessionAttrs::PreferStandby,
            other => {
                return Err(TargetError::BadConninfo(format!(
                    "target_session_attrs '{other}' is not one of any, read-write, read-only, primary, standby, prefer-standby"
                )));
            }
        })
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SessionAttrs::Any => "any",
            SessionAttrs::ReadWrite => "read-write",
            SessionAttrs::ReadOnly => "read-only",
            SessionAttrs::Primary => "primary",
            SessionAttrs::Standby => "standby",
            SessionAttrs::PreferStandby => "prefer-standby",
        }
    }

    /// Whether a server in `state` is acceptable; `strict` is the first pass of
    /// `prefer-standby` (a standby only), the second takes any.
    pub(crate) fn accepts(self, state: ServerState, strict: bool) -> bool {
        match self {
            SessionAttrs::Any => true,
            SessionAttrs::ReadWrite => !state.read_only,
            SessionAttrs::ReadOnly => state.read_only,
            SessionAttrs::Primary => !state.in_recovery,
            SessionAttrs::Standby => state.in_recovery,
            SessionAttrs::PreferStandby => !strict || state.in_recovery,
        }
    }

    /// Passes over the hosts: two for `prefer-standby` (standbys, then any).
    pub(crate) fn passes(self) -> &'static [bool] {
        match self {
            SessionAttrs::PreferStandby => &[true, false],
            _ => &[true],
        }
    }

    /// The sentence for a host that was reached but is not what was asked for.
    pub(crate) fn rejects(self, whom: &str, state: ServerState) -> String {
        let is = match (state.in_recovery, state.read_only) {
            (true, _) => "a standby",
            (false, true) => "a primary that defaults to read-only transactions",
            (false, false) => "a read-write primary",
        };
        format!(
            "{whom} is {is}, not what target_session_attrs={} asks for",
            self.as_str()
        )
    }
}

/// Ask the server what it is (reads only).
pub(crate) async fn state(
    c: &tokio_postgres::Client,
) -> Result<ServerState, tokio_postgres::Error> {
    let r = c
        .query_one(
            "SELECT pg_catalog.pg_is_in_recovery(), pg_catalog.current_setting('transaction_read_only') = 'on'",
            &[],
        )
        .await?;
    Ok(ServerState {
        in_recovery: r.get(0),
        read_only: r.get(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_parses_and_decides_as_libpq() {
        let primary = ServerState {
            in_recovery: false,
            read_only: false,
        };
        let standby = ServerState {
            in_recovery: true,
            read_only: true,
        };
        let ro_primary = ServerState {
            in_recovery: false,
            read_only: true,
        };
        for v in [
            "any",
            "read-write",
            "read-only",
            "primary",
            "standby",
            "prefer-standby",
        ] {
            assert_eq!(SessionAttrs::parse(v).unwrap().as_str(), v);
        }
        assert!(SessionAttrs::parse("master").is_err());
        use SessionAttrs::*;
        assert!(ReadWrite.accepts(primary, true) && !ReadWrite.accepts(ro_primary, true));
        assert!(ReadOnly.accepts(ro_primary, true) && ReadOnly.accepts(standby, true));
        assert!(Primary.accepts(ro_primary, true) && !Primary.accepts(standby, true));
        assert!(Standby.accepts(standby, true) && !Standby.accepts(primary, true));
        assert!(!PreferStandby.accepts(primary, true) && PreferStandby.accepts(primary, false));
        assert_eq!(PreferStandby.passes(), &[true, false]);
        assert!(Standby.rejects("db1:5432", primary).contains(
            "db1:5432 is a read-write primary, not what target_session_attrs=standby asks for"
        ));
    }
}
