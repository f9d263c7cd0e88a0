//! `ballast_fuzz_checks::decode_and_verify` under libFuzzer.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = ballast_fuzz_checks::decode_and_verify(data);
});
