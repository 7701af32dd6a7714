//! Placeholder until the host branch merges.
use std::path::Path;
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct HostSnapshot {
    pub hostname: String,
}
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct HostFingerprint {
    pub hostname: String,
}
impl HostSnapshot {
    pub fn read(_d: Option<&Path>) -> HostSnapshot {
        HostSnapshot {
            hostname: String::new(),
        }
    }
    pub fn fingerprint(&self) -> HostFingerprint {
        HostFingerprint {
            hostname: self.hostname.clone(),
        }
    }
}
pub fn free_bytes(_p: &Path) -> Option<u64> {
    None
}
