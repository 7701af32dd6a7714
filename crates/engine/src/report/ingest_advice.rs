//! The ingest recommendation, read from the engine's verdicts (never from raw medians): the
//! best method and the cheapest batch shown as good as the best, what
//! `synchronous_commit = off` bought and what it costs, how loading scaled with clients, and
//! which ceiling single-row commits hit. A question the run did not ask, or whose verdict is
//! `too few trials`, gets no claim.

use crate::experiment::ingest::{
    ConfigStat, IngestGroup, IngestReport, IngestTrial, Method, Question, SyncCommit,
};
use crate::experiment::{Outcome, RunReport};
use crate::measure::stats::median;
use crate::measure::units::{format_bytes, format_count};
use crate::measure::verdict::Verdict;

use super::ingest::rate;
use super::recommend::Recommendation;

fn say(text: String) -> Recommendation {
    Recommendation {
        text,
        sql: Vec::new(),
    }
}

fn clients(n: u32) -> String {
    format!("{n} client{}", if n == 1 { "" } else { "s" })
}

/// The question `q` asked about the configuration closest to `best` (same fixed parameters
/// where the question holds them fixed), else the first one asked.
fn group_for<'a>(b: &'a IngestReport, q: Question, best: &ConfigStat) -> Option<&'a IngestGroup> {
    let asked: Vec<&IngestGroup> = b
        .summary
        .groups
        .iter()
        .filter(|g| g.question == q)
        .collect();
    let fits = |g: &&IngestGroup| {
        g.method.is_none_or(|m| m == best.method)
            && g.batch.is_none_or(|x| x == best.batch)
            && g.clients.is_none_or(|c| c == best.clients)
            && g.synchronous_commit
                .is_none_or(|s| s == best.synchronous_commit)
            && (g.server_settings.is_empty() || g.server_settings == best.settings)
    };
    asked.iter().copied().find(fits).or(asked.first().copied())
}

/// "copy at batch 256, 1 client, sync=on"
fn fixed(g: &IngestGroup) -> String {
    let mut parts = Vec::new();
    if let Some(m) = g.method {
        parts.push(m.as_str().to_string());
    }
    if let Some(b) = g.batch {
        parts.push(format!("batch {b}"));
    }
    if let Some(c) = g.clients {
        parts.push(clients(c));
    }
    if let Some(s) = g.synchronous_commit {
        parts.push(format!("synchronous_commit={}", s.as_str()));
    }
    parts.join(", ")
}

fn undecided(g: &IngestGroup, what: &str) -> String {
    let open = if g.blocking.is_empty() {
        String::new()
    } else {
        format!(": {} still undecided", g.blocking.join(", "))
    };
    let more = match g.more_repeats_needed {
        Some(n) => format!(
            "; about {n} trials per setting would decide it (estimated from the spread so far: --repeat {n} or --repeat auto)"
        ),
        None => "; at the spread so far more than 100 trials per setting would be needed".into(),
    };
    format!("Too few trials to say {what} ({}){open}{more}.", fixed(g))
}

fn method_and_batch(b: &IngestReport, best: &ConfigStat, out: &mut Vec<Recommendation>) {
    if let Some(g) = group_for(b, Question::Method, best) {
        let text = match (g.verdict, &g.winner) {
            (Some(Verdict::Faster), Some(w)) => {
                let others: Vec<String> = g
                    .settings
                    .iter()
                    .filter(|s| &s.label != w)
                    .filter_map(|s| Some(format!("{} {:.0}% of it", s.label, s.ratio? * 100.0)))
                    .collect();
                let w_rate = g
                    .settings
                    .iter()
                    .find(|s| &s.label == w)
                    .and_then(|s| s.median)
                    .map(rate)
                    .unwrap_or_default();
                format!(
                    "Load with `{w}`: it loaded the most rows ({w_rate} rows/s, {}), significantly more than the other methods ({}).",
                    fixed(g),
                    others.join(", ")
                )
            }
            (Some(Verdict::NoSignificantDifference), _) => format!(
                "The methods {} are within {} of the best ({}; at {}); {} is the simplest of them.",
                g.equivalent.join(", "),
                crate::experiment::lab::decision::format_percent(b.params.decision.min_effect),
                fixed(g),
                g.level,
                // Every method shown equivalent: the core names no recommendation (nothing
                // needs choosing); the simplest of them is still the one to use.
                g.recommendation
                    .clone()
                    .or_else(|| g.equivalent.first().cloned())
                    .unwrap_or_default()
            ),
            (Some(Verdict::TooFewTrials), _) => undecided(g, "which method loads fastest"),
            _ => String::new(),
        };
        if !text.is_empty() {
            out.push(say(text));
        }
    }
    let Some(k) = b.summary.knees.iter().find(|k| {
        k.method == best.method
            && k.clients == best.clients
            && k.synchronous_commit == best.synchronous_commit
    }) else {
        return;
    };
    let curve = format!("{} with {}", k.method.as_str(), clients(k.clients));
    let text = match (k.knee_batch, k.knee_rows_per_s) {
        (Some(kb), Some(kr)) if kb < k.best_batch => format!(
            "Batch {kb} is enough for {curve}: {} rows/s against {} at the best batch {}; {}.",
            rate(kr),
            rate(k.best_rows_per_s),
            k.best_batch,
            k.knee_note
        ),
        (Some(kb), _) => format!(
            "For {curve}, batch {kb} ({} rows/s): {}.",
            rate(k.best_rows_per_s),
            k.knee_note
        ),
        _ => {
            // An undecided curve also says what would settle it.
            let open = group_for(b, Question::Batch, best)
                .filter(|g| g.verdict == Some(Verdict::TooFewTrials))
                .map(|g| format!(" {}", undecided(g, "where the knee is")))
                .unwrap_or_default();
            format!("For {curve}: {}.{open}", k.knee_note)
        }
    };
    out.push(say(text));
}

fn sync_off(
    report: &RunReport,
    b: &IngestReport,
    best: &ConfigStat,
    out: &mut Vec<Recommendation>,
) {
    let Some(g) = group_for(b, Question::SyncCommit, best) else {
        return;
    };
    if !g.settings.iter().any(|s| s.label == "off") {
        return sync_levels(g, out);
    }
    let on = g.settings.iter().find(|s| s.label == "on");
    let delay = report
        .server
        .as_ref()
        .and_then(|s| s.settings.get("wal_writer_delay").cloned())
        .unwrap_or_else(|| "200ms".into());
    let cost = format!(
        "The cost, plainly: if the server crashes (power, kernel, OOM kill — not a client disconnect), commits reported as done in the last moments before it (up to three times wal_writer_delay = {delay}, i.e. a few hundred milliseconds) are lost. The database stays consistent: nothing is corrupted and no transaction is half applied. Use it for loads you can repeat, in the loading session only."
    );
    match (g.verdict, g.winner.as_deref()) {
        (Some(Verdict::Faster), Some("off")) => {
            let times = on.and_then(|s| s.ratio).map(|r| 1.0 / r);
            out.push(Recommendation {
                text: format!(
                    "`synchronous_commit = off` loaded {} what `on` did ({}), significantly. {cost}",
                    times.map(|t| format!("{t:.1}×")).unwrap_or("more than".into()),
                    fixed(g)
                ),
                sql: vec!["SET synchronous_commit = off;  -- this loading session only".into()],
            });
        }
        (Some(Verdict::Faster), Some(w)) => out.push(say(format!(
            "`synchronous_commit = {w}` loaded the most ({}); `off` did not beat it, so keep commits durable.",
            fixed(g)
        ))),
        (Some(Verdict::NoSignificantDifference), _) => out.push(say(format!(
            "`synchronous_commit = off` made no significant difference ({}; shown within {} of `on`): the commits were not what limited this load, so keep `on` and its durability.",
            fixed(g),
            crate::experiment::lab::decision::format_percent(b.params.decision.min_effect)
        ))),
        (Some(Verdict::TooFewTrials), _) => {
            out.push(say(undecided(g, "what synchronous_commit = off buys")))
        }
        _ => {}
    }
}

/// The levels measured, without `off` (a standby's cost: local, on, remote_apply …): what
/// the stronger ones cost, never a trade of durability for speed said as a win.
fn sync_levels(g: &IngestGroup, out: &mut Vec<Recommendation>) {
    let levels: Vec<&str> = g.settings.iter().map(|s| s.label.as_str()).collect();
    let text = match (g.verdict, g.winner.as_deref()) {
        (Some(Verdict::Faster), Some(w)) => format!(
            "`synchronous_commit = {w}` loaded the most ({}); each level above it waits for more before a commit returns, and buys what the findings say it survives: choose the level by the durability you need, then budget its cost.",
            fixed(g)
        ),
        (Some(Verdict::NoSignificantDifference), _) => format!(
            "The synchronous_commit levels measured ({}) made no significant difference ({}): what they wait for did not limit this load, so the stronger durability costs nothing here.",
            levels.join(", "),
            fixed(g)
        ),
        (Some(Verdict::TooFewTrials), _) => undecided(
            g,
            &format!(
                "what the stronger synchronous_commit levels cost ({})",
                levels.join(", ")
            ),
        ),
        _ => return,
    };
    out.push(say(text));
}

fn client_scaling(b: &IngestReport, best: &ConfigStat, out: &mut Vec<Recommendation>) {
    let Some(g) = group_for(b, Question::Clients, best) else {
        return;
    };
    let fewest = g.settings.first();
    let text = match (g.verdict, g.winner.as_deref(), fewest) {
        (Some(Verdict::Faster), Some(w), Some(one)) if one.label != w => match one.ratio {
            Some(r) if one.verdict == Some(Verdict::Slower) && r > 0.0 => format!(
                "{w} load {:.1}× what {} does ({}), faster than every other client count tried.",
                1.0 / r,
                one.label,
                fixed(g)
            ),
            _ => return,
        },
        (Some(Verdict::Faster), Some(w), _) => format!(
            "More clients did not help: {w} loaded the most ({}).",
            fixed(g)
        ),
        (Some(Verdict::NoSignificantDifference), _, _) => format!(
            "More clients made no significant difference ({}; shown within {} of the best): something shared — the WAL flush, the disk or the CPUs — is the limit, not the client.",
            fixed(g),
            crate::experiment::lab::decision::format_percent(b.params.decision.min_effect)
        ),
        (Some(Verdict::TooFewTrials), _, _) => undecided(g, "how loading scales with clients"),
        _ => return,
    };
    out.push(say(text));
}

fn fsync_ceiling(b: &IngestReport, out: &mut Vec<Recommendation>) {
    let Some(fs) = &b.fsync else {
        return;
    };
    // One level: with a synchronous standby `on` also waits for it, and a median over levels
    // would mix the disk with the standby's round trip.
    let walled = |t: &&IngestTrial| {
        t.method == Method::Insert && t.clients == 1 && t.fsync_fraction.is_some()
    };
    let Some(level) = SyncCommit::BY_REACH.into_iter().find(|l| {
        b.trials
            .iter()
            .filter(walled)
            .any(|t| t.synchronous_commit == *l)
    }) else {
        return;
    };
    let of: Vec<_> = b
        .trials
        .iter()
        .filter(walled)
        .filter(|t| t.synchronous_commit == level)
        .collect();
    let single: Vec<f64> = of.iter().filter_map(|t| t.fsync_fraction).collect();
    let commits: Vec<f64> = of.iter().map(|t| t.commits_per_s).collect();
    let (Some(f), Some(c)) = (median(&single), median(&commits)) else {
        return;
    };
    let text = if f >= 0.5 {
        format!(
            "Single-row commits hit the disk's fsync ceiling: one client committed {} rows/s, {:.0}% of the {} flushes/s the disk allows, because every commit waits for its WAL flush. More rows per transaction (insert-tx, copy) or more clients sharing a flush lift that ceiling.",
            rate(c),
            f * 100.0,
            rate(fs.ops_per_s)
        )
    } else {
        format!(
            "Single-row commits did not reach the disk's fsync ceiling: one client committed {} rows/s, {:.0}% of the {} flushes/s the disk allows; the round trip of each statement and commit, not the disk, is the limit.",
            rate(c),
            f * 100.0,
            rate(fs.ops_per_s)
        )
    };
    out.push(say(text));
}

/// The configuration with the most rows per second: what the advice starts from.
fn best_config(b: &IngestReport) -> Option<&ConfigStat> {
    b.summary
        .configs
        .iter()
        .max_by(|x, y| x.rows_per_s.median.total_cmp(&y.rows_per_s.median))
}

/// The decided question the run's headline answers: the first (in the summary's order) whose
/// fixed parameters hold the best configuration, as the advice reads it.
pub(crate) fn headline_group(b: &IngestReport) -> Option<usize> {
    let best = best_config(b)?;
    let g = [
        Question::Batch,
        Question::Method,
        Question::SyncCommit,
        Question::Clients,
    ]
    .into_iter()
    .filter_map(|q| group_for(b, q, best))
    .find(|g| g.decided.is_some())?;
    b.summary.groups.iter().position(|x| std::ptr::eq(x, g))
}

pub(crate) fn recommendations(report: &RunReport, b: &IngestReport) -> Vec<Recommendation> {
    let mut out = Vec::new();
    let Some(best) = best_config(b) else {
        return out;
    };
    method_and_batch(b, best, &mut out);
    sync_off(report, b, best, &mut out);
    client_scaling(b, best, &mut out);
    fsync_ceiling(b, &mut out);
    if !out.is_empty() {
        let mut caveat = format!(
            "Measured with {} rows per trial of {} {} payload and {} secondary index{} on this host; the best batch and method move with row width, indexes, network latency and disk, so measure with your own rows before changing a loader.",
            format_count(b.params.rows as f64),
            format_bytes(b.params.payload.bytes),
            b.params.payload_type.as_str(),
            b.params.indexes,
            if b.params.indexes == 1 { "" } else { "es" }
        );
        if report.outcome != Outcome::Finished {
            caveat.insert_str(
                0,
                &format!(
                    "This run was {} before all trials finished; the figures cover what finished. ",
                    report.outcome.as_str()
                ),
            );
        }
        out.push(say(caveat));
    }
    out
}
