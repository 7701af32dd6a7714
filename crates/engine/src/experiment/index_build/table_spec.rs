//! index-build on an existing table (`table`, `column`, `sample`) instead of a generated
//! dataset: the fields, their parsing, and which datasets a run builds on. On pglab's
//! sandbox (imported data) the index is built on the table itself; on any other server on a
//! copy of the indexed column(s) in the lab schema, never on the user's table. With a sample,
//! on copies of three sample sizes, whose times are projected to the whole table.

use serde::{Deserialize, Serialize};

use super::spec::Order;
use crate::experiment::lab::field::{FieldDef, FieldKind};
use crate::sql::names::TableName;
use crate::sql::names::parse_column_list;

pub(crate) const TABLE: FieldDef = FieldDef {
    key: "table",
    help: "an existing table to build on, SCHEMA.NAME, instead of a generated one (rows, key and order are then not used); on the sandbox the table itself, elsewhere a copy in the lab schema",
    default: "",
    kind: FieldKind::Text,
};

pub(crate) const COLUMN: FieldDef = FieldDef {
    key: "column",
    help: "with table: the column(s) to index, COL or COL1,COL2",
    default: "",
    kind: FieldKind::Text,
};

pub(crate) const SAMPLE: FieldDef = FieldDef {
    key: "sample",
    help: "with table: build on copies of PCT% of its rows (and of a quarter and half of that) and project the time to the whole table, or none",
    default: "none",
    kind: FieldKind::Percent,
};

pub(crate) const WRITES: FieldDef = FieldDef {
    key: "writes",
    help: "on a server pglab did not start: auto refuses (the run would write there); lab lets it write its datasets (or the table's copies) and their indexes in the lab schema (dropped at the end; it says how much, and the WAL, before it starts)",
    default: "auto",
    kind: FieldKind::Choice(&["auto", "lab"]),
};

/// Sample sizes a sampled run measures at, as shares of the requested sample.
pub(crate) const SAMPLE_STEPS: [f64; 3] = [0.25, 0.5, 1.0];

/// The table a run builds on and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnTable {
    pub table: TableName,
    pub columns: Vec<String>,
    /// Percent of the rows (None: all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<f64>,
    /// `writes = lab`: on a server pglab did not start, the run may write its copies there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub writes: bool,
}

impl OwnTable {
    /// Read `table`, `column`, `sample` (None when `table` is empty; then the other two must
    /// be too). Errors are (field, sentence).
    pub fn parse(
        table: &str,
        column: &str,
        sample: &str,
    ) -> Result<Option<OwnTable>, (String, String)> {
        let err = |k: &str, e: String| (k.to_string(), e);
        let sample = match sample.trim() {
            "" | "none" | "off" => None,
            s => {
                let v = crate::experiment::lab::decision::parse_percent(s)
                    .map_err(|e| err("sample", e))?
                    * 100.0;
                if !(v > 0.0 && v <= 100.0) {
                    return Err(err(
                        "sample",
                        format!("'{s}': a percentage above 0 and at most 100, or none"),
                    ));
                }
                (v < 100.0).then_some(v)
            }
        };
        if table.trim().is_empty() {
            if !column.trim().is_empty() {
                return Err(err(
                    "column",
                    "a column needs a table: set table = SCHEMA.NAME too".into(),
                ));
            }
            if sample.is_some() {
                return Err(err(
                    "sample",
                    "a sample needs a table: set table = SCHEMA.NAME too".into(),
                ));
            }
            return Ok(None);
        }
        let table = TableName::parse(table).map_err(|e| err("table", e))?;
        if column.trim().is_empty() {
            return Err(err(
                "column",
                format!("name the column(s) of {table} to index: column = COL or COL1,COL2"),
            ));
        }
        let columns = parse_column_list(column).map_err(|e| err("column", e))?;
        Ok(Some(OwnTable {
            table,
            columns,
            sample,
            writes: false,
        }))
    }

    /// The text form of the three fields.
    pub fn text(&self) -> [(String, String); 3] {
        [
            ("table".into(), self.table.to_string()),
            (
                "column".into(),
                self.columns
                    .iter()
                    .map(|c| TableName::new("x", c).to_string()[2..].to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            (
                "sample".into(),
                self.sample
                    .map(|p| format!("{}%", crate::sql::quote::percent(p)))
                    .unwrap_or_else(|| "none".into()),
            ),
        ]
    }

    /// The datasets a run builds on: the table itself (the sandbox, no sample), a copy of
    /// all its rows (another server, no sample), or copies of three sample sizes.
    pub(crate) fn orders(&self, on_sandbox: bool) -> Vec<Order> {
        match self.sample {
            None if on_sandbox => vec![Order::Table],
            None => vec![Order::Copy(1_000_000)],
            Some(p) => SAMPLE_STEPS
                .iter()
                .map(|s| Order::Copy(((p * s) * 10_000.0).round().max(1.0) as u32))
                .collect(),
        }
    }

    /// How many datasets a run builds on (for the cost before the target is known).
    pub(crate) fn datasets(&self) -> usize {
        if self.sample.is_some() {
            SAMPLE_STEPS.len()
        } else {
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_parse_together() {
        assert_eq!(OwnTable::parse("", "", "none").unwrap(), None);
        let t = OwnTable::parse("Sales.Orders", "customer_id, \"Day\"", "10%")
            .unwrap()
            .unwrap();
        assert_eq!(t.table, TableName::new("sales", "orders"));
        assert_eq!(t.columns, ["customer_id", "Day"]);
        assert_eq!(t.sample, Some(10.0));
        let text = t.text();
        assert_eq!(text[1].1, "customer_id,\"Day\"");
        assert_eq!(text[2].1, "10%");
        assert_eq!(
            OwnTable::parse(&text[0].1, &text[1].1, &text[2].1).unwrap(),
            Some(t.clone())
        );
        assert_eq!(
            t.orders(true),
            [
                Order::Copy(25_000),
                Order::Copy(50_000),
                Order::Copy(100_000)
            ]
        );
        let whole = OwnTable::parse("t", "a", "100%").unwrap().unwrap();
        assert_eq!(whole.sample, None);
        assert_eq!(whole.orders(true), [Order::Table]);
        assert_eq!(whole.orders(false), [Order::Copy(1_000_000)]);
        for (t, c, s, key) in [
            ("", "a", "none", "column"),
            ("", "", "5%", "sample"),
            ("t", "", "none", "column"),
            ("a.b.c", "x", "none", "table"),
            ("t", "a", "0%", "sample"),
            ("t", "a,,b", "none", "column"),
        ] {
            assert_eq!(OwnTable::parse(t, c, s).unwrap_err().0, key, "{t} {c} {s}");
        }
    }
}
