//! What is checked before a query run starts, so that bad input is one sentence and exit 2
//! rather than a failed run: what the statements may not do here (transaction control, a
//! cold cache off the sandbox), whether the server parses each statement as one command, and
//! whether a candidate index on a real server's own table can be tried (HypoPG). Statements
//! and candidates that name objects the setup has yet to create are checked again after it.

use futures_util::future::join_all;
use tokio_postgres::Client;

use super::candidate::Candidate;
use super::guard::{self, TxMode};
use super::spec::{Cache, QuerySpec};
use crate::server::error::describe_query_error;

/// Parse requests sent before the first reply is read: a captured workload's value sets are
/// each parsed (20 statements of 100 sets are 2000), and one round trip each would make a
/// distant server's latency the precheck's length. tokio-postgres pipelines the requests of
/// one client that are in flight together, in order.
const PARSES_IN_FLIGHT: usize = 64;

/// The statements the server is asked to parse: the measured ones, or the script's SQL
/// commands with every variable as `0`; each with its name for messages.
pub(crate) fn parsed_texts(spec: &QuerySpec) -> Vec<(String, String)> {
    match &spec.script {
        Some(script) => {
            script
                .commands
                .iter()
                .filter_map(|c| match c {
                    super::script::Command::Sql {
                        parts,
                        line,
                        variants,
                        ..
                    } => Some(std::iter::once(parts).chain(variants).enumerate().map(
                        move |(k, p)| {
                            let at = match k {
                                0 => format!("script line {line}"),
                                k => format!("script line {line}, set {k}"),
                            };
                            (at, script.render(p, Some(&vec![0; script.vars.len()])))
                        },
                    )),
                    super::script::Command::Set { .. } => None,
                })
                .flatten()
                .collect()
        }
        None => spec
            .statements
            .iter()
            .flat_map(|s| {
                let own = (format!("{} (line {})", s.name, s.line), s.sql.clone());
                let sets = s.variants.iter().enumerate().map(|(k, v)| {
                    (
                        format!("{} (line {}, set {})", s.name, s.line, k + 1),
                        v.clone(),
                    )
                });
                std::iter::once(own).chain(sets)
            })
            .collect(),
    }
}

/// The server's parse of each statement as written (with its value sets): one sentence per
/// statement it refuses, or that has parameters pglab has no values for.
async fn parse_problems(client: &Client, spec: &QuerySpec, pending_setup: bool) -> Vec<String> {
    let mut problems = Vec::new();
    let parsed = parsed_texts(spec);
    for chunk in parsed.chunks(PARSES_IN_FLIGHT) {
        let replies = join_all(chunk.iter().map(|(_, sql)| client.prepare(sql))).await;
        for ((name, _), parsed) in chunk.iter().zip(replies) {
            match parsed {
                Ok(stmt) if !stmt.params().is_empty() => problems.push(format!(
                    "{name}: the statement has parameters ($1 …) and pglab has no values for them: write the values in"
                )),
                Ok(_) => {}
                Err(e) if pending_setup && guard::may_depend_on_setup(&e) => {}
                Err(e) => problems.push(format!("{name}: {}", describe_query_error(&e))),
            }
        }
    }
    problems
}

/// The statements as throughput clients bind them (`--protocol extended|prepared`), each with
/// its name: a script's commands with `$n` for its variables, a captured statement's
/// normalised text.
pub(crate) fn bound_texts(spec: &QuerySpec) -> Vec<(String, String)> {
    if !spec.throughput() || !spec.protocol.binds() {
        return Vec::new();
    }
    let script = super::throughput::script_of(spec);
    let name = |line: usize| match (
        &spec.script,
        spec.statements.iter().find(|s| s.line == line),
    ) {
        (None, Some(s)) => format!("{} (line {line})", s.name),
        _ => format!("script line {line}"),
    };
    super::loadgen::bind::texts(&script)
        .into_iter()
        .filter(|(_, sql)| !super::loadgen::bind::forgets_prepared(sql))
        .map(|(line, sql)| (name(line), sql))
        .collect()
}

/// The server's parse of each statement as the clients will bind it: one whose parameter the
/// server cannot type (or that does not parse with `$n`) is refused now, with its name.
async fn bound_problems(client: &Client, spec: &QuerySpec, pending_setup: bool) -> Vec<String> {
    let mut problems = Vec::new();
    let texts = bound_texts(spec);
    let replies = join_all(texts.iter().map(|(_, sql)| client.prepare(sql))).await;
    for ((name, _), parsed) in texts.iter().zip(replies) {
        match parsed {
            Ok(_) => {}
            Err(e) if pending_setup && guard::may_depend_on_setup(&e) => {}
            Err(e) => problems.push(super::loadgen::bind::refusal_sentence(
                name,
                e.code().map(|c| c.code()),
                &describe_query_error(&e),
            )),
        }
    }
    problems
}

/// Checks that need no server. One sentence per problem.
pub(crate) fn check_spec(spec: &QuerySpec, on_sandbox: bool) -> Vec<String> {
    let mode = TxMode::of(spec.writes, on_sandbox);
    let mut problems = Vec::new();
    if spec.cache == Cache::Cold && !on_sandbox {
        problems.push("--cache cold restarts the server and drops the OS page cache: only on pglab's own sandbox (use --cache warm here)".to_string());
    }
    let script = spec.script.is_some();
    let foreign = !on_sandbox;
    if !spec.setup_sql.trim().is_empty() {
        if let Err(e) = guard::check_setup(&spec.setup_sql, mode, foreign) {
            problems.push(e);
        } else if foreign && script {
            problems.push("setup: on a server pglab did not start the setup's temporary tables live in pglab's measuring session, which the clients of --script do not share: measure the script on a copy in pglab's sandbox".to_string());
        }
    }
    for (name, sql) in parsed_texts(spec) {
        if let Err(e) = guard::check_statement(&sql, mode, script, foreign) {
            problems.push(format!("{name}: {e}"));
        }
    }
    problems
}

/// Whether HypoPG is created in the target's database: Ok(version), or the sentence.
pub(crate) async fn hypopg(client: &Client) -> Result<String, String> {
    let row = client
        .query_opt(
            "SELECT extversion FROM pg_extension WHERE extname = 'hypopg'",
            &[],
        )
        .await
        .map_err(|e| describe_query_error(&e))?;
    if let Some(r) = row {
        return Ok(r.get(0));
    }
    let available = client
        .query_opt(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'hypopg'",
            &[],
        )
        .await
        .ok()
        .flatten()
        .is_some();
    Err(if available {
        "HypoPG is installed on the server but not created in this database: a DBA can run CREATE EXTENSION hypopg, then run this again".to_string()
    } else {
        "HypoPG is not installed on the server (Debian/Ubuntu: postgresql-NN-hypopg, then CREATE EXTENSION hypopg)".to_string()
    })
}

/// Where a candidate's table is: Some((schema, table)), None when it does not exist (yet).
pub(crate) async fn candidate_table(
    client: &Client,
    c: &Candidate,
) -> Result<Option<(String, String)>, String> {
    let row = client
        .query_opt(
            "SELECT n.nspname::text, cl.relname::text FROM pg_class cl JOIN pg_namespace n ON n.oid = cl.relnamespace
              WHERE cl.oid = to_regclass($1)",
            &[&c.table],
        )
        .await
        .map_err(|e| describe_query_error(&e))?;
    Ok(row.map(|r| (r.get(0), r.get(1))))
}

/// On a server pglab did not start: the functions the setup and the statements call (and the
/// views they read call) that may not run here, one sentence each
/// ([`crate::sql::volatile`]).
async fn volatile_calls(client: &Client, spec: &QuerySpec) -> Vec<String> {
    let mut lookup = crate::sql::volatile::Lookup::default();
    let setup =
        (!spec.setup_sql.trim().is_empty()).then(|| ("setup".to_string(), spec.setup_sql.clone()));
    let mut problems = Vec::new();
    // Each function once, where it is first called (a workload's value sets repeat it).
    let mut seen = std::collections::HashSet::new();
    for (name, sql) in setup.into_iter().chain(parsed_texts(spec)) {
        match lookup.refused(client, &sql, &spec.allow_functions).await {
            Ok(refused) => problems.extend(
                refused
                    .iter()
                    .filter(|r| seen.insert((r.schema.clone(), r.name.clone())))
                    .map(|r| format!("{name}: {r}")),
            ),
            Err(e) => problems.push(format!("{name}: {}", describe_query_error(&e))),
        }
    }
    problems
}

/// Checks against the server, on `client`, which gets the DBA's search path (the lab schema
/// first, then `"$user", public`): the statements and candidates resolve as they will run.
/// `setup_ran`: the setup has run (every object must exist now). One sentence per problem.
pub(crate) async fn check_on_server(
    client: &Client,
    spec: &QuerySpec,
    schema: &str,
    on_sandbox: bool,
    setup_ran: bool,
) -> Vec<String> {
    let pending_setup = !spec.setup_sql.trim().is_empty() && !setup_ran;
    if let Err(e) = client
        .batch_execute(&format!(
            "SET search_path = {}",
            super::session::user_search_path(schema)
        ))
        .await
    {
        return vec![describe_query_error(&e)];
    }
    let mut problems = parse_problems(client, spec, pending_setup).await;
    if problems.is_empty() {
        problems = bound_problems(client, spec, pending_setup).await;
    }
    if !on_sandbox {
        problems.extend(volatile_calls(client, spec).await);
    }
    let mut need_hypopg = Vec::new();
    for (i, sql) in spec.index.iter().enumerate() {
        let Ok(c) = Candidate::parse(sql) else {
            continue;
        };
        match candidate_table(client, &c).await {
            Ok(Some((s, t))) if !on_sandbox && s != schema => {
                need_hypopg.push(format!("index {} on {s}.{t}", i + 1))
            }
            Ok(Some(_)) => {}
            Ok(None) if pending_setup => {}
            Ok(None) => problems.push(format!(
                "index {}: there is no table {} here",
                i + 1,
                c.table
            )),
            Err(e) => problems.push(format!("index {}: {e}", i + 1)),
        }
    }
    if !need_hypopg.is_empty()
        && let Err(why) = hypopg(client).await
    {
        problems.push(format!(
            "{}: on a server pglab did not start, a candidate on the server's own tables is tried only hypothetically through HypoPG, and {why}; or try it for real on a copy in the sandbox",
            need_hypopg.join(", ")
        ));
    }
    problems
}
