//! Text helpers for the panes: inline sparklines, fitting text into a width without cutting a
//! word, packing items into rows, and formatting values with their units.

use ratatui::text::Span;

use crate::measure::units::{format_bytes_short, format_count, format_rate, format_seconds};

/// Display width of a string (terminal columns).
pub(crate) fn width(s: &str) -> usize {
    Span::raw(s).width()
}

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The last `cols` values as a bar string, scaled to `max` (or to the largest shown value),
/// right-aligned: the newest reading is the rightmost bar. NaN shows as a gap.
pub(crate) fn spark<'a>(
    values: impl DoubleEndedIterator<Item = &'a f64>,
    cols: usize,
    max: Option<f64>,
) -> String {
    let mut shown: Vec<f64> = values.rev().take(cols).copied().collect();
    shown.reverse();
    let top = max.unwrap_or_else(|| {
        shown
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
    });
    let mut s = String::with_capacity(cols * 3);
    for _ in shown.len()..cols {
        s.push(' ');
    }
    for v in shown {
        if !v.is_finite() {
            s.push(' ');
        } else if top <= 0.0 || v <= 0.0 {
            s.push(BARS[0]);
        } else {
            let i = ((v / top).clamp(0.0, 1.0) * 7.0).round() as usize;
            s.push(BARS[i.min(7)]);
        }
    }
    s
}

/// Like [`spark`], scaled from the smallest to the largest shown value, for series whose
/// variation matters more than their size (run times in the history strip).
pub(crate) fn spark_range<'a>(
    values: impl DoubleEndedIterator<Item = &'a f64>,
    cols: usize,
) -> String {
    let shown: Vec<f64> = values.rev().take(cols).copied().collect();
    let lo = shown.iter().copied().fold(f64::INFINITY, f64::min);
    let shifted: Vec<f64> = shown.iter().rev().map(|v| v - lo).collect();
    let top = shifted.iter().copied().fold(0.0, f64::max);
    if top <= 0.0 {
        return spark(shown.iter().rev(), cols, None);
    }
    spark(shifted.iter(), cols, Some(top))
}

/// `s` if it fits in `cols`; otherwise cut at the last word or list boundary that fits, with
/// an ellipsis. A single word longer than the width is cut with an ellipsis as a last resort.
pub(crate) fn fit(s: &str, cols: usize) -> String {
    if width(s) <= cols {
        return s.to_string();
    }
    if cols == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut last_boundary = None;
    for (i, c) in s.char_indices() {
        if width(&s[..i + c.len_utf8()]) > cols - 1 {
            break;
        }
        if matches!(c, ' ' | ',' | '·' | '/' | ';') {
            last_boundary = Some(if c == ' ' { i } else { i + c.len_utf8() });
        }
        out.push(c);
    }
    if let Some(b) = last_boundary
        && b > 0
    {
        out.truncate(b);
    }
    let mut t = out.trim_end().to_string();
    t.push('…');
    t
}

/// Fit `s` into `cols` columns by cutting its middle: what tells names apart is often at
/// their end (`…_by_month_36`), and their start says where they live (`sales_history.`).
pub(crate) fn fit_middle(s: &str, cols: usize) -> String {
    if width(s) <= cols {
        return s.to_string();
    }
    if cols < 5 {
        return fit(s, cols);
    }
    let chars: Vec<char> = s.chars().collect();
    let tail_w = (cols - 1) / 2;
    let mut tail = String::new();
    for c in chars.iter().rev() {
        let t = format!("{c}{tail}");
        if width(&t) > tail_w {
            break;
        }
        tail = t;
    }
    let head_w = cols - 1 - width(&tail);
    let mut head = String::new();
    for c in &chars {
        head.push(*c);
        if width(&head) > head_w {
            head.pop();
            break;
        }
    }
    format!("{head}…{tail}")
}

/// Pack items into rows of at most `cols`, separated by `sep`, in order; an item that does not
/// fit on the current row starts the next. At most `rows` rows; what does not fit is left out.
pub(crate) fn pack(items: &[String], cols: usize, sep: &str, rows: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if rows == 0 {
        return out;
    }
    let mut cur = String::new();
    for item in items {
        let item = fit(item, cols);
        if cur.is_empty() {
            cur = item;
        } else if width(&cur) + width(sep) + width(&item) <= cols {
            cur.push_str(sep);
            cur.push_str(&item);
        } else {
            out.push(std::mem::take(&mut cur));
            if out.len() == rows {
                return out;
            }
            cur = item;
        }
    }
    if !cur.is_empty() && out.len() < rows {
        out.push(cur);
    }
    out
}

/// Wrap prose at word boundaries into at most `rows` rows of `cols`; the last row ends in an
/// ellipsis when text was left out.
pub(crate) fn wrap(s: &str, cols: usize, rows: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let words: Vec<&str> = s.split_whitespace().collect();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let candidate = if cur.is_empty() {
            w.to_string()
        } else {
            format!("{cur} {w}")
        };
        if width(&candidate) <= cols {
            cur = candidate;
            i += 1;
            continue;
        }
        if cur.is_empty() {
            // One word longer than the row.
            cur = fit(w, cols);
            i += 1;
        }
        if out.len() + 1 == rows {
            let rest = format!("{cur} {}", words[i..].join(" "));
            out.push(fit(&rest, cols));
            return out;
        }
        out.push(std::mem::take(&mut cur));
    }
    if !cur.is_empty() && out.len() < rows {
        out.push(cur);
    }
    out
}

/// Pad (or fit) to exactly `cols` columns, left-aligned.
pub(crate) fn pad(s: &str, cols: usize) -> String {
    let s = fit(s, cols);
    let w = width(&s);
    format!("{s}{}", " ".repeat(cols.saturating_sub(w)))
}

/// Pad to `cols` columns, right-aligned.
pub(crate) fn pad_left(s: &str, cols: usize) -> String {
    let s = fit(s, cols);
    let w = width(&s);
    format!("{}{s}", " ".repeat(cols.saturating_sub(w)))
}

/// A value in its unit, for tick labels and readouts: bytes as `16 MB`, seconds as `8.2 s`,
/// counts as `12.3k`, rates as `1.2M rows/s`.
pub(crate) fn with_unit(v: f64, unit: &str) -> String {
    if v == 0.0 {
        return match unit {
            "bytes" | "B" | "byte" => "0 B".into(),
            "s" | "seconds" | "sec" | "ms" => "0 s".into(),
            _ => "0".into(),
        };
    }
    let s = with_unit_raw(v, unit);
    // "16.0 MB" reads better as "16 MB".
    match s.find(".0 ") {
        Some(i) if !s[..i].contains('.') => format!("{}{}", &s[..i], &s[i + 2..]),
        _ => s,
    }
}

/// Seconds readable at every scale: "0.35 ms", "3.5 ms", "58 ms", "1.2 s".
fn seconds(s: f64) -> String {
    let a = s.abs();
    if a > 0.0 && a < 0.001 {
        format!("{:.2} ms", s * 1000.0)
    } else if a > 0.0 && a < 0.01 {
        format!("{:.1} ms", s * 1000.0)
    } else {
        format_seconds(s)
    }
}

/// Two values in one unit, said once when both print with it: "40–50 ms", "0.34–3.5 ms",
/// "850 ms–1.2 s".
pub(crate) fn span_with_unit(lo: f64, hi: f64, unit: &str) -> String {
    // Both ends with their decimals ("5.0–5.4 s", not "5–5.4 s").
    let end = |v: f64| {
        if v == 0.0 {
            with_unit(v, unit)
        } else {
            with_unit_raw(v, unit)
        }
    };
    let (a, b) = (end(lo), end(hi));
    match (a.rsplit_once(' '), b.rsplit_once(' ')) {
        (Some((an, au)), Some((_, bu)))
            if au == bu && !au.contains(|c: char| c.is_ascii_digit()) =>
        {
            format!("{an}–{b}")
        }
        _ => format!("{a}–{b}"),
    }
}

fn with_unit_raw(v: f64, unit: &str) -> String {
    match unit {
        "bytes" | "B" | "byte" => format_bytes_short(v),
        "bytes/s" | "B/s" => format!("{}/s", format_bytes_short(v)),
        "s" | "seconds" | "sec" => seconds(v),
        "ms" => seconds(v / 1000.0),
        "%" | "percent" => format!("{v:.0}%"),
        "" | "count" | "rows" | "n" => format_count(v),
        rate if rate.ends_with("/s") => format!("{} {rate}", format_rate(v)),
        other => format!("{} {other}", format_count(v)),
    }
}

/// Units that [`with_unit`] already writes into the number.
pub(crate) fn unit_in_value(unit: &str) -> bool {
    matches!(
        unit,
        "bytes"
            | "B"
            | "byte"
            | "bytes/s"
            | "B/s"
            | "s"
            | "seconds"
            | "sec"
            | "ms"
            | "%"
            | "percent"
    )
}

/// `text` with each `--key` flag of `keys` written as the field's name `key` (a longer key
/// that starts alike is not cut: `--max-repeat` stays whole when `max` is also a key).
pub(crate) fn fields_by_name<'a>(text: &str, keys: impl Iterator<Item = &'a str>) -> String {
    let mut keys: Vec<&str> = keys.collect();
    keys.sort_by_key(|k| std::cmp::Reverse(k.len()));
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("--") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let key = keys.iter().find(|k| {
            after.starts_with(**k)
                && !after[k.len()..]
                    .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
        match key {
            Some(k) => {
                out.push_str(k);
                rest = &after[k.len()..];
            }
            None => {
                out.push_str("--");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A spinner frame for `tick` (advanced by the clock).
pub(crate) fn spinner(tick: u64) -> char {
    const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    FRAMES[(tick % FRAMES.len() as u64) as usize]
}

/// "3 s ago", "5 min ago", "2 h ago".
pub(crate) fn age(secs: f64) -> String {
    if secs < 60.0 {
        format!("{:.0} s ago", secs.max(0.0))
    } else if secs < 3600.0 {
        format!("{:.0} min ago", secs / 60.0)
    } else {
        format!("{:.0} h ago", secs / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spark_is_right_aligned_and_scaled() {
        let v = [0.0, 1.0, 2.0, 4.0];
        assert_eq!(spark(v.iter(), 6, None), "  ▁▃▅█");
        assert_eq!(spark(v.iter(), 2, None), "▅█");
        assert_eq!(spark([0.0, 0.0].iter(), 2, None), "▁▁");
        assert_eq!(spark([f64::NAN, 1.0].iter(), 2, Some(1.0)), " █");
        assert_eq!(spark_range([10.0, 11.0, 12.0].iter(), 3), "▁▅█");
        assert_eq!(spark_range([10.0, 10.0].iter(), 3), " ██");
    }

    #[test]
    fn fit_middle_keeps_both_ends_within_the_width() {
        let name = "sales_history_archive.order_line_items_partitioned_by_month_36";
        for cols in [8, 20, 49, 61] {
            let f = fit_middle(name, cols);
            assert!(width(&f) <= cols, "{f} at {cols}");
            assert!(f.starts_with("sal") && f.ends_with('6'), "{f}");
        }
        assert_eq!(fit_middle("public.t", 20), "public.t");
        assert!(fit_middle(name, 49).ends_with("_month_36"));
        assert_eq!(width(&fit("…", 1)), 1, "an ellipsis is one column");
    }

    #[test]
    fn fit_cuts_at_boundaries() {
        assert_eq!(fit("1MB,16MB,64MB", 20), "1MB,16MB,64MB");
        assert_eq!(fit("1MB,16MB,64MB,256MB", 12), "1MB,16MB,…");
        assert_eq!(fit("hello wonderful world", 12), "hello…");
        assert_eq!(fit("abcdefghij", 5), "abcd…");
    }

    #[test]
    fn pack_and_wrap_keep_words_whole() {
        let items: Vec<String> = ["aaa bb", "cc", "dddd"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(pack(&items, 10, "  ", 3), ["aaa bb  cc", "dddd"]);
        assert_eq!(pack(&items, 10, "  ", 1), ["aaa bb  cc"]);
        assert_eq!(
            wrap("the quick brown fox jumps", 10, 5),
            ["the quick", "brown fox", "jumps"]
        );
        assert_eq!(
            wrap("the quick brown fox jumps", 10, 2),
            ["the quick", "brown…"]
        );
    }

    #[test]
    fn flags_become_field_names() {
        let keys = ["mwm", "workers", "repeat", "max-repeat"];
        assert_eq!(
            fields_by_name(
                "maintenance_work_mem is this experiment's own knob: sweep it with --mwm",
                keys.iter().copied()
            ),
            "maintenance_work_mem is this experiment's own knob: sweep it with mwm"
        );
        // Not a field here (a global flag), or a longer word: left alone.
        assert_eq!(
            fields_by_name("run with --citus-workers 2 or --mwmx", keys.iter().copied()),
            "run with --citus-workers 2 or --mwmx"
        );
        assert_eq!(
            fields_by_name("--max-repeat 10 and --repeat auto", keys.iter().copied()),
            "max-repeat 10 and repeat auto"
        );
    }

    #[test]
    fn units() {
        assert_eq!(with_unit(16.0 * 1024.0 * 1024.0, "bytes"), "16 MB");
        assert_eq!(with_unit(1.5 * 1024.0 * 1024.0, "bytes"), "1.5 MB");
        assert_eq!(with_unit(0.0, "s"), "0 s");
        assert_eq!(with_unit(8.2, "s"), "8.2 s");
        assert_eq!(with_unit(12345.0, "rows/s"), "12.3k rows/s");
        // Short times keep their digits.
        assert_eq!(with_unit(0.00035, "s"), "0.35 ms");
        assert_eq!(with_unit(0.0035, "s"), "3.5 ms");
        assert_eq!(with_unit(0.058, "s"), "58 ms");
        assert_eq!(span_with_unit(0.040, 0.050, "s"), "40–50 ms");
        assert_eq!(span_with_unit(0.85, 1.2, "s"), "850 ms–1.2 s");
        assert_eq!(span_with_unit(1e3, 2e3, "rows/s"), "1.00k–2.00k rows/s");
    }
}
