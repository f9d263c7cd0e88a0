//! `ballast-bench compare` end to end: prebuilt sides (a deliberately slowed one, one whose
//! memory grows faster) and the worktree-building path on a scratch git repository.
//!
//! The sides are stand-ins for `cli prove` (a shell script, and a std-only Rust crate built
//! from two commits), so the verdicts are certain: a side that sleeps 200 ms longer than a
//! run of a few milliseconds is a real regression on any machine.

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{fake_cli, scratch};

fn executable(path: &Path, text: &str) -> PathBuf {
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    path.to_owned()
}

fn compare(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ballast-bench"))
        .arg("compare")
        .args(args)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The verdict of `metric` in the `--json` file.
fn verdict(json: &serde_json::Value, metric: &str) -> String {
    json["abba"]["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} in {json}"))["verdict"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_slowed_head_is_a_real_regression_and_the_same_cli_is_not() {
    let dir = scratch("slowed");
    let base = fake_cli(&dir);
    let slowed = executable(
        &dir.join("slowed-cli"),
        &format!("#!/bin/sh\nsleep 0.2\nexec {} \"$@\"\n", base.display()),
    );
    let json = dir.join("compare.json");
    let common = ["--pairs", "6", "--warmup", "0", "--growth-points", "1,2,3"];
    let out = compare(
        &[
            &["--base-cli", base.to_str().unwrap()],
            &["--head-cli", slowed.to_str().unwrap()][..],
            &common,
            &["--json", json.to_str().unwrap(), "--", "--log-rows", "10"],
        ]
        .concat(),
    );
    let md = stdout(&out);
    assert!(
        md.contains("| Prove time (wall) |") && md.contains("❌ REAL REGRESSION"),
        "{md}"
    );
    assert!(md.contains("Proof bytes: **identical**"), "{md}");
    assert!(!md.contains("Memory scaling regression"), "{md}");
    let results: serde_json::Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    assert_eq!(verdict(&results, "wall"), "real_regression");
    // Peak heap is compared too, and identical.
    assert_eq!(verdict(&results, "heap"), "inconclusive");
    assert_eq!(results["growth"][1]["heap_fit"]["slope"], 1.0);

    // The control: the same binary on both sides is no regression. The verdict is a 5 % test
    // (all 6 pairs one way), so one regression verdict is rerun with fresh pairs; a harness that
    // favoured one arm would be called a regression both times.
    let control = || {
        let out = compare(
            &[
                &["--base-cli", base.to_str().unwrap()],
                &["--head-cli", base.to_str().unwrap()][..],
                &common,
                &["--json", json.to_str().unwrap()],
            ]
            .concat(),
        );
        stdout(&out);
        let results: serde_json::Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
        verdict(&results, "wall")
    };
    assert!(
        control() != "real_regression" || control() != "real_regression",
        "the same cli on both sides was called a real regression twice in a row"
    );
}

#[test]
fn a_head_whose_memory_grows_faster_gets_the_growth_warning() {
    let dir = scratch("growth");
    let base = fake_cli(&dir);
    let hungry = executable(
        &dir.join("hungry-cli"),
        &format!(
            "#!/bin/sh\nFAKE_HEAP_MIB=3 exec {} \"$@\"\n",
            base.display()
        ),
    );
    let out = compare(&[
        "--base-cli",
        base.to_str().unwrap(),
        "--head-cli",
        hungry.to_str().unwrap(),
        "--pairs",
        "2",
        "--warmup",
        "0",
        "--growth-points",
        "1,2,4",
    ]);
    let md = stdout(&out);
    assert!(
        md.contains("⚠️ **Memory scaling regression** — peak heap growth rate increased by 2.000 MiB per segment"),
        "{md}"
    );
    assert!(
        md.contains("peak heap growth rate: head 3.000 MiB / segment (base 1.000"),
        "{md}"
    );
    // Its fixed per-run heap is higher too.
    assert!(md.contains("| Peak heap | 12.00 MiB | 20.00 MiB |"), "{md}");
}

#[test]
fn bad_arguments_are_one_line_errors() {
    let dir = scratch("bad");
    let base = fake_cli(&dir);
    let cases: [(&[&str], &str); 4] = [
        (&["--head-cli", "x"], "--base"),
        (
            &["--base-cli", "no-such-cli", "--head-cli", "x"],
            "--base-cli no-such-cli: not a file",
        ),
        (
            &[
                "--base-cli",
                base.to_str().unwrap(),
                "--head-cli",
                base.to_str().unwrap(),
                "--",
                "--segments",
                "2",
            ],
            "the growth sweep sets --segments",
        ),
        (
            &[
                "--base",
                "no-such-revision",
                "--repo",
                dir.to_str().unwrap(),
            ],
            "--base no-such-revision: not a revision of",
        ),
    ];
    for (args, needle) in cases {
        let out = compare(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

/// A std-only stand-in for ballast's `cli` package that sleeps `millis` per run.
fn write_fake_crate(repo: &Path, millis: u64) {
    fs::create_dir_all(repo.join("src")).unwrap();
    fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"cli\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    fs::write(
        repo.join("src/main.rs"),
        format!(
            r#"fn main() {{
    let args: Vec<String> = std::env::args().collect();
    let arg = |flag: &str| args.iter().position(|a| a == flag).map(|i| args[i + 1].clone());
    let segments: u64 = arg("--segments").map_or(4, |s| s.parse().unwrap());
    std::thread::sleep(std::time::Duration::from_millis({millis}));
    std::fs::write(arg("-o").unwrap(), format!("proof {{segments}}")).unwrap();
    let heap = (segments + 8) << 20;
    std::fs::write(arg("--report").unwrap(), format!("{{{{\"peak_heap_bytes\": {{heap}}}}}}"))
        .unwrap();
}}
"#
        ),
    )
    .unwrap();
}

fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn worktrees_of_two_commits_are_built_once_and_compared() {
    let dir = scratch("worktrees");
    let repo = dir.join("repo");
    write_fake_crate(&repo, 0);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let lock = Command::new(&cargo)
        .args(["generate-lockfile", "--offline", "--manifest-path"])
        .arg(repo.join("Cargo.toml"))
        .output()
        .unwrap();
    assert!(
        lock.status.success(),
        "{}",
        String::from_utf8_lossy(&lock.stderr)
    );
    fs::write(repo.join(".gitignore"), "target/\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "fast"]);
    write_fake_crate(&repo, 200);
    git(&repo, &["commit", "-qam", "slow"]);

    let cache = dir.join("cache");
    let args = [
        "--repo",
        repo.to_str().unwrap(),
        "--cache-dir",
        cache.to_str().unwrap(),
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
        "--pairs",
        "6",
        "--warmup",
        "0",
        "--growth-points",
        "1,2",
    ];
    let out = compare(&args);
    let md = stdout(&out);
    assert!(md.contains("❌ REAL REGRESSION"), "{md}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("compare: building").count(), 2, "{stderr}");
    let worktrees: Vec<_> = fs::read_dir(cache.join("worktrees")).unwrap().collect();
    assert_eq!(worktrees.len(), 2, "one worktree per commit");

    // Again: both builds come from the cache.
    let out = compare(&args);
    stdout(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("cached build").count(), 2, "{stderr}");
    assert!(!stderr.contains("compare: building"), "{stderr}");

    // Without --head, the working tree with its uncommitted change is the head.
    write_fake_crate(&repo, 0);
    let out = compare(&[
        "--repo",
        repo.to_str().unwrap(),
        "--cache-dir",
        cache.to_str().unwrap(),
        "--base",
        "HEAD~1",
        "--pairs",
        "2",
        "--growth-points",
        "1,2",
    ]);
    let md = stdout(&out);
    assert!(md.contains("+ uncommitted changes"), "{md}");
}
