//! The keys every one-line text field of the UI shares (the preset name, the import's
//! conninfo, the tune's budget and settings, the history filter), so no field answers a key
//! the others do not: typed characters, Backspace, `C-u` clears, `C-w` drops the last word.
//! The parameter editor, which has a cursor, answers the same keys (see `panes::params`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Apply `ev` to `text` (the cursor is at the end). True when the key was a field key (the
/// text may be unchanged: Backspace on an empty field); false when the caller handles it.
pub(crate) fn edit(text: &mut String, ev: &KeyEvent) -> bool {
    let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
    match ev.code {
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char('u') if ctrl => text.clear(),
        KeyCode::Char('w') if ctrl => drop_word(text),
        KeyCode::Char(c)
            if !ev
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            text.push(c)
        }
        _ => return false,
    }
    true
}

/// `C-w` as in a shell: the spaces before the cursor, then the word before them.
pub(crate) fn drop_word(text: &mut String) {
    let kept = text.trim_end().len();
    text.truncate(kept);
    let start = text
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    text.truncate(start);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    #[test]
    fn typing_deleting_and_clearing() {
        let mut t = String::new();
        for c in "max_wal_size, jit".chars() {
            assert!(edit(&mut t, &k(KeyCode::Char(c), KeyModifiers::NONE)));
        }
        assert!(edit(&mut t, &k(KeyCode::Char('W'), KeyModifiers::SHIFT)));
        assert_eq!(t, "max_wal_size, jitW");
        edit(&mut t, &k(KeyCode::Backspace, KeyModifiers::NONE));
        edit(&mut t, &k(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(t, "max_wal_size, ");
        edit(&mut t, &k(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!(t, "");
        // Not field keys: the caller's.
        assert!(!edit(&mut t, &k(KeyCode::Enter, KeyModifiers::NONE)));
        assert!(!edit(&mut t, &k(KeyCode::Char('x'), KeyModifiers::ALT)));
        assert!(!edit(&mut t, &k(KeyCode::Char('r'), KeyModifiers::CONTROL)));
        assert_eq!(t, "");
    }

    #[test]
    fn dropping_a_word_keeps_what_is_before_it() {
        for (before, after) in [
            ("host=db1 dbname=sales", "host=db1 "),
            ("host=db1   ", ""),
            ("één twee  ", "één "),
            ("", ""),
        ] {
            let mut t = before.to_string();
            drop_word(&mut t);
            assert_eq!(t, after, "{before:?}");
        }
    }
}
