//! A table of results: a title, headers, which columns are numbers, and rows of text. Every
//! report format and the TUI's text views lay it out; nothing here renders.

/// A table of results.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub title: String,
    pub headers: Vec<String>,
    /// Right-align this column (numbers).
    pub numeric: Vec<bool>,
    pub rows: Vec<Vec<String>>,
}

impl Grid {
    /// Add a text column at the end, with each row's cell from `cells` (in row order): used
    /// for the swept server settings, present only when a run sweeps some.
    pub(crate) fn with_column(&mut self, header: &str, cells: impl IntoIterator<Item = String>) {
        self.headers.push(header.to_string());
        self.numeric.push(false);
        let mut cells = cells.into_iter();
        for row in &mut self.rows {
            row.push(cells.next().unwrap_or_default());
        }
    }

    pub fn new(title: &str, headers: &[(&str, bool)]) -> Grid {
        Grid {
            title: title.to_string(),
            headers: headers.iter().map(|(h, _)| h.to_string()).collect(),
            numeric: headers.iter().map(|(_, n)| *n).collect(),
            rows: Vec::new(),
        }
    }
}
