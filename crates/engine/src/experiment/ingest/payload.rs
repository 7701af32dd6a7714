//! The rows an ingest trial writes: `(id bigint, payload text|jsonb)` with a payload of the
//! requested size that varies from row to row (so neither compression nor the secondary
//! indexes see one repeated value), made without a random call per row.

use bytes::{BufMut, BytesMut};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

use super::kinds::PayloadType;

/// Distinct starting offsets into the noise buffer.
const SPREAD: usize = 4096;
/// Length of each JSON key field (what secondary indexes 2.. cover).
pub(crate) const KEY_BYTES: usize = 8;

/// The fixed part of a JSON document, for estimates: `{"id":…,"k1":"…",…,"body":""}` with a
/// 12-digit id.
pub(crate) fn json_skeleton_bytes(indexes: u32) -> u64 {
    let keys = indexes.saturating_sub(1) as u64;
    30 + keys * (KEY_BYTES as u64 + 8)
}

/// The SQL expression secondary index `i` (1-based) covers.
pub(crate) fn index_expression(i: u32, kind: PayloadType) -> String {
    match (i, kind) {
        (0 | 1, _) => "(id)".to_string(),
        (i, PayloadType::Text) => format!(
            "(substr(payload, {}, {KEY_BYTES}))",
            (i as usize - 2) * KEY_BYTES + 1
        ),
        (i, PayloadType::Json) => format!("((payload ->> 'k{}'))", i - 1),
    }
}

/// Makes the payload of row `id`, deterministically.
pub(crate) struct PayloadGen {
    kind: PayloadType,
    bytes: usize,
    keys: usize,
    noise: Vec<u8>,
}

impl PayloadGen {
    pub(crate) fn new(kind: PayloadType, bytes: u64, indexes: u32, seed: u64) -> PayloadGen {
        let bytes = usize::try_from(bytes).unwrap_or(usize::MAX / 4);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let noise = (0..bytes + SPREAD + KEY_BYTES * 8)
            .map(|_| b'a' + rng.random_range(0..26u8))
            .collect();
        PayloadGen {
            kind,
            bytes,
            keys: indexes.saturating_sub(1) as usize,
            noise,
        }
    }

    fn offset(id: i64, salt: u64) -> usize {
        let h = (id as u64 ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 40) as usize % SPREAD
    }

    fn slice(&self, id: i64, salt: u64, len: usize) -> &str {
        let at = Self::offset(id, salt);
        // The noise is ASCII letters only, so any byte range is valid UTF-8.
        std::str::from_utf8(&self.noise[at..at + len]).unwrap_or("")
    }

    /// Write row `id`'s payload into `out` (cleared first).
    pub(crate) fn fill(&self, id: i64, out: &mut String) {
        out.clear();
        match self.kind {
            PayloadType::Text => out.push_str(self.slice(id, 0, self.bytes)),
            PayloadType::Json => {
                use std::fmt::Write;
                let _ = write!(out, "{{\"id\":{id}");
                for k in 1..=self.keys {
                    let _ = write!(out, ",\"k{k}\":\"{}\"", self.slice(id, k as u64, KEY_BYTES));
                }
                out.push_str(",\"body\":\"");
                let fill = self.bytes.saturating_sub(out.len() + 2);
                out.push_str(self.slice(id, 0, fill));
                out.push_str("\"}");
            }
        }
    }
}

/// A payload bound as a parameter or a binary COPY field: text as is, jsonb with its version
/// byte, without parsing the document on the client.
#[derive(Debug)]
pub(crate) struct Doc<'a>(pub &'a str);

impl ToSql for Doc<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        if *ty == Type::JSONB {
            out.put_u8(1);
        }
        out.put_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        matches!(*ty, Type::TEXT | Type::VARCHAR | Type::JSON | Type::JSONB)
    }

    to_sql_checked!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_payload_has_the_size_and_varies() {
        let g = PayloadGen::new(PayloadType::Text, 100, 0, 1);
        let (mut a, mut b) = (String::new(), String::new());
        g.fill(1, &mut a);
        g.fill(2, &mut b);
        assert_eq!(a.len(), 100);
        assert_ne!(a, b);
        let mut again = String::new();
        g.fill(1, &mut again);
        assert_eq!(a, again);
    }

    #[test]
    fn json_payload_is_a_document_of_the_size() {
        let g = PayloadGen::new(PayloadType::Json, 200, 3, 1);
        let mut s = String::new();
        g.fill(12345, &mut s);
        assert_eq!(s.len(), 200);
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["id"], 12345);
        assert_eq!(v["k2"].as_str().unwrap().len(), KEY_BYTES);
        // Smaller than the skeleton: still a valid document.
        let g = PayloadGen::new(PayloadType::Json, 0, 8, 1);
        g.fill(7, &mut s);
        let _: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert!(s.len() as u64 <= json_skeleton_bytes(8));
    }

    #[test]
    fn index_expressions() {
        assert_eq!(index_expression(1, PayloadType::Text), "(id)");
        assert_eq!(
            index_expression(3, PayloadType::Text),
            "(substr(payload, 9, 8))"
        );
        assert_eq!(
            index_expression(2, PayloadType::Json),
            "((payload ->> 'k1'))"
        );
    }
}
