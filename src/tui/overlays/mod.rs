//! Overlays drawn over the panes: help (`?`), the preset picker (`p`), the history of past
//! runs (`h`), the import dialog (`i`) and the tune view (`t`).

pub mod help;
pub mod history;
pub mod import;
pub mod presets;
pub mod tune;
