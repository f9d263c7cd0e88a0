//! End-to-end tests of the `ballast-bench` binary: real child processes, real files, exit codes.
//!
//! Timings are never asserted (they depend on the machine); only counts, order, files and
//! messages are.

mod common;

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use common::{fake_cli, scratch};

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ballast-bench"))
        .args(args)
        .output()
        .unwrap()
}

/// Asserts exit status 2 and a single `ballast-bench: ` line on stderr containing `needle`.
fn assert_usage_error(out: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("ballast-bench: "))
        .collect();
    assert_eq!(errors.len(), 1, "stderr: {stderr}");
    assert!(errors[0].contains(needle), "stderr: {stderr}");
    assert!(
        stderr.ends_with(&format!("{}\n", errors[0])),
        "stderr: {stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn abba_writes_report_and_pairs_in_abba_order() {
    let dir = scratch("abba");
    let out = bench(&[
        "abba",
        "--a",
        "sh -c 'true'",
        "--b",
        "sh -c 'head -c 5000000 /dev/zero | cat > /dev/null'",
        "--pairs",
        "3",
        "--env-a",
        "BALLAST_ARM=a",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("− = A lower"));
    assert!(stdout.contains("BALLAST_ARM=a sh -c true"));
    for metric in ["wall", "user", "sys", "minflt", "maxrss"] {
        assert!(
            stdout.contains(&format!("### {metric} (")),
            "{metric} missing"
        );
    }
    assert_eq!(fs::read_to_string(dir.join("report.md")).unwrap(), stdout);

    let csv = fs::read_to_string(dir.join("pairs.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows[0],
        [
            "pair",
            "order",
            "side",
            "seq",
            "wall_s",
            "user_s",
            "sys_s",
            "minflt",
            "maxrss_bytes",
            "peak_heap_bytes",
            "proof_sha256"
        ]
    );
    assert_eq!(rows.len(), 1 + 6);
    let column = |i: usize| rows[1..].iter().map(|r| r[i]).collect::<Vec<_>>();
    assert_eq!(column(0), ["1", "1", "2", "2", "3", "3"]);
    assert_eq!(column(1), ["AB", "AB", "BA", "BA", "AB", "AB"]);
    assert_eq!(column(2), ["A", "B", "B", "A", "A", "B"]);
    // One warm-up per arm ran first, as runs 1 and 2.
    assert_eq!(column(3), ["3", "4", "5", "6", "7", "8"]);
    for row in &rows[1..] {
        let maxrss: u64 = row[8].parse().unwrap();
        assert!(maxrss > 0 && row[4].parse::<f64>().unwrap() > 0.0);
    }
}

#[test]
fn growth_writes_csv_and_plot() {
    let dir = scratch("growth");
    let out = bench(&[
        "growth",
        "--cmd",
        "sh -c 'head -c {n}00000 /dev/zero | cat > /dev/null'",
        "--points",
        "1,2,3",
        "--repeat",
        "2",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("OLS fit peak = a + b·n"), "{stdout}");
    let csv = fs::read_to_string(dir.join("growth.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 2);
    assert!(csv.starts_with("n,run,wall_s,user_s,sys_s,minflt,maxrss_bytes,peak_heap_bytes\n"));
    let svg = fs::read_to_string(dir.join("growth.svg")).unwrap();
    assert_eq!(svg.matches("<circle").count(), 3);
    assert!(dir.join("growth.md").is_file());
}

#[test]
fn bad_usage_exits_2_with_one_line() {
    let out = bench(&["growth", "--cmd", "sleep 0", "--points", "1,2"]);
    assert_usage_error(&out, "must contain {n}");

    let out = bench(&["growth", "--cmd", "echo {n}", "--points", "3,3"]);
    assert_usage_error(&out, "--points");

    let out = bench(&["abba", "--a", "sh -c 'true", "--b", "true", "--pairs", "1"]);
    assert_usage_error(&out, "missing closing quote");

    let out = bench(&["abba", "--a", "true", "--b", "  ", "--pairs", "1"]);
    assert_usage_error(&out, "--b: empty command");

    let out = bench(&[
        "abba",
        "--a",
        "ballast-no-such-cmd",
        "--b",
        "true",
        "--pairs",
        "1",
    ]);
    assert_usage_error(&out, "cannot spawn `ballast-no-such-cmd`");

    let out = bench(&["policy", "--cli", "no-such-dir/cli"]);
    assert_usage_error(&out, "--cli no-such-dir/cli: not a file");

    // clap's own usage errors are the same single line, without clap's "error: " and hint.
    let out = bench(&["abba", "--a", "true", "--b", "true", "--pairs", "0"]);
    assert_usage_error(&out, "invalid value '0' for '--pairs <N>'");

    let out = bench(&["growth", "--cmd", "echo {n}", "--points", "1,,2"]);
    assert_usage_error(&out, "invalid value '' for '--points <N,N,...>'");

    let out = bench(&["growth", "--cmd", "echo {n}", "--no-such-flag"]);
    assert_usage_error(&out, "unexpected argument '--no-such-flag'");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("error:"));
}

#[test]
fn pairs_beyond_the_cap_are_a_usage_error() {
    let out = bench(&["abba", "--a", "true", "--b", "true", "--pairs", "501"]);
    assert_usage_error(&out, "501 is not in 1..=500");
    let out = bench(&["policy", "--cli", "no-such-dir/cli", "--pairs", "501"]);
    assert_usage_error(&out, "501 is not in 1..=500");
}

#[test]
fn help_and_version_go_to_stdout() {
    for args in [&["--help"][..], &["--version"], &["abba", "--help"]] {
        let out = bench(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}");
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    let help = bench(&["abba", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("at most 500"));
}

#[test]
fn failing_run_reports_status_and_stderr() {
    let out = bench(&[
        "abba",
        "--a",
        "true",
        "--b",
        "sh -c 'echo out of cheese >&2; exit 7'",
        "--pairs",
        "2",
        "--warmup",
        "0",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("exited with status 7; stderr tail:\nout of cheese"),
        "{stderr}"
    );
    assert!(stderr.contains("out of cheese"), "{stderr}");
    assert!(stderr.contains("run 2 (pair 1, arm B)"), "{stderr}");
}

#[test]
fn silent_failing_run_is_one_line() {
    let out = bench(&[
        "abba",
        "--a",
        "true",
        "--b",
        "sh -c 'exit 7'",
        "--pairs",
        "1",
        "--warmup",
        "0",
    ]);
    assert_usage_error(&out, "exited with status 7");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("stderr tail"));
}

#[test]
fn every_subcommand_has_help() {
    for sub in ["abba", "growth", "policy"] {
        let out = bench(&[sub, "--help"]);
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: ballast-bench"));
    }
    let growth = bench(&["growth", "--help"]);
    assert!(String::from_utf8_lossy(&growth.stdout).contains("--cmd <TEMPLATE_WITH_{n}>"));
}

#[test]
fn policy_sets_only_the_arm_environment_and_hashes_proofs() {
    let dir = scratch("policy");
    let cli = fake_cli(&dir);
    let out_dir = dir.join("out");
    let out = Command::new(env!("CARGO_BIN_EXE_ballast-bench"))
        .args([
            "policy",
            "--cli",
            cli.to_str().unwrap(),
            "--pairs",
            "2",
            "--warmup",
            "0",
        ])
        .args([
            "--arms",
            "main,oversize-threshold",
            "--keep-proofs",
            "--out-dir",
        ])
        .arg(&out_dir)
        .args(["--", "--segments", "4"])
        .env("_RJEM_MALLOC_CONF", "inherited-must-not-leak")
        .env("MALLOC_CONF", "inherited-must-not-leak")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = fs::read_to_string(out_dir.join("policy.md")).unwrap();
    assert_eq!(md, String::from_utf8(out.stdout).unwrap());
    assert!(md.contains("### Arm `main`") && md.contains("### Arm `oversize-threshold`"));
    assert!(md.contains("byte-identical: **no**"), "{md}");

    let proof = |name: &str| fs::read_to_string(out_dir.join("proofs").join(name)).unwrap();
    // Pair 1 runs A (run 1) then B (run 2).
    assert_eq!(proof("main-001-A.proof"), "unset|unset|--segments 4\n");
    let defaults = "dirty_decay_ms:10000,muzzy_decay_ms:0";
    assert_eq!(
        proof("main-002-B.proof"),
        format!("{defaults}|unset|--segments 4\n")
    );
    assert_eq!(
        proof("oversize-threshold-001-A.proof"),
        format!("{defaults},oversize_threshold:0|unset|--segments 4\n")
    );

    for arm in ["main", "oversize-threshold"] {
        let csv = fs::read_to_string(out_dir.join(format!("policy-{arm}.csv"))).unwrap();
        assert_eq!(csv.lines().count(), 1 + 4);
        assert_eq!(
            csv.lines().next().unwrap(),
            "pair,order,side,seq,wall_s,user_s,sys_s,minflt,maxrss_bytes,peak_heap_bytes,proof_sha256"
        );
    }
    // Every metric, in the order of the `abba` report.
    assert!(
        md.contains("| arm | wall | user | sys | minflt | maxrss | heap | proofs identical |\n"),
        "{md}"
    );
    let sections: Vec<usize> = ["wall", "user", "sys", "minflt", "maxrss", "heap"]
        .iter()
        .map(|m| md.find(&format!("#### {m} (")).unwrap())
        .collect();
    assert!(sections.is_sorted(), "{md}");
}

/// Runs one pair of `policy --arms main` with `TMPDIR` pointed at `tmp`; returns the process id
/// with the output.
fn policy_in_tmpdir(tmp: &std::path::Path, cli: &std::path::Path, extra: &[&str]) -> (u32, Output) {
    let child = Command::new(env!("CARGO_BIN_EXE_ballast-bench"))
        .args(["policy", "--cli", cli.to_str().unwrap(), "--pairs", "1"])
        .args(["--warmup", "0", "--arms", "main"])
        .args(extra)
        .env("TMPDIR", tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    (pid, child.wait_with_output().unwrap())
}

fn entries(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    names
}

#[test]
fn policy_temporary_proofs_are_removed_on_success_and_error() {
    let dir = scratch("policy-tmp");
    let cli = fake_cli(&dir);
    let tmp = dir.join("tmp");
    fs::create_dir(&tmp).unwrap();

    let (_, out) = policy_in_tmpdir(&tmp, &cli, &["--", "--constant"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(entries(&tmp), Vec::<PathBuf>::new());

    // The fake cli writes its proof, then fails: neither proof nor directory may stay behind.
    let (_, out) = policy_in_tmpdir(&tmp, &cli, &["--", "--fail"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("exited with status 1; stderr tail:\nfake failure\n"),
        "{stderr}"
    );
    assert_eq!(entries(&tmp), Vec::<PathBuf>::new());

    // With --out-dir but without --keep-proofs, no proofs/ directory is left in it either.
    let out_dir = dir.join("out");
    let (_, out) = policy_in_tmpdir(&tmp, &cli, &["--out-dir", out_dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(entries(&tmp), Vec::<PathBuf>::new());
    assert_eq!(
        entries(&out_dir),
        [out_dir.join("policy-main.csv"), out_dir.join("policy.md")]
    );
}

#[test]
fn policy_keeps_temporary_proofs_on_request() {
    let dir = scratch("policy-keep-tmp");
    let cli = fake_cli(&dir);
    let tmp = dir.join("tmp");
    fs::create_dir(&tmp).unwrap();
    let (pid, out) = policy_in_tmpdir(&tmp, &cli, &["--keep-proofs", "--", "--constant"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let kept = entries(&tmp);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let name = kept[0].file_name().unwrap().to_str().unwrap();
    // A random name, not one an attacker could derive from the process id.
    assert!(name.starts_with("ballast-bench-policy-"), "{name}");
    assert_ne!(name, format!("ballast-bench-policy-{pid}"));
    assert!(
        stderr.contains(&format!("policy: proofs kept in {}\n", kept[0].display())),
        "{stderr}"
    );
    assert_eq!(
        entries(&kept[0]),
        [
            kept[0].join("main-001-A.json"),
            kept[0].join("main-001-A.proof"),
            kept[0].join("main-002-B.json"),
            kept[0].join("main-002-B.proof")
        ]
    );
}

#[test]
fn policy_reports_identical_proofs() {
    let dir = scratch("policy-identical");
    let cli = fake_cli(&dir);
    let out = bench(&[
        "policy",
        "--cli",
        cli.to_str().unwrap(),
        "--pairs",
        "1",
        "--arms",
        "background-thread",
        "--",
        "--constant",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8(out.stdout).unwrap();
    // 1 warm-up per side + 1 pair = 4 proofs, all "same\n".
    assert!(
        md.contains("Proofs written (warm-ups included): 4; byte-identical: **yes**"),
        "{md}"
    );
    // `printf 'same\n' | sha256sum`, listed for the arm and for all arms together.
    let digest = "a6328afc76e9db71da297ebff4b0d3e7a7eb3b01d917c05a6573fef121b6ecb6";
    assert_eq!(md.matches(&format!("`{digest}` × 4")).count(), 2, "{md}");
}
