//! The statements that recreate a source table in the sandbox, built from its catalog
//! description: pure text, no I/O (the decisions about what to keep are in [`super::plan`]).

use super::catalog::{ForeignKey, Index};
use crate::sql::names::TableName;
use crate::sql::quote::{ident, literal, percent};

/// One column of the sandbox's table, as decided.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ColumnDef {
    pub name: String,
    /// The type as SQL text.
    pub type_sql: String,
    pub collation: Option<String>,
    pub not_null: bool,
    pub tail: ColumnTail,
}

/// What follows a column's type: a default, a generation expression or an identity.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ColumnTail {
    None,
    Default(String),
    Generated(String),
    /// `ALWAYS` or `BY DEFAULT`.
    Identity(&'static str),
}

impl ColumnDef {
    pub fn sql(&self) -> String {
        let mut s = format!("{} {}", ident(&self.name), self.type_sql);
        if let Some(c) = &self.collation {
            s.push_str(&format!(" COLLATE {c}"));
        }
        if self.not_null {
            s.push_str(" NOT NULL");
        }
        match &self.tail {
            ColumnTail::None => {}
            ColumnTail::Default(e) => s.push_str(&format!(" DEFAULT {e}")),
            ColumnTail::Generated(e) => s.push_str(&format!(" GENERATED ALWAYS AS ({e}) STORED")),
            ColumnTail::Identity(how) => s.push_str(&format!(" GENERATED {how} AS IDENTITY")),
        }
        s
    }
}

/// `CREATE [UNLOGGED] TABLE t (columns, CONSTRAINT … CHECK …) [WITH (options)]`.
pub(crate) fn create_table(
    table: &TableName,
    unlogged: bool,
    columns: &[ColumnDef],
    checks: &[(String, String)],
    reloptions: &[String],
) -> String {
    let mut parts: Vec<String> = columns.iter().map(ColumnDef::sql).collect();
    parts.extend(
        checks
            .iter()
            .map(|(name, def)| format!("CONSTRAINT {} {def}", ident(name))),
    );
    let with = if reloptions.is_empty() {
        String::new()
    } else {
        format!(" WITH ({})", reloptions.join(", "))
    };
    format!(
        "CREATE {}TABLE {} ({}){with}",
        if unlogged { "UNLOGGED " } else { "" },
        table.sql(),
        parts.join(", ")
    )
}

/// `ALTER TABLE t ADD CONSTRAINT name <definition>`, without a `USING INDEX TABLESPACE`
/// clause (the sandbox has only its default tablespace).
pub(crate) fn add_constraint(
    table: &TableName,
    name: &str,
    def: &str,
    tablespace: Option<&str>,
) -> String {
    let mut def = def.to_string();
    if let Some(ts) = tablespace {
        for form in [ts.to_string(), ident(ts)] {
            def = def.replace(&format!(" USING INDEX TABLESPACE {form}"), "");
        }
    }
    format!(
        "ALTER TABLE {} ADD CONSTRAINT {} {def}",
        table.sql(),
        ident(name)
    )
}

/// An index's definition pointed at another table (the staged copy): `pg_get_indexdef`
/// writes `CREATE [UNIQUE] INDEX name ON [ONLY] schema.table USING …`. None when the text
/// does not have that shape.
pub(crate) fn retarget_index(
    index: &Index,
    source: &TableName,
    target: &TableName,
) -> Option<String> {
    let def = &index.def;
    let on = def.find(" ON ")?;
    let head = &def[..on];
    if !(head.starts_with("CREATE INDEX ") || head.starts_with("CREATE UNIQUE INDEX ")) {
        return None;
    }
    let rest = &def[on + 4..];
    let rest = rest.strip_prefix("ONLY ").unwrap_or(rest);
    let forms = [
        source.sql(),
        source.to_string(),
        format!("{}.{}", ident(&source.schema), source_name_plain(source)),
        format!("{}.{}", source_schema_plain(source), ident(&source.name)),
    ];
    let tail = forms
        .iter()
        .find_map(|f| rest.strip_prefix(&format!("{f} ")))?;
    Some(format!("{head} ON {} {tail}", target.sql()))
}

fn source_name_plain(t: &TableName) -> String {
    TableName::new("x", &t.name)
        .to_string()
        .trim_start_matches("x.")
        .to_string()
}

fn source_schema_plain(t: &TableName) -> String {
    let s = TableName::new(&t.schema, "x").to_string();
    s[..s.len() - 2].to_string()
}

/// A foreign key between two staged tables. `not_valid`: added without checking the rows
/// (a sample of each table need not hold every referenced row).
pub(crate) fn foreign_key(
    table: &TableName,
    fk: &ForeignKey,
    references: &TableName,
    not_valid: bool,
) -> String {
    let cols = |v: &[String]| v.iter().map(|c| ident(c)).collect::<Vec<_>>().join(", ");
    let action = |c: char| match c {
        'r' => "RESTRICT",
        'c' => "CASCADE",
        'n' => "SET NULL",
        'd' => "SET DEFAULT",
        _ => "NO ACTION",
    };
    let mut s = format!(
        "ALTER TABLE {} ADD CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({})",
        table.sql(),
        ident(&fk.name),
        cols(&fk.columns),
        references.sql(),
        cols(&fk.ref_columns)
    );
    match fk.match_type {
        'f' => s.push_str(" MATCH FULL"),
        'p' => s.push_str(" MATCH PARTIAL"),
        _ => {}
    }
    s.push_str(&format!(
        " ON UPDATE {} ON DELETE {}",
        action(fk.on_update),
        action(fk.on_delete)
    ));
    if fk.deferrable {
        s.push_str(" DEFERRABLE");
        if fk.deferred {
            s.push_str(" INITIALLY DEFERRED");
        }
    }
    if not_valid {
        s.push_str(" NOT VALID");
    }
    s
}

/// `CREATE TYPE t AS ENUM ('a', 'b')`.
pub(crate) fn create_enum(t: &TableName, labels: &[String]) -> String {
    format!(
        "CREATE TYPE {} AS ENUM ({})",
        t.sql(),
        labels
            .iter()
            .map(|l| literal(l))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `CREATE DOMAIN t AS base [NOT NULL] [DEFAULT e] [CONSTRAINT c CHECK …]…`.
pub(crate) fn create_domain(
    t: &TableName,
    base: &str,
    not_null: bool,
    default: Option<&str>,
    checks: &[(String, String)],
) -> String {
    let mut s = format!("CREATE DOMAIN {} AS {base}", t.sql());
    if let Some(d) = default {
        s.push_str(&format!(" DEFAULT {d}"));
    }
    if not_null {
        s.push_str(" NOT NULL");
    }
    for (name, def) in checks {
        s.push_str(&format!(" CONSTRAINT {} {def}", ident(name)));
    }
    s
}

/// The `COPY … TO STDOUT` the source runs: the whole table in its physical order, or a
/// `TABLESAMPLE BERNOULLI` of it (also read in physical order, so correlation survives).
pub(crate) fn copy_out(
    table: &TableName,
    columns: &[String],
    sample: Option<(f64, u64)>,
    binary: bool,
) -> String {
    let cols = columns
        .iter()
        .map(|c| ident(c))
        .collect::<Vec<_>>()
        .join(", ");
    let format = if binary { " (FORMAT binary)" } else { "" };
    match sample {
        None => format!("COPY {} ({cols}) TO STDOUT{format}", table.sql()),
        Some((pct, seed)) => format!(
            "COPY (SELECT {cols} FROM ONLY {} TABLESAMPLE BERNOULLI ({}) REPEATABLE ({seed})) TO STDOUT{format}",
            table.sql(),
            percent(pct)
        ),
    }
}

/// The sandbox's `COPY … FROM STDIN`, with `FREEZE`: the table was created in the same
/// transaction, so its rows are written frozen and nobody rewrites the pages later to set
/// hint bits.
pub fn copy_in(table: &TableName, columns: &[String], binary: bool) -> String {
    let cols = columns
        .iter()
        .map(|c| ident(c))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "COPY {} ({cols}) FROM STDIN ({}FREEZE)",
        table.sql(),
        if binary { "FORMAT binary, " } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str, n: &str) -> TableName {
        TableName::new(s, n)
    }

    #[test]
    fn indexes_are_pointed_at_the_staged_table() {
        let i = |def: &str| Index {
            oid: 1,
            name: "i".into(),
            def: def.into(),
            valid: true,
        };
        let stage = t("pglab_import_x", "Orders");
        assert_eq!(
            retarget_index(
                &i("CREATE INDEX orders_c ON public.\"Orders\" USING btree (customer_id) WHERE (qty > 0)"),
                &t("public", "Orders"),
                &stage
            )
            .unwrap(),
            "CREATE INDEX orders_c ON \"pglab_import_x\".\"Orders\" USING btree (customer_id) WHERE (qty > 0)"
        );
        assert_eq!(
            retarget_index(
                &i("CREATE UNIQUE INDEX u ON ONLY \"public\".\"Orders\" USING btree (a)"),
                &t("public", "Orders"),
                &stage
            )
            .unwrap(),
            "CREATE UNIQUE INDEX u ON \"pglab_import_x\".\"Orders\" USING btree (a)"
        );
        assert!(
            retarget_index(
                &i("CREATE INDEX i ON other.t USING btree (a)"),
                &t("public", "t"),
                &stage
            )
            .is_none()
        );
    }

    #[test]
    fn statements_read_as_postgres_writes_them() {
        let c = ColumnDef {
            name: "id".into(),
            type_sql: "bigint".into(),
            collation: None,
            not_null: true,
            tail: ColumnTail::Identity("BY DEFAULT"),
        };
        let s = create_table(
            &t("s", "t"),
            true,
            &[c],
            &[("pos".into(), "CHECK ((id > 0))".into())],
            &["fillfactor=90".into()],
        );
        assert_eq!(
            s,
            "CREATE UNLOGGED TABLE \"s\".\"t\" (\"id\" bigint NOT NULL GENERATED BY DEFAULT AS IDENTITY, CONSTRAINT \"pos\" CHECK ((id > 0))) WITH (fillfactor=90)"
        );
        assert_eq!(
            add_constraint(
                &t("s", "t"),
                "pk",
                "PRIMARY KEY (id) USING INDEX TABLESPACE fast",
                Some("fast")
            ),
            "ALTER TABLE \"s\".\"t\" ADD CONSTRAINT \"pk\" PRIMARY KEY (id)"
        );
        assert_eq!(
            copy_out(&t("public", "t"), &["a".into()], Some((10.0, 42)), true),
            "COPY (SELECT \"a\" FROM ONLY \"public\".\"t\" TABLESAMPLE BERNOULLI (10) REPEATABLE (42)) TO STDOUT (FORMAT binary)"
        );
        assert_eq!(
            copy_in(&t("st", "t"), &["a".into()], false),
            "COPY \"st\".\"t\" (\"a\") FROM STDIN (FREEZE)"
        );
        let fk = ForeignKey {
            name: "fk".into(),
            columns: vec!["c".into()],
            references: t("public", "p"),
            ref_columns: vec!["id".into()],
            on_update: 'a',
            on_delete: 'c',
            match_type: 's',
            deferrable: true,
            deferred: false,
        };
        assert_eq!(
            foreign_key(&t("st", "c"), &fk, &t("st", "p"), true),
            "ALTER TABLE \"st\".\"c\" ADD CONSTRAINT \"fk\" FOREIGN KEY (\"c\") REFERENCES \"st\".\"p\" (\"id\") ON UPDATE NO ACTION ON DELETE CASCADE DEFERRABLE NOT VALID"
        );
        assert_eq!(
            create_enum(&t("public", "mood"), &["sad".into(), "it's ok".into()]),
            "CREATE TYPE \"public\".\"mood\" AS ENUM ('sad', 'it''s ok')"
        );
    }
}
