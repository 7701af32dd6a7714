//! `pglab --citus-workers N sandbox status|start|stop|destroy`: the same actions on every
//! node of the Citus sandbox.

use color_eyre::eyre::Result;

use crate::cli::SandboxAction;
use crate::server::{CitusSandbox, SandboxStatus};
use crate::session::{Ctx, EXIT_FAILED, EXIT_USAGE, user_error};

/// An action on the cluster run off the async runtime: a sentence, or why it failed.
type Action = Box<dyn FnOnce(&CitusSandbox) -> Result<String, String> + Send>;

pub async fn run(ctx: &Ctx, action: SandboxAction, workers: u32) -> Result<i32> {
    let cluster = CitusSandbox::locate(
        &ctx.paths,
        ctx.global.pg_bin.as_deref(),
        ctx.global.sandbox_port,
        workers,
    )
    .map_err(|e| user_error(EXIT_USAGE, e.to_string()))?;
    let c = cluster.clone();
    let blocking = |f: Action| async {
        tokio::task::spawn_blocking(move || f(&c))
            .await
            .map_err(|e| user_error(EXIT_FAILED, format!("interrupted: {e}")))?
            .map_err(|e| user_error(EXIT_FAILED, e))
    };
    let text = match action {
        SandboxAction::Status => describe(&cluster),
        SandboxAction::Start(a) => {
            if a.standbys.is_some() || a.standby_rtt.is_some() {
                return Err(user_error(
                    EXIT_USAGE,
                    "--standbys and --standby-rtt are for the single-server sandbox, not a Citus cluster: leave out --citus-workers",
                ));
            }
            if let Some(why) = crate::server::cluster::citus_missing(&cluster.coordinator.bin) {
                return Err(user_error(EXIT_USAGE, why));
            }
            let c = cluster.clone();
            let (port, ports) = tokio::task::spawn_blocking(move || c.start())
                .await
                .map_err(|e| user_error(EXIT_FAILED, format!("interrupted: {e}")))?
                .map_err(|e| user_error(EXIT_FAILED, e.to_string()))?;
            cluster
                .register(port, &ports)
                .await
                .map_err(|e| user_error(EXIT_FAILED, e.to_string()))?;
            cluster.coordinator.set_keep(true);
            format!(
                "Citus sandbox running: coordinator on port {port}, workers on {}; it stays up until `pglab --citus-workers {workers} sandbox stop`\n{}",
                ports
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                super::sandbox::connect_text(&cluster.coordinator, port)
            )
        }
        SandboxAction::Stop => {
            blocking(Box::new(|c| {
                c.coordinator.set_keep(false);
                if !c.coordinator.unused() {
                    return Err("another pglab is using the Citus sandbox: quit it first (it stops the cluster on exit)".into());
                }
                match c.stop().map_err(|e| e.to_string())? {
                    true => Ok("Citus sandbox stopped (coordinator and every worker)".into()),
                    false => Ok("Citus sandbox was not running".into()),
                }
            }))
            .await?
        }
        SandboxAction::Import(_) => {
            return Err(user_error(
                EXIT_USAGE,
                "sandbox import fills a single-server sandbox: drop --citus-workers (or set [sandbox] citus_workers = 0)",
            ));
        }
        SandboxAction::Destroy => {
            blocking(Box::new(|c| {
                if !c.coordinator.unused() {
                    return Err("another pglab is using the Citus sandbox: quit it first".into());
                }
                c.destroy().map_err(|e| e.to_string())?;
                Ok(format!(
                    "Citus sandbox destroyed ({} removed)",
                    c.root.display()
                ))
            }))
            .await?
        }
    };
    println!("{text}");
    Ok(0)
}

fn describe(c: &CitusSandbox) -> String {
    let mut out = format!(
        "Citus sandbox: coordinator + {} worker{}\ndirectory: {}\nserver: PostgreSQL {} from {}",
        c.workers.len(),
        if c.workers.len() == 1 { "" } else { "s" },
        c.root.display(),
        c.coordinator.bin.version,
        c.coordinator.bin.dir.display()
    );
    if let Some(why) = crate::server::cluster::citus_missing(&c.coordinator.bin) {
        out.push_str(&format!("\nCitus: not installed — {why}"));
    }
    for (name, status) in c.status() {
        let state = match status {
            SandboxStatus::NotCreated => "not created".to_string(),
            SandboxStatus::Broken { reason } => format!("broken: {reason}"),
            SandboxStatus::Stopped => "stopped".into(),
            SandboxStatus::Running { pid, port } => format!("running, pid {pid}, port {port}"),
        };
        out.push_str(&format!("\n  {name:<12} {state}"));
    }
    if c.coordinator.keep() {
        out.push_str("\nkept up (pglab sandbox stop stops every node)");
    }
    if !c.coordinator.unused() {
        out.push_str("\nin use by a pglab");
    }
    if let Some((_, port)) = c.coordinator.live_postmaster() {
        out.push('\n');
        out.push_str(&super::sandbox::connect_text(&c.coordinator, port));
    }
    out
}
