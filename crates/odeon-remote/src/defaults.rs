//! Every tunable of the network layer, with its unit.

use std::time::Duration;

/// Deadline of each handshake step (a peer that stalls longer is dropped).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest frame an authenticated peer may send. Unit: bytes.
pub const MAX_FRAME: usize = 8 * 1024 * 1024;

/// Authenticated links a listener buffers before its owner takes them. Unit: links.
pub const PENDING_LINKS: usize = 64;
