//! What the run pane puts on its x axis: the experiment's own setting (`maintenance_work_mem`,
//! batch, rows) with one series per order/method/design and swept server settings, or — when
//! the run sweeps server settings (`--set`) — those settings, one category each, with one
//! series per value of the experiment's own setting. The summary then ranks the settings
//! combinations within a series in the order they were listed (the first is the one to keep
//! on a tie), and the chart draws them side by side.

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

/// The layout and samples for the chosen axis (unchanged for [`Axis::Own`] and for runs that
/// sweep no server settings).
pub fn view(axis: Axis, layout: &ResultLayout, samples: &[Sample]) -> (ResultLayout, Vec<Sample>) {
    if axis == Axis::Own || samples.iter().all(|s| s.settings.is_empty()) {
        return (layout.clone(), samples.to_vec());
    }
    let mut names: Vec<String> = Vec::new();
    for s in samples {
        if !names.contains(&s.settings) {
            names.push(s.settings.clone());
        }
    }
    let out = samples
        .iter()
        .map(|s| {
            let base = s
                .series
                .strip_suffix(&format!(" · {}", s.settings))
                .unwrap_or(&s.series);
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
                series: format!("{base} @ {own}"),
                x: names.iter().position(|n| n == &s.settings).unwrap_or(0) as f64,
                ..s.clone()
            }
        })
        .collect();
    let layout = ResultLayout {
        x_label: "settings".into(),
        x_unit: String::new(),
        x_log: false,
        x_names: names,
        ..layout.clone()
    };
    (layout, out)
}

/// The name of `x` on this layout's axis: a category's name, or the number in its unit.
pub fn x_text(layout: &ResultLayout, x: f64) -> String {
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
        assert_eq!(l.x_names, ["wal_compression=off", "wal_compression=pglz"]);
        assert!(!l.x_log);
        assert_eq!(s[0].series, s[1].series);
        assert_eq!((s[0].x, s[1].x, s[2].x), (0.0, 1.0, 0.0));
        assert_ne!(s[0].series, s[2].series);
        assert_eq!(x_text(&l, 1.0), "wal_compression=pglz");
        // Nothing swept: the own axis whatever was asked.
        let plain = [sample("random", 16.0 * mb, "")];
        assert_eq!(view(Axis::Settings, &layout, &plain).0, layout);
    }
}
