//! From setting names to the search plan, checked against the server before anything runs:
//! each setting exists, may be changed here (session settings on any server; reload and
//! restart settings on pglab's sandbox only), and each candidate value is one the server
//! accepts. What is left out is said in a sentence.

use std::collections::BTreeMap;

use tokio_postgres::Client;

use super::candidates::{self, Hardware};
use super::state::SettingPlan;
use crate::experiment::lab::whatif::catalog::{self, SettingInfo};
use crate::experiment::lab::whatif::{self, Apply, Reach, SettingsSweep};

/// The plan and the sentences about what was left out.
pub(crate) struct Planned {
    pub settings: Vec<SettingPlan>,
    pub notes: Vec<String>,
}

fn apply_of(info: &SettingInfo) -> Option<Apply> {
    match info.context.as_str() {
        "user" | "superuser" => Some(Apply::Session),
        "sighup" => Some(Apply::Reload),
        "postmaster" => Some(Apply::Restart),
        _ => None,
    }
}

/// Check `names` on the server behind `client` and give each its candidates.
pub(crate) async fn plan(
    client: &Client,
    names: &[String],
    reach: Reach,
    hw: &Hardware,
    pgtune: &BTreeMap<&'static str, String>,
) -> Result<Planned, String> {
    let all = catalog::read_all(client)
        .await
        .map_err(|e| format!("cannot read pg_settings: {e}"))?;
    let current = whatif::apply::shown(
        client,
        &names
            .iter()
            .filter(|n| all.iter().any(|s| &s.name == *n))
            .cloned()
            .collect::<Vec<_>>(),
    )
    .await
    .map_err(|e| format!("cannot read the current settings: {e}"))?;
    let mut out = Planned {
        settings: Vec::new(),
        notes: Vec::new(),
    };
    let mut needs_sandbox = Vec::new();
    for name in names {
        let Some(info) = all.iter().find(|s| &s.name == name) else {
            out.notes
                .push(format!("{name} is not a setting of this server: left out"));
            continue;
        };
        let Some(apply) = apply_of(info) else {
            out.notes.push(format!(
                "{name} cannot be changed on a running server ({}): left out",
                info.context
            ));
            continue;
        };
        if apply != Apply::Session && reach != Reach::Sandbox {
            needs_sandbox.push(name.clone());
            continue;
        }
        let Some(now) = current.get(name) else {
            continue;
        };
        let pg = pgtune.get(name.as_str()).map(String::as_str);
        let mut values = Vec::new();
        for v in candidates::candidates(name, now, pg, hw) {
            let sweep = SettingsSweep::parse(&format!("{name}={v}")).map_err(|e| e.to_string())?;
            match whatif::check(client, &sweep, reach).await {
                Ok(_) => {
                    let origin = if &v == now {
                        "current"
                    } else if pg.is_some_and(|p| candidates::is_pgtunes(p, &v)) {
                        "pgtune"
                    } else {
                        "around"
                    };
                    values.push((v, origin.to_string()));
                }
                Err(problems) => out
                    .notes
                    .push(format!("{name}={v} left out: {}", problems.join("; "))),
            }
        }
        if values.len() < 2 {
            out.notes.push(format!(
                "{name} has no value to try besides its current one ({now}): left out"
            ));
            continue;
        }
        out.settings.push(SettingPlan {
            name: name.clone(),
            apply,
            candidates: values,
        });
    }
    if !needs_sandbox.is_empty() {
        out.notes.push(format!(
            "{} need{} a reload or restart, which pglab does on its own sandbox only (pglab --sandbox tune …, on an imported copy of your data): left out on this server",
            needs_sandbox.join(", "),
            if needs_sandbox.len() == 1 { "s" } else { "" }
        ));
    }
    Ok(out)
}

/// The formula's whole set as this server can take it: pgtune's value of every setting it has
/// a formula for, left out where the server cannot change it here (reload and restart
/// settings off pglab's sandbox), where the server refuses the value, or where it is the value
/// in effect already. The notes say what was left out, so "pgtune's set" is never more than
/// what was measured.
pub(crate) async fn formula(
    client: &Client,
    reach: Reach,
    pgtune: &BTreeMap<&'static str, String>,
) -> Result<(Vec<(String, String)>, Vec<String>), String> {
    let all = catalog::read_all(client)
        .await
        .map_err(|e| format!("cannot read pg_settings: {e}"))?;
    let names: Vec<String> = pgtune.keys().map(|k| k.to_string()).collect();
    let current = whatif::apply::shown(client, &names)
        .await
        .map_err(|e| format!("cannot read the current settings: {e}"))?;
    let (mut set, mut left_out) = (Vec::new(), Vec::new());
    for (name, value) in pgtune {
        let Some(info) = all.iter().find(|s| s.name == *name) else {
            continue;
        };
        let now = current.get(*name).map(String::as_str).unwrap_or("");
        if candidates::same_value(now, value) {
            continue;
        }
        let here = apply_of(info).is_some_and(|a| a == Apply::Session || reach == Reach::Sandbox);
        let sweep = SettingsSweep::parse(&format!("{name}={value}")).map_err(|e| e.to_string())?;
        if here && whatif::check(client, &sweep, reach).await.is_ok() {
            set.push((name.to_string(), value.clone()));
        } else {
            left_out.push(format!("{name}={value}"));
        }
    }
    let mut notes = Vec::new();
    if !left_out.is_empty() {
        notes.push(format!(
            "pgtune's set is measured without {} (not changeable on this server by pglab, or refused by it)",
            left_out.join(", ")
        ));
    }
    Ok((set, notes))
}
