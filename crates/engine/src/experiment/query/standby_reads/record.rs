//! A trial on the standby in the report: its standby record (`standby_reads`), and for the
//! verdicts the usual query trials — per statement the median of the executions that returned
//! (one session), or the clients' throughput trial (`--clients`, `--script`) — each shown once
//! on screen with the statements the standby cancelled.

use super::clients::Got;
use super::reader::Reads;
use super::trial::StandbyReadTrial;
use crate::experiment::lab::RunCtx;
use crate::experiment::lab::event::Sample;
use crate::experiment::query::rounds::Planned;
use crate::experiment::query::summary::format_time;
use crate::experiment::query::{QueryReport, QueryTrial};

/// Record trial `t` of round and combination `p` (`label`), with what its readers `got`.
pub(crate) async fn record(
    ctx: &RunCtx,
    report: &mut QueryReport,
    (t, got): (StandbyReadTrial, Got),
    p: Planned,
    label: &str,
) {
    match got {
        Got::Reads(reads) => statements(ctx, report, &t, &reads, label).await,
        Got::Clients(n, through) => {
            let q = through.record(p, n, t.settings.clone());
            let mut sample = crate::experiment::query::bench::sample(&q, label);
            sample.cells.push(t.cancelled.to_string());
            ctx.emit.sample(sample).await;
            report.trials.push(q);
        }
    }
    report.standby_reads.push(t);
}

/// Per statement a timed trial (the median of the executions that returned).
async fn statements(
    ctx: &RunCtx,
    report: &mut QueryReport,
    t: &StandbyReadTrial,
    reads: &Reads,
    label: &str,
) {
    for (s, st) in report.params.statements.clone().iter().enumerate() {
        let Some(median) = crate::measure::stats::median(&reads.seconds[s]) else {
            continue;
        };
        let q = QueryTrial {
            statement: s,
            name: st.name.clone(),
            combo: t.combo,
            settings: t.settings.clone(),
            repeat: t.repeat,
            seconds: median,
            executions: reads.seconds[s].len() as u32,
            rows: reads.rows[s],
            ..QueryTrial::default()
        };
        ctx.emit
            .sample(Sample {
                series: q.name.clone(),
                x: q.combo as f64,
                y: q.seconds,
                projected: false,
                cells: vec![
                    q.name.clone(),
                    label.to_string(),
                    q.repeat.to_string(),
                    format_time(q.seconds),
                    q.rows.to_string(),
                    reads.cancelled[s].to_string(),
                ],
                ..Sample::default()
            })
            .await;
        report.trials.push(q);
    }
}
