//! Overlays drawn over the panes: help (`?`), the preset picker (`p`), the history of past
//! runs (`h`) and the import dialog (`i`).

pub mod help;
pub mod history;
pub mod import;
pub mod presets;
