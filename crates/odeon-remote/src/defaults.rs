//! Every tunable of the network layer, with its unit.

use std::time::Duration;

/// Deadline of each handshake step (a peer that stalls longer is dropped).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest frame an authenticated peer may send. Unit: bytes.
pub const MAX_FRAME: usize = 8 * 1024 * 1024;

/// Authenticated links a listener buffers before its owner takes them. Unit: links.
pub const PENDING_LINKS: usize = 64;

/// First delay before redialing a peer whose link failed (doubles per failure).
pub const MIN_BACKOFF: Duration = Duration::from_millis(50);

/// The longest delay between two redials of a peer.
pub const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// How long a peer may stay unreachable before it is lost with all its actors.
pub const LOST_AFTER: Duration = Duration::from_secs(5);

/// The deadline of node requests (lookups, remote spawns).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
