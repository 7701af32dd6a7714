//! The setup's rules: statements run once, before the trials, inside pglab's transaction, so
//! nothing that ends it or cannot run in it; on a server pglab did not start, only temporary
//! objects made and filled (checked again on the server before the transaction commits), and
//! only with `--writes rollback`.

use pg_query::NodeEnum;

use super::classify::{Frame, Rules, is_query, why_not, writes};
use super::tree::Statement;

/// Statements that cannot run inside a transaction block or act on the whole cluster.
fn outside_transaction(node: &NodeEnum) -> Option<&'static str> {
    Some(match node {
        NodeEnum::VacuumStmt(v) if v.is_vacuumcmd => "cannot run inside a transaction",
        NodeEnum::CreatedbStmt(_)
        | NodeEnum::DropdbStmt(_)
        | NodeEnum::AlterDatabaseStmt(_)
        | NodeEnum::AlterDatabaseSetStmt(_)
        | NodeEnum::AlterDatabaseRefreshCollStmt(_) => "acts on a database, not in a transaction",
        NodeEnum::CreateTableSpaceStmt(_)
        | NodeEnum::DropTableSpaceStmt(_)
        | NodeEnum::AlterTableSpaceOptionsStmt(_) => {
            "acts on a tablespace, outside any transaction"
        }
        NodeEnum::CreateRoleStmt(_)
        | NodeEnum::AlterRoleStmt(_)
        | NodeEnum::AlterRoleSetStmt(_)
        | NodeEnum::DropRoleStmt(_)
        | NodeEnum::GrantRoleStmt(_) => "changes roles, which are the whole cluster's",
        NodeEnum::AlterSystemStmt(_) => {
            "changes the server's configuration, outside any transaction"
        }
        NodeEnum::CreateSubscriptionStmt(_)
        | NodeEnum::AlterSubscriptionStmt(_)
        | NodeEnum::DropSubscriptionStmt(_) => "manages a subscription, outside any transaction",
        NodeEnum::ReindexStmt(_) => {
            "rebuilds indexes (REINDEX … CONCURRENTLY, SYSTEM and DATABASE cannot run in a transaction)"
        }
        NodeEnum::IndexStmt(i) if i.concurrent => "CONCURRENTLY cannot run inside a transaction",
        NodeEnum::DropStmt(d) if d.concurrent => "CONCURRENTLY cannot run inside a transaction",
        NodeEnum::CheckPointStmt(_) | NodeEnum::LoadStmt(_) | NodeEnum::ListenStmt(_) => {
            "acts beyond the setup's transaction"
        }
        _ => return None,
    })
}

/// Whether a `CREATE` makes a temporary object (`CREATE TEMP TABLE`, `… AS`, `VIEW`, `SEQUENCE`).
fn creates_temporary(node: &NodeEnum) -> bool {
    let temp =
        |r: Option<&pg_query::protobuf::RangeVar>| r.is_some_and(|r| r.relpersistence == "t");
    match node {
        NodeEnum::CreateStmt(c) => temp(c.relation.as_ref()),
        NodeEnum::CreateTableAsStmt(c) => temp(c.into.as_ref().and_then(|i| i.rel.as_ref())),
        NodeEnum::ViewStmt(v) => temp(v.view.as_ref()),
        NodeEnum::CreateSeqStmt(c) => temp(c.sequence.as_ref()),
        _ => false,
    }
}

/// Check one setup statement (transaction control and settings are refused before this).
pub fn check(word: &str, s: &Statement, rules: Rules) -> Result<(), String> {
    if let Some(why) = outside_transaction(&s.node) {
        return Err(format!(
            "{word} {why}: it is refused in --setup, which runs inside pglab's transaction"
        ));
    }
    if !rules.foreign {
        return Ok(());
    }
    let reads =
        is_query(&s.node) && matches!(s.node, NodeEnum::SelectStmt(_)) && writes(s).is_none();
    let temporary = creates_temporary(&s.node)
        || matches!(s.node, NodeEnum::IndexStmt(_))
        || (is_query(&s.node) && !matches!(s.node, NodeEnum::SelectStmt(_)));
    if !reads && !temporary {
        return Err(format!(
            "{word} {}: on a server pglab did not start the setup may only create and fill temporary tables (CREATE TEMP TABLE …, INSERT INTO them)",
            if matches!(
                s.node,
                NodeEnum::CreateStmt(_)
                    | NodeEnum::CreateTableAsStmt(_)
                    | NodeEnum::ViewStmt(_)
                    | NodeEnum::CreateSeqStmt(_)
            ) {
                "makes a permanent object"
            } else {
                why_not(&s.node)
            }
        ));
    }
    if !reads && rules.frame != Frame::Rollback {
        return Err(format!(
            "{word}: a setup that creates tables writes (temporary tables, their catalog rows): on a server pglab did not start it needs --writes rollback"
        ));
    }
    Ok(())
}
