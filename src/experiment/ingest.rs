//! ingest: rows/s vs method, batch size, clients and commit durability.
//! (Being built: the spec and report contracts are fixed here; `run` lands with its issue.)

use serde::{Deserialize, Serialize};

use super::lab::{RunCtx, RunError};
use super::spec::{Cost, FieldDef, FieldErrors, FieldKind, FieldReader, ParamText};

pub const FIELDS: &[FieldDef] = &[FieldDef {
    key: "rows",
    label: "rows",
    help: "rows per trial (10k, 1M)",
    default: "100k",
    kind: FieldKind::Count,
}];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngestSpec {
    pub rows: u64,
}

impl IngestSpec {
    pub fn parse(p: &ParamText) -> Result<IngestSpec, FieldErrors> {
        let mut r = FieldReader::new(p);
        let rows = r.count("rows", 1, 1_000_000_000_000);
        r.finish(IngestSpec { rows })
    }
    pub fn to_text(&self) -> ParamText {
        ParamText::from([("rows".into(), self.rows.to_string())])
    }
    pub fn estimate(&self) -> Cost {
        Cost {
            trials: 1,
            rows: self.rows,
            ..Cost::default()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngestReport {
    pub params: IngestSpec,
}

impl IngestReport {
    pub fn new(spec: &IngestSpec) -> Self {
        IngestReport {
            params: spec.clone(),
        }
    }
}

pub async fn run(
    _ctx: &RunCtx,
    _spec: &IngestSpec,
    _report: &mut IngestReport,
) -> Result<(), RunError> {
    Err(RunError::failed(
        "the ingest experiment is not available in this build yet",
    ))
}
