//! Fuzzes the link's length-prefixed frame reader (wire/frame.rs), fed in chunks of every size.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| odeon_remote::fuzzing::frames(data));
