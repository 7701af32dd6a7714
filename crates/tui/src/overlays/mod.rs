//! Overlays drawn over the panes: help (`?`), the preset picker (`p`), the history of past
//! runs (`h`), the import dialog (`i`), a query run's plans (`e`, as in EXPLAIN) and the tune
//! view (`t`).

pub(crate) mod fixed_cols;
pub(crate) mod help;
pub(crate) mod history;
pub(crate) mod history_rows;
pub(crate) mod import;
pub(crate) mod plans;
pub(crate) mod presets;
pub(crate) mod tune;
pub mod verify;
