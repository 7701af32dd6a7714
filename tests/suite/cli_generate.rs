//! What a CLI user expects from the ecosystem: completions for bash, zsh and fish, man pages,
//! and `--version` naming the commit the binary was built from — run as a user runs them.

use std::process::{Command, Output};

fn pglab(args: &[&str]) -> Output {
    let dir = std::env::temp_dir().join(format!("pglab-cli-generate-{}", std::process::id()));
    Command::new(env!("CARGO_BIN_EXE_pglab"))
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .args(args)
        .output()
        .expect("run pglab")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn completions_for_bash_zsh_and_fish_know_the_commands_and_their_flags() {
    // What each shell's script is recognised by, and what a user completes in it.
    for (shell, marker) in [
        ("bash", "complete -F _pglab"),
        ("zsh", "#compdef pglab"),
        ("fish", "complete -c pglab"),
    ] {
        let o = pglab(&["completions", shell]);
        let text = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{shell}: {o:?}");
        assert!(text.contains(marker), "{shell}: no {marker:?}");
        for word in ["sandbox", "import", "index-build", "citus-workers", "mwm"] {
            assert!(text.contains(word), "{shell}: {word} missing");
        }
    }
}

#[test]
fn completions_for_an_unknown_shell_are_refused_with_the_choices() {
    let o = pglab(&["completions", "tcsh"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bash") && err.contains("zsh") && err.contains("fish"),
        "{err}"
    );
}

#[test]
fn man_prints_the_page_and_writes_one_per_command() {
    let o = pglab(&["man"]);
    let page = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        page.starts_with(".ie") || page.contains(".TH pglab 1"),
        "{page}"
    );
    assert!(
        page.contains("sandbox") && page.contains("citus\\-workers"),
        "{page}"
    );

    let dir = tempfile::tempdir().unwrap();
    let o = pglab(&["man", "--out", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    for name in [
        "pglab",
        "pglab-run-index-build",
        "pglab-sandbox-import",
        "pglab-tune",
    ] {
        let path = dir.path().join(format!("{name}.1"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}.1: {e}"));
        assert!(text.contains(".TH"), "{name}.1 is not a man page");
        assert!(
            stdout(&o).contains(path.to_str().unwrap()),
            "{name}.1 not listed"
        );
    }
    let import = std::fs::read_to_string(dir.path().join("pglab-sandbox-import.1")).unwrap();
    assert!(import.contains("\\-\\-from"), "{import}");
}

#[test]
fn man_into_a_missing_directory_is_one_sentence_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let o = pglab(&["man", "--out", missing.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no such directory") && err.contains("mkdir -p"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!missing.exists());
}

#[test]
fn version_names_the_commit_the_binary_was_built_from() {
    let head = Command::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "rev-parse",
            "--short",
            "HEAD",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    let o = pglab(&["--version"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(
        stdout(&o).trim(),
        format!("pglab {} (commit {head})", env!("CARGO_PKG_VERSION"))
    );
}

/// build.rs itself, outside any git checkout: the commit is "unknown" and nothing is watched
/// (a watched path that does not exist would rebuild on every build).
#[allow(dead_code)]
#[path = "../../crates/session/build.rs"]
mod build_script;

#[test]
fn outside_a_git_checkout_the_commit_is_unknown() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(build_script::git_commit(dir.path()), "unknown");
    assert!(build_script::watched_paths(dir.path()).is_empty());
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    if build_script::git_commit(here) != "unknown" {
        let watched = build_script::watched_paths(here);
        assert!(watched.iter().any(|p| p.ends_with("HEAD")), "{watched:?}");
    }
}
