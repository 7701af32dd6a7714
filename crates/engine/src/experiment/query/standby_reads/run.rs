//! A query run on a standby, from its checks to its last trial: the standby chosen (refused
//! with a sentence when there is none), the setup on the primary and replayed, the churned
//! tables found, then round by round each combination — its primary-side settings through the
//! what-if machinery, its standby-side ones on the standby — and its trial. The standby's
//! settings come back on every path.

use std::collections::BTreeMap;
use std::time::Duration;

use super::churn;
use super::node::Node;
use super::trial::{self, Setup};
use crate::experiment::lab::event::TrialRef;
use crate::experiment::lab::standby_settings::{StandbySettings, standby_part};
use crate::experiment::lab::whatif::combo_label;
use crate::experiment::lab::{RunCtx, RunError};
use crate::experiment::query::rounds::Planned;
use crate::experiment::query::{QueryReport, QuerySpec, clients_name};

/// Trials of a run on a standby: one per combination and round (all statements in each);
/// None for a run on the target.
pub(crate) fn trials(spec: &QuerySpec) -> Option<usize> {
    spec.on_standby.as_ref()?;
    Some(spec.set.combo_count() * units(spec) * spec.repeat.most(spec.decision.max_repeat) as usize)
}

/// The client counts a combination's turn runs (one session: one unit).
fn units(spec: &QuerySpec) -> usize {
    if spec.throughput() {
        spec.client_counts().len()
    } else {
        1
    }
}

/// How the run's description says where it reads.
pub(crate) fn describe(spec: &QuerySpec) -> Option<String> {
    let r = spec.on_standby.as_ref()?;
    Some(format!(
        "on standby {} while the primary churns {} rows/s{}",
        r.standby,
        r.churn_rows_s,
        r.vacuum_every_s.map_or(String::new(), |s| format!(
            ", VACUUM every {}",
            crate::measure::units::format_seconds(s)
        ))
    ))
}

/// The trials on the standby; its settings put back after them whatever happened.
pub(crate) async fn body(
    ctx: &RunCtx,
    spec: &QuerySpec,
    report: &mut QueryReport,
) -> Result<(), RunError> {
    let Some(reads) = spec.on_standby.clone() else {
        return Err(RunError::failed("internal: no standby to read on"));
    };
    let node = Node::pick(ctx, reads.standby)?;
    report.setup =
        crate::experiment::query::setup::run(ctx, &spec.setup_sql, spec.keep_setup).await?;
    let control = ctx.session().await?;
    let tables = churned_tables(ctx, spec, &control, &node).await?;
    node.wait_replayed(ctx, &control).await?;
    let setup = Setup {
        tables,
        statements: spec
            .statements
            .iter()
            .map(|s| (s.name.clone(), s.sql.clone()))
            .collect(),
        clients: super::clients::Clients::of(spec),
        duration: Duration::from_secs_f64(spec.duration_s),
        churn_rows_s: reads.churn_rows_s,
        vacuum_every: reads.vacuum_every_s.map(Duration::from_secs_f64),
        flush: ctx.server.version_num >= 150000,
        node,
    };
    let side = StandbySettings::new(
        setup.node.standby.clone(),
        setup.node.target.clone(),
        &ctx.whatif.plan,
    );
    let result = rounds(ctx, spec, report, &setup, side.as_ref(), &control).await;
    if let Some(side) = side {
        put_back(ctx, &side, &setup.node.name()).await;
    }
    result
}

/// The standby's own settings back, said in a note.
async fn put_back(ctx: &RunCtx, side: &StandbySettings, name: &str) {
    match side.restore().await {
        Ok(Some(said)) => ctx.note(said).await,
        Ok(None) => {}
        Err(e) => {
            ctx.note(format!(
                "putting back {name}'s settings failed ({e}); the next pglab start puts them back"
            ))
            .await
        }
    }
}

/// The plain tables the statements read, said in a note; refused when there is none.
async fn churned_tables(
    ctx: &RunCtx,
    spec: &QuerySpec,
    control: &tokio_postgres::Client,
    node: &Node,
) -> Result<Vec<churn::Churned>, RunError> {
    let (tables, skipped) = churn::tables(control, &spec.tables())
        .await
        .map_err(|e| ctx.error(e))?;
    if tables.is_empty() {
        return Err(RunError::Failed(format!(
            "--on-standby: the statements read no plain table the primary can churn ({}): name a table of the sandbox in them",
            if skipped.is_empty() {
                "none found".to_string()
            } else {
                skipped.join(", ")
            }
        )));
    }
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    ctx.note(format!(
        "the statements run on {} while the primary UPDATEs {} at {} rows/s (each row set to itself: new row versions, the same values){}",
        node.name(),
        names.join(", "),
        spec.on_standby.as_ref().map_or(0, |r| r.churn_rows_s),
        if skipped.is_empty() { String::new() } else { format!("; not churned: {}", skipped.join(", ")) }
    ))
    .await;
    Ok(tables)
}

/// Enter combination `c`: the primary's part, the standby's, and the feedback the standby now
/// gives seen on the primary.
async fn enter(
    ctx: &RunCtx,
    setup: &Setup,
    side: Option<&StandbySettings>,
    control: &tokio_postgres::Client,
    c: usize,
) -> Result<(), RunError> {
    ctx.enter_combo(c).await?;
    let part = standby_part(&ctx.whatif.plan, c);
    if let Some(side) = side
        && side.enter(&part).await.map_err(RunError::Failed)?
    {
        ctx.emit
            .phase(
                None,
                format!("reloaded {} with {}", setup.node.name(), combo_label(&part)),
            )
            .await;
    }
    let standby = setup
        .node
        .target
        .connect()
        .await
        .map_err(|e| RunError::Failed(e.to_string()))?;
    let feedback: String = standby
        .query_one("SELECT current_setting('hot_standby_feedback')", &[])
        .await
        .map_err(|e| ctx.error(e))?
        .get(0);
    setup
        .node
        .wait_feedback(ctx, control, feedback == "on")
        .await
}

async fn rounds(
    ctx: &RunCtx,
    spec: &QuerySpec,
    report: &mut QueryReport,
    setup: &Setup,
    side: Option<&StandbySettings>,
    control: &tokio_postgres::Client,
) -> Result<(), RunError> {
    let total = spec.trials();
    let mut index = 0;
    for repeat in 1..=spec.repeat.most(spec.decision.max_repeat) {
        for combo in 0..report.combos.len() {
            enter(ctx, setup, side, control, combo).await?;
            for unit in 0..units(spec) {
                index += 1;
                let p = Planned {
                    combo,
                    unit,
                    repeat,
                };
                turn(ctx, spec, report, setup, (p, index, total)).await?;
            }
        }
    }
    Ok(())
}

/// One trial of the combination entered: the unit's readers while the primary churns.
async fn turn(
    ctx: &RunCtx,
    spec: &QuerySpec,
    report: &mut QueryReport,
    setup: &Setup,
    (p, index, total): (Planned, usize, usize),
) -> Result<(), RunError> {
    let n = spec.client_counts()[p.unit];
    let label = report.combo_label(p.combo);
    let tref = TrialRef {
        index,
        total,
        label: match setup.clients {
            Some(_) => format!("{} · {label} · #{}", clients_name(n), p.repeat),
            None => format!("{label} · #{}", p.repeat),
        },
    };
    ctx.emit
        .phase(
            Some(tref.clone()),
            format!("reading on {} while the primary churns", setup.node.name()),
        )
        .await;
    let (mut t, got) = trial::run(ctx, setup, n, &tref).await?;
    t.combo = p.combo;
    t.repeat = p.repeat;
    t.settings = shown(ctx, setup).await?;
    super::record::record(ctx, report, (t, got), p, &label).await;
    report.summarize(&[]);
    Ok(())
}

/// The swept settings as a session on the standby shows them.
async fn shown(ctx: &RunCtx, setup: &Setup) -> Result<BTreeMap<String, String>, RunError> {
    let c = super::reader::open(ctx, &setup.node.target, &ctx.session_settings()).await?;
    ctx.shown_settings(&c).await
}
