#![doc = include_str!("../README.md")]

mod abba;
mod compare;
mod growth;
mod host;
mod policy;
mod report;
mod runner;
mod shellwords;
mod stats;
mod svg;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Measure whole processes: ABBA comparisons, memory growth sweeps, allocator policy experiments.
///
/// Every run is a fresh child process; its wall time is measured around spawn and wait, and its
/// CPU times, minor faults and peak RSS come from the kernel (`wait4`). Reports are Markdown on
/// stdout; progress goes to stderr.
#[derive(Debug, Parser)]
#[command(name = "ballast-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compare two commands over N pairs run in A/B/B/A order (paired t and exact Wilcoxon).
    Abba(abba::AbbaArgs),
    /// Fit peak RSS against n over a sweep of a command template (see `growth --help`).
    Growth(growth::GrowthArgs),
    /// Compare jemalloc settings of ballast's `cli prove` as ABBA experiments.
    Policy(policy::PolicyArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let report = match &cli.command {
        Command::Abba(args) => abba::run(args),
        Command::Growth(args) => growth::run(args),
        Command::Policy(args) => policy::run(args),
    };
    let written = report.and_then(|md| match io::stdout().lock().write_all(md.as_bytes()) {
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("ballast-bench: {err:#}");
            ExitCode::from(2)
        }
    }
}
