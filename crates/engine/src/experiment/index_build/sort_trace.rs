//! What `trace_sort` says about an index build's sort: how many participants sorted, and
//! whether it spilled to disk or fit in memory.

use serde::{Deserialize, Serialize};

/// How a build's sort went, as `trace_sort` recorded it: what the findings explain an effect
/// with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "method")]
pub enum SortMethod {
    /// Sorted in `maintenance_work_mem`: the kB it used.
    InMemory { kb: u64 },
    /// An external sort: the kB it wrote to disk (the leader's merge, 8 kB blocks).
    External { disk_kb: u64 },
}

/// What `trace_sort` said: participants and how the sort went.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct SortTrace {
    /// Parallel participants that sorted (leader included when it participates).
    pub participants: u32,
    pub external: bool,
    pub disk_blocks: u64,
    pub memory_kb: Option<u64>,
}

impl SortTrace {
    pub fn parse(lines: &[String]) -> SortTrace {
        let mut t = SortTrace::default();
        let mut workers = std::collections::BTreeSet::new();
        for l in lines {
            if let Some(rest) = l.split("of worker ").nth(1)
                && let Some(n) = rest.split(|c: char| !c.is_ascii_digit() && c != '-').next()
                && let Ok(n) = n.parse::<i32>()
                && n >= 0
            {
                workers.insert(n);
            }
            if l.contains("external sort") || l.contains("switching to external sort") {
                t.external = true;
            }
            if let Some(pos) = l.find(" disk blocks used") {
                let num = l[..pos]
                    .rsplit(' ')
                    .next()
                    .and_then(|n| n.parse::<u64>().ok());
                if let Some(n) = num
                    && (l.contains("worker -1") || workers.is_empty())
                {
                    t.disk_blocks = n;
                }
            }
            if let Some(pos) = l.find(" KB used") {
                t.memory_kb = l[..pos].rsplit(' ').next().and_then(|n| n.parse().ok());
            }
        }
        t.participants = workers.len() as u32;
        t
    }

    /// The sort's method as a typed fact (None when `trace_sort` said neither).
    pub(crate) fn method(&self) -> Option<SortMethod> {
        if self.external {
            Some(SortMethod::External {
                disk_kb: self.disk_blocks * 8,
            })
        } else {
            self.memory_kb.map(|kb| SortMethod::InMemory { kb })
        }
    }

    pub(crate) fn describe(&self) -> String {
        let kind = if self.external {
            format!("external sort, {} kB on disk", self.disk_blocks * 8)
        } else if let Some(kb) = self.memory_kb {
            format!("in-memory sort, {kb} kB")
        } else {
            "sort".to_string()
        };
        if self.participants > 1 {
            format!("{kind}, {} participants", self.participants)
        } else {
            kind
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_sort_is_read() {
        let lines: Vec<String> = [
            "begin index sort: unique = f, workMem = 32768, randomAccess = f",
            "performsort of worker 0 starting: CPU: user: 0.05 s",
            "performsort of worker 1 starting: CPU: user: 0.03 s",
            "worker 1 switching to external sort with 6 tapes: CPU",
            "parallel external sort of worker 0 ended, 422 disk blocks used: CPU",
            "parallel external sort of worker -1 ended, 735 disk blocks used: CPU",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let t = SortTrace::parse(&lines);
        assert_eq!((t.participants, t.external, t.disk_blocks), (2, true, 735));
        let serial = SortTrace::parse(&["internal sort ended, 45678 KB used: CPU".to_string()]);
        assert_eq!(
            (serial.participants, serial.external, serial.memory_kb),
            (0, false, Some(45678))
        );
    }
}
