//! The verify key (`V`): the last two windows recorded with `W` compared as `pglab verify`
//! compares two files, in a scrollable view. The comparison reads two files of pglab's data
//! directory and sends nothing to any server.

use super::app::{App, Level, Overlay};
use super::keys::{Action, Key};
use super::msg::{Command, VerifiedWindows};
use super::overlays::verify::{self, VerifyView};

pub(crate) fn request(app: &mut App) -> Vec<Command> {
    app.notify(Level::Info, "comparing the last two windows recorded…");
    vec![Command::CompareWindows]
}

pub(crate) fn on_msg(app: &mut App, r: Result<VerifiedWindows, String>) -> Vec<Command> {
    match r {
        Ok(w) => {
            app.notify(Level::Info, w.verification.headline.clone());
            app.verify = Some(VerifyView {
                verification: w.verification,
                files: (w.before, w.after),
                scroll: 0,
            });
            app.overlay = Overlay::Verify;
        }
        Err(e) => app.notify(Level::Warn, e),
    }
    Vec::new()
}

/// A key while the view is open: Esc (or `V`, `q`) closes it, the rest scrolls.
pub(crate) fn key(app: &mut App, key: Key) -> Vec<Command> {
    use crossterm::event::KeyCode;
    let closes = matches!(key.code, KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q'))
        || matches!(
            app.keys.action(key),
            Some(Action::Verify | Action::Quit | Action::Cancel)
        );
    if closes {
        app.overlay = Overlay::None;
    } else if let Some(v) = app.verify.as_mut() {
        v.scroll = verify::scroll(v.scroll, key.code);
    }
    Vec::new()
}
