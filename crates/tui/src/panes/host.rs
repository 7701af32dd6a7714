//! Host pane: the machine pglab runs on (which is the server's only when the target is local),
//! live CPU, memory and disk readings, and the disk probes.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::{Metric, Series, framed_pane, metrics_grid, plain_line};
use crate::host::probe::{FsyncResult, SeqWriteResult};
use crate::host::probe_site::{ProbeSite, ServerDevice, SiteKind};
use crate::host::{HostSample, HostSnapshot};
use crate::measure::units::{format_bytes_short, format_count, format_seconds};
use crate::tui::app::{App, Focus};
use crate::tui::keys::Action;
use crate::tui::msg::{ProbeMsg, ProbeStage};
use crate::tui::text::{age, fit, pack, spinner, wrap};

#[derive(Debug, Clone, PartialEq)]
pub struct ProbeResults {
    pub seq: SeqWriteResult,
    pub fsync: FsyncResult,
    pub at: Instant,
    /// A probe of an earlier session (kept in pglab's data directory): when, and the device.
    pub saved: Option<Saved>,
}

/// Where and when a probe read back from pglab's data directory was measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    pub at: chrono::DateTime<chrono::Utc>,
    pub device: Option<String>,
}

impl ProbeResults {
    /// A probe read back at start-up.
    pub(crate) fn restored(p: crate::tui::runtime::probe_saved::SavedProbe, now: Instant) -> Self {
        ProbeResults {
            seq: p.seq,
            fsync: p.fsync,
            at: now,
            saved: Some(Saved {
                at: p.at,
                device: p.device,
            }),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeState {
    /// The step running and its fraction done.
    pub running: Option<(ProbeStage, f64)>,
    pub cancelling: bool,
    pub last: Option<ProbeResults>,
    pub error: Option<String>,
}

impl ProbeState {
    pub(crate) fn apply(&mut self, msg: ProbeMsg, now: Instant) {
        match msg {
            ProbeMsg::Progress { stage, fraction } => {
                if self.running.is_some() {
                    self.running = Some((stage, fraction));
                }
            }
            ProbeMsg::Done(Ok((seq, fsync))) => {
                self.running = None;
                self.cancelling = false;
                self.error = None;
                self.last = Some(ProbeResults {
                    seq,
                    fsync,
                    at: now,
                    saved: None,
                });
            }
            ProbeMsg::Done(Err(e)) => {
                self.running = None;
                self.cancelling = false;
                self.error = Some(e);
            }
            ProbeMsg::Cancelled => {
                self.running = None;
                self.cancelling = false;
                self.error = Some("disk probe cancelled".into());
            }
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct HostState {
    /// The target is on another machine: this pane describes pglab's.
    pub remote: bool,
    pub info: Option<HostSnapshot>,
    pub last: Option<HostSample>,
    pub cpu: Series,
    pub mem: Series,
    pub read: Series,
    pub write: Series,
    pub probe: ProbeState,
    /// On a server pglab did not start: where the disk probe writes (pglab's own directory,
    /// never the server's data directory), said on a line of its own with the device.
    pub probe_site: Option<ProbeSite>,
}

impl HostState {
    pub(crate) fn new(remote: bool) -> HostState {
        HostState {
            remote,
            ..HostState::default()
        }
    }

    pub(crate) fn push(&mut self, s: HostSample) {
        self.cpu.push(s.cpu_percent);
        self.mem.push(s.memory_used as f64);
        self.read.push(s.disk_read_bps);
        self.write.push(s.disk_write_bps);
        self.last = Some(s);
    }

    fn title_parts(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if self.remote {
            parts.push("pglab's machine".to_string());
        }
        if let Some(i) = &self.info {
            parts.push(format!(
                "{} core{}",
                i.logical_cores,
                if i.logical_cores == 1 { "" } else { "s" }
            ));
            parts.push(format_bytes_short(i.total_memory as f64));
            if let Some(d) = &i.disk {
                parts.push(d.fs_type.clone());
            }
        }
        parts
    }
}

/// Draw the pane: what the machine is and what touches the reading of it, the live metrics,
/// then the machine's details and the disk probe's line in the rows left.
pub(crate) fn render(app: &App, f: &mut Frame, area: Rect) {
    let st = &app.host;
    let theme = app.theme;
    let inner = framed_pane(app, f, Focus::Host, &st.title_parts(), area);
    let cols = inner.width as usize;
    let rows = inner.height as usize;
    if rows == 0 || cols == 0 {
        return;
    }
    let two = cols >= super::target::TWO_COLUMNS;
    let metric_rows = if two { 2 } else { 4 };
    let mut lines = machine_lines(app, cols, rows, metric_rows);
    let room = rows.saturating_sub(lines.len() + 1);
    lines.extend(
        metrics_grid(theme, &metrics(st), cols, two)
            .into_iter()
            .take(room),
    );
    probe_and_details(app, cols, rows, &mut lines);
    f.render_widget(Paragraph::new(lines), inner);
}

/// The CPU, load and cgroup limits (or that the host is being read), then, when the rows
/// allow, what the run changes and whose machine this is (a Citus target, a remote one).
fn machine_lines(app: &App, cols: usize, rows: usize, metric_rows: usize) -> Vec<Line<'static>> {
    let st = &app.host;
    let theme = app.theme;
    let mut lines: Vec<Line> = Vec::new();
    if let Some(i) = &st.info {
        let load = st.last.map(|s| s.load1).unwrap_or(i.load[0]);
        let mut items = vec![i.cpu_model.clone(), format!("load {load:.2}")];
        if let Some(c) = &i.cgroup {
            let mut lim = Vec::new();
            if let Some(cpu) = c.cpu_max {
                lim.push(format!("{cpu:.1} CPUs"));
            }
            if let Some(m) = c.memory_max {
                lim.push(format_bytes_short(m as f64));
            }
            if !lim.is_empty() {
                items.push(format!("cgroup {}", lim.join(" ")));
            }
        }
        for l in pack(&items, cols, " · ", 1) {
            lines.push(plain_line(l, theme.plain()));
        }
    } else {
        lines.push(plain_line("reading the host…".into(), theme.dim()));
    }
    if app.run.running() && !app.run.whatif.is_empty() && rows >= lines.len() + metric_rows + 2 {
        lines.push(plain_line(
            fit(&format!("this run changes {}", app.run.whatif), cols),
            theme.warn(),
        ));
    }
    let citus = app.target.latest.as_ref().and_then(|s| s.citus.as_ref());
    if let Some(c) = citus
        && rows > lines.len() + metric_rows
    {
        lines.push(plain_line(
            fit(&format!("Citus target: {}", c.host_note()), cols),
            theme.warn(),
        ));
    } else if st.remote && rows >= lines.len() + metric_rows + 2 {
        lines.push(plain_line(
            fit(
                "the target is remote: this is pglab's machine, not the server",
                cols,
            ),
            theme.warn(),
        ));
    }
    lines
}

/// The live metrics: CPU, memory used, disk reads and writes ("–" before the first reading).
fn metrics(st: &HostState) -> [Metric<'_>; 4] {
    let last = st.last;
    let total = last.map(|s| s.memory_total as f64);
    [
        Metric {
            label: "cpu",
            series: &st.cpu,
            max: Some(100.0),
            value: last
                .map(|s| format!("{:.0}%", s.cpu_percent))
                .unwrap_or_else(|| "–".into()),
        },
        Metric {
            label: "mem used",
            series: &st.mem,
            max: total,
            value: last
                .map(|s| format_bytes_short(s.memory_used as f64))
                .unwrap_or_else(|| "–".into()),
        },
        Metric {
            label: "disk r",
            series: &st.read,
            max: None,
            value: last
                .map(|s| format!("{}/s", format_bytes_short(s.disk_read_bps)))
                .unwrap_or_else(|| "–".into()),
        },
        Metric {
            label: "disk w",
            series: &st.write,
            max: None,
            value: last
                .map(|s| format!("{}/s", format_bytes_short(s.disk_write_bps)))
                .unwrap_or_else(|| "–".into()),
        },
    ]
}

/// The disk probe's state in a sentence, in its style: running (or cancelling), failed,
/// its last results, or how to start it.
fn probe_text(app: &App) -> (String, Style) {
    let probe = &app.host.probe;
    let theme = app.theme;
    if let Some((stage, frac)) = probe.running {
        let what = if probe.cancelling {
            "cancelling the disk probe…".to_string()
        } else {
            format!(
                "{} probing {} {:.0}% · {} cancels",
                spinner(app.tick()),
                stage.label(),
                frac * 100.0,
                app.keys.label(Action::Cancel)
            )
        };
        (what, theme.accent())
    } else if let Some(e) = &probe.error {
        (
            format!("{e} · {} probes again", app.keys.label(Action::Probe)),
            theme.warn(),
        )
    } else if let Some(r) = &probe.last {
        (
            format!(
                "seq write {:.0} MB/s · fsync {}/s, p99 {} · {}",
                r.seq.mb_per_s,
                format_count(r.fsync.ops_per_s.round()),
                format_seconds(r.fsync.p99_us / 1e6),
                match &r.saved {
                    // From an earlier session: its date and the device it measured.
                    Some(s) => format!(
                        "measured {}{}",
                        s.at.format("%Y-%m-%d %H:%M UTC"),
                        s.device
                            .as_deref()
                            .map(|d| format!(" on {d}"))
                            .unwrap_or_default()
                    ),
                    None => age(app.now.saturating_duration_since(r.at).as_secs_f64()),
                }
            ),
            theme.plain(),
        )
    } else {
        (
            format!(
                "disk not probed yet: {} measures write speed and fsync latency",
                app.keys.label(Action::Probe)
            ),
            theme.dim(),
        )
    }
}

/// The probe line(s) last; what the machine runs in the rows left over.
fn probe_and_details(app: &App, cols: usize, rows: usize, lines: &mut Vec<Line<'static>>) {
    let st = &app.host;
    let (text, style) = probe_text(app);
    let room = rows.saturating_sub(lines.len());
    let mut probe_lines = wrap(&text, cols, 2);
    if probe_lines.len() > room {
        probe_lines = vec![fit(&text, cols)];
    }
    let mut extra = Vec::new();
    // On a server pglab did not start, where the probe writes comes first: pglab's own
    // directory, never the server's data directory.
    if let Some(site) = &st.probe_site {
        extra.push(site_line(site, cols));
    }
    if let Some(i) = &st.info {
        if let Some(d) = &i.disk {
            extra.push(format!(
                "data dir on {} {} ({})",
                d.fs_type,
                d.device,
                format_bytes_short(d.total_bytes as f64)
            ));
        }
        extra.push(format!("{} · kernel {}", i.os, i.kernel));
    }
    let extra_rows = room.saturating_sub(probe_lines.len());
    for e in extra.into_iter().take(extra_rows) {
        lines.push(plain_line(fit(&e, cols), app.theme.dim()));
    }
    for l in probe_lines.into_iter().take(room) {
        lines.push(plain_line(l, style));
    }
}

/// Where the disk probe writes, in the longest of a few wordings that fits `cols`: "probes
/// pglab's dir on /dev/vda, the server's disk" down to "pglab's dir /dev/vda, server's".
fn site_line(site: &ProbeSite, cols: usize) -> String {
    let whose = match site.kind {
        SiteKind::Named => "--probe-dir",
        SiteKind::DataDir | SiteKind::Sandbox => "pglab's dir",
    };
    let dev = site.device_name().unwrap_or("an unknown device");
    let (long, short) = match site.server_device {
        ServerDevice::Same => ("the server's disk", "server's"),
        ServerDevice::Other => ("not the server's disk", "not server's"),
        ServerDevice::Unknown => ("the server's disk unknown", "server's?"),
        ServerDevice::Remote => ("the server is remote", "server remote"),
    };
    let candidates = [
        format!("probes {whose} on {dev}, {long}"),
        format!("probes {whose} on {dev} ({short})"),
        format!("{whose} on {dev} ({short})"),
        format!("{whose} {dev}, {short}"),
    ];
    candidates
        .iter()
        .find(|c| c.chars().count() <= cols)
        .cloned()
        .unwrap_or_else(|| fit(&candidates[3], cols))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_site_line_says_whose_directory_and_which_device_at_any_width() {
        let site = ProbeSite {
            dir: "/var/lib/pglab".into(),
            kind: SiteKind::DataDir,
            device: Some("ext4 on /dev/vda".into()),
            server_device: ServerDevice::Same,
        };
        assert_eq!(
            site_line(&site, 60),
            "probes pglab's dir on /dev/vda, the server's disk"
        );
        // The Host pane at 80×24 has 37 columns.
        assert_eq!(site_line(&site, 37), "pglab's dir on /dev/vda (server's)");
        let other = ProbeSite {
            server_device: ServerDevice::Other,
            ..site
        };
        let line = site_line(&other, 37);
        assert!(
            line.contains("/dev/vda") && line.contains("not server's"),
            "{line}"
        );
        assert!(line.chars().count() <= 37);
    }
}
