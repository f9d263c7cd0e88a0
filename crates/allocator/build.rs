//! Refuses builds that would link a jemalloc which may silently ignore `_rjem_malloc_conf`.

use std::env;

fn main() {
    let target = env::var("TARGET").unwrap_or_default();
    let prefixed = format!(
        "{}_JEMALLOC_OVERRIDE",
        target.to_uppercase().replace('-', "_")
    );
    for name in [prefixed.as_str(), "JEMALLOC_OVERRIDE"] {
        println!("cargo:rerun-if-env-changed={name}");
        if let Some(value) = env::var_os(name) {
            panic!(
                "{name}={} is set: tikv-jemalloc-sys would link that jemalloc instead of its \
                 bundled, _rjem_-prefixed build, and an unprefixed jemalloc silently ignores \
                 the never-purge policy exported as _rjem_malloc_conf. Unset it.",
                value.to_string_lossy()
            );
        }
    }
}
