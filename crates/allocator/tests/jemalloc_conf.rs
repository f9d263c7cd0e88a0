//! The pattern read-back test: this binary expands the same `install!` as every shipped
//! binary, then asks the running jemalloc which decay policy it uses.
//!
//! It pins the export pattern (symbol name, value type, initializer, edition spelling), not
//! the shipped binaries: those are checked with `nm` by `ci/check-malloc-conf-symbol.sh` and
//! at run time by `cli doctor`. Its twin `jemalloc_conf_control` shows the same read-back
//! sees jemalloc's defaults when nothing is exported, so this test can fail.

ballast_allocator::install!();

#[test]
fn jemalloc_reads_the_never_purge_policy_from_the_binary() {
    for var in ["_RJEM_MALLOC_CONF", "MALLOC_CONF"] {
        assert!(
            std::env::var_os(var).is_none(),
            "{var} is set in the environment; it could decide the result, so this test \
             refuses to run: unset it"
        );
    }
    let report = ballast_allocator::read_back().expect("the bundled jemalloc answers");
    assert_eq!(
        report.dirty_decay_ms, -1,
        "opt.dirty_decay_ms is {}, not -1",
        report.dirty_decay_ms
    );
    assert_eq!(
        report.muzzy_decay_ms, -1,
        "opt.muzzy_decay_ms is {}, not -1",
        report.muzzy_decay_ms
    );
    assert_eq!(
        report.global_conf.as_deref(),
        Some("dirty_decay_ms:-1,muzzy_decay_ms:-1"),
        "jemalloc did not read the exported _rjem_malloc_conf"
    );
}
