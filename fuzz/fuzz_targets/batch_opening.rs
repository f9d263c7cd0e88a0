//! `ballast_fuzz_checks::batch_opening` under libFuzzer.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    ballast_fuzz_checks::batch_opening(data);
});
