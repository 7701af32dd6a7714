//! The key shape of the growth tables: compact `int8` ids, or Pulp's own shape — a UUID
//! primary key and UUID references to the version and the content unit (Pulp's models use
//! UUID keys, so the seed's table is three UUIDs a row).
//!
//! The content stream (`churn`) numbers versions and units with integers; under the UUID
//! shape each number becomes a UUID derived from it by a seeded bijective mix, so the UUIDs
//! look random (as `uuid4` keys do: no insertion order, no locality) yet both designs and
//! every replay hold the same ones. The primary key is `gen_random_uuid()` (PostgreSQL 13+),
//! as random as the application's `uuid4`. The ranges design keeps its version bounds as
//! integers: a range needs ordered versions, which UUIDs do not have.

use bytes::{BufMut, BytesMut};
use serde::{Deserialize, Serialize};
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

/// How the growth tables' keys are typed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyShape {
    /// `int8` ids from a sequence and `int8` references.
    #[default]
    Int,
    /// A `uuid` primary key and `uuid` references to version and content (Pulp's models).
    Uuid,
}

/// Salts that keep version and content UUIDs apart.
const VERSION_SALT: u64 = 0x7665_7273_696f_6e00;
const CONTENT_SALT: u64 = 0x636f_6e74_656e_7400;

impl KeyShape {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            KeyShape::Int => "int",
            KeyShape::Uuid => "uuid",
        }
    }
    /// The SQL type of a reference column.
    pub(crate) fn sql_type(self) -> &'static str {
        match self {
            KeyShape::Int => "int8",
            KeyShape::Uuid => "uuid",
        }
    }
    /// The primary key column's definition.
    pub(crate) fn id_column(self) -> &'static str {
        match self {
            KeyShape::Int => "id bigserial NOT NULL",
            KeyShape::Uuid => "id uuid NOT NULL DEFAULT gen_random_uuid()",
        }
    }
    /// Bytes of one key value in a row.
    pub(crate) fn key_bytes(self) -> u64 {
        match self {
            KeyShape::Int => 8,
            KeyShape::Uuid => 16,
        }
    }
    /// The key of version number `v`.
    pub(crate) fn version(self, v: i64) -> Key {
        self.key(v, VERSION_SALT)
    }
    /// The key of content unit number `c`.
    pub(crate) fn content(self, c: i64) -> Key {
        self.key(c, CONTENT_SALT)
    }
    fn key(self, n: i64, salt: u64) -> Key {
        match self {
            KeyShape::Int => Key::Int(n),
            KeyShape::Uuid => Key::Uuid(uuid_of(n, salt)),
        }
    }
}

/// splitmix64's finalizer: a bijection of u64 that scatters neighbours.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A version-4-looking UUID for number `n`.
fn uuid_of(n: i64, salt: u64) -> [u8; 16] {
    let hi = mix(n as u64 ^ salt);
    let lo = mix(hi ^ salt.rotate_left(29));
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&hi.to_be_bytes());
    b[8..].copy_from_slice(&lo.to_be_bytes());
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    b
}

/// One key value, as a query parameter, a COPY field or a result column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Key {
    Int(i64),
    Uuid([u8; 16]),
}

impl Key {
    /// A number standing for this key in content digests: the id itself, or the UUID's
    /// first eight bytes (distinct for distinct units in practice: 60 random bits).
    pub(crate) fn fingerprint(&self) -> i64 {
        match self {
            Key::Int(v) => *v,
            Key::Uuid(b) => i64::from_be_bytes(b[..8].try_into().unwrap_or_default()),
        }
    }

    /// Append this key as a binary COPY field.
    pub(crate) fn put_copy_field(&self, buf: &mut BytesMut) {
        match self {
            Key::Int(v) => {
                buf.put_i32(8);
                buf.put_i64(*v);
            }
            Key::Uuid(b) => {
                buf.put_i32(16);
                buf.put_slice(b);
            }
        }
    }
}

impl ToSql for Key {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match (self, ty) {
            (Key::Int(v), &Type::INT8) => out.put_i64(*v),
            (Key::Uuid(b), &Type::UUID) => out.put_slice(b),
            (k, ty) => return Err(format!("key {k:?} does not fit a {ty} column").into()),
        }
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::INT8 || *ty == Type::UUID
    }
    to_sql_checked!();
}

impl<'a> FromSql<'a> for Key {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        match *ty {
            Type::INT8 => Ok(Key::Int(i64::from_sql(ty, raw)?)),
            _ => Ok(Key::Uuid(raw.try_into().map_err(|_| {
                format!("a uuid is 16 bytes, got {}", raw.len())
            })?)),
        }
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::INT8 || *ty == Type::UUID
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn uuids_are_distinct_stable_and_version_4() {
        let s = KeyShape::Uuid;
        let a: BTreeSet<i64> = (0..100_000).map(|i| s.content(i).fingerprint()).collect();
        assert_eq!(a.len(), 100_000);
        assert_eq!(s.content(7), s.content(7));
        assert_ne!(s.content(7), s.version(7));
        let Key::Uuid(b) = s.version(1) else {
            panic!("not a uuid")
        };
        assert_eq!(b[6] >> 4, 4);
        assert_eq!(b[8] >> 6, 2);
        // Neighbouring numbers land far apart (no insertion order to exploit).
        let (Key::Uuid(x), Key::Uuid(y)) = (s.content(1), s.content(2)) else {
            panic!()
        };
        assert_ne!(x[0], y[0]);
        assert_eq!(KeyShape::Int.content(5), Key::Int(5));
    }
}
