//! A reader that stops reading (`pglab sandbox status | head -3`) closes pglab's stdout. Rust
//! ignores SIGPIPE (so that a server closing its socket is an error, not a killed process that
//! never restores its settings), and `println!` then panics with "Broken pipe". That is not a
//! bug worth a stack trace: the panic still unwinds (so every guard and restore runs), prints
//! nothing, and the process ends with 141 as a shell expects of a command whose pipe closed.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

/// The exit status a shell gives a command killed by SIGPIPE (128 + 13).
pub const EXIT_PIPE_CLOSED: i32 = 141;

static PIPE_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether a panic's message is `print!`'s on a closed pipe.
pub(crate) fn is_closed_pipe(message: &str) -> bool {
    message.starts_with("failed printing to std") && message.contains("Broken pipe")
}

fn message_of(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("")
}

/// Wrap the installed panic hook: a closed pipe is remembered and not reported.
pub(crate) fn install_hook() {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if is_closed_pipe(message_of(info.payload())) {
            PIPE_CLOSED.store(true, Ordering::SeqCst);
            return;
        }
        previous(info);
    }));
}

/// Run `body`; a closed-pipe panic becomes [`EXIT_PIPE_CLOSED`], any other panic goes on.
pub fn guard(body: impl FnOnce() -> i32) -> i32 {
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(code) => code,
        Err(payload)
            if PIPE_CLOSED.load(Ordering::SeqCst) || is_closed_pipe(message_of(&*payload)) =>
        {
            EXIT_PIPE_CLOSED
        }
        Err(payload) => panic::resume_unwind(payload),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_print_on_a_closed_pipe_counts() {
        assert!(is_closed_pipe(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(!is_closed_pipe(
            "failed printing to stdout: No space left on device"
        ));
        assert!(!is_closed_pipe("index out of bounds"));
    }

    #[test]
    fn other_panics_go_on() {
        let r = panic::catch_unwind(|| guard(|| panic!("index out of bounds")));
        assert!(r.is_err());
        assert_eq!(guard(|| 3), 3);
    }
}
