//! The settings of each experiment and the raw trial values measured at each: what a
//! comparison matches across two runs. Each kind reads its own from its stored trial records
//! ([`crate::experiment::lab::samples`], `KindReport::samples`).

use crate::experiment::RunReport;
pub(crate) use crate::experiment::lab::samples::Sample;

/// Every setting of a run with its trial values, in a stable order (the order of the
/// setting's dimensions, not the order the trials ran in).
pub(crate) fn samples(report: &RunReport) -> Vec<Sample> {
    report.body.facts().samples()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::ReportBody;
    use crate::experiment::index_build::Order;

    #[test]
    fn trials_under_other_server_settings_are_other_settings() {
        let mut r = crate::report::example::index_build(
            "r1",
            1000,
            &[(Order::Random, 0, "64MB", &[1.0, 1.1, 1.2, 1.3])],
        );
        let ReportBody::IndexBuild(b) = &mut r.body else {
            unreachable!()
        };
        // Two of the four builds ran with another shared_buffers (a what-if sweep).
        for (i, t) in b.trials.iter_mut().enumerate() {
            let sb = if i % 2 == 0 { "128MB" } else { "256MB" };
            t.settings.insert("shared_buffers".into(), sb.into());
        }
        let s = samples(&r);
        assert_eq!(s.len(), 2, "{s:?}");
        assert!(s.iter().all(|x| x.values.len() == 2));
        assert!(
            s[0].label.ends_with("· shared_buffers=128MB"),
            "{}",
            s[0].label
        );
        assert_ne!(s[0].key, s[1].key);
    }
}
