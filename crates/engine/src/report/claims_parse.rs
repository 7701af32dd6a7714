//! The claims a report's sentence makes about its settings, parsed from its words, for the
//! claims check (`claims_tests.rs`): what it advises, what it calls faster than every other,
//! which settings it says spilled or sorted in memory, and the old "a sort that fits needs no
//! more".

/// One claim of a sentence.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Claim {
    /// "use 100", "use 1MB, the cheapest of them": the words after "use" up to a comma, which
    /// begin with the label (labels may hold spaces: "1MB ×2w").
    Use(String),
    /// "4MB faster than every other setting", "64MB built the random index faster than …":
    /// the words before, which end with the label.
    FasterThanEvery(String),
    /// "1MB, 4MB and 16MB spilled to disk", "(1MB): the sort spilled".
    Spilled(Vec<String>),
    /// "64MB sorted in memory".
    InMemory(Vec<String>),
    /// "a sort that fits needs no more": the settings that may be best sorted in memory.
    FitsSoNoMore,
}

/// "1MB, 4MB and 16MB" → the labels.
fn labels(list: &str) -> Vec<String> {
    list.split(", ")
        .flat_map(|p| p.split(" and "))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The clause before byte `end`: back to the last "; ", ": ", ". " or "(".
fn clause_before(text: &str, end: usize) -> &str {
    let head = &text[..end];
    let start = ["; ", ": ", ". ", "("]
        .iter()
        .filter_map(|b| head.rfind(b).map(|i| i + b.len()))
        .max()
        .unwrap_or(0);
    &head[start..]
}

/// The word after each "use " that starts a word.
fn uses(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("use ") {
        let starts_word = i == 0 || text[..i].ends_with(' ');
        if !starts_word {
            continue;
        }
        let rest = &text[i + 4..];
        let word: String = rest
            .chars()
            .take_while(|c| !matches!(c, ',' | ';' | ':' | '.' | ')' | '('))
            .collect();
        let word = word.trim();
        if !word.is_empty() && !word.starts_with("it ") && word != "it" {
            out.push(Claim::Use(word.trim_matches('`').to_string()));
        }
    }
    out
}

fn faster_than_every(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices(" faster than every other setting") {
        let mut head = &text[..i];
        if let Some(j) = head.rfind(" built the ") {
            head = &head[..j];
        }
        let head = head.rsplit(": ").next().unwrap_or(head);
        let head = head.rsplit(", ").next().unwrap_or(head);
        out.push(Claim::FasterThanEvery(head.trim().to_string()));
    }
    out
}

fn sorts(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices(" spilled to disk") {
        out.push(Claim::Spilled(labels(clause_before(text, i))));
    }
    for (i, _) in text.match_indices(" sorted in memory") {
        out.push(Claim::InMemory(labels(clause_before(text, i))));
    }
    for (i, _) in text.match_indices("): the sort spilled") {
        let open = text[..i].rfind('(').map_or(0, |j| j + 1);
        out.push(Claim::Spilled(labels(&text[open..i])));
    }
    if text.contains("a sort that fits needs no more") {
        out.push(Claim::FitsSoNoMore);
    }
    out
}

/// Every claim of `text`.
pub(crate) fn claims(text: &str) -> Vec<Claim> {
    let mut c = uses(text);
    c.extend(faster_than_every(text));
    c.extend(sorts(text));
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_read_from_the_words() {
        assert_eq!(
            claims("random: the best is among 1MB..16MB; use 1MB, the cheapest of them: +24%"),
            vec![Claim::Use("1MB".into())]
        );
        assert_eq!(
            claims("64MB sorted in memory (31.1 MB); 1MB, 4MB and 16MB spilled to disk (9.57 MB)"),
            vec![
                Claim::Spilled(vec!["1MB".into(), "4MB".into(), "16MB".into()]),
                Claim::InMemory(vec!["64MB".into()])
            ]
        );
        assert_eq!(
            claims(
                "On this host and data, 16MB built the random index faster than every other setting"
            ),
            vec![Claim::FasterThanEvery("16MB".into())]
        );
        assert_eq!(
            claims("Too little memory was slower here (1MB, 4MB): the sort spilled."),
            vec![Claim::Spilled(vec!["1MB".into(), "4MB".into()])]
        );
    }
}
