//! `alejandra-check [--write] FILE...`: check that Nix files are formatted the
//! way alejandra 3.1.0 formats them.
//!
//! Without `--write` it changes nothing, lists every file that would change and
//! exits 1 (the same contract as `alejandra --check`). With `--write` it rewrites
//! those files in place. A file that does not parse is reported and exits 2.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut write = false;
    let mut files = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--write" => write = true,
            "--check" => write = false,
            "--version" => {
                println!(
                    "alejandra-check (alejandra {})",
                    alejandra::version::VERSION
                );
                return ExitCode::SUCCESS;
            }
            "-h" | "--help" => {
                println!("usage: alejandra-check [--check | --write] FILE...");
                return ExitCode::SUCCESS;
            }
            _ => files.push(arg),
        }
    }
    if files.is_empty() {
        eprintln!(
            "alejandra-check: no files given (usage: alejandra-check [--check | --write] FILE...)"
        );
        return ExitCode::from(2);
    }

    let mut unformatted = 0_usize;
    let mut errors = 0_usize;
    for file in &files {
        match alejandra::format::in_fs(file.clone(), write) {
            alejandra::format::Status::Changed(false) => {}
            alejandra::format::Status::Changed(true) if write => println!("formatted: {file}"),
            alejandra::format::Status::Changed(true) => {
                println!("not formatted: {file}");
                unformatted += 1;
            }
            alejandra::format::Status::Error(error) => {
                eprintln!("alejandra-check: {file}: {error}");
                errors += 1;
            }
        }
    }

    if errors > 0 {
        ExitCode::from(2)
    } else if unformatted > 0 {
        eprintln!(
            "alejandra-check: {unformatted} of {} file(s) need formatting (run with --write)",
            files.len()
        );
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
