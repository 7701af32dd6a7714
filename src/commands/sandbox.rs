//! `pglab sandbox status|start|stop|destroy`. Without `--citus-workers`, `status` also names
//! a Citus sandbox that is up and `stop` stops it too: "stop" means whatever pglab started.

use color_eyre::eyre::Result;

use crate::cli::SandboxAction;
use crate::server::{CitusSandbox, Sandbox, SandboxStatus};
use crate::session::{Ctx, EXIT_FAILED, user_error};

pub async fn run(ctx: &Ctx, action: SandboxAction) -> Result<i32> {
    if let SandboxAction::Import(a) = action {
        return super::sandbox_import::run(ctx, a).await;
    }
    if let Some(n) = ctx.target_options().citus_workers {
        return super::sandbox_citus::run(ctx, action, n).await;
    }
    let sandbox = Sandbox::locate(
        &ctx.paths,
        ctx.global.pg_bin.as_deref(),
        ctx.global.sandbox_port,
    )
    .map_err(|e| user_error(EXIT_FAILED, e.to_string()))?;
    let sb = sandbox.clone();
    let clusters = CitusSandbox::existing(
        &ctx.paths,
        ctx.global.pg_bin.as_deref(),
        ctx.global.sandbox_port,
    );
    let status = matches!(action, SandboxAction::Status);
    let rtt = match &action {
        SandboxAction::Start(a) => super::sandbox_standby::parse_rtt(a)?,
        _ => None,
    };
    let outcome = tokio::task::spawn_blocking(move || -> Result<String, String> {
        match action {
            SandboxAction::Status => Ok(describe(&sb) + &clusters_up(&clusters)),
            SandboxAction::Import(_) => Err("internal: import is not a blocking action".into()),
            SandboxAction::Start(a) => {
                let port = sb.start().map_err(|e| e.to_string())?;
                sb.set_keep(true);
                let standbys = super::sandbox_standby::start(&sb, port, a.standbys, rtt)?;
                Ok(format!(
                    "sandbox running on port {port} (socket in {}); it stays up until `pglab sandbox stop`\n{}{standbys}",
                    sb.root.display(),
                    connect_text(&sb, port)
                ))
            }
            SandboxAction::Stop => {
                sb.set_keep(false);
                if !sb.unused() {
                    return Err("another pglab is using the sandbox: quit it first (it stops the sandbox on exit)".into());
                }
                let mut said = vec![match sb.stop().map_err(|e| e.to_string())? {
                    true => "sandbox stopped".to_string(),
                    false => "sandbox was not running".to_string(),
                }];
                if crate::server::standby::stop_all(&sb).map_err(|e| e.to_string())? {
                    said.push("its standbys stopped (with their relays)".into());
                }
                for c in clusters.iter().filter(|c| c.running()) {
                    said.push(stop_cluster(c)?);
                }
                Ok(said.join("\n"))
            }
            SandboxAction::Destroy => {
                if !sb.unused() {
                    return Err("another pglab is using the sandbox: quit it first".into());
                }
                for s in crate::server::Standby::existing(&sb) {
                    s.remove(None).map_err(|e| e.to_string())?;
                }
                sb.destroy().map_err(|e| e.to_string())?;
                Ok(format!("sandbox destroyed ({} removed)", sb.root.display()))
            }
        }
    })
    .await
    .map_err(|e| user_error(EXIT_FAILED, format!("interrupted: {e}")))?;
    match outcome {
        Ok(text) => {
            println!("{text}");
            if status {
                print!("{}", super::sandbox_standby::listing(&sandbox).await);
                print!("{}", super::sandbox_imports::listing(&sandbox).await);
            }
            Ok(0)
        }
        Err(e) => Err(user_error(EXIT_FAILED, e)),
    }
}

/// Stop a Citus sandbox found up while stopping "the sandbox": every node, the coordinator first.
fn stop_cluster(c: &CitusSandbox) -> Result<String, String> {
    c.coordinator.set_keep(false);
    if !c.coordinator.unused() {
        return Err(format!(
            "another pglab is using {}: quit it first (it stops the cluster on exit)",
            c.name()
        ));
    }
    c.stop().map_err(|e| e.to_string())?;
    Ok(format!(
        "{} stopped (coordinator and every worker)",
        c.name()
    ))
}

/// The Citus sandboxes that are up, as lines after the single server's status.
fn clusters_up(clusters: &[CitusSandbox]) -> String {
    clusters
        .iter()
        .filter(|c| c.running())
        .map(|c| {
            format!(
                "\nalso up: {} (pglab --citus-workers {} sandbox status); pglab sandbox stop stops it too",
                c.name(),
                c.workers.len()
            )
        })
        .collect()
}

fn describe(sb: &Sandbox) -> String {
    let state = match sb.status() {
        SandboxStatus::NotCreated => {
            "not created (the first `pglab` or `pglab sandbox start` creates it)".to_string()
        }
        SandboxStatus::Broken { reason } => format!("broken: {reason}"),
        SandboxStatus::Stopped => "stopped".to_string(),
        SandboxStatus::Running { pid, port } => format!(
            "running, pid {pid}, port {port}{}{}",
            if sb.keep() {
                ", kept up (pglab sandbox stop to stop)"
            } else {
                ""
            },
            if sb.unused() {
                ""
            } else {
                ", in use by a pglab"
            }
        ),
    };
    let changed = sb.changed_settings();
    let settings = if changed.is_empty() {
        "settings: the sandbox's own".to_string()
    } else {
        let what = changed
            .iter()
            .map(|(n, v)| format!("{n} = {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        if sb.whatif_live() {
            format!("settings: a what-if run has changed {what} (it puts them back when it ends)")
        } else if sb.whatif_pending() {
            format!(
                "settings: differ from the sandbox's own: {what} (left by an interrupted what-if run; the next start puts them back)"
            )
        } else {
            format!("settings: differ from the sandbox's own (ALTER SYSTEM): {what}")
        }
    };
    let connect = match sb.status() {
        SandboxStatus::Running { port, .. } => format!("\n{}", connect_text(sb, port)),
        _ => String::new(),
    };
    format!(
        "sandbox: {state}\ndirectory: {}\nserver: PostgreSQL {} from {}{}\n{settings}{connect}",
        sb.root.display(),
        sb.bin.version,
        sb.bin.dir.display(),
        sb.run_as
            .as_ref()
            .map(|(_, _, n)| format!("\nruns as: {n} (pglab runs as root)"))
            .unwrap_or_default()
    )
}

/// The lines that say how this account connects: by the socket, and over TCP with the
/// password file (no other account can do either).
pub(super) fn connect_text(sb: &Sandbox, port: u16) -> String {
    sb.connect_lines(port)
        .into_iter()
        .map(|(how, line)| format!("{how}: {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}
