//! A finished tune's files, as the tune session writes them: the script and the Markdown
//! report with its chart ([`super::tune::write_all`]).

use std::path::PathBuf;

use crate::tune::TuneState;
use crate::tune::session::Outputs;

/// The script's and the report's paths (the chart goes beside the report).
pub struct TuneFiles {
    pub script: PathBuf,
    pub report: PathBuf,
}

impl Outputs for TuneFiles {
    fn write(&self, st: &TuneState) -> Result<String, String> {
        super::tune::write_all(st, &self.script, &self.report)
    }
}
