//! From a settings sweep to a plan, before anything runs: every name exists on this server,
//! every value fits, `all` and `N%ram` are written out, and each setting's `context` says how
//! it is applied (reloads and restarts only on pglab's own sandbox). One sentence per problem.

use tokio_postgres::Client;

use super::catalog::{self, SettingInfo};
use super::plan::{Apply, PlannedSetting, Reach, WhatIf};
use super::sweep::SettingsSweep;
use crate::sql::settings::SessionSettings;

/// Check a sweep against the server behind `client`; `reach` says whether reloads and
/// restarts are allowed there. Err: one sentence per problem.
pub(crate) async fn check(
    client: &Client,
    sweep: &SettingsSweep,
    reach: Reach,
) -> Result<WhatIf, Vec<String>> {
    if sweep.is_empty() {
        return Ok(WhatIf::none());
    }
    let mut all = catalog::read_all(client)
        .await
        .map_err(|e| vec![format!("cannot read pg_settings: {e}")])?;
    super::super::standby_rtt::known(&mut all, sweep, reach).map_err(|e| vec![e])?;
    let ram = tokio::task::spawn_blocking(crate::host::snapshot::total_memory)
        .await
        .unwrap_or(0);
    let sweep = expand(&all, sweep, ram)?;
    let plan = check_against(&all, &sweep, reach)?;
    // Session settings: the server itself has the last word on the value and on whether this
    // role may set it, in a transaction that changes nothing.
    let mut problems = Vec::new();
    for s in plan.settings.iter().filter(|s| s.apply == Apply::Session) {
        for v in &s.values {
            if let Err(e) = dry_run_set(client, &s.name, v).await {
                problems.push(format!("{}={v}: {e}", s.name));
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(plan)
}

/// Values that stand for others, written out: `all` (every value of an on/off or enum
/// setting, the server's current one first) and `N%ram` (a memory setting as a share of this
/// host's memory, in whole MB).
pub(crate) fn expand(
    all: &[SettingInfo],
    sweep: &SettingsSweep,
    ram: u64,
) -> Result<SettingsSweep, Vec<String>> {
    let mut problems = Vec::new();
    let mut out = sweep.clone();
    for item in &mut out.items {
        let Some(info) = all.iter().find(|s| s.name.eq_ignore_ascii_case(&item.name)) else {
            continue; // named in check_against
        };
        let mut values = Vec::new();
        for v in &item.values {
            if v.eq_ignore_ascii_case("all") {
                let mut every: Vec<String> = match info.vartype.as_str() {
                    "bool" => vec!["on".into(), "off".into()],
                    // pg_settings lists the visible values only (hidden spellings such as
                    // `true` are left out); `on` can be a value of its own (huge_pages) or an
                    // alias (wal_compression's pglz): it stays, an A/A pair at worst.
                    "enum" => info.enumvals.clone(),
                    _ => {
                        problems.push(format!(
                            "{}=all: 'all' lists the values of an on/off or enum setting; {} is {}",
                            item.name, item.name, info.vartype
                        ));
                        continue;
                    }
                };
                let current = info.normalize(&info.setting).unwrap_or_default();
                if let Some(i) = every.iter().position(|e| info.same(e, &current)) {
                    let c = every.remove(i);
                    every.insert(0, c);
                } else if info.vartype == "enum" && !info.setting.is_empty() {
                    every.insert(0, info.setting.clone());
                }
                values.extend(every);
            } else if let Some(pct) = v
                .strip_suffix("%ram")
                .or_else(|| v.strip_suffix("%RAM"))
                .and_then(|p| p.trim().parse::<f64>().ok())
            {
                if ram == 0 || !(0.0..=100.0).contains(&pct) || !info.is_memory() {
                    problems.push(format!(
                        "{}={v}: N%ram is a share (0–100%) of this host's memory for a memory setting{}",
                        item.name,
                        if ram == 0 { " (this host's memory cannot be read)" } else { "" }
                    ));
                    continue;
                }
                let mb = (ram as f64 * pct / 100.0 / (1024.0 * 1024.0)).floor() as u64;
                values.push(format!("{mb}MB"));
            } else {
                values.push(v.clone());
            }
        }
        let mut unique = Vec::new();
        for v in values {
            if !unique.contains(&v) {
                unique.push(v);
            }
        }
        item.values = unique;
    }
    if out.combo_count() > super::sweep::MAX_COMBOS {
        problems.push(format!(
            "{} combinations of settings once 'all' is written out: at most {}",
            out.combo_count(),
            super::sweep::MAX_COMBOS
        ));
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

async fn dry_run_set(client: &Client, name: &str, value: &str) -> Result<(), String> {
    let mut one = SessionSettings::new();
    one.set(name, value);
    let r = match client.batch_execute("BEGIN").await {
        Ok(()) => one.apply_local(client).await,
        Err(e) => Err(e),
    };
    let _ = client.batch_execute("ROLLBACK").await;
    r.map_err(|e| {
        e.as_db_error()
            .map(|d| {
                let mut m = d.message().to_string();
                if let Some(h) = d.hint() {
                    m.push_str(&format!(" ({h})"));
                }
                m
            })
            .unwrap_or_else(|| e.to_string())
    })
}

/// The checks that need only `pg_settings` (pure: tested without a server).
pub(crate) fn check_against(
    all: &[SettingInfo],
    sweep: &SettingsSweep,
    reach: Reach,
) -> Result<WhatIf, Vec<String>> {
    let mut problems = Vec::new();
    let mut settings = Vec::new();
    for item in &sweep.items {
        let Some(info) = all.iter().find(|s| s.name.eq_ignore_ascii_case(&item.name)) else {
            let near = catalog::closest(&item.name, all.iter().map(|s| s.name.as_str()));
            problems.push(if near.is_empty() {
                format!(
                    "this server has no setting {}: see SHOW ALL for the names",
                    item.name
                )
            } else {
                format!(
                    "this server has no setting {}: did you mean {}?",
                    item.name,
                    near.join(", ")
                )
            });
            continue;
        };
        for v in &item.values {
            if let Err(e) = info.check(v) {
                problems.push(e);
            }
        }
        let apply = match info.context.as_str() {
            "user" | "superuser" => Apply::Session,
            "sighup" => Apply::Reload,
            "postmaster" => Apply::Restart,
            "internal" => {
                problems.push(format!(
                    "{} cannot be changed: it is fixed when PostgreSQL is built or the cluster is created",
                    item.name
                ));
                continue;
            }
            other => {
                problems.push(format!(
                    "{} can only be set when a session starts (context {other}); pglab sweeps settings a session, a reload or a restart can change",
                    item.name
                ));
                continue;
            }
        };
        if apply != Apply::Session && reach == Reach::Cluster {
            problems.push(format!(
                "{} has context {}: on the Citus sandbox pglab would change the coordinator only, not its workers; sweep it on the single-server sandbox (without --citus-workers), or SET-able settings here",
                item.name, info.context
            ));
            continue;
        }
        if apply != Apply::Session && reach == Reach::Other {
            let how = if apply == Apply::Reload {
                "a configuration reload"
            } else {
                "a server restart"
            };
            problems.push(format!(
                "{} has context {}: changing it needs {how}, and pglab never changes or restarts a server it did not start; run it on the sandbox: pglab --sandbox run … --set {}",
                item.name,
                info.context,
                sweep
                    .items
                    .iter()
                    .find(|i| i.name == item.name)
                    .map(|i| format!("{}={}", i.name, i.values.join(",")))
                    .unwrap_or_default()
            ));
            continue;
        }
        settings.push(PlannedSetting {
            name: item.name.clone(),
            values: item.values.clone(),
            context: info.context.clone(),
            apply,
            info: Some(info.clone()),
        });
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(WhatIf {
        settings,
        combos: sweep.combos(),
        sweep: sweep.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str, context: &str, vartype: &str, unit: Option<&str>) -> SettingInfo {
        SettingInfo {
            name: name.into(),
            setting: String::new(),
            unit: unit.map(String::from),
            context: context.into(),
            vartype: vartype.into(),
            min: Some(2.0),
            max: Some(2147483647.0),
            enumvals: vec!["off".into(), "pglz".into()],
        }
    }

    fn catalog() -> Vec<SettingInfo> {
        vec![
            info("work_mem", "user", "integer", Some("kB")),
            info("wal_compression", "superuser", "enum", None),
            info("max_wal_size", "sighup", "integer", Some("MB")),
            info("shared_buffers", "postmaster", "integer", Some("8kB")),
            info("block_size", "internal", "integer", None),
            info("log_connections", "superuser-backend", "bool", None),
        ]
    }

    fn sweep(s: &str) -> SettingsSweep {
        SettingsSweep::parse(s).unwrap()
    }

    #[test]
    fn contexts_decide_how_a_setting_is_applied() {
        let p = check_against(
            &catalog(),
            &sweep("work_mem=4MB,64MB max_wal_size=1GB,16GB shared_buffers=128MB,256MB"),
            Reach::Sandbox,
        )
        .unwrap();
        let applies: Vec<Apply> = p.settings.iter().map(|s| s.apply).collect();
        assert_eq!(applies, [Apply::Session, Apply::Reload, Apply::Restart]);
        assert_eq!(p.combos.len(), 8);
        assert!(p.restarts() && p.changes_server());
        assert_eq!(
            p.session_settings(0).pairs(),
            [("work_mem".to_string(), "4MB".to_string())]
        );
        assert_eq!(
            p.server_part(0),
            vec![
                ("max_wal_size".to_string(), "1GB".to_string()),
                ("shared_buffers".to_string(), "128MB".to_string())
            ]
        );
        // Combinations 0 and 2 share shared_buffers=128MB: one restart block.
        assert_eq!(p.block_of(2), p.block_of(0));
        assert_ne!(p.block_of(1), p.block_of(0));
    }

    #[test]
    fn a_server_pglab_did_not_start_is_never_reconfigured() {
        let e = check_against(
            &catalog(),
            &sweep("shared_buffers=128MB,256MB"),
            Reach::Other,
        )
        .unwrap_err();
        assert_eq!(e.len(), 1);
        assert!(
            e[0].starts_with(
                "shared_buffers has context postmaster: changing it needs a server restart"
            ),
            "{}",
            e[0]
        );
        assert!(e[0].contains("pglab --sandbox run … --set shared_buffers=128MB,256MB"));
        let e = check_against(&catalog(), &sweep("max_wal_size=1GB"), Reach::Other).unwrap_err();
        assert!(e[0].contains("a configuration reload"));
        // Session settings run anywhere.
        assert!(check_against(&catalog(), &sweep("work_mem=1MB"), Reach::Other).is_ok());
    }

    #[test]
    fn each_problem_gets_a_sentence() {
        let e = check_against(
            &catalog(),
            &sweep("wal_compresion=off max_wal_size=1XB block_size=16 log_connections=on shared_buffers=1kB"), Reach::Sandbox)
        .unwrap_err();
        assert_eq!(e.len(), 5, "{e:?}");
        assert!(e[0].contains("did you mean wal_compression"), "{}", e[0]);
        assert!(e[1].contains("not a size unit"), "{}", e[1]);
        assert!(e[2].contains("cannot be changed"), "{}", e[2]);
        assert!(
            e[3].contains("only be set when a session starts"),
            "{}",
            e[3]
        );
        assert!(e[4].contains("below the minimum"), "{}", e[4]);
    }

    #[test]
    fn all_and_a_share_of_ram_are_written_out() {
        let mut wc = info("wal_compression", "superuser", "enum", None);
        wc.enumvals = vec![
            "pglz".into(),
            "lz4".into(),
            "zstd".into(),
            "on".into(),
            "off".into(),
        ];
        wc.setting = "off".into();
        let all = vec![
            wc,
            info("shared_buffers", "postmaster", "integer", Some("8kB")),
        ];
        let s = expand(
            &all,
            &sweep("wal_compression=all shared_buffers=128MB,25%ram"),
            8 * 1024 * 1024 * 1024,
        )
        .unwrap();
        assert_eq!(
            s.text(),
            "wal_compression=off,pglz,lz4,zstd,on shared_buffers=128MB,2048MB"
        );
        let e = expand(&all, &sweep("shared_buffers=all"), 1 << 30).unwrap_err();
        assert!(e[0].contains("on/off or enum"), "{e:?}");
        let e = expand(&all, &sweep("wal_compression=50%ram"), 1 << 30).unwrap_err();
        assert!(e[0].contains("memory setting"), "{e:?}");
    }

    #[test]
    fn the_citus_sandbox_sweeps_session_settings_only() {
        let e =
            check_against(&catalog(), &sweep("max_wal_size=1GB,2GB"), Reach::Cluster).unwrap_err();
        assert!(e[0].contains("coordinator only"), "{e:?}");
        assert!(check_against(&catalog(), &sweep("work_mem=1MB"), Reach::Cluster).is_ok());
    }
}
