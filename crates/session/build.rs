//! The build's git commit for `pglab --version`: `git rev-parse --short HEAD`, or "unknown"
//! outside a git checkout (a crate tarball, a copy without `.git`). Cheap: a few `git`
//! calls, rerun only when the checked-out commit moves (HEAD, the branch it names, the
//! packed refs), never on every source change.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| ".".into()));
    println!("cargo:rustc-env=PGLAB_GIT_COMMIT={}", git_commit(&dir));
    println!("cargo:rerun-if-changed=build.rs");
    for path in watched_paths(&dir) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// The short hash of the commit checked out in `dir`, or "unknown".
pub fn git_commit(dir: &Path) -> String {
    git(dir, &["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".to_string())
}

/// The files whose change means another commit is checked out: HEAD, the ref HEAD names
/// (a new commit on the branch changes it, not HEAD) and the packed refs. Only files that
/// exist: cargo would rerun on every build for a missing one. In a worktree these live in
/// the main repository's git directory, which `git rev-parse --git-path` resolves.
pub fn watched_paths(dir: &Path) -> Vec<PathBuf> {
    let mut names = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        names.push(branch);
    }
    names
        .iter()
        .filter_map(|name| git(dir, &["rev-parse", "--git-path", name]))
        .map(|p| dir.join(p))
        .filter(|p| p.exists())
        .collect()
}

/// One line `git` prints in `dir`, when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let line = text.trim();
    (out.status.success() && !line.is_empty()).then(|| line.to_string())
}
