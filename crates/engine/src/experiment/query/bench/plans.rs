//! The plans a run takes on the measuring session: which statements (the measured ones, or a
//! script's SQL with the values one seeded run of its `\set`s gives), each combination's
//! `EXPLAIN ANALYZE` on its first visit, the plans under a hypothetical candidate (HypoPG),
//! and the bytes of the relations the plans read.

use std::collections::BTreeSet;

use rand::SeedableRng;

use super::Bench;
use crate::experiment::RunError;
use crate::experiment::query::report::{ComboPlan, QueryReport};
use crate::experiment::query::script::{Command, Script};
use crate::experiment::query::{QuerySpec, belts, exec, expr, guard};

/// The statements plans are taken of: the measured ones, or the script's SQL commands with
/// the values one seeded run of its `\set`s gives.
pub(crate) fn plan_statements(spec: &QuerySpec) -> Vec<(String, String)> {
    match &spec.script {
        Some(script) => {
            let values = sample_values(script, spec.seed);
            script
                .commands
                .iter()
                .filter_map(|c| match c {
                    Command::Sql { parts, line, .. } => {
                        Some((format!("line {line}"), script.render(parts, Some(&values))))
                    }
                    Command::Set { .. } => None,
                })
                .collect()
        }
        None => spec
            .statements
            .iter()
            .map(|s| (s.name.clone(), s.sql.clone()))
            .collect(),
    }
}

/// The variables after one run of a script's `\set`s (client 0, scale 1).
fn sample_values(script: &Script, seed: u64) -> Vec<i64> {
    let mut vals = vec![0i64; script.vars.len()];
    if let Some(s) = vals.get_mut(1) {
        *s = 1;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for c in &script.commands {
        if let Command::Set { var, expr, .. } = c
            && let Ok(v) = expr::eval(expr, &vals, &mut rng)
            && let Some(slot) = vals.get_mut(*var)
        {
            *slot = v;
        }
    }
    vals
}

/// Relation names a plan reads.
fn relations(v: &serde_json::Value, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(serde_json::Value::String(r)) = m.get("Relation Name") {
                out.insert(r.clone());
            }
            m.values().for_each(|x| relations(x, out));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| relations(x, out)),
        _ => {}
    }
}

impl Bench<'_> {
    /// The plans of combination `c` on its first visit: one untimed `EXPLAIN ANALYZE` per
    /// statement (a statement EXPLAIN does not take said once), refused when it wrote more
    /// temporary files than the session may; the first plan also sizes the data read.
    pub(super) async fn take_plans(
        &mut self,
        report: &mut QueryReport,
        c: usize,
        label: &str,
    ) -> Result<(), RunError> {
        for (i, (name, sql)) in plan_statements(self.spec).into_iter().enumerate() {
            if !guard::explainable(&sql) {
                if self.spec.script.is_none() && self.no_plan.insert(name.clone()) {
                    self.ctx
                        .note(format!(
                            "{name}: no plan (EXPLAIN takes SELECT, INSERT, UPDATE, DELETE, MERGE, VALUES)"
                        ))
                        .await;
                }
                continue;
            }
            // A tune's round on a warm cache: a slow statement's plan without running it.
            let analyze = !self.skips_statement(&name);
            let verb = if analyze {
                "EXPLAIN ANALYZE"
            } else {
                "EXPLAIN"
            };
            self.ctx
                .emit
                .phase(None, format!("{verb} {name} · {label}"))
                .await;
            let settings = self.spec.kept_warm.is_some() && self.ctx.server.version_num >= 120000;
            let (json, facts) = if analyze {
                exec::explain_analyze(
                    self.ctx,
                    &mut self.session,
                    (&name, &sql),
                    (self.mode, settings),
                    self.block,
                )
                .await?
            } else {
                let sql = (name.as_str(), sql.as_str());
                exec::explain_plain(self.ctx, &mut self.session, sql, settings, self.block).await?
            };
            if let Some(cap) = self.session.max_temp()
                && facts.temp_bytes > cap
            {
                let how = format!(
                    "its untimed EXPLAIN ANALYZE wrote {} of temporary files, so no trial runs",
                    crate::measure::units::format_bytes(facts.temp_bytes)
                );
                return Err(RunError::failed(belts::sentence(&name, cap, label, &how)));
            }
            if report.data_bytes == 0 {
                report.data_bytes = self.data_bytes(&json).await;
            }
            report.plans.push(ComboPlan {
                statement: i,
                name,
                combo: c,
                estimate_only: !analyze,
                facts,
                plan: json,
            });
        }
        Ok(())
    }

    /// Bytes of the relations a plan reads, with their indexes (0 when unknown).
    async fn data_bytes(&mut self, json: &serde_json::Value) -> i64 {
        let mut names = BTreeSet::new();
        relations(json, &mut names);
        let names: Vec<String> = names
            .iter()
            .map(|n| crate::sql::quote::literal(n))
            .collect();
        let sql = format!(
            "SELECT coalesce(sum(pg_total_relation_size(to_regclass(n))), 0)::int8 FROM unnest(ARRAY[{}]::text[]) AS n",
            names.join(", ")
        );
        self.session
            .exec(self.ctx, &sql)
            .await
            .ok()
            .flatten()
            .and_then(|b| b.parse().ok())
            .unwrap_or(0)
    }

    /// The plans of combination `c` under hypothetical candidate `sql` (HypoPG).
    pub(crate) async fn hypothetical(
        &mut self,
        report: &mut QueryReport,
        c: usize,
        candidate: &str,
    ) -> Result<(), RunError> {
        self.apply(c).await?;
        let label = report.combo_label(c);
        self.session.label = label.clone();
        for (i, (name, sql)) in plan_statements(self.spec).into_iter().enumerate() {
            if !guard::explainable(&sql) {
                continue;
            }
            self.ctx
                .emit
                .phase(None, format!("EXPLAIN {name} · {label} (hypothetical)"))
                .await;
            let (json, facts) = exec::explain_hypothetical(
                self.ctx,
                &mut self.session,
                (&name, &sql),
                candidate,
                self.block,
            )
            .await?;
            report.plans.push(ComboPlan {
                statement: i,
                name,
                combo: c,
                estimate_only: true,
                facts,
                plan: json,
            });
        }
        Ok(())
    }
}
