#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vkerode::fuzzing::report_html(data));
