//! `pglab completions SHELL` and `pglab man`: no server, no data directory, only text made
//! from the command line's own definitions (`cli::generate`) written where the user asked.

use std::io::Write;

use crate::cli::generate::{self, CompletionsArgs, ManArgs};
use crate::closed_stdout::EXIT_PIPE_CLOSED;
use crate::session::{EXIT_FAILED, EXIT_USAGE};

pub fn completions(args: CompletionsArgs) -> i32 {
    print(&generate::completions(args.shell))
}

pub fn man(args: ManArgs) -> i32 {
    let Some(dir) = args.out else {
        return match generate::man_page() {
            Ok(page) => print(&page),
            Err(e) => fail(EXIT_FAILED, &format!("cannot render the man page: {e}")),
        };
    };
    if !dir.is_dir() {
        return fail(
            EXIT_USAGE,
            &format!(
                "--out {}: no such directory; create it first (mkdir -p {0}) or leave --out out to print pglab.1",
                dir.display()
            ),
        );
    }
    match generate::write_man_pages(&dir) {
        Ok(files) => {
            let list: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            print(format!("{}\n", list.join("\n")).as_bytes())
        }
        Err(e) => fail(
            EXIT_FAILED,
            &format!("cannot write the man pages into {}: {e}", dir.display()),
        ),
    }
}

/// `bytes` on stdout: a closed pipe ends quietly with 141, any other failure is a sentence.
fn print(bytes: &[u8]) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_PIPE_CLOSED,
        Err(e) => fail(EXIT_FAILED, &format!("cannot write to stdout: {e}")),
    }
}

fn fail(code: i32, sentence: &str) -> i32 {
    let _ = writeln!(std::io::stderr(), "pglab: {sentence}");
    code
}
