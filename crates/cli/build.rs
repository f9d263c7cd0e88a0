//! Records the target triple and, when known, the git revision for `cli doctor`.

use std::env;
use std::process::Command;

fn main() {
    let target = env::var("TARGET").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=BALLAST_TARGET={target}");
    println!("cargo:rerun-if-env-changed=BALLAST_GIT_REV");
    // Packagers without a .git directory (Nix) may pass the revision in BALLAST_GIT_REV.
    let rev = env::var("BALLAST_GIT_REV").ok().or_else(git_revision);
    if let Some(rev) = rev {
        println!("cargo:rustc-env=BALLAST_GIT_REV={rev}");
    }
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn git_revision() -> Option<String> {
    let git_dir = git(&["rev-parse", "--absolute-git-dir"])?;
    println!("cargo:rerun-if-changed={git_dir}/HEAD");
    println!("cargo:rerun-if-changed={git_dir}/packed-refs");
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        println!("cargo:rerun-if-changed={git_dir}/{branch}");
    }
    git(&["rev-parse", "--short=12", "HEAD"])
}
