//! What a statement may do where pglab runs it, decided on PostgreSQL's own parse tree. On a
//! server pglab did not start, measuring is an allow-list: `SELECT`/`VALUES`/`TABLE`/`WITH`
//! without data-modifying parts, row locks or `INTO`, `EXPLAIN` of those, `SHOW`; DML only
//! with `--writes rollback`; no call of a built-in that acts beyond its statement
//! ([`super::functions`]). Everywhere, pglab owns the transaction: transaction control and
//! settings are refused where they would change it. A refusal is one sentence naming the
//! statement and, where there is one, the flag that allows it.

use pg_query::NodeEnum;
use pg_query::protobuf::TransactionStmtKind as Tx;

use super::functions::side_effect;
use super::tree::{self, Statement, leading_words, option_on};

/// Where the statement comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A measured statement (`--sql`, `--file`, the TUI's query box): one statement.
    Measured,
    /// A command of a pgbench-style script (`--script`): one statement; it may hold its own
    /// transaction unless every run is rolled back.
    Script,
    /// The setup (`--setup`): any number of statements, run once in pglab's transaction.
    Setup,
}

/// The transaction pglab runs the statement in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// As written, autocommit (pglab's own sandbox).
    Autocommit,
    /// `READ ONLY` transactions.
    ReadOnly,
    /// Transactions always rolled back (`--writes rollback`).
    Rollback,
}

/// The rules a statement is checked under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    pub place: Place,
    pub frame: Frame,
    /// On a server pglab did not start (production): the allow-list applies.
    pub foreign: bool,
}

/// Settings a script may not change while pglab frames it: the transaction's mode and the
/// server-side belts of a foreign trial.
const FRAME_SETTINGS: &[&str] = &[
    "transaction_read_only",
    "default_transaction_read_only",
    "transaction",
    "session characteristics",
    "session_authorization",
    "role",
    "statement_timeout",
    "lock_timeout",
    "idle_in_transaction_session_timeout",
    "temp_file_limit",
];

/// Check `sql` under `rules`: Ok, or the sentence that refuses it.
pub fn check(sql: &str, rules: Rules) -> Result<(), String> {
    let statements = tree::parse(sql)?;
    if statements.is_empty() {
        return Err("there is no statement here, only comments or blanks".into());
    }
    if rules.place != Place::Setup && statements.len() > 1 {
        return Err(format!(
            "this holds {} statements; one is measured at a time (give each its own --sql, or separate them in --file)",
            statements.len()
        ));
    }
    for s in &statements {
        check_one(s, rules)?;
    }
    Ok(())
}

/// Whether EXPLAIN takes the statement (a plan can be taken of it).
pub fn explainable(sql: &str) -> bool {
    tree::parse(sql).is_ok_and(|s| s.len() == 1 && is_query(&s[0].node))
}

/// A query: what EXPLAIN takes and the allow-list starts from.
pub(super) fn is_query(node: &NodeEnum) -> bool {
    matches!(
        node,
        NodeEnum::SelectStmt(_)
            | NodeEnum::InsertStmt(_)
            | NodeEnum::UpdateStmt(_)
            | NodeEnum::DeleteStmt(_)
            | NodeEnum::MergeStmt(_)
    )
}

fn check_one(s: &Statement, rules: Rules) -> Result<(), String> {
    let word = leading_words(&s.text);
    match &s.node {
        NodeEnum::CopyStmt(c) if rules.place != Place::Setup && c.filename.is_empty() => {
            return Err(format!(
                "{word} … {}: a COPY's rows stream between the server and the client, and pglab's measuring clients neither send nor read them; time a COPY with a file on the server (on the sandbox), or measure loading with the ingest experiment",
                if c.is_from { "FROM STDIN" } else { "TO STDOUT" }
            ));
        }
        NodeEnum::TransactionStmt(t) => return transaction(&word, t, rules),
        NodeEnum::VariableSetStmt(v) => return setting(&word, &v.name, v.kind, rules),
        NodeEnum::DiscardStmt(_) => return setting(&word, "all", 6, rules),
        _ => {}
    }
    functions(&word, s, rules)?;
    if rules.place == Place::Setup {
        return super::classify_setup::check(&word, s, rules);
    }
    if !rules.foreign {
        return writes_in_read_only(&word, s, rules);
    }
    allow_listed(&word, s, rules)
}

/// Transaction control: pglab's to give, except a script's own transactions outside a rollback.
fn transaction(
    word: &str,
    t: &pg_query::protobuf::TransactionStmt,
    rules: Rules,
) -> Result<(), String> {
    let kind = Tx::try_from(t.kind).unwrap_or(Tx::Undefined);
    if rules.place == Place::Setup {
        return Err(format!(
            "{word} ends or changes the transaction pglab runs the setup in (what follows it would be kept for good): leave transaction control out of --setup"
        ));
    }
    if matches!(
        kind,
        Tx::TransStmtPrepare | Tx::TransStmtCommitPrepared | Tx::TransStmtRollbackPrepared
    ) {
        return Err(format!("{word}: two-phase commit is not measured by pglab"));
    }
    if rules.place == Place::Measured || rules.frame == Frame::Rollback {
        return Err(format!(
            "{word} is pglab's to give: each execution runs in a transaction of its own{}",
            if rules.frame == Frame::Rollback {
                " that is rolled back"
            } else {
                ""
            }
        ));
    }
    if rules.frame == Frame::ReadOnly
        && option_on(&t.options, "transaction_read_only") == Some(false)
    {
        return Err(format!(
            "{word} … READ WRITE: on a server pglab did not start every transaction is READ ONLY (use --writes rollback for DML)"
        ));
    }
    Ok(())
}

/// `SET`, `RESET`, `DISCARD`: a script may set what does not change pglab's frame.
fn setting(word: &str, name: &str, kind: i32, rules: Rules) -> Result<(), String> {
    if rules.place != Place::Script {
        return Err(format!(
            "{word} does not belong {}: sweep settings with --set",
            if rules.place == Place::Setup {
                "in --setup (it would last beyond it, or not at all)"
            } else {
                "among the measured statements"
            }
        ));
    }
    let reset_all = kind == pg_query::protobuf::VariableSetKind::VarResetAll as i32;
    let name = name.to_ascii_lowercase();
    if rules.frame != Frame::Autocommit && (reset_all || FRAME_SETTINGS.contains(&name.as_str())) {
        return Err(format!(
            "{word}{}: this changes the transaction or the limits pglab runs the script under",
            if name.is_empty() {
                String::new()
            } else {
                format!(" {name}")
            }
        ));
    }
    Ok(())
}

/// Every function the statement calls, against the built-ins that act beyond it.
fn functions(word: &str, s: &Statement, rules: Rules) -> Result<(), String> {
    for f in tree::function_calls(&s.json) {
        let Some(what) = side_effect(&f) else {
            continue;
        };
        let base = f.rsplit('.').next().unwrap_or(&f).to_ascii_lowercase();
        if rules.foreign {
            return Err(format!(
                "{word} calls {f}(), which {what}: on a server pglab did not start it is never run (no flag allows it; a rollback would not undo it)"
            ));
        }
        if rules.frame != Frame::Autocommit && base == "set_config" {
            return Err(format!(
                "{word} calls {f}(), which could change the transaction pglab runs statements in: leave it out"
            ));
        }
    }
    Ok(())
}

/// What writes, as a short phrase: None for a statement that only reads.
pub(super) fn writes(s: &Statement) -> Option<&'static str> {
    let j = &s.json;
    if tree::contains(j, "InsertStmt")
        || tree::contains(j, "UpdateStmt")
        || tree::contains(j, "DeleteStmt")
        || tree::contains(j, "MergeStmt")
    {
        return Some("modifies rows");
    }
    if tree::contains(j, "LockingClause") {
        return Some("locks rows (FOR UPDATE/SHARE), a write other sessions wait on");
    }
    if tree::has_field(j, "into_clause") {
        return Some("creates a table (SELECT … INTO)");
    }
    None
}

/// On the sandbox: a write under `READ ONLY` (`--writes read-only`) is said before it runs.
fn writes_in_read_only(word: &str, s: &Statement, rules: Rules) -> Result<(), String> {
    if rules.frame == Frame::ReadOnly
        && is_query(&s.node)
        && let Some(what) = writes(s)
    {
        return Err(format!(
            "{word} {what}, and statements run in READ ONLY transactions: use --writes rollback to measure it in a transaction that is rolled back"
        ));
    }
    Ok(())
}

/// On a server pglab did not start: reads only, DML with `--writes rollback`.
fn allow_listed(word: &str, s: &Statement, rules: Rules) -> Result<(), String> {
    match &s.node {
        NodeEnum::VariableShowStmt(_) => Ok(()),
        NodeEnum::ExplainStmt(e) => {
            let inner = e.query.as_ref().and_then(|q| q.node.as_ref());
            if !inner.is_some_and(is_query) {
                return Err(refused(word, "explains a statement that is not a query"));
            }
            let analyze = option_on(&e.options, "analyze").unwrap_or(false);
            match writes(s) {
                Some(what) if analyze && rules.frame != Frame::Rollback => Err(format!(
                    "{word} ANALYZE runs the statement, which {what}: use --writes rollback to measure it in a transaction that is rolled back"
                )),
                Some(what) if what.starts_with("creates") => Err(refused(word, what)),
                _ => Ok(()),
            }
        }
        n if is_query(n) => match writes(s) {
            None => Ok(()),
            Some(what) if what.starts_with("creates") => Err(refused(word, what)),
            Some(_) if rules.frame == Frame::Rollback => Ok(()),
            Some(what) => Err(format!(
                "{word} {what}: on a server pglab did not start statements only read; --writes rollback measures it in a transaction that is rolled back"
            )),
        },
        other => Err(refused(word, why_not(other))),
    }
}

/// The sentence for a statement no flag allows on a server pglab did not start.
pub(super) fn refused(word: &str, what: &str) -> String {
    format!(
        "{word} {what}: on a server pglab did not start only reads are measured (SELECT, VALUES, TABLE, WITH, EXPLAIN, SHOW; DML with --writes rollback); try it on a copy in pglab's sandbox"
    )
}

/// What a statement outside the allow-list does, for its sentence.
pub(super) fn why_not(node: &NodeEnum) -> &'static str {
    match node {
        NodeEnum::ReindexStmt(_) | NodeEnum::ClusterStmt(_) => {
            "rewrites a table or its indexes (WAL, locks)"
        }
        NodeEnum::VacuumStmt(_) => "vacuums or analyzes, which writes and is no measurement",
        NodeEnum::LockStmt(_) => "takes a table lock every other session waits behind",
        NodeEnum::CopyStmt(_) => "copies data in or out (even to a program on the server)",
        NodeEnum::CallStmt(_) | NodeEnum::DoStmt(_) => "runs procedural code pglab cannot check",
        NodeEnum::CheckPointStmt(_) => "forces a checkpoint, I/O for every session",
        NodeEnum::NotifyStmt(_) | NodeEnum::ListenStmt(_) | NodeEnum::UnlistenStmt(_) => {
            "talks to other sessions"
        }
        NodeEnum::PrepareStmt(_)
        | NodeEnum::ExecuteStmt(_)
        | NodeEnum::DeclareCursorStmt(_)
        | NodeEnum::FetchStmt(_) => {
            "is not a statement pglab can check (write the statement itself)"
        }
        _ => "changes the database (DDL, privileges or server state)",
    }
}
