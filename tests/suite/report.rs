//! Reports: every format renders a run, `pglab report` writes the Markdown and a chart that is
//! well-formed SVG with its axes labelled.

use crate::common;

use std::path::Path;

use pglab::experiment::index_build::Order;
use pglab::experiment::{ReportBody, RunReport};
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
    let r = example::decided_10m("20260301T100000Z-abcd");
    let table = report::render(&r, Format::Table);
    assert!(
        table.starts_with("index-build · cybertec-quick\n"),
        "{table}"
    );
    for needle in [
        "Summary",
        "Trials",
        "random: 16MB..256MB are within 5% of the best (no significant difference); 16MB is enough, more bought nothing measurable",
        "sorted: no significant difference between 1MB..1GB: all within 5% of the best",
        "verdicts at 95% confidence for the 10 pairs together (each interval 99.5%)",
        "slower ×1.12 [×1.11, ×1.14]",
        "96.9%",
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
    // The numeric columns end where the last (text) column starts, two spaces before it.
    let header = table
        .lines()
        .skip_while(|l| !l.starts_with("Summary"))
        .nth(1)
        .unwrap();
    let at = header.find("vs best").unwrap();
    for row in &summary {
        let cells: Vec<char> = row.chars().collect();
        assert!(
            cells[at - 3] != ' ' && cells[at - 2] == ' ' && cells[at - 1] == ' ',
            "{summary:#?}"
        );
    }

    let json = report::render(&r, Format::Json);
    let back: RunReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r);

    let csv = report::render(&r, Format::Csv);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 61);
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

fn recommendations(r: &RunReport) -> Vec<report::recommend::Recommendation> {
    report::content::content(r).recommendations
}

fn sql(r: &RunReport) -> Vec<String> {
    recommendations(r).into_iter().flat_map(|x| x.sql).collect()
}

#[test]
fn the_recommendation_is_evidence() {
    let r = example::decided_10m("r");
    let c = recommendations(&r);
    let random = c.iter().find(|x| x.text.contains("random index")).unwrap();
    assert_eq!(
        random.text,
        "The random index: 16MB..256MB are within 5% of the best (no significant difference); 16MB is enough, more bought nothing measurable (at 95% confidence for the 10 pairs together (each interval 99.5%), 5% smallest effect). Slower than the best: 1MB ×1.10 [×1.09, ×1.12], 1GB ×1.12 [×1.11, ×1.14] (ratios to its time, above ×1 slower). The builds' sorts: 1MB, 16MB, 64MB and 256MB spilled to disk (229 MB written, median); 1GB sorted in memory (381 MB used, median). 1GB was slower than the best (16MB) although the best wrote its sort to disk and 1GB kept its in memory: no recorded fact explains it (the sort method would favour 1GB; the workers launched and the host load do not differ). No recorded fact explains why 1MB was slower than the best (16MB): the sort method, the workers launched and the host load do not differ in that direction."
    );
    assert_eq!(random.sql, ["SET maintenance_work_mem = '16MB';"]);
    // Sorted: every setting ties, so nothing is set.
    let sorted = c.iter().find(|x| x.text.contains("sorted index")).unwrap();
    assert!(
        sorted
            .text
            .ends_with("no significant difference between 1MB..1GB: all within 5% of the best (at 95% confidence for the 10 pairs together (each interval 99.5%), 5% smallest effect): keep the current setting."),
        "{}",
        sorted.text
    );
    assert!(sorted.sql.is_empty());
    // The orders disagree, and that is said.
    assert!(c.iter().any(|x| {
        x.text
            .starts_with("The orders disagree (sorted → no change, random → 16MB)")
    }));
    assert!(c.last().unwrap().text.contains("Measured on 10M int4 rows"));
}

#[test]
fn three_repeats_recommend_nothing_and_say_what_would_decide() {
    // The design notes' 3 repeats: five settings at once hold each pair to 99.5%; the sorted
    // builds' spread leaves four settings that may be the best, 1MB shown slower; the cheapest
    // of them is the one to use, with its interval against the best.
    let r = example::cybertec_10m("r");
    assert!(sql(&r).is_empty());
    let c = recommendations(&r);
    let ReportBody::IndexBuild(b) = &r.body else {
        panic!()
    };
    let n = b.summary.orders[0].finding.more_repeats_needed.unwrap();
    assert!(n >= 6, "{n}");
    assert!(
        c[0].text
            .contains("the best is among 16MB..1GB at 95%; 1MB (×1.53 [")
            && c[0]
                .text
                .contains("; use 16MB, the cheapest of them: ×1.06 [")
            && c[0]
                .text
                .contains("Spilling to disk explains why 1MB was slower than the best (1GB)")
            && c[0]
                .text
                .contains(&format!("Run again with repeat {n} or more (an estimate)")),
        "{}",
        c[0].text
    );
    let table = report::render(&r, Format::Table);
    assert!(
        !table.contains("fastest") && !table.contains("SET "),
        "{table}"
    );
}

#[test]
fn a_winner_is_set_and_the_cheapest_equivalent_is_enough() {
    let six = |base: f64| -> Vec<f64> {
        [0.99, 1.0, 1.01, 0.995, 1.005, 1.0]
            .iter()
            .map(|x| base * x)
            .collect()
    };
    let (a, b, c) = (six(8.0), six(6.0), six(7.0));
    let r = example::index_build(
        "w",
        1_000_000,
        &[
            (Order::Random, 0, "1MB", &a),
            (Order::Random, 0, "64MB", &b),
            (Order::Random, 0, "1GB", &c),
        ],
    );
    let rec = &recommendations(&r)[0];
    assert!(
        rec.text.starts_with(
            "On this host and data, 64MB built the random index faster than every other setting tried (6.0 s [5.9 s, 6.1 s], median of 6"
        ),
        "{}",
        rec.text
    );
    assert_eq!(rec.sql, ["SET maintenance_work_mem = '64MB';"]);

    // 1MB is shown within 5% of 64MB, 1GB is slower: the cheapest setting shown as good as
    // the best is PostgreSQL's minimum, and that is the answer (no floor changes it).
    let (a, b, c) = (six(6.02), six(6.0), six(7.0));
    let r = example::index_build(
        "t",
        1_000_000,
        &[
            (Order::Random, 0, "1MB", &a),
            (Order::Random, 0, "64MB", &b),
            (Order::Random, 0, "1GB", &c),
        ],
    );
    let rec = &recommendations(&r)[0];
    assert_eq!(
        rec.sql,
        ["SET maintenance_work_mem = '1MB';"],
        "{}",
        rec.text
    );
    assert!(rec.text.contains("1MB is enough"), "{}", rec.text);
    // At 0 and 2 workers, 1MB shown equivalent, 64MB slower: the workers made no difference
    // (shown), so only the memory is set.
    let r = example::index_build(
        "m",
        1_000_000,
        &[
            (Order::Random, 0, "1MB", &b),
            (Order::Random, 0, "64MB", &c),
            (Order::Random, 2, "1MB", &a),
            (Order::Random, 2, "64MB", &c),
        ],
    );
    assert_eq!(
        sql(&r),
        ["SET maintenance_work_mem = '1MB';"],
        "{:?}",
        recommendations(&r)
    );
    // A winner at the minimum is set too.
    let r = example::index_build(
        "w1",
        1_000_000,
        &[(Order::Random, 0, "1MB", &b), (Order::Random, 0, "1GB", &c)],
    );
    assert_eq!(sql(&r), ["SET maintenance_work_mem = '1MB';"]);
    // With workers swept and one memory: the workers made the difference, and only they are
    // set (the memory was not swept).
    let r = example::index_build(
        "p",
        1_000_000,
        &[
            (Order::Random, 0, "64MB", &c),
            (Order::Random, 2, "64MB", &b),
        ],
    );
    assert_eq!(sql(&r), ["SET max_parallel_maintenance_workers = 2;"]);
}

#[test]
fn one_setting_is_nothing_to_compare() {
    let r = example::index_build(
        "o",
        1_000_000,
        &[(Order::Random, 0, "64MB", &[6.0, 6.1, 5.9])],
    );
    let table = report::render(&r, Format::Table);
    assert!(
        table.contains("random: one setting run: nothing to compare"),
        "{table}"
    );
    assert!(!table.contains("fastest"));
    assert!(sql(&r).is_empty());
}

#[test]
fn pglab_report_writes_markdown_and_a_valid_chart() {
    let dir = common::temp_dir("report");
    let history = dir.join("data").join("history.jsonl");
    pglab::history::append(&history, &example::decided_10m("20260301T100000Z-abcd")).unwrap();
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

#[test]
fn json_follows_the_schema_with_intervals_and_verdict_words() {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../assets/schema/index-build.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let one = example::index_build("o", 1_000_000, &[(Order::Random, 0, "64MB", &[6.0])]);
    for r in [example::decided_10m("d"), example::cybertec_10m("c"), one] {
        let v: serde_json::Value = serde_json::from_str(&report::render(&r, Format::Json)).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&v)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", r.run_id);
    }
    let v = serde_json::to_value(example::decided_10m("d")).unwrap();
    let random = &v["summary"]["orders"][1];
    assert_eq!(random["order"], "random");
    assert_eq!(random["finding"]["verdict"], "no significant difference");
    assert_eq!(random["finding"]["recommendation"], "16MB");
    assert_eq!(
        random["finding"]["settings"][0]["vs_best"]["verdict"],
        "slower"
    );
    let stat = &v["summary"]["groups"][1]["by_mwm"][0];
    assert_eq!(
        (stat["n"].as_u64(), stat["vs_best"].as_str()),
        (Some(6), Some("slower"))
    );
    assert!(stat["ci_low"].as_f64() <= stat["median"].as_f64());
    let v = serde_json::to_value(example::cybertec_10m("c")).unwrap();
    assert_eq!(
        v["summary"]["orders"][0]["finding"]["verdict"],
        "too few trials"
    );
    assert!(
        v["summary"]["orders"][0]["finding"]["more_repeats_needed"]
            .as_u64()
            .is_some_and(|n| n >= 6)
    );
}

/// `pglab run EXPERIMENT … --yes` on the test sandbox, then `pglab report last --out`: the
/// Markdown and every SVG written beside it (name, text).
fn run_and_report(
    experiment: &str,
    args: &[&str],
    tag: &str,
) -> (String, Vec<(String, String)>, RunReport) {
    let lab = common::lab();
    let db = format!(
        "host={} port={} user=pglab dbname=pglab",
        lab.sandbox.root.display(),
        lab.port
    );
    let out = lab
        .command()
        .args([
            "--db", &db, "run", experiment, "--yes", "--format", "json", "--writes", "lab",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{experiment}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let record: RunReport = serde_json::from_slice(&out.stdout).expect("JSON report");
    let dir = common::temp_dir(tag);
    let md = dir.join(format!("{tag}.md"));
    let o = lab
        .command()
        .args(["report", &record.run_id, "--out"])
        .arg(&md)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let mut svgs = Vec::new();
    for line in stdout.lines().filter(|l| l.ends_with(".svg")) {
        let path = line.trim_start_matches("wrote ");
        let name = Path::new(path).file_name().unwrap().to_string_lossy();
        svgs.push((name.to_string(), std::fs::read_to_string(path).unwrap()));
    }
    let text = std::fs::read_to_string(&md).unwrap();
    let _ = std::fs::remove_dir_all(dir);
    (text, svgs, record)
}

/// The text elements of an SVG (plotters writes each on its own line after the tag).
fn svg_texts(svg: &str) -> Vec<String> {
    let lines: Vec<&str> = svg.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("<text"))
        .filter_map(|(i, _)| lines.get(i + 1).map(|t| t.trim().to_string()))
        .collect()
}

fn assert_chart(name: &str, svg: &str, axes: &[&str], legend: &[String]) {
    assert_eq!(check_xml(svg), Ok("svg".to_string()), "{name}");
    let texts = svg_texts(svg);
    for a in axes {
        assert!(texts.iter().any(|t| t == a), "{name}: no axis title {a}");
    }
    // Long legend entries wrap onto several text lines.
    let joined = texts.join(" ");
    for l in legend {
        assert!(
            joined.contains(l.as_str()),
            "{name}: {l} not in the legend: {texts:?}"
        );
    }
}

#[test]
fn an_ingest_report_has_tables_charts_and_advice_from_a_real_run() {
    use pglab::experiment::ReportBody;
    use pglab::report::chart_ingest as ci;
    let (md, svgs, record) = run_and_report(
        "ingest",
        &[
            "--method",
            "insert,copy",
            "--batch",
            "1,16",
            "--sync-commit",
            "on,off",
            "--rows",
            "200",
            "--repeat",
            "3",
        ],
        "ingest",
    );
    for needle in [
        "## What was run",
        "## Where",
        "## Results",
        "![ingest](ingest.svg)",
        "(ingest-latency.svg)",
        "### Rows per second by configuration (median over the repeats)",
        "| method | batch | clients | synchronous_commit | trials | rows/s |",
        "### Batch curves",
        "## Summary and recommendation",
        "Measured with 200 rows per trial",
        "## Trials",
    ] {
        assert!(md.contains(needle), "{needle} missing from:\n{md}");
    }
    // The raw reflection of the record (alphabetical JSON fields) is not the report.
    assert!(
        !md.contains("rows_per_s") && !md.contains("knee_rows_per_s"),
        "{md}"
    );
    let names: Vec<&str> = svgs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names[..3],
        [
            "ingest.svg",
            "ingest-latency.svg",
            "ingest-commit-latency.svg"
        ]
    );
    // The levels varied: commit latency per level, a legend entry per percentile.
    use pglab::report::chart_commit as cc;
    let percentiles: Vec<String> = ["p50, the median", "p99", "p99.9", "max"]
        .map(String::from)
        .to_vec();
    assert_chart(
        "commit latency",
        &svgs[2].1,
        &[cc::LEVEL_AXIS, cc::COMMIT_AXIS],
        &percentiles,
    );
    // Every trial shows the load generator's CPU share (and the host's) as a percentage.
    let trials = &md[md.find("## Trials").unwrap()..];
    let mut rows = trials.lines().filter(|l| l.starts_with('|'));
    let header: Vec<&str> = rows.next().unwrap().split('|').map(str::trim).collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (pglab_cpu, host_cpu) = (col("pglab CPU"), col("host CPU"));
    let cells: Vec<Vec<&str>> = rows
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    // insert runs at batch 1 only: (1 + 2) batches × 2 sync × 3 repeats.
    assert_eq!(cells.len(), 3 * 2 * 3, "{trials}");
    // /proc/stat counts in 10 ms ticks: a trial shorter than one may show no host share.
    for row in &cells {
        assert!(row[pglab_cpu].ends_with('%'), "{trials}");
        assert!(
            row[host_cpu].ends_with('%') || row[host_cpu] == "–",
            "{trials}"
        );
    }
    assert!(cells.iter().any(|r| r[host_cpu].ends_with('%')), "{trials}");
    let ReportBody::Ingest(b) = &record.body else {
        panic!("not ingest")
    };
    let mut curves = Vec::new();
    for m in ["insert", "copy"] {
        for s in ["on", "off"] {
            curves.push(format!("{m} · 1 client · sync {s}"));
        }
    }
    let mut legend = curves.clone();
    if let Some(f) = &b.fsync {
        legend.push(format!(
            "fsync ceiling: {} flushes/s = rows/s at one row per commit",
            pglab::measure::units::format_count(f.ops_per_s.round())
        ));
    }
    assert_chart(
        "rate",
        &svgs[0].1,
        &[ci::BATCH_AXIS, ci::RATE_AXIS],
        &legend,
    );
    let lat: Vec<String> = curves
        .iter()
        .flat_map(|c| [format!("{c} · p50"), format!("{c} · p99")])
        .collect();
    assert_chart(
        "latency",
        &svgs[1].1,
        &[ci::BATCH_AXIS, ci::LATENCY_AXIS],
        &lat,
    );
    // With the Host pane's sequential-write probe (the TUI passes it), the disk's ceiling in
    // rows/s is drawn too.
    let mut probed = (**b).clone();
    probed.params.seq_write_bytes_per_s = Some(200e6);
    let main = &ci::charts(&probed)[0].svg;
    assert!(
        main.contains("sequential-write ceiling: "),
        "no ceiling line"
    );
    assert!(main.contains("WAL"), "the ceiling names what it divides by");
}

#[test]
fn a_growth_report_with_the_uuid_shape_compares_bytes_per_row_with_the_seed() {
    use pglab::experiment::ReportBody;
    use pglab::experiment::growth::KeyShape;
    use pglab::report::chart_growth as cg;
    let (md, svgs, record) = run_and_report(
        "growth",
        &[
            "--key-shape",
            "uuid",
            "--units",
            "500",
            "--steps",
            "0,4,20",
            "--repeat",
            "3",
            "--target-rows",
            "1M",
        ],
        "growth",
    );
    let ReportBody::Growth(b) = &record.body else {
        panic!("not growth")
    };
    assert_eq!(b.params.key_shape, KeyShape::Uuid);
    // Both designs held the same content with UUID keys.
    assert_eq!(b.summary.same_content, Some(true));
    let s = b
        .steps
        .iter()
        .filter(|s| s.design.as_str() == "snapshot" && !s.projected)
        .max_by_key(|s| s.rows)
        .unwrap();
    assert_eq!(s.rows, 10_000);
    let table = s.table_bytes as f64 / s.rows as f64;
    // A tuple header, three 16-byte UUIDs and a line pointer: the seed's 77 B a row.
    assert!((70.0..=90.0).contains(&table), "table {table} B/row");
    let index = s.index_total() as f64 / s.rows as f64;
    assert!((60.0..=200.0).contains(&index), "indexes {index} B/row");
    for needle in [
        "### The decision at 2000 versions",
        "indexes fit in RAM",
        "(key-shape uuid): table",
        "(seed ≈ 77 B)",
        "(seed ≈ 180 B at 1000 versions × 10k units)",
        "B-tree deduplication",
        "### Steps",
        "| design | versions | rows |",
        "### ranges against snapshot",
    ] {
        assert!(md.contains(needle), "{needle} missing from:\n{md}");
    }
    assert!(
        md.contains("points to **ranges**") || md.contains("A trade-off"),
        "{md}"
    );
    let names: Vec<&str> = svgs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["growth.svg", "growth-time.svg"]);
    // Projected series say how far they are carried: snapshot's 10k rows to 1M (×100),
    // ranges' 595 rows (500 units, 5 replaced a version) to 10,495 (×18).
    let carried = |d: &str| match d {
        "snapshot" => "extrapolated ×100)",
        _ => "extrapolated ×18)",
    };
    let mut legend = Vec::new();
    for (d, rels) in [
        (
            "snapshot",
            &[
                "table",
                "index content",
                "index pk",
                "index version",
                "index version_content",
            ][..],
        ),
        (
            "ranges",
            &["table", "index content", "index pk", "index versions"][..],
        ),
    ] {
        for r in rels {
            legend.push(format!("{d} {r}"));
            legend.push(format!("{d} {r} (linear, {}", carried(d)));
        }
    }
    assert_chart(
        "size",
        &svgs[0].1,
        &[cg::VERSIONS_AXIS, cg::SIZE_AXIS],
        &legend,
    );
    // The sandbox's filesystem is visible: the free disk at the start is a reference line.
    let ReportBody::Growth(g) = &record.body else {
        panic!("a growth record")
    };
    assert!(g.free_bytes.is_some_and(|f| f > 0));
    assert!(
        svgs[0].1.contains("free disk at the start"),
        "no free-disk line"
    );
    // The 0-version step is on the log axis, at its start, labelled "0".
    assert!(svg_texts(&svgs[0].1).iter().any(|t| t == "0"));
    assert!(svgs[0].1.contains("host RAM "));
    let times: Vec<String> = ["snapshot", "ranges"]
        .iter()
        .flat_map(|d| {
            ["write", "read"].iter().flat_map(move |w| {
                [
                    format!("{d} {w}"),
                    format!("{d} {w} ("),
                    format!(", {}", carried(d)),
                ]
            })
        })
        .collect();
    assert_chart(
        "time",
        &svgs[1].1,
        &[cg::VERSIONS_AXIS, cg::TIME_AXIS],
        &times,
    );
    assert!(svg_texts(&svgs[1].1).iter().any(|t| t == "0"));
}

/// `pglab ARGS` in `cwd` on the history in `dir`.
fn pglab_in(dir: &Path, cwd: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(common::TestLab::bin())
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .current_dir(cwd)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn pglab_report_prints_any_format_and_replaces_no_file_unasked() {
    let dir = common::temp_dir("report-formats");
    let id = "20260301T100000Z-beef";
    pglab::history::append(
        &dir.join("data").join("history.jsonl"),
        &example::decided_10m(id),
    )
    .unwrap();
    // --format: the report on stdout, nothing written.
    let o = pglab_in(&dir, &dir, &["report", "last", "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["run_id"], id);
    let o = pglab_in(&dir, &dir, &["report", "last", "--format", "csv"]);
    let csv = String::from_utf8_lossy(&o.stdout);
    assert!(csv.starts_with("run_id,experiment,started_at"), "{csv}");
    assert!(!dir.join(format!("pglab-{id}.md")).exists());

    // The default name, twice: the second is numbered and says so.
    let o = pglab_in(&dir, &dir, &["report", "last"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(dir.join(format!("pglab-{id}.md")), "my notes").unwrap();
    let o = pglab_in(&dir, &dir, &["report", "last"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "pglab-{id}.md and pglab-{id}.svg already there: writing pglab-{id}-2.md"
        )),
        "{err}"
    );
    assert!(dir.join(format!("pglab-{id}-2.md")).exists());
    assert_eq!(
        std::fs::read_to_string(dir.join(format!("pglab-{id}.md"))).unwrap(),
        "my notes"
    );

    // A path given with --out that is there: refused, untouched, unless --force.
    let mine = dir.join("mine.json");
    std::fs::write(&mine, "keep").unwrap();
    let mine_s = mine.to_str().unwrap();
    let o = pglab_in(
        &dir,
        &dir,
        &["report", "last", "--format", "json", "--out", mine_s],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("already there; add --force to replace it"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "keep");
    let o = pglab_in(
        &dir,
        &dir,
        &[
            "report", "last", "--format", "json", "--out", mine_s, "--force",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mine).unwrap()).unwrap();
    assert_eq!(v["run_id"], id);
    let _ = std::fs::remove_dir_all(dir);
}
