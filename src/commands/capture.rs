//! `pglab capture --db CONNINFO [--top N | --coverage P%] [--sample DURATION] --out FILE`:
//! what a server of the DBA's runs, written as a workload for `run query` and `tune`.
//! Progress on stderr, the statements captured on stdout; the server is only read.

use std::time::Duration;

use color_eyre::eyre::Result;

use super::sandbox_import::open_source;
use super::stderr_line::StderrLine;
use crate::capture::session::{self, Destination};
use crate::capture::{Capture, CaptureSpec, Pick, Values};
use crate::cli::CaptureArgs;
use crate::measure::units::{format_seconds, parse_duration};
use crate::session::{Ctx, EXIT_FAILED, EXIT_USAGE, user_error};

/// The spec from the flags; a bad one is a sentence and exit 2.
fn spec_of(a: &CaptureArgs) -> Result<CaptureSpec> {
    let pick = Pick::parse(a.top, a.coverage.as_deref()).map_err(|e| user_error(EXIT_USAGE, e))?;
    let sample = match a.sample.trim() {
        "0" | "off" => Duration::ZERO,
        s => parse_duration(s).map_err(|e| user_error(EXIT_USAGE, format!("--sample: {e}")))?,
    };
    if sample > Duration::from_secs(3600) {
        return Err(user_error(
            EXIT_USAGE,
            "--sample: at most 1h (a minute or two sees the busy statements)",
        ));
    }
    if let Some(dir) = a.out.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(user_error(
            EXIT_USAGE,
            format!(
                "--out {}: no directory {}; give a file in an existing directory",
                a.out.display(),
                dir.display()
            ),
        ));
    }
    Ok(CaptureSpec {
        pick,
        sample,
        since_reset: a.since_reset,
    })
}

pub async fn run(ctx: &Ctx, a: CaptureArgs) -> Result<i32> {
    let Some(db) = ctx.global.db.clone() else {
        return Err(user_error(
            EXIT_USAGE,
            "capture reads a server of yours: name it with --db CONNINFO (it is only read, in read-only transactions)",
        ));
    };
    let spec = spec_of(&a)?;
    let source = open_source("--db", &db, "pglab capture").await?;
    let client = source
        .connect()
        .await
        .map_err(|e| user_error(EXIT_FAILED, format!("the source: {e}")))?;
    let stop = tokio_util::sync::CancellationToken::new();
    let c = stop.clone();
    let signal = tokio::spawn(async move {
        crate::session::shutdown_signal().await;
        c.cancel();
    });
    let mut line = StderrLine::new();
    if !spec.sample.is_zero() {
        line.line(&format!(
            "sampling pg_stat_activity for {} (Ctrl-C ends the sample early)",
            format_seconds(spec.sample.as_secs_f64())
        ));
    }
    let result = session::run(
        &client,
        &spec,
        &stop,
        &mut |n, t| {
            line.draw(&format!(
                "sampled {}: {n} executions seen",
                format_seconds(t.as_secs_f64())
            ))
        },
        Destination::File(a.out.clone()),
    )
    .await;
    line.clear();
    signal.abort();
    let cap = result.map_err(|e| user_error(EXIT_FAILED, e))?.capture;
    print!("{}", summary(&cap, &a.out.display().to_string()));
    Ok(0)
}

/// The window, and what was hidden or left out, for stdout.
fn left_out(c: &Capture) -> String {
    let mut s = String::new();
    match &c.window {
        Some(w) if w.differenced => s.push_str(&format!(
            "figures: the window {} .. {} ({:.1} s), the difference of two reads of pg_stat_statements\n",
            w.start, w.end, w.seconds
        )),
        Some(_) => s.push_str("figures: totals since pg_stat_statements was last reset (no window)\n"),
        None => {}
    }
    if c.hidden > 0 {
        s.push_str(&format!(
            "hidden: {} statements of other roles ({:.1} % of the statement time) read <insufficient privilege> for role {}: GRANT pg_read_all_stats TO {} shows them\n",
            c.hidden,
            c.hidden_share * 100.0,
            c.role,
            crate::capture::file_window::role_name(&c.role)
        ));
    }
    if c.own.count + c.monitoring.count > 0 {
        s.push_str(&format!(
            "left out: {} of pglab's own statements, {} administration and monitoring calls\n",
            c.own.count, c.monitoring.count
        ));
    }
    s
}

/// What was captured, for stdout.
fn summary(c: &Capture, out: &str) -> String {
    let mut s = String::new();
    if let Some(n) = &c.note {
        s.push_str(&format!("note: {n}\n"));
    }
    let written: Vec<_> = c.statements.iter().filter(|x| x.sql.is_some()).collect();
    s.push_str(&format!(
        "captured {} statements from {} (PostgreSQL {}), {:.1} % of its {}; {} written to {out}\n",
        c.statements.len(),
        c.database,
        c.server_version,
        c.coverage * 100.0,
        if c.from_statements {
            "statement time"
        } else {
            "executions seen"
        },
        written.len(),
    ));
    s.push_str(&left_out(c));
    for x in &c.statements {
        let values = match (&x.values, &x.left_out) {
            (_, Some(why)) => format!("left out: {why}"),
            (Values::None, _) => "no parameters".into(),
            (Values::Activity { seen, .. }, _) => format!("values from activity ({seen} seen)"),
            (Values::Statistics { .. }, _) => "values from column statistics".into(),
        };
        let writes = if x.write { ", writes" } else { "" };
        s.push_str(&format!(
            "  {:<40} weight {:>8}  {:>5.1} %  {values}{writes}\n",
            x.name,
            x.weight,
            x.share * 100.0
        ));
    }
    s.push_str(&format!(
        "capture's cost on the source: {} queries in {}, read-only\nreplay it: pglab run query --script {out} (or --file {out}); tune for it: pglab tune --workload {out}\n",
        c.queries,
        format_seconds(c.seconds)
    ));
    s
}
