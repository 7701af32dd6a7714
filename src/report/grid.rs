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
    pub fn new(title: &str, headers: &[(&str, bool)]) -> Grid {
        Grid {
            title: title.to_string(),
            headers: headers.iter().map(|(h, _)| h.to_string()).collect(),
            numeric: headers.iter().map(|(_, n)| *n).collect(),
            rows: Vec::new(),
        }
    }
}
