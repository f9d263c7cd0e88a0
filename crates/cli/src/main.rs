//! `cli`: ballast's command line. The binary is glue — arguments, output, exit codes — over
//! the prover in `ballast-stark`.
//!
//! Exit codes: 0 success (a valid proof for `verify`), 1 an invalid proof, 2 bad usage or
//! unreadable input.

// Every proving binary runs on jemalloc with the never-purge policy compiled in. The prover
// frees and re-allocates multi-hundred-MiB buffers segment after segment; pages jemalloc
// handed back to the OS on its decay timers would be faulted in again at once, on the
// proving threads. `_RJEM_MALLOC_CONF` still overrides the policy. See docs/allocator.md.
ballast_allocator::install!();

mod args;
mod bundle;
mod compress;
mod doctor;
mod output;
mod plan;
mod prove;
mod read;
mod resources;
mod security;
mod summary;
mod verify;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    output::remove_temporaries_on_interrupt();
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return ballast_usage::usage_error("cli", &err),
    };
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    // The SIMD path is chosen once, before any work: a bad BALLAST_CPU is a usage error.
    if let Err(err) = ballast_cpu::select() {
        eprintln!("cli: {err}");
        return ExitCode::from(2);
    }
    let threads = match &cli.command {
        args::Command::Prove(a) => a.threads,
        args::Command::Verify(a) => a.threads,
        args::Command::Bundle(a) => a.threads,
        args::Command::Compress(a) => a.threads,
        args::Command::Security(_) | args::Command::Doctor(_) => None,
    };
    if let Some(n) = threads
        && let Err(err) = rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(n))
            .build_global()
    {
        eprintln!("cli: cannot configure the thread pool: {err}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        args::Command::Prove(a) => prove::run(&a).map(|()| ExitCode::SUCCESS),
        args::Command::Verify(a) => verify::run(&a),
        args::Command::Bundle(a) => bundle::run(&a).map(|()| ExitCode::SUCCESS),
        args::Command::Compress(a) => compress::run(&a).map(|()| ExitCode::SUCCESS),
        args::Command::Security(a) => security::run(&a).map(|()| ExitCode::SUCCESS),
        args::Command::Doctor(a) => doctor::run(&a).map(|()| ExitCode::SUCCESS),
    };
    result.unwrap_or_else(|err| {
        eprintln!("cli: {err:#}");
        ExitCode::from(2)
    })
}
