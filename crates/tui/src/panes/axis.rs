//! What the run pane puts on its x axis: the experiment's own setting (`maintenance_work_mem`,
//! batch, versions) with one series per order/method/design and swept server settings, or —
//! when the run sweeps server settings (`set`) — those settings, one category each, with one
//! series per value of the experiment's own setting. The summary then ranks the settings
//! combinations within a series in the order they were listed (the first is the one to keep
//! on a tie), and the chart draws them side by side.
//!
//! Until `a` is pressed the pane chooses: the swept settings when they are the only thing
//! that varies (the experiment's own setting has one value), else the own setting.
//!
//! A combination is shown by its values ("128MB · pglz"); the names, the same for every
//! combination, are said once: in the axis title, or in the series column's header.

use crate::experiment::{ResultLayout, Sample};
use crate::tui::text::with_unit;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Axis {
    /// The experiment's own x.
    #[default]
    Own,
    /// The swept server settings.
    Settings,
}

/// The axis shown: the user's choice (`a`), else the settings when only they vary.
pub(crate) fn effective(choice: Option<Axis>, samples: &[Sample]) -> Axis {
    match choice {
        Some(a) => a,
        None if only_settings_vary(samples) => Axis::Settings,
        None => Axis::Own,
    }
}

/// The series of a sample without its settings combination ("random", "copy, 2 clients, sync=on").
fn base(s: &Sample) -> &str {
    s.series
        .strip_suffix(&format!(" · {}", s.settings))
        .unwrap_or(&s.series)
}

/// True when the samples sweep server settings and each series measured one own x only.
fn only_settings_vary(samples: &[Sample]) -> bool {
    let measured: Vec<&Sample> = samples.iter().filter(|s| !s.projected).collect();
    if measured.iter().all(|s| s.settings.is_empty()) {
        return false;
    }
    measured.iter().all(|s| {
        measured
            .iter()
            .filter(|o| base(o) == base(s))
            .all(|o| o.x == s.x)
    })
}

/// The name=value pairs of a combination label (`a=1 b=x`).
fn pairs(settings: &str) -> Vec<(&str, &str)> {
    settings
        .split(' ')
        .filter_map(|p| p.split_once('='))
        .collect()
}

/// The swept settings' names, said once: "shared_buffers", "a · b".
pub(crate) fn names(settings: &str) -> String {
    pairs(settings)
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(" · ")
}

/// A combination by its values: "128MB", "1 · x" (the label itself when it has no pairs).
pub(crate) fn values(settings: &str) -> String {
    let p = pairs(settings);
    if p.is_empty() {
        return settings.to_string();
    }
    p.iter().map(|(_, v)| *v).collect::<Vec<_>>().join(" · ")
}

/// The swept settings' names in these samples ("" when none).
pub(crate) fn swept_names(samples: &[Sample]) -> String {
    samples
        .iter()
        .find(|s| !s.settings.is_empty())
        .map(|s| names(&s.settings))
        .unwrap_or_default()
}

/// The layout and samples for the axis (unchanged for runs that sweep no server settings).
pub(crate) fn view(
    axis: Axis,
    layout: &ResultLayout,
    samples: &[Sample],
) -> (ResultLayout, Vec<Sample>) {
    if samples.iter().all(|s| s.settings.is_empty()) {
        return (layout.clone(), samples.to_vec());
    }
    if axis == Axis::Own {
        let out = samples
            .iter()
            .map(|s| {
                let series = if s.settings.is_empty() {
                    s.series.clone()
                } else {
                    format!("{} · {}", base(s), values(&s.settings))
                };
                Sample {
                    series,
                    ..s.clone()
                }
            })
            .collect();
        return (layout.clone(), out);
    }
    let mut combos: Vec<String> = Vec::new();
    for s in samples {
        if !combos.contains(&s.settings) {
            combos.push(s.settings.clone());
        }
    }
    let single_own = only_settings_vary(samples);
    let out = samples
        .iter()
        .map(|s| {
            let own = if layout.x_names.is_empty() {
                with_unit(s.x, &layout.x_unit)
            } else {
                layout
                    .x_names
                    .get(s.x as usize)
                    .cloned()
                    .unwrap_or_default()
            };
            Sample {
                series: if single_own {
                    base(s).to_string()
                } else {
                    format!("{} @ {own}", base(s))
                },
                x: combos.iter().position(|n| n == &s.settings).unwrap_or(0) as f64,
                ..s.clone()
            }
        })
        .collect();
    let layout = ResultLayout {
        x_label: combos.first().map(|c| names(c)).unwrap_or_default(),
        x_unit: String::new(),
        x_log: false,
        x_names: combos.iter().map(|c| values(c)).collect(),
        ..layout.clone()
    };
    (layout, out)
}

/// The name of `x` on this layout's axis: a category's name, or the number in its unit.
pub(crate) fn x_text(layout: &ResultLayout, x: f64) -> String {
    if layout.x_names.is_empty() {
        with_unit(x, &layout.x_unit)
    } else {
        layout
            .x_names
            .get(x.round().max(0.0) as usize)
            .cloned()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(series: &str, x: f64, settings: &str) -> Sample {
        Sample {
            series: if settings.is_empty() {
                series.into()
            } else {
                format!("{series} · {settings}")
            },
            x,
            y: 1.0,
            projected: false,
            cells: vec![],
            settings: settings.into(),
            ..Default::default()
        }
    }

    #[test]
    fn settings_become_the_categories_and_the_own_x_the_series() {
        let layout = crate::experiment::index_build::layout();
        let mb = 1024.0 * 1024.0;
        let samples = [
            sample("random", 16.0 * mb, "wal_compression=off"),
            sample("random", 16.0 * mb, "wal_compression=pglz"),
            sample("random", 64.0 * mb, "wal_compression=off"),
        ];
        let (l, s) = view(Axis::Settings, &layout, &samples);
        assert_eq!(l.x_names, ["off", "pglz"]);
        assert_eq!(l.x_label, "wal_compression");
        assert!(!l.x_log);
        assert_eq!(s[0].series, s[1].series);
        assert_eq!(s[0].series, "random @ 16 MB");
        assert_eq!((s[0].x, s[1].x, s[2].x), (0.0, 1.0, 0.0));
        assert_ne!(s[0].series, s[2].series);
        assert_eq!(x_text(&l, 1.0), "pglz");
        // On the own axis the series name the combination by its values.
        let (_, s) = view(Axis::Own, &layout, &samples);
        assert_eq!(s[1].series, "random · pglz");
        assert_eq!(swept_names(&samples), "wal_compression");
        // Nothing swept: the own axis whatever was asked.
        let plain = [sample("random", 16.0 * mb, "")];
        assert_eq!(view(Axis::Settings, &layout, &plain).0, layout);
        assert_eq!(effective(None, &plain), Axis::Own);
    }

    #[test]
    fn the_settings_axis_is_chosen_when_only_the_settings_vary() {
        let mb = 1024.0 * 1024.0;
        let one_own = [
            sample("random", 64.0 * mb, "shared_buffers=128MB"),
            sample("random", 64.0 * mb, "shared_buffers=256MB"),
            sample("sorted", 64.0 * mb, "shared_buffers=128MB"),
            sample("sorted", 64.0 * mb, "shared_buffers=256MB"),
        ];
        assert_eq!(effective(None, &one_own), Axis::Settings);
        assert_eq!(effective(Some(Axis::Own), &one_own), Axis::Own);
        let layout = crate::experiment::index_build::layout();
        let (l, s) = view(Axis::Settings, &layout, &one_own);
        // One own value: the series need not repeat it.
        assert_eq!(s[0].series, "random");
        assert_eq!(l.x_names, ["128MB", "256MB"]);
        let two_own = [
            sample("random", 1.0 * mb, "shared_buffers=128MB"),
            sample("random", 64.0 * mb, "shared_buffers=256MB"),
        ];
        assert_eq!(effective(None, &two_own), Axis::Own);
        assert_eq!(values("a=1 b=x"), "1 · x");
        assert_eq!(names("a=1 b=x"), "a · b");
    }
}
