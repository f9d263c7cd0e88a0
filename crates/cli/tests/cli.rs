//! The built `cli` binary, end to end: exit codes, messages, files and the allocator policy.

use std::path::Path;
use std::process::{Command, Output};

/// The binary with no allocator variables inherited from the test's environment.
fn cli() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cli"));
    c.env_remove("_RJEM_MALLOC_CONF")
        .env_remove("MALLOC_CONF")
        .env_remove("BALLAST_CPU");
    c
}

fn run(c: &mut Command) -> Output {
    c.output().expect("the cli binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn doctor_json(c: &mut Command) -> serde_json::Value {
    let out = run(c.args(["doctor", "--json"]));
    assert!(out.status.success(), "doctor failed: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("doctor --json prints JSON")
}

fn decay(v: &serde_json::Value) -> (i64, i64) {
    let a = &v["allocator"];
    (
        a["dirty_decay_ms"].as_i64().unwrap(),
        a["muzzy_decay_ms"].as_i64().unwrap(),
    )
}

/// A small statement proven into `dir`; returns the proof path.
fn prove_small(dir: &Path, extra: &[&str]) -> std::path::PathBuf {
    let proof = dir.join("proof.bin");
    let out = run(cli()
        .args([
            "prove",
            "--workload",
            "fibonacci",
            "--sequences",
            "2",
            "--log-rows",
            "8",
            "--segments",
            "2",
        ])
        .args(extra)
        .arg("-o")
        .arg(&proof));
    assert!(out.status.success(), "prove failed: {}", stderr(&out));
    proof
}

#[test]
fn doctor_reports_the_compiled_in_policy_and_the_overrides() {
    let default = doctor_json(&mut cli());
    assert_eq!(decay(&default), (-1, -1));
    assert_eq!(default["allocator"]["compiled_conf_is_never_purge"], true);
    assert_eq!(default["allocator"]["symbol_prefix"], "_rjem_");
    assert_eq!(default["allocator"]["background_thread"], false);
    assert!(default["environment"]["_RJEM_MALLOC_CONF"].is_null());
    assert!(default["threads"].as_u64().unwrap() >= 1);

    // The prefixed jemalloc's environment variable overrides the compiled-in string…
    let defaults =
        doctor_json(cli().env("_RJEM_MALLOC_CONF", "dirty_decay_ms:10000,muzzy_decay_ms:0"));
    assert_eq!(decay(&defaults), (10_000, 0));
    assert_eq!(
        defaults["environment"]["_RJEM_MALLOC_CONF"],
        "dirty_decay_ms:10000,muzzy_decay_ms:0"
    );

    // …and MALLOC_CONF, which only an unprefixed jemalloc reads, does not.
    let ignored = doctor_json(cli().env("MALLOC_CONF", "dirty_decay_ms:10000,muzzy_decay_ms:0"));
    assert_eq!(decay(&ignored), (-1, -1));
    assert_eq!(
        ignored["environment"]["MALLOC_CONF"],
        "dirty_decay_ms:10000,muzzy_decay_ms:0"
    );

    let human = run(cli().arg("doctor"));
    assert!(human.status.success());
    assert!(stdout(&human).contains("dirty_decay_ms -1, muzzy_decay_ms -1"));
}

#[test]
fn prove_then_verify_round_trips_with_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let proof = prove_small(
        dir.path(),
        &["--report", report.to_str().unwrap(), "--threads", "1"],
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["statement"]["segments"], 2);
    // The default target: 128 bits provable up to the Johnson bound, round by round, and the
    // statement in soundcalc's terms.
    assert_eq!(json["params"]["provable_security_bits"], 128);
    assert_eq!(json["security"]["jbr"]["bits"], 128);
    assert_eq!(json["security"]["hash_bits"], 128);
    assert!(
        json["security"]["jbr"]["rounds"]["query phase"]
            .as_f64()
            .unwrap()
            >= 128.0
    );
    assert!(json["security"]["udr"]["bits"].as_u64().unwrap() < 128);
    assert_eq!(json["soundcalc"]["trace_length"], 256);
    assert_eq!(json["soundcalc"]["rho"], 0.5);
    assert_eq!(json["soundcalc"]["num_queries"], json["params"]["queries"]);
    assert_eq!(json["soundcalc"]["power_batching"], true);
    assert_eq!(
        json["proof_bytes"].as_u64().unwrap(),
        std::fs::metadata(&proof).unwrap().len()
    );
    assert!(json["peak_rss_bytes"].as_u64().unwrap() > 0);
    // At least the trace's LDE was live at once: 4 columns × 2^9 points × 8 bytes.
    assert!(json["peak_heap_bytes"].as_u64().unwrap() >= 4 * 512 * 8);
    assert!(json["minor_faults"].as_u64().unwrap() > 0);

    let out = run(cli().arg("verify").arg(&proof));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("fibonacci: 2 sequences × 2^8 rows × 2 segments (510 steps)"),
        "{}",
        stdout(&out)
    );

    // The digest `prove` reports pins the statement for `verify`.
    let digest = json["statement"]["digest"].as_str().unwrap().to_owned();
    assert!(stdout(&out).contains(&digest));
    let out = run(cli()
        .args(["verify", "--expect-statement", &digest])
        .arg(&proof));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let other = format!(
        "{}{}",
        if digest.starts_with('0') { "1" } else { "0" },
        &digest[1..]
    );
    let out = run(cli()
        .args(["verify", "--expect-statement", &other])
        .arg(&proof));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("not the expected"),
        "{}",
        stderr(&out)
    );
    let out = run(cli()
        .args(["verify", "--expect-statement", "abc"])
        .arg(&proof));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn verify_distinguishes_invalid_proofs_from_unreadable_input() {
    let dir = tempfile::tempdir().unwrap();
    let proof = prove_small(dir.path(), &[]);
    let bytes = std::fs::read(&proof).unwrap();

    let tampered = dir.path().join("tampered.bin");
    let mut t = bytes.clone();
    let middle = t.len() / 2;
    t[middle] ^= 0x10;
    std::fs::write(&tampered, &t).unwrap();
    let out = run(cli().arg("verify").arg(&tampered));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("invalid proof"), "{}", stderr(&out));

    let truncated = dir.path().join("truncated.bin");
    std::fs::write(&truncated, &bytes[..bytes.len() - 100]).unwrap();
    let out = run(cli().arg("verify").arg(&truncated));
    assert_eq!(out.status.code(), Some(1));
    let stated = format!(
        "proof is {} bytes, its header states {}",
        bytes.len() - 100,
        bytes.len()
    );
    assert!(stderr(&out).contains(&stated), "{}", stderr(&out));

    // A proof of another format version is unreadable, not invalid.
    let older = dir.path().join("older.bin");
    let mut o = bytes.clone();
    o[4] = 3;
    std::fs::write(&older, &o).unwrap();
    let out = run(cli().arg("verify").arg(&older));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unsupported proof format version 3, this build reads version 19"),
        "{}",
        stderr(&out)
    );

    let random = dir.path().join("random.bin");
    std::fs::write(&random, b"this is not a proof at all").unwrap();
    let out = run(cli().arg("verify").arg(&random));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a ballast proof"),
        "{}",
        stderr(&out)
    );

    let out = run(cli().arg("verify").arg(dir.path().join("missing.bin")));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));

    // The proof is valid but below the verifier's security floor, judged in the
    // unique-decoding regime; the error names both figures.
    let out = run(cli()
        .args(["verify", "--min-security-bits", "128", "--regime", "udr"])
        .arg(&proof));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("bits of udr security (128 conjectured), 128 required"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn security_states_a_statement_in_soundcalc_terms_without_proving_it() {
    let dir = tempfile::tempdir().unwrap();
    // The TOML on stdout, with ballast's figures as comments.
    let out = run(cli().args(["security", "--blowup", "4"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let toml = stdout(&out);
    for line in [
        "# ballast, keccak-chain, jbr: 128 bits",
        "protocol_family = \"FRI_STARK\"",
        "field = \"Goldilocks^3\"",
        "trace_length = 16384",
        "rho = 0.25",
        "num_columns = 2353",
        "batch_size = 4712",
        "num_queries = 113",
        "fri_folding_factors = [8, 8, 8, 4]",
        "fri_early_stop_degree = 32",
        "grinding_query_phase = 16",
        "gap_to_radius = ",
    ] {
        assert!(toml.contains(line), "{line:?} missing from\n{toml}");
    }
    // --soundcalc writes the same TOML and prints the round-by-round table.
    let file = dir.path().join("ballast.toml");
    let out = run(cli()
        .args(["security", "--blowup", "4", "--soundcalc"])
        .arg(&file));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), toml);
    assert!(stdout(&out).contains("128 bits provable up to the Johnson bound"));
    assert!(stdout(&out).contains("query phase"));
    // The prover's report carries the same keys and values.
    let report = dir.path().join("report.json");
    let out = run(cli()
        .args([
            "prove",
            "--log-rows",
            "6",
            "--steps",
            "2",
            "--blowup",
            "4",
            "--report",
        ])
        .arg(&report)
        .arg("-o")
        .arg(dir.path().join("p.bin")));
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let out = run(cli().args([
        "security",
        "--log-rows",
        "6",
        "--steps",
        "2",
        "--blowup",
        "4",
    ]));
    let toml = stdout(&out);
    for (key, value) in json["soundcalc"].as_object().unwrap() {
        assert!(
            toml.contains(&format!("{key} = {value}")),
            "{key} = {value} in\n{toml}"
        );
    }
    // A target beyond the hash, or an unknown regime, is a one-line error.
    for (args, message) in [
        (vec!["--security-bits", "129"], "exceeds the 128 bits"),
        (vec!["--regime", "list"], "is not a regime"),
    ] {
        let out = run(cli().arg("security").args(&args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }
}

#[test]
fn bad_usage_is_a_one_line_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let proof = dir.path().join("proof.bin");
    std::fs::write(&proof, b"previous").unwrap();
    let cases: [(&[&str], &str); 11] = [
        (&["--blowup", "3"], "not one of 2, 4, 8, 16, 32, 64"),
        (&["--log-rows", "40"], "invalid --log-rows"),
        (&["--log-rows", "4"], "invalid --log-rows"),
        (&["--steps", "0"], "invalid --steps"),
        (&["--steps", "5", "--segments", "2"], "not both"),
        (&["--sequences", "2"], "is a fibonacci flag"),
        (
            &["--workload", "fibonacci", "--sequences", "0"],
            "invalid --sequences",
        ),
        (
            &["--workload", "fibonacci", "--steps", "4"],
            "--steps is a keccak-chain and poseidon2-chain flag; fibonacci takes --sequences",
        ),
        (&["--queries", "0"], "invalid --queries"),
        (&["--security-bits", "200"], "invalid --security-bits"),
        (
            &[
                "--workload",
                "fibonacci",
                "--sequences",
                "4096",
                "--log-rows",
                "28",
            ],
            "would need about",
        ),
    ];
    for (args, message) in cases {
        let out = run(cli().arg("prove").args(args).arg("-o").arg(&proof));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out).trim().lines().count(),
            1,
            "{args:?}: {}",
            stderr(&out)
        );
        assert_eq!(
            std::fs::read(&proof).unwrap(),
            b"previous",
            "{args:?} touched the output"
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary files left"
    );

    let out = run(cli()
        .args(["prove", "-o"])
        .arg(dir.path().join("no/such/dir/proof.bin")));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot create a file"),
        "{}",
        stderr(&out)
    );

    let out = run(&mut cli());
    assert_eq!(out.status.code(), Some(2), "no subcommand prints usage");
}

#[test]
fn a_keccak_chain_proves_and_verify_reports_what_was_proven() {
    let dir = tempfile::tempdir().unwrap();
    let (proof, report) = (dir.path().join("chain.bin"), dir.path().join("verify.json"));
    let seed = "11".repeat(32);
    let out = run(cli()
        .args([
            "prove",
            "--seed",
            &seed,
            "--steps",
            "3",
            "--log-rows",
            "6",
            "-o",
        ])
        .arg(&proof));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(cli().args(["verify", "--report"]).arg(&report).arg(&proof));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["cpu_path"], ballast_cpu::CpuPath::best().name());
    let statement = &json["statement"];
    assert_eq!(statement["workload"], "keccak-chain");
    assert_eq!(statement["seed"], seed.as_str());
    assert_eq!(statement["steps"], 3);
    assert_eq!(statement["segments"], 2);
    let mut h = [0x11u8; 32];
    for _ in 0..3 {
        use sha3::{Digest as _, Keccak256};
        h = Keccak256::digest(h).into();
    }
    let output: String = h.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(statement["output"], output.as_str());
    assert!(
        stdout(&out).contains(&format!("output {output}")),
        "{}",
        stdout(&out)
    );

    let help = run(cli().args(["prove", "--help"]));
    for text in [
        "keccak-chain (default)",
        "fibonacci",
        "--seed",
        "--steps",
        "--sequences",
    ] {
        assert!(stdout(&help).contains(text), "prove --help lacks {text}");
    }
}

#[test]
fn a_poseidon2_proof_names_its_hash_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("prove.json");
    let proof = prove_small(
        dir.path(),
        &["--hash", "poseidon2", "--report", report.to_str().unwrap()],
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["params"]["hash"], "poseidon2");
    let out = run(cli().arg("verify").arg(&proof));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("poseidon2 trees"), "{}", stdout(&out));
    // A verifier that trusts one hash only says so.
    let out = run(cli().args(["verify", "--hash", "poseidon2"]).arg(&proof));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(cli().args(["verify", "--hash", "keccak"]).arg(&proof));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        format!("{}{}", stdout(&out), stderr(&out))
            .contains("the proof commits with poseidon2, the verifier requires keccak"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let keccak = prove_small(dir.path(), &[]);
    let out = run(cli().arg("verify").arg(&keccak));
    assert!(stdout(&out).contains("keccak trees"), "{}", stdout(&out));

    let refused = dir.path().join("refused.bin");
    let out = run(cli()
        .args(["prove", "--hash", "sha256", "-o"])
        .arg(&refused));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("sha256 is not one of keccak, poseidon2"),
        "{}",
        stderr(&out)
    );
    assert!(!refused.exists());
}

#[test]
fn prove_on_cuda_without_a_device_is_a_one_line_error() {
    let doctor = doctor_json(&mut cli());
    let usable = doctor["cuda"]["usable"] == true;
    assert_eq!(
        doctor["backends"].as_array().unwrap().len(),
        if usable { 2 } else { 1 }
    );
    if usable {
        eprintln!("skipping the no-device assertion: a CUDA device is usable here");
        return;
    }
    let reason = doctor["cuda"]["detail"].as_str().unwrap();
    assert!(doctor["cuda"]["device"].is_null());

    let dir = tempfile::tempdir().unwrap();
    let proof = dir.path().join("proof.bin");
    let out = run(cli()
        .args([
            "prove",
            "--log-rows",
            "8",
            "--segments",
            "1",
            "--backend",
            "cuda",
        ])
        .arg("-o")
        .arg(&proof));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!("cli: --backend cuda: no usable CUDA device: {reason}\n")
    );
    assert!(!proof.exists());
}

#[test]
fn prove_reports_the_backend_it_ran_on() {
    let usable = doctor_json(&mut cli())["cuda"]["usable"] == true;
    let dir = tempfile::tempdir().unwrap();
    for (flag, expected) in [
        ("cpu", "cpu"),
        ("auto", if usable { "cuda" } else { "cpu" }),
    ] {
        let report = dir.path().join(format!("{flag}.json"));
        prove_small(
            dir.path(),
            &["--backend", flag, "--report", report.to_str().unwrap()],
        );
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        assert_eq!(json["backend"], expected, "--backend {flag}");
        assert_eq!(
            json["device"].is_null(),
            expected == "cpu",
            "--backend {flag}"
        );
        // What a device backend counted: null on the CPU, counts on a GPU.
        for key in ["device_peak_bytes", "pcie_up_bytes", "pcie_down_bytes"] {
            let value = &json[key];
            assert!(
                if expected == "cpu" {
                    value.is_null()
                } else {
                    value.as_u64().is_some_and(|v| v > 0)
                },
                "--backend {flag}: {key} is {value}"
            );
        }
    }
    let out = run(cli().args(["prove", "--backend", "opencl"]));
    assert_eq!(out.status.code(), Some(2));
}

/// Starts a `cli prove` of several seconds in `dir` (with `extra` flags, paths relative to
/// `dir`) and returns it once it has been proving for 1.5 s.
fn start_long_prove(dir: &Path, extra: &[&str]) -> std::process::Child {
    let mut child = cli()
        .current_dir(dir)
        .args(["prove", "--workload", "fibonacci", "--log-rows", "18"])
        .args(["--segments", "8", "--pow-bits", "0", "--threads", "1"])
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "still proving");
    child
}

/// A real SIGINT to a real `cli prove` in the middle of proving: it exits with 130 and
/// leaves nothing in its output directory, neither the proof nor a temporary file.
#[test]
fn an_interrupted_prove_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_long_prove(dir.path(), &["-o", "proof.bin", "--report", "report.json"]);
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: sends a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Outputs get the mode any new file gets under the umask (0666 less it), not 0600.
#[test]
fn written_files_are_not_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    prove_small(dir.path(), &["--report", report.to_str().unwrap()]);
    // SAFETY: umask only swaps this test process's mask, which the child inherited; read it
    // and put it back.
    let umask = unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old
    };
    for name in ["proof.bin", "report.json"] {
        let mode = std::fs::metadata(dir.path().join(name))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o777,
            0o666 & !umask,
            "{name}: {:o}, umask {umask:o}",
            mode & 0o777
        );
    }
}

/// `--max-proof-bytes N` accepts every proof of at most N bytes and refuses a longer one by
/// the length its header states, before the rest is read: the header alone is refused as
/// the whole file is.
#[test]
fn verify_caps_the_proof_size() {
    let dir = tempfile::tempdir().unwrap();
    let proof = prove_small(dir.path(), &[]);
    let len = std::fs::metadata(&proof).unwrap().len();
    let header_only = dir.path().join("header.bin");
    std::fs::write(&header_only, &std::fs::read(&proof).unwrap()[..100]).unwrap();
    let verify = |file: &Path, cap: Option<u64>| {
        let mut c = cli();
        c.args(["verify", "--min-security-bits", "0"]);
        if let Some(cap) = cap {
            c.arg("--max-proof-bytes").arg(cap.to_string());
        }
        run(c.arg(file))
    };
    for cap in [Some(len), Some(len + 1), None] {
        let out = verify(&proof, cap);
        assert_eq!(out.status.code(), Some(0), "{cap:?}: {}", stderr(&out));
    }
    let refused = format!(
        "its header states {len} bytes, more than --max-proof-bytes {}",
        len - 1
    );
    for file in [&proof, &header_only] {
        let out = verify(file, Some(len - 1));
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains(&refused), "{}", stderr(&out));
    }
    // Under the cap, the header alone is a file shorter than it states.
    let out = verify(&header_only, Some(len));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("proof is 100 bytes, its header states {len}")),
        "{}",
        stderr(&out)
    );
    let out = verify(&proof, Some(0));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// `cli verify` on a proof that another process truncates and rewrites while it reads:
/// every run ends with a verdict or a one-line error, never a panic.
#[test]
fn verify_of_a_file_changing_underneath_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let proof = prove_small(dir.path(), &[]);
    let bytes = std::fs::read(&proof).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, proof, bytes) = (stop.clone(), proof.clone(), bytes.clone());
        std::thread::spawn(move || {
            let mut cut = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Truncate in place, then rewrite in place: readers see every length.
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&proof)
                    .unwrap();
                file.set_len(cut % bytes.len() as u64).unwrap();
                std::fs::write(&proof, &bytes).unwrap();
                cut += 997;
            }
        })
    };
    let mut codes = std::collections::BTreeSet::new();
    for _ in 0..40 {
        let out = run(cli()
            .args(["verify", "--min-security-bits", "0"])
            .arg(&proof));
        let code = out.status.code();
        assert!(matches!(code, Some(0..=2)), "{code:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
        assert!(stderr(&out).lines().count() <= 1, "{}", stderr(&out));
        codes.insert(code);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    assert!(!codes.is_empty());
}

/// Proves the statement `args` describe with `BALLAST_CPU=path`; returns the proof's bytes and
/// the report's `cpu_path`.
fn prove_on_path(dir: &Path, path: &str, args: &[&str]) -> (Vec<u8>, String) {
    let (proof, report) = (
        dir.join(format!("{path}.bin")),
        dir.join(format!("{path}.json")),
    );
    let out = run(cli()
        .env("BALLAST_CPU", path)
        .arg("prove")
        .args(args)
        .arg("-o")
        .arg(&proof)
        .arg("--report")
        .arg(&report));
    assert!(
        out.status.success(),
        "prove on {path} failed: {}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains(&format!("{path} CPU path")),
        "{}",
        stdout(&out)
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    (
        std::fs::read(&proof).unwrap(),
        json["cpu_path"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn every_cpu_path_proves_the_same_bytes() {
    use ballast_cpu::CpuPath;
    let dir = tempfile::tempdir().unwrap();
    let statements: [&[&str]; 3] = [
        // Fibonacci: 2^12 rows (parallel NTT and Merkle levels), two segments, grinding.
        &[
            "--workload",
            "fibonacci",
            "--sequences",
            "4",
            "--log-rows",
            "12",
            "--segments",
            "2",
            "--pow-bits",
            "10",
        ],
        // The keccak chain: 2,353 columns, leaves of many Keccak blocks.
        &["--steps", "3", "--log-rows", "6"],
        // Poseidon2 trees: leaves and nodes on the packed permutation.
        &[
            "--workload",
            "fibonacci",
            "--sequences",
            "4",
            "--log-rows",
            "10",
            "--segments",
            "2",
            "--hash",
            "poseidon2",
        ],
    ];
    for args in statements {
        let (scalar, reported) = prove_on_path(dir.path(), "scalar", args);
        assert_eq!(reported, "scalar");
        for path in CpuPath::ALL.into_iter().skip(1) {
            if !ballast_cpu::testable(path) {
                let out = run(cli().env("BALLAST_CPU", path.name()).arg("doctor"));
                assert_eq!(out.status.code(), Some(2), "an unsupported path is refused");
                assert!(
                    stderr(&out).contains("this CPU does not support"),
                    "{}",
                    stderr(&out)
                );
                continue;
            }
            let (bytes, reported) = prove_on_path(dir.path(), path.name(), args);
            assert_eq!(reported, path.name());
            assert!(
                bytes == scalar,
                "{path} proof differs from the scalar proof ({args:?})"
            );
        }
    }
    let out = run(cli().arg("doctor"));
    let best = CpuPath::best().name();
    assert!(
        stdout(&out).contains(&format!("cpu path:   {best} (detected")),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_bad_cpu_path_is_a_one_line_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let proof = dir.path().join("proof.bin");
    for value in ["sse", "", "AVX2", "avx2 "] {
        let out = run(cli()
            .env("BALLAST_CPU", value)
            .arg("prove")
            .arg("-o")
            .arg(&proof));
        assert_eq!(out.status.code(), Some(2), "BALLAST_CPU={value:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!(
                "BALLAST_CPU={value:?} is not a CPU path (scalar, avx2, avx512)"
            )),
            "{err}"
        );
        assert!(!proof.exists());
    }
}

/// The scale-out statement of these tests: 5 Fibonacci segments.
const SCALE_OUT: [&str; 12] = [
    "prove",
    "--workload",
    "fibonacci",
    "--sequences",
    "2",
    "--log-rows",
    "7",
    "--segments",
    "5",
    "--queries",
    "24",
    "--pow-bits=4",
];

/// Proves part `index` of 3 of [`SCALE_OUT`] into `dir` as a scheduler would start the
/// worker: the index in `variable`, not on the command line.
fn prove_part(dir: &Path, variable: &str, index: usize) -> std::path::PathBuf {
    let path = dir.join(format!("part-{index}.bin"));
    let out = run(cli()
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env(variable, index.to_string())
        .args(SCALE_OUT)
        .args(["--parts", "3", "-o"])
        .arg(&path));
    assert!(out.status.success(), "part {index}: {}", stderr(&out));
    path
}

#[test]
fn parts_from_either_scheduler_bundle_into_the_single_host_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.bin");
    let out = run(cli().args(SCALE_OUT).arg("-o").arg(&whole));
    assert!(out.status.success(), "{}", stderr(&out));
    let parts = [
        prove_part(dir.path(), "JOB_COMPLETION_INDEX", 0),
        prove_part(dir.path(), "SLURM_ARRAY_TASK_ID", 1),
        prove_part(dir.path(), "JOB_COMPLETION_INDEX", 2),
    ];

    // A part is no proof of the statement: refused without --part, saying what it is.
    let out = run(cli()
        .args(["verify", "--min-security-bits", "0"])
        .arg(&parts[1]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is a valid part of")
            && stderr(&out).contains("(segments 2..4 of 5), not a whole proof"),
        "{}",
        stderr(&out)
    );
    // Each part verifies where it was made with --part, and says what it covers.
    let report = dir.path().join("verify.json");
    let out = run(cli()
        .args(["verify", "--part", "--min-security-bits", "0", "--report"])
        .arg(&report)
        .arg(&parts[1]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("valid part"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("segments 2..4 of 5"),
        "{}",
        stdout(&out)
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["kind"], "part");
    assert_eq!(json["part"]["first_segment"], 2);
    assert_eq!(json["part"]["end_segment"], 4);
    assert_eq!(json["statement"]["workload"], "fibonacci");

    let bundled = dir.path().join("bundled.bin");
    let out = run(cli()
        .arg("bundle")
        .args([&parts[2], &parts[0], &parts[1]])
        .arg("-o")
        .arg(&bundled));
    assert!(out.status.success(), "{}", stderr(&out));
    // A bundle is not a verdict: it says so, and the verifier's floor refuses these 15
    // provable bits.
    assert!(
        stdout(&out).contains("verdict:    none"),
        "{}",
        stdout(&out)
    );
    let out = run(cli().arg("verify").arg(&bundled));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("proof offers 15 bits of jbr security (28 conjectured), 100 required"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read(&bundled).unwrap(),
        std::fs::read(&whole).unwrap(),
        "the bundle is the single-host proof, byte for byte"
    );
    let out = run(cli()
        .args(["verify", "--min-security-bits", "0"])
        .arg(&bundled));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("valid proof"), "{}", stdout(&out));
}

#[test]
fn bad_sets_of_parts_are_one_line_errors_naming_the_part_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let parts: Vec<_> = (0..3)
        .map(|i| prove_part(d, "JOB_COMPLETION_INDEX", i))
        .collect();
    let name = |p: &Path| p.display().to_string();
    let truncated = d.join("truncated.bin");
    let bytes = std::fs::read(&parts[1]).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let tampered = d.join("tampered.bin");
    let mut flipped = bytes.clone();
    let at = flipped.len() - 100;
    flipped[at] ^= 1;
    std::fs::write(&tampered, flipped).unwrap();
    let foreign = d.join("foreign.bin");
    let out = run(cli()
        .args(SCALE_OUT)
        .args(["--blowup", "4", "--parts", "3", "--part-index", "1", "-o"])
        .arg(&foreign));
    assert!(out.status.success(), "{}", stderr(&out));
    let overlapping = d.join("overlapping.bin");
    let out = run(cli()
        .args(SCALE_OUT)
        .args(["--parts", "2", "--part-index", "0", "-o"])
        .arg(&overlapping));
    assert!(out.status.success(), "{}", stderr(&out));
    let whole = d.join("whole.bin");
    assert!(
        run(cli().args(SCALE_OUT).arg("-o").arg(&whole))
            .status
            .success()
    );

    let cases: [(Vec<&Path>, String); 7] = [
        (
            vec![&parts[0], &parts[2]],
            "no part covers segments 2..4".into(),
        ),
        (
            vec![&parts[0], &parts[1], &parts[1], &parts[2]],
            name(&parts[1]),
        ),
        (vec![&parts[0], &foreign, &parts[2]], name(&foreign)),
        (
            vec![&parts[0], &overlapping, &parts[1], &parts[2]],
            name(&overlapping),
        ),
        (vec![&parts[0], &truncated, &parts[2]], name(&truncated)),
        (vec![&parts[0], &tampered, &parts[2]], name(&tampered)),
        (vec![&parts[0], &whole], name(&whole)),
    ];
    let output = d.join("proof.bin");
    for (given, named) in cases {
        let out = run(cli().arg("bundle").args(&given).arg("-o").arg(&output));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{given:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{given:?}: one line: {err}");
        assert!(
            err.contains(&named),
            "{given:?}: {err} does not name {named}"
        );
        assert!(!output.exists(), "{given:?} wrote a proof");
    }
}

#[test]
fn part_flags_and_scheduler_variables_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    // Flags, scheduler variables, and what the one-line error must say.
    type Case = (
        &'static [&'static str],
        &'static [(&'static str, &'static str)],
        &'static str,
    );
    let cases: [Case; 6] = [
        (&["--parts", "3"], &[], "JOB_COMPLETION_INDEX"),
        (
            &["--parts", "3"],
            &[("JOB_COMPLETION_INDEX", "one")],
            "not a part index",
        ),
        (
            &["--parts", "3"],
            &[("SLURM_ARRAY_TASK_ID", "3")],
            "not below --parts 3",
        ),
        (
            &["--parts", "3"],
            &[("JOB_COMPLETION_INDEX", "1"), ("SLURM_ARRAY_TASK_ID", "2")],
            "disagree",
        ),
        (&["--parts", "6", "--part-index", "0"], &[], "5 segments"),
        (&["--part-index", "0"], &[], "--parts"),
    ];
    for (flags, vars, expected) in cases {
        let mut c = cli();
        c.current_dir(dir.path())
            .env_remove("JOB_COMPLETION_INDEX")
            .env_remove("SLURM_ARRAY_TASK_ID")
            .envs(vars.iter().copied())
            .args(SCALE_OUT)
            .args(flags);
        let out = run(&mut c);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?} {vars:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(expected), "{flags:?} {vars:?}: {err}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }
    // --part-index wins over the environment, and the default output names the part.
    let out = run(cli()
        .current_dir(dir.path())
        .env("JOB_COMPLETION_INDEX", "9")
        .args(SCALE_OUT)
        .args(["--parts", "3", "--part-index", "2"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.path().join("part-2.bin").exists());
    let out = run(cli()
        .args(["verify", "--expect-statement", &"ab".repeat(32)])
        .arg(dir.path().join("part-2.bin")));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("invalid part"), "{}", stderr(&out));
    assert!(stderr(&out).contains("is a part"), "{}", stderr(&out));
}

#[test]
fn a_worker_killed_mid_way_leaves_no_part_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_long_prove(dir.path(), &["--parts", "2", "--part-index", "1"]);
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    let parts: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert!(parts.is_empty(), "a killed worker left {parts:?}");
}

/// A workload added as its module and one row of the registry (`square-chain`, registered
/// by the `test-workload` feature these tests build with) is a `cli` workload in full: its
/// flags and help, its statement proven whole and in parts, verified, bundled into the
/// same bytes, and analysed by `cli security`, with nothing else edited.
#[test]
fn a_workload_added_in_one_row_proves_and_verifies_through_cli() {
    let dir = tempfile::tempdir().unwrap();
    let help = stdout(&run(cli().args(["prove", "--help"])));
    assert!(
        help.contains("  square-chain\n") && help.contains("--start <X0>"),
        "{help}"
    );
    let statement = [
        "--workload",
        "square-chain",
        "--start",
        "7",
        "--log-rows",
        "6",
        "--segments",
        "3",
    ];
    let whole = dir.path().join("whole.bin");
    let report = dir.path().join("prove.json");
    let out = run(cli()
        .arg("prove")
        .args(statement)
        .arg("--report")
        .arg(&report)
        .arg("-o")
        .arg(&whole));
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["statement"]["workload"], "square-chain");
    assert_eq!(json["statement"]["steps"], 189);
    assert_eq!(json["params"]["provable_security_bits"], 128);
    let out = run(cli().arg("verify").arg(&whole));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("square-chain: x² + 1 from 7 for 189 steps"),
        "{}",
        stdout(&out)
    );

    let parts: Vec<_> = (0..2)
        .map(|index| {
            let path = dir.path().join(format!("part-{index}.bin"));
            let out = run(cli()
                .arg("prove")
                .args(statement)
                .args(["--parts", "2", "--part-index", &index.to_string(), "-o"])
                .arg(&path));
            assert!(out.status.success(), "{}", stderr(&out));
            path
        })
        .collect();
    let bundled = dir.path().join("bundled.bin");
    let out = run(cli().arg("bundle").args(&parts).arg("-o").arg(&bundled));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&bundled).unwrap(),
        std::fs::read(&whole).unwrap()
    );

    let out = run(cli().arg("security").args(statement));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("# square-chain: "),
        "{}",
        stdout(&out)
    );
    // Its flag is its own, and the others' are not its.
    for (args, message) in [
        (
            &["prove", "--start", "3"][..],
            "--start is a square-chain flag; keccak-chain takes",
        ),
        (
            &["prove", "--workload", "square-chain", "--sequences", "2"],
            "--sequences is a fibonacci flag; square-chain takes --start, --log-rows, --segments",
        ),
        (
            &[
                "prove",
                "--workload",
                "square-chain",
                "--start",
                "18446744069414584321",
            ],
            "invalid --start",
        ),
    ] {
        let out = run(cli().args(args).arg("-o").arg(dir.path().join("no.bin")));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
}

/// A poseidon2-chain statement of `steps` in segments of 2^4 rows at fast parameters (20
/// bits), proven with `extra` into `file` in `dir`.
fn prove_chain(dir: &Path, file: &str, steps: u32, extra: &[&str]) -> (Output, std::path::PathBuf) {
    let path = dir.join(file);
    let out = run(cli()
        .args([
            "prove",
            "--workload",
            "poseidon2-chain",
            "--steps",
            &steps.to_string(),
        ])
        .args([
            "--log-rows",
            "4",
            "--security-bits",
            "20",
            "--pow-bits",
            "0",
        ])
        .args(extra)
        .arg("-o")
        .arg(&path));
    (out, path)
}

/// The last layer at fast parameters: blowup 8, no grinding (20 bits, as the segments').
const FAST_LAYER: [&str; 4] = ["--layer-blowup", "8", "--layer-pow-bits", "0"];

#[test]
fn a_compressed_proof_verifies_as_the_same_statement_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (out, proof) = prove_chain(dir.path(), "proof.bin", 16, &["--hash", "poseidon2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let digest = stdout(&out)
        .split_whitespace()
        .skip_while(|w| *w != "digest")
        .nth(1)
        .unwrap()
        .to_owned();
    let small = dir.path().join("small.bin");
    let out = run(cli()
        .arg("compress")
        .arg(&proof)
        .args(FAST_LAYER)
        .args(["--security-bits", "20", "-o"])
        .arg(&small));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains(&digest), "{}", stdout(&out));

    // Verified as the statement the proof proves, against the segments' floor and the
    // layer's, with every layer in the report.
    let report = dir.path().join("verify.json");
    let verify = |file: &Path, extra: &[&str]| run(cli().arg("verify").args(extra).arg(file));
    let any = ["--min-security-bits", "0"];
    let out = verify(
        &small,
        &[
            &any[..],
            &[
                "--expect-statement",
                &digest,
                "--report",
                report.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("valid compressed proof"),
        "{}",
        stdout(&out)
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["kind"], "compressed");
    assert_eq!(json["statement"]["digest"].as_str(), Some(digest.as_str()));
    let layers = json["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 2);
    assert_eq!(layers[0]["layer"], "segments");
    assert_eq!(layers[0]["params"]["hash"], "poseidon2");
    assert!(layers[0]["soundcalc"].is_object());
    assert_eq!(layers[1]["layer"], "last");
    assert_eq!(layers[1]["params"]["hash"], "keccak");
    assert_eq!(layers[1]["params"]["blowup"], 8);
    assert!(layers[1]["security"]["jbr"]["bits"].as_u64().unwrap() >= 20);
    // The proof's figure is its weakest layer's.
    let bits = |v: &serde_json::Value| v["security"]["jbr"]["bits"].as_u64().unwrap();
    assert_eq!(bits(&json), bits(&layers[0]).min(bits(&layers[1])));

    // `security --proof` states every layer as soundcalc reads it: one [[circuits]] a layer,
    // each the report's soundcalc object (the last layer's, the bound of its tables).
    let out = run(cli().args(["security", "--proof"]).arg(&small));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let toml = stdout(&out);
    let circuits: Vec<&str> = toml.split("[[circuits]]\n").skip(1).collect();
    assert_eq!(circuits.len(), 2, "{toml}");
    for (circuit, layer) in circuits.iter().zip(layers) {
        let name = layer["layer"].as_str().unwrap();
        assert!(
            circuit.starts_with(&format!("name = {name:?}\n")),
            "{circuit}"
        );
        for (key, value) in layer["soundcalc"].as_object().unwrap() {
            let line = format!("\n{key} = {value}\n").replace(",", ", ");
            assert!(circuit.contains(&line), "{line:?} missing from\n{circuit}");
        }
        let jbr = layer["security"]["jbr"]["bits"].as_u64().unwrap();
        assert!(
            toml.contains(&format!("# ballast, {name}, jbr: {jbr} bits (")),
            "{toml}"
        );
    }
    let out = run(cli()
        .args(["security", "--blowup", "4", "--proof"])
        .arg(&small));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // A file stating more bytes than the 1 GiB cap is refused naming that cap, not a flag
    // these commands lack.
    let mut stated = std::fs::read(&small).unwrap();
    stated[6..14].fill(0xff);
    let huge = dir.path().join("huge.bin");
    std::fs::write(&huge, &stated).unwrap();
    let unused = dir.path().join("unused.bin");
    for command in [&["security", "--proof"][..], &["compress", "-o"]] {
        let mut cli = cli();
        cli.args(command);
        if command[0] == "compress" {
            cli.arg(&unused);
        }
        let out = run(cli.arg(&huge));
        assert_ne!(out.status.code(), Some(0), "{command:?}");
        assert!(!unused.exists());
        assert!(
            stderr(&out).contains("more than the default cap of 1073741824"),
            "{command:?}: {}",
            stderr(&out)
        );
    }

    let len = std::fs::metadata(&small).unwrap().len();
    for (extra, message) in [
        (
            vec!["--min-security-bits", "100"],
            "the segment proofs' parameters",
        ),
        (
            vec![
                "--min-security-bits",
                "0",
                "--max-proof-bytes",
                &(len - 1).to_string(),
            ],
            "--max-proof-bytes",
        ),
        (
            vec![
                "--min-security-bits",
                "0",
                "--expect-statement",
                &"0".repeat(64),
            ],
            "not the expected",
        ),
    ] {
        let out = verify(&small, &extra);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(message),
            "{extra:?}: {}",
            stderr(&out)
        );
    }
    let bytes = std::fs::read(&small).unwrap();
    let mut flipped = bytes.clone();
    flipped[bytes.len() - 1] ^= 1;
    let changed = dir.path().join("changed.bin");
    for (file, message) in [
        (flipped, "invalid compressed proof"),
        (bytes[..bytes.len() - 1].to_vec(), "its header states"),
        ([&bytes[..], &[0]].concat(), "its header states"),
    ] {
        std::fs::write(&changed, &file).unwrap();
        let out = verify(
            &changed,
            &[&any[..], &["--report", report.to_str().unwrap()]].concat(),
        );
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        assert_eq!(json["valid"], false);
        assert!(json["statement"].is_null(), "{json}");
        // Nor is a layer's security stated for it.
        let out = run(cli().args(["security", "--proof"]).arg(&changed));
        assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
        assert!(stdout(&out).is_empty(), "{}", stdout(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }

    // A statement of two segments compresses too, and verifies as its statement.
    let (out, two) = prove_chain(dir.path(), "two.bin", 32, &["--hash", "poseidon2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let two_small = dir.path().join("two-small.bin");
    let out = run(cli()
        .arg("compress")
        .arg(&two)
        .args(FAST_LAYER)
        .args(["--security-bits", "20", "-o"])
        .arg(&two_small));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = verify(
        &two_small,
        &[&any[..], &["--report", report.to_str().unwrap()]].concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("2 segments"), "{}", stdout(&out));
    assert!(stdout(&out).contains("\nnode: "), "{}", stdout(&out));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let names: Vec<&str> = (json["layers"].as_array().unwrap().iter())
        .map(|l| l["layer"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["segments", "node", "last"]);
    assert_eq!(json["layers"][1]["params"]["hash"], "poseidon2");
    let out = run(cli().args(["security", "--proof"]).arg(&two_small));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).matches("[[circuits]]").count(),
        3,
        "{}",
        stdout(&out)
    );

    // `prove --compress` writes the same bytes as `prove` then `compress`.
    let (out, direct) = prove_chain(
        dir.path(),
        "direct.bin",
        16,
        &[&["--hash", "poseidon2", "--compress"][..], &FAST_LAYER[..]].concat(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&direct).unwrap(),
        std::fs::read(&small).unwrap()
    );
}

#[test]
fn what_cannot_be_compressed_is_a_one_line_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (out, keccak) = prove_chain(dir.path(), "keccak.bin", 16, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let poseidon2_part = ["--hash", "poseidon2", "--parts", "2", "--part-index", "0"];
    let (out, part) = prove_chain(dir.path(), "part.bin", 32, &poseidon2_part);
    assert!(out.status.success(), "{}", stderr(&out));
    let small = dir.path().join("small.bin");
    for (proof, message) in [
        (
            &keccak,
            "only a proof made with --hash poseidon2 can be compressed",
        ),
        (&part, "it is a part (segments 0..1 of 2)"),
    ] {
        let out = run(cli()
            .arg("compress")
            .arg(proof)
            .args(FAST_LAYER)
            .arg("-o")
            .arg(&small));
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
        assert!(!small.exists());
    }
    // Refused before proving.
    let part_compressed = [&poseidon2_part[..], &["--compress"]].concat();
    for (extra, message) in [
        (&["--compress"][..], "--hash poseidon2"),
        (
            &["--hash", "poseidon2", "--layer-pow-bits", "0"],
            "give --compress",
        ),
        (&part_compressed[..], "cannot be used with '--compress'"),
    ] {
        let (out, refused) = prove_chain(dir.path(), "refused.bin", 16, extra);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
        assert!(!refused.exists());
    }
    // A last layer out of range is refused from the tree's plan before the statement's 64
    // Keccak segments are proven (which takes minutes).
    let refused = dir.path().join("long.bin");
    let out = run(cli()
        .args([
            "prove",
            "--segments",
            "64",
            "--hash",
            "poseidon2",
            "--compress",
        ])
        .args(["--layer-pow-bits", "60", "-o"])
        .arg(&refused));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    let expected = "cannot compress: the last layer: the layer's parameters: pow_bits is 60";
    assert!(stderr(&out).contains(expected), "{}", stderr(&out));
    assert!(!refused.exists());
}
