//! `cli doctor`: what this binary is and what it runs with, read from the running process.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use ballast_allocator::{AllocatorReport, NEVER_PURGE, read_back};
use serde::Serialize;

use crate::args::DoctorArgs;
use crate::output::print;

#[derive(Serialize)]
struct Doctor {
    version: &'static str,
    git_revision: Option<&'static str>,
    target: &'static str,
    backends: Vec<&'static str>,
    allocator: Allocator,
    environment: Environment,
    threads: usize,
    cuda: Cuda,
}

#[derive(Serialize)]
struct Allocator {
    name: &'static str,
    version: String,
    /// `_rjem_` when jemalloc read our `_rjem_malloc_conf`, which only the prefixed build does.
    symbol_prefix: Option<&'static str>,
    compiled_conf: Option<String>,
    compiled_conf_is_never_purge: bool,
    dirty_decay_ms: isize,
    muzzy_decay_ms: isize,
    background_thread: bool,
    page_size: usize,
}

#[derive(Serialize)]
struct Environment {
    #[serde(rename = "_RJEM_MALLOC_CONF")]
    rjem_malloc_conf: Option<String>,
    #[serde(rename = "MALLOC_CONF")]
    malloc_conf: Option<String>,
}

#[derive(Serialize)]
struct Cuda {
    usable: bool,
    detail: String,
}

pub fn run(args: &DoctorArgs) -> Result<()> {
    let report = read_back().context("cannot read jemalloc's configuration")?;
    let doctor = Doctor {
        version: env!("CARGO_PKG_VERSION"),
        git_revision: option_env!("BALLAST_GIT_REV"),
        target: env!("BALLAST_TARGET"),
        backends: vec!["cpu"],
        allocator: allocator(report),
        environment: Environment {
            rjem_malloc_conf: env_var("_RJEM_MALLOC_CONF"),
            malloc_conf: env_var("MALLOC_CONF"),
        },
        threads: rayon::current_num_threads(),
        cuda: Cuda {
            usable: false,
            detail: "this build has no CUDA backend".into(),
        },
    };
    if args.json {
        let mut json = serde_json::to_string_pretty(&doctor).context("cannot encode JSON")?;
        json.push('\n');
        print(&json)
    } else {
        print(&human(&doctor))
    }
}

fn allocator(r: AllocatorReport) -> Allocator {
    let never_purge = NEVER_PURGE.to_str().expect("ASCII");
    Allocator {
        name: "jemalloc",
        symbol_prefix: r.global_conf.is_some().then_some("_rjem_"),
        compiled_conf_is_never_purge: r.global_conf.as_deref() == Some(never_purge),
        compiled_conf: r.global_conf,
        version: r.version,
        dirty_decay_ms: r.dirty_decay_ms,
        muzzy_decay_ms: r.muzzy_decay_ms,
        background_thread: r.background_thread,
        page_size: r.page_size,
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

fn human(d: &Doctor) -> String {
    let a = &d.allocator;
    let unset = |v: &Option<String>| v.clone().unwrap_or_else(|| "unset".into());
    let policy = match (a.dirty_decay_ms, a.muzzy_decay_ms) {
        (-1, -1) => "never purge",
        _ => "purging on decay timers",
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ballast cli {} ({})",
        d.version,
        d.git_revision.unwrap_or("revision unknown")
    );
    let _ = writeln!(out, "target:     {}", d.target);
    let _ = writeln!(out, "backends:   {}", d.backends.join(", "));
    let _ = writeln!(
        out,
        "allocator:  jemalloc {}, symbol prefix {}",
        a.version,
        a.symbol_prefix
            .unwrap_or("unknown (_rjem_malloc_conf was not read)")
    );
    let _ = writeln!(
        out,
        "            compiled-in conf {}",
        a.compiled_conf
            .as_deref()
            .map_or("none".into(), |c| format!("\"{c}\""))
    );
    let _ = writeln!(
        out,
        "            in effect: dirty_decay_ms {}, muzzy_decay_ms {}, background_thread {} ({policy})",
        a.dirty_decay_ms, a.muzzy_decay_ms, a.background_thread
    );
    let _ = writeln!(out, "            page size {} bytes", a.page_size);
    let _ = writeln!(
        out,
        "environment: _RJEM_MALLOC_CONF {}, MALLOC_CONF {} (ignored by the prefixed jemalloc)",
        unset(&d.environment.rjem_malloc_conf),
        unset(&d.environment.malloc_conf)
    );
    let _ = writeln!(out, "threads:    {}", d.threads);
    let _ = writeln!(
        out,
        "cuda:       {}",
        if d.cuda.usable {
            "usable"
        } else {
            "not usable"
        }
    );
    let _ = writeln!(out, "            {}", d.cuda.detail);
    out
}
