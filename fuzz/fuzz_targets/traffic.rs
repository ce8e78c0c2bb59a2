//! Fuzzes one frame of an open link decoded as Traffic, and an actor ref (wire/traffic.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| odeon_remote::fuzzing::traffic(data));
