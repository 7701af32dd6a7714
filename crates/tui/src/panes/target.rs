//! Target pane: where pglab is connected, the server's state and settings, live rates.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Metric, Series, framed_pane, metrics_grid, plain_line};
use crate::measure::units::{format_bytes_short, format_rate};
use crate::server::snapshot::Rates;
use crate::server::{Location, ServerSnapshot};
use crate::tui::app::{App, Focus};
use crate::tui::msg::ServerMsg;
use crate::tui::text::{fit, pack, wrap};

/// The settings shown, most relevant first, with the short label used on screen.
const SHOWN: &[(&str, &str)] = &[
    ("shared_buffers", "shared_buffers"),
    ("maintenance_work_mem", "maintenance_work_mem"),
    ("max_parallel_maintenance_workers", "max_parallel_maint"),
    ("work_mem", "work_mem"),
    ("synchronous_commit", "synchronous_commit"),
    ("fsync", "fsync"),
    ("wal_level", "wal_level"),
    ("max_wal_size", "max_wal_size"),
    ("checkpoint_timeout", "checkpoint_timeout"),
    ("max_worker_processes", "max_worker_processes"),
    ("max_parallel_workers", "max_parallel_workers"),
    ("effective_io_concurrency", "effective_io_concurrency"),
    ("max_connections", "max_connections"),
    ("autovacuum", "autovacuum"),
];

/// From this inner width the live readings sit two to a row.
pub(crate) const TWO_COLUMNS: usize = 44;

#[derive(Debug, Clone, PartialEq)]
pub enum Connection {
    Connecting,
    Up,
    Lost { error: String, retry_at: Instant },
}

#[derive(Debug, Clone)]
pub struct TargetState {
    pub location: Location,
    pub latest: Option<ServerSnapshot>,
    pub connection: Connection,
    pub rates: Option<Rates>,
    pub commits: Series,
    pub wal: Series,
    pub temp: Series,
    pub hit: Series,
    /// Readings taken before this are not the start of a rate: pglab's own start-up
    /// transactions (opening the target, looking for leftovers) reach `pg_stat_database` up
    /// to a second after they end (PostgreSQL 15 flushes a session's counters at most once a
    /// second), and an idle server must read idle.
    pub rates_from: Option<Instant>,
}

impl TargetState {
    pub(crate) fn new(location: Location) -> TargetState {
        TargetState {
            location,
            latest: None,
            connection: Connection::Connecting,
            rates: None,
            commits: Series::default(),
            wal: Series::default(),
            temp: Series::default(),
            hit: Series::default(),
            rates_from: None,
        }
    }

    pub(crate) fn is_up(&self) -> bool {
        self.connection == Connection::Up
    }

    pub(crate) fn apply(&mut self, msg: ServerMsg, now: Instant) {
        match msg {
            ServerMsg::Snapshot(s) => {
                // A reading before `rates_from` is no baseline: it would count pglab's own
                // start-up transactions as the server's.
                let baseline = self
                    .latest
                    .as_ref()
                    .filter(|p| match (self.rates_from, p.taken) {
                        (Some(from), Some(taken)) => taken >= from,
                        _ => true,
                    });
                if let Some(prev) = baseline
                    && let Some(r) = s.rates_since(prev)
                {
                    self.commits.push(r.commits_per_s);
                    self.wal.push(r.wal_bytes_per_s);
                    self.temp.push(r.temp_bytes_per_s);
                    self.hit
                        .push(r.cache_hit.map(|h| h * 100.0).unwrap_or(f64::NAN));
                    self.rates = Some(r);
                }
                self.latest = Some(*s);
                self.connection = Connection::Up;
            }
            ServerMsg::Lost { error, retry_in } => {
                self.connection = Connection::Lost {
                    error,
                    retry_at: now + retry_in,
                };
            }
        }
    }

    fn title_parts(&self) -> Vec<String> {
        let place = match &self.location {
            Location::Sandbox { .. } => "sandbox".to_string(),
            Location::Socket { port, .. } => format!("local socket :{port}"),
            Location::Localhost { host, port } => format!("{host}:{port}"),
            Location::Remote { host, port } => format!("{host}:{port} (remote)"),
        };
        let mut parts = vec![place];
        if let Some(s) = &self.latest {
            let v = s.version.split_whitespace().next().unwrap_or(&s.version);
            parts.push(format!("PostgreSQL {v}"));
            if s.citus.is_some() {
                parts.push("Citus coordinator".into());
            }
            parts.push(match (&self.location, &s.tls) {
                (Location::Sandbox { .. } | Location::Socket { .. }, _) => "socket".into(),
                (_, Some(tls)) => tls.clone(),
                (_, None) => "no TLS".into(),
            });
        }
        if matches!(self.connection, Connection::Lost { .. }) {
            parts.insert(0, "connection lost".into());
        }
        parts
    }
}

/// Draw the pane: the connection's trouble or the server's state, what differs from its
/// own settings, the settings shown and the live rates.
pub(crate) fn render(app: &App, f: &mut Frame, area: Rect) {
    let st = &app.target;
    let theme = app.theme;
    let inner = framed_pane(app, f, Focus::Target, &st.title_parts(), area);
    let cols = inner.width as usize;
    let rows = inner.height as usize;
    if rows == 0 || cols == 0 {
        return;
    }
    let mut lines = connection_lines(app, cols, rows);
    let Some(s) = &st.latest else {
        f.render_widget(Paragraph::new(lines), inner);
        return;
    };
    if lines.is_empty() {
        server_state(s, cols, rows, &mut lines, theme);
    }
    changed_settings(app, s, cols, rows, &mut lines);
    let two = cols >= TWO_COLUMNS;
    let all = metrics(st);
    let metric_lines = if two {
        metrics_grid(theme, &all, cols, two)
    } else {
        // Narrow: commits and WAL with their sparklines, temp and cache hit on one line.
        let mut l = metrics_grid(theme, &all[..2], cols, false);
        let rest = format!(
            "{} {} · {} {}",
            all[2].label, all[2].value, all[3].label, all[3].value
        );
        l.push(plain_line(fit(&rest, cols), theme.label()));
        l
    };
    let setting_rows = rows.saturating_sub(lines.len() + metric_lines.len());
    let packed = if two {
        pack(&settings(s), cols, "  ", setting_rows)
    } else {
        super::target_narrow::fit_rows(&narrow_settings(s), cols, setting_rows, "  ")
    };
    for l in packed {
        lines.push(Line::from(Span::styled(l, theme.label())));
    }
    let room = rows.saturating_sub(lines.len());
    lines.extend(metric_lines.into_iter().take(room));
    f.render_widget(Paragraph::new(lines), inner);
}

/// A lost connection and when it is retried, or that the first one is being made.
fn connection_lines(app: &App, cols: usize, rows: usize) -> Vec<Line<'static>> {
    let st = &app.target;
    let theme = app.theme;
    let mut lines: Vec<Line> = Vec::new();
    match &st.connection {
        Connection::Lost { error, retry_at } => {
            let secs = retry_at
                .saturating_duration_since(app.now)
                .as_secs_f64()
                .ceil();
            let retry = if secs >= 1.0 {
                format!("retrying in {secs:.0} s")
            } else {
                "retrying now".into()
            };
            for l in wrap(
                &format!("⚠ connection lost: {error} · {retry}"),
                cols,
                2.min(rows),
            ) {
                lines.push(plain_line(l, theme.error()));
            }
        }
        Connection::Connecting if st.latest.is_none() => {
            lines.push(plain_line("connecting…".into(), theme.dim()));
        }
        _ => {}
    }
    lines
}

/// The database's size, its connections and whether it is in recovery; then replication,
/// and a Citus coordinator's nodes.
fn server_state(
    s: &ServerSnapshot,
    cols: usize,
    rows: usize,
    lines: &mut Vec<Line<'static>>,
    theme: crate::tui::theme::Theme,
) {
    let active = s.connections.get("active").copied().unwrap_or(0);
    let mut items = vec![
        format!("db {}", format_bytes_short(s.database_bytes.max(0) as f64)),
        format!("conns {}, {active} active", s.connections_total()),
        if s.in_recovery {
            "in recovery (standby)".into()
        } else {
            "not in recovery".into()
        },
    ];
    if cols < TWO_COLUMNS {
        // Narrow: a word for the recovery state, so the role fits beside it.
        items[2] = if s.in_recovery { "standby" } else { "primary" }.into();
        items.push(super::target_narrow::role(s));
    }
    // Sessions whose state the role may not see, and why (as the standby lag says it).
    let hidden = s.connections_hidden();
    if hidden > 0 {
        items.insert(2, format!("{hidden} hidden: needs pg_read_all_stats"));
    }
    let state_rows = if hidden > 0 { 3 } else { 2 };
    let style = if s.in_recovery {
        theme.warn()
    } else {
        theme.plain()
    };
    for l in pack(&items, cols, " · ", state_rows.min(rows)) {
        lines.push(plain_line(l, style));
    }
    replication_lines(s, cols, rows, lines, theme);
    if let Some(c) = &s.citus {
        let mut items = vec![c.summary()];
        items.extend(c.nodes_line().split(" · ").map(str::to_string));
        for l in pack(&items, cols, " · ", 2.min(rows.saturating_sub(lines.len()))) {
            lines.push(plain_line(l, theme.plain()));
        }
    }
}

/// What the running what-if changes, and what differs from the server's own settings.
fn changed_settings(
    app: &App,
    s: &ServerSnapshot,
    cols: usize,
    rows: usize,
    lines: &mut Vec<Line<'static>>,
) {
    let theme = app.theme;
    if app.run.running() && !app.run.whatif.is_empty() && lines.len() < rows {
        lines.push(plain_line(
            fit(&format!("this run sweeps {}", app.run.whatif), cols),
            theme.warn(),
        ));
    }
    if !s.altered.is_empty() && lines.len() < rows {
        let what: Vec<String> = s.altered.iter().map(|(n, v)| format!("{n}={v}")).collect();
        lines.push(plain_line(
            fit(&format!("ALTER SYSTEM: {}", what.join(" ")), cols),
            theme.warn(),
        ));
    }
}

/// The live rates: commits, WAL and temp bytes a second, and the cache hit ratio.
fn metrics(st: &TargetState) -> [Metric<'_>; 4] {
    let hit_text = match st.rates.and_then(|r| r.cache_hit) {
        Some(h) => format!("{:.1}%", h * 100.0),
        // Rates were computed but no block was touched in the interval.
        None if st.rates.is_some() => "idle".into(),
        None => "–".into(),
    };
    let rate = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map(f).unwrap_or_else(|| "–".into());
    let r = st.rates;
    [
        Metric {
            label: "commits/s",
            series: &st.commits,
            max: None,
            value: rate(r.map(|r| r.commits_per_s), &|v| format_rate(v)),
        },
        Metric {
            label: "WAL/s",
            series: &st.wal,
            max: None,
            value: rate(r.map(|r| r.wal_bytes_per_s), &|v| format_bytes_short(v)),
        },
        Metric {
            label: "temp/s",
            series: &st.temp,
            max: None,
            value: rate(r.map(|r| r.temp_bytes_per_s), &|v| format_bytes_short(v)),
        },
        Metric {
            label: "cache hit",
            series: &st.hit,
            max: Some(100.0),
            value: hit_text,
        },
    ]
}

/// The settings a narrow pane shows: the ones the experiments turn first
/// ([`super::target_narrow::NEEDED`]), then the rest in their order.
fn narrow_settings(s: &ServerSnapshot) -> Vec<String> {
    use super::target_narrow::NEEDED;
    let order = NEEDED
        .iter()
        .filter_map(|n| SHOWN.iter().find(|(name, _)| name == n))
        .chain(SHOWN.iter().filter(|(name, _)| !NEEDED.contains(name)));
    shown_settings(s, order)
}

/// The settings shown, each with its short label, `*` when ALTER SYSTEM changed it.
fn settings(s: &ServerSnapshot) -> Vec<String> {
    shown_settings(s, SHOWN.iter())
}

fn shown_settings<'a>(
    s: &ServerSnapshot,
    order: impl Iterator<Item = &'a (&'a str, &'a str)>,
) -> Vec<String> {
    order
        .filter_map(|(name, label)| {
            let mark = if s.altered.iter().any(|(n, _)| n == name) {
                "*"
            } else {
                ""
            };
            s.setting(name)
                .map(|v| format!("{label} {}{mark}", v.pretty()))
        })
        .collect()
}

/// A standby's own lag, or a primary's standbys (one line each, as many as fit): read-only,
/// on any server, from `pg_stat_replication` and the standby's replay position.
fn replication_lines(
    s: &ServerSnapshot,
    cols: usize,
    rows: usize,
    lines: &mut Vec<Line<'static>>,
    theme: crate::tui::theme::Theme,
) {
    if let Some(l) = &s.standby_lag
        && lines.len() < rows
    {
        lines.push(plain_line(fit(&l.words(), cols), theme.warn()));
    }
    for r in &s.replicas {
        if lines.len() >= rows {
            break;
        }
        let lag = r
            .replay_lag_ms
            .map(|v| format!("replay {v:.1} ms"))
            .unwrap_or_else(|| "caught up".into());
        let behind = r
            .replay_behind_bytes
            .map(|b| format!(", {} behind", format_bytes_short(b.max(0) as f64)))
            .unwrap_or_default();
        let text = if r.state.is_empty() {
            format!("standby {}: lag hidden from this role", r.application_name)
        } else {
            format!(
                "standby {} {} ({}) {lag}{behind}",
                r.application_name, r.state, r.sync_state
            )
        };
        lines.push(plain_line(fit(&text, cols), theme.plain()));
    }
}
