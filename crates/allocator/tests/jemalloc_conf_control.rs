//! The control for `jemalloc_conf`: jemalloc installed without the export. The same
//! read-back must see jemalloc's own defaults (10000 / 0), which shows the read-back
//! discriminates: it is not reporting −1 whatever happens.

#[global_allocator]
static JEMALLOC: ballast_allocator::Jemalloc = ballast_allocator::Jemalloc;

#[test]
fn without_the_export_jemalloc_keeps_its_default_decay() {
    for var in ["_RJEM_MALLOC_CONF", "MALLOC_CONF"] {
        assert!(
            std::env::var_os(var).is_none(),
            "{var} is set in the environment; unset it to run this control"
        );
    }
    let report = ballast_allocator::read_back().expect("the bundled jemalloc answers");
    assert_eq!((report.dirty_decay_ms, report.muzzy_decay_ms), (10_000, 0));
    assert_eq!(
        report.global_conf, None,
        "no _rjem_malloc_conf definition was linked"
    );
}
