#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vkerode::fuzzing::results_csv(data));
