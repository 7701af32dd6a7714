//! What runs on the sandbox's standbys beside a query run: the swept distance
//! (`--standby-rtt`) and a fault during each throughput trial (`--standby-fault`), both set
//! up before the first trial (refused off pglab's sandbox) and put back when the run ends,
//! however it ends; with both, a stopped standby comes back at the trial's distance.

use super::spec::QuerySpec;
use crate::experiment::lab::standby_beside;
use crate::experiment::lab::standby_fault::Injector;
use crate::experiment::lab::standby_rtt::{self, Distance};
use crate::experiment::lab::{RunCtx, RunError};

#[derive(Default)]
pub(crate) struct Standbys {
    pub distance: Option<Distance>,
    pub fault: Option<Injector>,
}

impl Standbys {
    pub(crate) async fn for_run(ctx: &RunCtx, spec: &QuerySpec) -> Result<Standbys, RunError> {
        let distance = Distance::for_run(ctx, &spec.set)?;
        let fault = standby_beside::fault_of(ctx, spec.fault).await?;
        Ok(Standbys { distance, fault })
    }

    /// After a combination was entered: the standbys at its distance, where a stopped
    /// standby is put back too.
    pub(crate) async fn follow(&self, ctx: &RunCtx) -> Result<(), RunError> {
        let Some(d) = &self.distance else {
            return Ok(());
        };
        d.follow(ctx).await?;
        if let (Some(f), Some(rtt)) = (&self.fault, standby_rtt::rtt_of(&ctx.whatif.combo())) {
            f.at_distance(rtt);
        }
        Ok(())
    }

    /// Every standby running and replaying, then back at its own distance (in this order:
    /// putting a faulted standby back starts it at the trial's distance).
    pub(crate) async fn put_back(&self, ctx: &RunCtx) {
        standby_beside::put_back(ctx, self.fault.as_ref()).await;
        standby_rtt::put_back(ctx, self.distance.as_ref()).await;
    }
}

#[cfg(test)]
mod tests {
    use crate::experiment::lab::field::ParamText;
    use crate::experiment::lab::spec::ExperimentKind;

    fn refusal(pairs: &[(&str, &str)]) -> Option<String> {
        let p: ParamText = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let e = ExperimentKind::Query.parse_spec(&p).err()?;
        e.into_iter()
            .find(|(k, _)| k == "standby-fault")
            .map(|(_, why)| why)
    }

    #[test]
    fn a_fault_needs_throughput_trials_and_the_levels_to_show() {
        let sql = ("sql", "INSERT INTO t VALUES (1)");
        let fault = ("standby-fault", "stop-at=1s,for=2s");
        let e = refusal(&[sql, fault, ("sync-commit", "local,on")]).unwrap();
        assert!(e.contains("give --clients"), "{e}");
        let e = refusal(&[sql, fault, ("clients", "1")]).unwrap();
        assert!(e.contains("give the levels with --sync-commit"), "{e}");
        let e = refusal(&[sql, ("standby-fault", "stop-at=20s"), ("clients", "1")]).unwrap();
        assert!(e.contains("never happen"), "{e}");
        let ok = [sql, fault, ("clients", "1"), ("sync-commit", "local,on")];
        assert_eq!(refusal(&ok), None);
        let spec = crate::experiment::query::test_spec(&ok);
        assert_eq!(spec.to_text()["standby-fault"], "stop-at=1s,for=2s");
        let again = crate::experiment::query::QuerySpec::parse(&spec.to_text()).unwrap();
        assert_eq!(again, spec);
    }
}
