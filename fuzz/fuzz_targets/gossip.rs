//! Fuzzes the authenticated gossip datagram: the tag check, then chitchat's decoder (membership/auth.rs, socket.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| odeon_remote::fuzzing::gossip(data));
