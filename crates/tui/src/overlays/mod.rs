//! Overlays drawn over the panes: help (`?`), the preset picker (`p`), the history of past
//! runs (`h`), the import dialog (`i`), a query run's plans (`e`, as in EXPLAIN) and the tune
//! view (`t`).

pub mod fixed_cols;
pub mod help;
pub mod history;
pub mod history_rows;
pub mod import;
pub mod plans;
pub mod presets;
pub mod tune;
pub mod verify;
