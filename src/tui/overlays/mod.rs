//! Overlays drawn over the panes: help (`?`), the preset picker (`p`) and the history of past
//! runs (`h`).

pub mod help;
pub mod history;
pub mod presets;
