//! Overlays drawn over the panes: help (`?`), the preset picker (`p`), the history of past
//! runs (`h`), the import dialog (`i`) and a query run's plans (`t`).

pub mod help;
pub mod history;
pub mod import;
pub mod plans;
pub mod presets;
