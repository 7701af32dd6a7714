//! Where a conninfo holds a password, so the import dialog never shows one: masked while it
//! is typed (as psql does not echo it), cut out once it is given. Works on half-typed text:
//! `password=se` and `postgresql://me:se` are already masked.

use std::ops::Range;

/// The byte ranges of `s` that are a password: the value of `password=` (key=value form,
/// quoted or not, and in a URL's query) and the one in a URL's `user:password@`.
pub(crate) fn password_ranges(s: &str) -> Vec<Range<usize>> {
    let mut out = keyword_values(s);
    if let Some(r) = url_password(s) {
        out.push(r);
    }
    out.sort_by_key(|r| r.start);
    out
}

/// `s` with every character of a password shown as `•`.
pub(crate) fn mask(s: &str) -> String {
    replace(s, |secret| "•".repeat(secret.chars().count()))
}

/// `s` with every password replaced by `…` (its length not shown either).
pub(crate) fn redact(s: &str) -> String {
    replace(s, |_| "…".to_string())
}

fn replace(s: &str, by: impl Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut at = 0;
    for r in password_ranges(s) {
        if r.start < at {
            continue;
        }
        out.push_str(&s[at..r.start]);
        out.push_str(&by(&s[r.clone()]));
        at = r.end;
    }
    out.push_str(&s[at..]);
    out
}

/// The values of `password` keywords: `password=x`, `password = 'a b'`, `?password=x&…`.
fn keyword_values(s: &str) -> Vec<Range<usize>> {
    let lower = s.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = lower[from..].find("password") {
        let start = from + i;
        from = start + "password".len();
        let before = lower[..start].chars().next_back();
        if before.is_some_and(|c| !(c.is_whitespace() || c == '?' || c == '&')) {
            continue;
        }
        let rest = &s[from..];
        let spaces = rest.len() - rest.trim_start().len();
        let Some(after_eq) = rest.trim_start().strip_prefix('=') else {
            continue;
        };
        let value_at = from + spaces + 1 + (after_eq.len() - after_eq.trim_start().len());
        let end = value_end(s, value_at);
        let first = value_at + usize::from(s[value_at..].starts_with('\''));
        if end > first {
            out.push(first..end);
        }
        from = end.max(from);
    }
    out
}

/// Where a value starting at `at` ends: at its closing quote (kept visible) when quoted,
/// else at a space or `&`; the end of the text while it is still being typed.
fn value_end(s: &str, at: usize) -> usize {
    let v = &s[at..];
    if let Some(q) = v.strip_prefix('\'') {
        let mut escaped = false;
        for (i, c) in q.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '\'' if !escaped => return at + 1 + i,
                _ => escaped = false,
            }
        }
        return s.len();
    }
    v.find(|c: char| c.is_whitespace() || c == '&')
        .map_or(s.len(), |i| at + i)
}

/// The password of `scheme://user:password@host`. While the `@` is not typed yet, what
/// follows the `:` is masked too unless it is a port (digits).
fn url_password(s: &str) -> Option<Range<usize>> {
    let start = s.len() - s.trim_start().len();
    let lower = s.to_ascii_lowercase();
    let scheme_end = ["postgresql://", "postgres://"]
        .iter()
        .find(|p| lower[start..].starts_with(*p))
        .map(|p| start + p.len())?;
    let rest = &s[scheme_end..];
    let authority_end = rest
        .find(|c: char| c == '/' || c == '?' || c.is_whitespace())
        .unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let colon = authority.find(':')?;
    match authority.rfind('@') {
        Some(at) if at > colon => Some(scheme_end + colon + 1..scheme_end + at),
        Some(_) => None,
        None => {
            let still_typing = authority_end == rest.len();
            let after = &authority[colon + 1..];
            let port = after.chars().all(|c| c.is_ascii_digit() || c == ',');
            (still_typing && !port && !after.is_empty())
                .then(|| scheme_end + colon + 1..scheme_end + authority_end)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_masked_as_it_is_typed() {
        for (typed, shown) in [
            ("host=db1 password=se", "host=db1 password=••"),
            (
                "host=db1 password = 'a b' user=me",
                "host=db1 password = '•••' user=me",
            ),
            ("password='it\\'s", "password='•••••"),
            ("PASSWORD=x dbname=s", "PASSWORD=• dbname=s"),
            ("postgresql://me:se", "postgresql://me:••"),
            (
                "postgresql://me:secret@db1/sales",
                "postgresql://me:••••••@db1/sales",
            ),
            (
                "postgres://db1/s?user=me&password=pw&sslmode=require",
                "postgres://db1/s?user=me&password=••&sslmode=require",
            ),
            // Not passwords: a port, a user without one, a key that only ends in the word.
            ("postgresql://db1:5432", "postgresql://db1:5432"),
            ("postgresql://me@db1:5432/s", "postgresql://me@db1:5432/s"),
            (
                "host=db1 mypassword=x passfile=/p",
                "host=db1 mypassword=x passfile=/p",
            ),
            ("host=db1 password", "host=db1 password"),
        ] {
            assert_eq!(mask(typed), shown, "{typed}");
        }
    }

    #[test]
    fn a_given_password_is_cut_out() {
        assert_eq!(
            redact("host=db1 password=x user=me"),
            "host=db1 password=… user=me"
        );
        assert_eq!(
            redact("postgresql://me:secret@db1/sales"),
            "postgresql://me:…@db1/sales"
        );
        assert_eq!(
            redact("postgresql://me@db1/sales"),
            "postgresql://me@db1/sales"
        );
    }
}
