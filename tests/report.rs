//! Reports: every format renders a run, `pglab report` writes the Markdown and a chart that is
//! well-formed SVG with its axes labelled.

mod common;

use std::path::Path;

use pglab::experiment::RunReport;
use pglab::report::Format;
use pglab::report::{self, chart, example};

/// A small well-formedness check of XML: tags balance, attributes are quoted, one root.
fn check_xml(text: &str) -> Result<String, String> {
    let mut stack: Vec<String> = Vec::new();
    let mut root = None;
    let mut rest = text.trim_start();
    if let Some(r) = rest.strip_prefix("<?xml") {
        rest = &r[r.find("?>").ok_or("unterminated declaration")? + 2..];
    }
    while let Some(open) = rest.find('<') {
        if stack.is_empty() && root.is_some() && !rest[..open].trim().is_empty() {
            return Err("text after the root element".into());
        }
        rest = &rest[open + 1..];
        if let Some(r) = rest.strip_prefix("!--") {
            rest = &r[r.find("-->").ok_or("unterminated comment")? + 3..];
            continue;
        }
        let close = rest.find('>').ok_or("unterminated tag")?;
        let tag = &rest[..close];
        rest = &rest[close + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let top = stack.pop().ok_or(format!("</{name}> closes nothing"))?;
            if top != name.trim() {
                return Err(format!("</{name}> closes <{top}>"));
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let body = tag.trim_end_matches('/');
        let name = body
            .split_whitespace()
            .next()
            .ok_or("empty tag")?
            .to_string();
        if !body.matches('"').count().is_multiple_of(2) {
            return Err(format!("unbalanced quotes in <{name}>"));
        }
        if stack.is_empty() {
            if root.is_some() {
                return Err(format!("a second root element <{name}>"));
            }
            root = Some(name.clone());
        }
        if !self_closing {
            stack.push(name);
        }
    }
    if let Some(open) = stack.pop() {
        return Err(format!("<{open}> is never closed"));
    }
    root.ok_or_else(|| "no element".into())
}

#[test]
fn the_xml_check_catches_bad_xml() {
    assert_eq!(
        check_xml("<svg><g a=\"1\"/><text>x</text></svg>").unwrap(),
        "svg"
    );
    assert!(check_xml("<svg><g></svg>").is_err());
    assert!(check_xml("<svg></svg><svg></svg>").is_err());
    assert!(check_xml("<svg a=\"1></svg>").is_err());
}

#[test]
fn every_format_renders_a_run() {
    let r = example::cybertec_10m("20260301T100000Z-abcd");
    let table = report::render(&r, Format::Table);
    assert!(
        table.starts_with("index-build · cybertec-quick\n"),
        "{table}"
    );
    for needle in [
        "Summary",
        "Trials",
        "random: 16MB fastest (11.6 s, median of 3); 1GB is 12% slower",
        "SET maintenance_work_mem = '16MB';",
        "PostgreSQL 15.18",
        "AMD EPYC 7B13",
    ] {
        assert!(table.contains(needle), "{needle} missing from:\n{table}");
    }
    // Columns line up: every row of the summary is as wide as its rule.
    let summary: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("Summary"))
        .skip(3)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(summary.len(), 10);
    let widths: Vec<usize> = summary.iter().map(|l| l.chars().count()).collect();
    assert!(widths.windows(2).all(|w| w[0] == w[1]), "{summary:#?}");

    let json = report::render(&r, Format::Json);
    let back: RunReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r);

    let csv = report::render(&r, Format::Csv);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 31);
    let header: Vec<&str> = lines[0].split(',').collect();
    for col in [
        "run_id",
        "order",
        "maintenance_work_mem",
        "seconds",
        "repeat",
    ] {
        assert!(header.contains(&col), "{col} not in {header:?}");
    }
    assert!(lines[1].starts_with("20260301T100000Z-abcd,index-build,"));
    assert!(csv.contains("\"building index: scanning table\"") || csv.contains("phase_seconds."));

    let md = report::render(&r, Format::Md);
    assert!(md.starts_with("# index-build · cybertec-quick"), "{md}");
    assert!(md.contains("| maintenance_work_mem |") || md.contains("maintenance_work_mem |"));
}

#[test]
fn the_recommendation_is_evidence() {
    let r = example::cybertec_10m("r");
    let c = report::content::content(&r);
    let random = c
        .recommendations
        .iter()
        .find(|x| x.text.contains("random index"))
        .unwrap();
    assert!(
        random.text.starts_with(
            "On this host and data, `maintenance_work_mem = 16MB` built the random index fastest (11.6 s, median of 3); 1GB was 12% slower"
        ),
        "{}",
        random.text
    );
    assert_eq!(random.sql, ["SET maintenance_work_mem = '16MB';"]);
    // Sorted: 1GB is fastest, so the comparison is with the slowest setting, and what is within
    // noise of it is named.
    let sorted = c
        .recommendations
        .iter()
        .find(|x| x.text.contains("sorted index"))
        .unwrap();
    assert!(
        sorted.text.contains("1MB was 54% slower"),
        "{}",
        sorted.text
    );
    assert!(
        c.recommendations
            .last()
            .unwrap()
            .text
            .contains("Measured on 10M int4 rows")
    );
}

#[test]
fn pglab_report_writes_markdown_and_a_valid_chart() {
    let dir = common::temp_dir("report");
    let history = dir.join("data").join("history.jsonl");
    pglab::history::append(&history, &example::cybertec_10m("20260301T100000Z-abcd")).unwrap();
    let out_md = dir.join("out").join("cyber.md");
    // A directory that does not exist is refused, not created behind the user's back.
    let o = std::process::Command::new(common::TestLab::bin())
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .args(["report", "last", "--out"])
        .arg(&out_md)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("does not exist") && err.contains("mkdir -p"),
        "{err}"
    );
    assert!(!dir.join("out").exists());
    std::fs::create_dir(dir.join("out")).unwrap();
    let o = std::process::Command::new(common::TestLab::bin())
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .args(["report", "last", "--out"])
        .arg(&out_md)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("cyber.md") && stdout.contains("cyber.svg"),
        "{stdout}"
    );

    let md = std::fs::read_to_string(&out_md).unwrap();
    for needle in [
        "# index-build · cybertec-quick",
        "## What was run",
        "## Where",
        "## Results",
        "![index-build · cybertec-quick](cyber.svg)",
        "## Summary and recommendation",
        "```sql\nSET maintenance_work_mem = '16MB';\n```",
        "| shared_buffers | 128MB |",
        "## Trials",
    ] {
        assert!(md.contains(needle), "{needle} missing from:\n{md}");
    }

    let svg = std::fs::read_to_string(Path::new(&dir.join("out").join("cyber.svg"))).unwrap();
    assert_eq!(check_xml(&svg), Ok("svg".to_string()));
    assert!(svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.contains(chart::MWM_AXIS) && svg.contains(chart::SECONDS_AXIS));

    // An unknown run is a usage error that says what to do.
    let o = std::process::Command::new(common::TestLab::bin())
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .args(["report", "2019"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("pglab history list"));
    let _ = std::fs::remove_dir_all(dir);
}
