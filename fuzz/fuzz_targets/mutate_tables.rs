//! `ballast_fuzz_checks::mutate_tables` under libFuzzer.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    ballast_fuzz_checks::mutate_tables(data);
});
