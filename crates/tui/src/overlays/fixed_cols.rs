//! Tables wider than the screen scroll sideways with their first column (the names: a
//! setting, a series, a run) kept in place, so what a row is stays in view.

/// The start of the second column of each line's table, for keeping the first column fixed:
/// tables are found as blocks (between blank lines) of two or more lines with gaps of two
/// spaces or more; the column boundary is the first gap that every such line of the block has
/// (or ends before). 0 for lines outside a table.
pub(crate) fn first_columns(lines: &[String]) -> Vec<usize> {
    let mut out = vec![0; lines.len()];
    let mut start = 0;
    for end in 0..=lines.len() {
        if end == lines.len() || lines[end].trim().is_empty() {
            block(lines, start, end, &mut out);
            start = end + 1;
        }
    }
    out
}

fn block(lines: &[String], start: usize, end: usize, out: &mut [usize]) {
    let rows: Vec<usize> = (start..end)
        .filter(|&i| lines[i].trim_start().contains("  "))
        .collect();
    if rows.len() < 2 {
        return;
    }
    let chars: Vec<Vec<char>> = rows.iter().map(|&i| lines[i].chars().collect()).collect();
    let gap_before = |c: &[char], p: usize| p >= c.len() || (c[p - 1] == ' ' && c[p - 2] == ' ');
    let first = &chars[0];
    let lead = first.iter().take_while(|c| **c == ' ').count();
    let found = (lead + 3..first.len())
        .filter(|&p| first[p] != ' ' && gap_before(first, p))
        .find(|&p| chars.iter().all(|c| gap_before(c, p)));
    if let Some(p) = found {
        for &i in &rows {
            out[i] = p;
        }
    }
}

/// `line` moved `by` columns to the left, its first `fixed` characters staying in place.
pub(crate) fn scrolled(line: &str, fixed: usize, by: usize) -> String {
    if by == 0 {
        return line.to_string();
    }
    let head: String = line.chars().take(fixed).collect();
    let tail: String = line.chars().skip(fixed + by).collect();
    head + &tail
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn the_name_column_stays_and_the_rest_moves() {
        let t = lines(
            "index-build comparison\n  baseline  x\n\nmedians\nsetting          baseline  candidate  change\nrandom @ 1 MB    92 ms     88 ms      -4%\nshared_buffers   128MB     1GB        ",
        );
        let f = first_columns(&t);
        assert_eq!(f[0], 0);
        assert_eq!(f[3], 0, "a title is no table row");
        assert_eq!(f[4], 17);
        assert_eq!(f[5], 17);
        assert_eq!(scrolled(&t[5], f[5], 10), "random @ 1 MB    88 ms      -4%");
        assert_eq!(scrolled(&t[5], f[5], 0), t[5]);
    }
}
