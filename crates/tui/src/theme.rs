//! Styles. Colour only when allowed: `NO_COLOR` (present and not empty) leaves text
//! attributes (bold, reversed, dim) and the thick border of the focused pane, nothing else.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

/// Chart series colours, in order of first appearance.
const SERIES: [Color; 6] = [
    Color::Cyan,
    Color::Yellow,
    Color::Magenta,
    Color::Green,
    Color::LightBlue,
    Color::LightRed,
];

impl Theme {
    /// Colour unless `NO_COLOR` says otherwise (<https://no-color.org>).
    pub(crate) fn from_env() -> Theme {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme { color: !no_color }
    }

    fn fg(self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    pub(crate) fn plain(self) -> Style {
        Style::new()
    }
    pub(crate) fn title(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    pub(crate) fn border(self) -> Style {
        self.fg(Color::DarkGray)
    }
    pub(crate) fn focused_border(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn dim(self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }
    pub(crate) fn label(self) -> Style {
        self.fg(Color::Gray)
    }
    pub(crate) fn value(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    pub(crate) fn error(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn warn(self) -> Style {
        self.fg(Color::Yellow)
    }
    pub(crate) fn good(self) -> Style {
        self.fg(Color::Green)
    }
    pub(crate) fn accent(self) -> Style {
        self.fg(Color::Cyan)
    }
    /// The style of a message of this level.
    pub(crate) fn level(self, level: super::app::Level) -> Style {
        match level {
            super::app::Level::Info => self.accent(),
            super::app::Level::Warn => self.warn(),
            super::app::Level::Error => self.error(),
        }
    }
    pub(crate) fn spark(self) -> Style {
        self.fg(Color::Cyan)
    }
    pub(crate) fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }
    pub(crate) fn key(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn series(self, i: usize) -> Style {
        self.fg(SERIES[i % SERIES.len()])
    }
}
