//! `ballast_fuzz_checks::mutate_tables` under libFuzzer.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = ballast_fuzz_checks::mutate_tables(data);
});
