//! Fuzzes the peer's handshake messages (transport/handshake.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| odeon_remote::fuzzing::handshake(data));
