//! chitchat's `Transport` and `Socket` over UDP, sealing every datagram chitchat
//! sends and opening every one it receives with the gossip key (`auth.rs`).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use async_trait::async_trait;
use chitchat::transport::{Socket, Transport};
use chitchat::{ChitchatMessage, Deserializable, Serializable};
use tokio::net::UdpSocket;

use super::auth::{GossipKey, GossipStats, MAX_DATAGRAM, Rejected};
use crate::defaults;
use crate::throttle::LogThrottle;

/// Hands chitchat the UDP socket that `Membership::start` bound (so that a port 0 is
/// known before chitchat's identity is built), wrapped in [`AuthSocket`].
pub(crate) struct AuthTransport {
    socket: std::sync::Mutex<Option<UdpSocket>>,
    key: GossipKey,
    stats: Arc<GossipStats>,
}

impl AuthTransport {
    pub(crate) fn new(socket: UdpSocket, key: GossipKey, stats: Arc<GossipStats>) -> Self {
        Self {
            socket: std::sync::Mutex::new(Some(socket)),
            key,
            stats,
        }
    }
}

#[async_trait]
impl Transport for AuthTransport {
    async fn open(&self, listen_addr: SocketAddr) -> anyhow::Result<Box<dyn Socket>> {
        let socket = self
            .socket
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
            .context("the gossip socket was already opened")?;
        let bound = socket.local_addr()?;
        anyhow::ensure!(
            bound == listen_addr,
            "chitchat asked for {listen_addr}, the gossip socket is bound to {bound}"
        );
        Ok(Box::new(AuthSocket::new(
            socket,
            self.key.clone(),
            self.stats.clone(),
        )))
    }
}

/// A UDP socket that seals what chitchat sends and opens what it receives.
pub(crate) struct AuthSocket {
    socket: UdpSocket,
    key: GossipKey,
    stats: Arc<GossipStats>,
    /// Anyone can send datagrams: one warning per interval, the counts in `stats`.
    dropped: LogThrottle,
    message: Vec<u8>,
    datagram: Vec<u8>,
    /// One byte more than [`MAX_DATAGRAM`], so that a larger datagram (possible over
    /// IPv6) shows as oversized instead of being silently cut to size by `recv_from`.
    recv_buf: Box<[u8]>,
}

impl AuthSocket {
    pub(crate) fn new(socket: UdpSocket, key: GossipKey, stats: Arc<GossipStats>) -> Self {
        Self {
            socket,
            key,
            stats,
            dropped: LogThrottle::new(defaults::WARN_INTERVAL),
            message: Vec::with_capacity(MAX_DATAGRAM),
            datagram: Vec::with_capacity(MAX_DATAGRAM),
            recv_buf: vec![0; MAX_DATAGRAM + 1].into_boxed_slice(),
        }
    }

    /// One datagram: `Ok(None)` when it was dropped, `Err` only when the socket is
    /// broken. No `.await` after `recv_from`, so dropping the future (chitchat
    /// `select!`s on it) never loses an accepted message.
    async fn receive_one(&mut self) -> anyhow::Result<Option<(SocketAddr, ChitchatMessage)>> {
        let (len, from) = match self.socket.recv_from(&mut self.recv_buf).await {
            Ok(received) => received,
            Err(e) if is_transient(&e) => {
                if let Some(suppressed) = self.dropped.admit() {
                    tracing::warn!(error = %e, suppressed, "transient gossip recv error");
                }
                return Ok(None);
            }
            Err(e) => return Err(e).context("gossip socket failed"),
        };
        let message = match self.key.open(&self.recv_buf[..len]) {
            Ok(message) => message,
            Err(reason) => {
                let counter = match reason {
                    Rejected::Oversized { .. } => &self.stats.oversized,
                    _ => &self.stats.rejected,
                };
                GossipStats::count(counter);
                if let Some(suppressed) = self.dropped.admit() {
                    tracing::warn!(%from, len, %reason, suppressed, "gossip datagram dropped");
                }
                return Ok(None);
            }
        };
        if let Err(e) = super::inflate::check(message) {
            GossipStats::count(&self.stats.malformed);
            tracing::warn!(%from, len, error = %e, "authentic gossip datagram that would inflate too much dropped");
            return Ok(None);
        }
        let mut rest = message;
        match ChitchatMessage::deserialize(&mut rest) {
            Ok(decoded) if rest.is_empty() => {
                GossipStats::count(&self.stats.accepted);
                Ok(Some((from, decoded)))
            }
            Ok(_) => {
                GossipStats::count(&self.stats.malformed);
                if let Some(suppressed) = self.dropped.admit() {
                    tracing::warn!(%from, len, trailing = rest.len(), suppressed, "authentic gossip datagram with trailing bytes dropped");
                }
                Ok(None)
            }
            Err(e) => {
                GossipStats::count(&self.stats.malformed);
                if let Some(suppressed) = self.dropped.admit() {
                    tracing::warn!(%from, len, error = %e, suppressed, "authentic gossip datagram that does not decode dropped");
                }
                Ok(None)
            }
        }
    }
}

fn is_transient(e: &io::Error) -> bool {
    // A peer that went away makes the next recv fail with ECONNREFUSED (ICMP port
    // unreachable) on some systems; that says nothing about our socket.
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::OutOfMemory
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}

#[async_trait]
impl Socket for AuthSocket {
    async fn send(&mut self, to: SocketAddr, message: ChitchatMessage) -> anyhow::Result<()> {
        self.message.clear();
        message.serialize(&mut self.message);
        self.datagram.clear();
        self.key.seal(&self.message, &mut self.datagram);
        if self.datagram.len() > MAX_DATAGRAM {
            // Chitchat sizes its messages for a bare UDP payload; our 33 bytes of
            // version and tag can push a nearly full one over. Dropping it is safe:
            // chitchat recomputes the exchange next round.
            GossipStats::count(&self.stats.oversized);
            tracing::warn!(%to, len = self.datagram.len(), "gossip datagram too large to send, dropped");
            return Ok(());
        }
        if let Err(e) = self.socket.send_to(&self.datagram, to).await {
            GossipStats::count(&self.stats.send_errors);
            // Chitchat logs it and carries on; the error does not stop gossip.
            return Err(e).with_context(|| format!("failed to send gossip to {to}"));
        }
        Ok(())
    }

    async fn recv(&mut self) -> anyhow::Result<(SocketAddr, ChitchatMessage)> {
        loop {
            if let Some(received) = self.receive_one().await? {
                return Ok(received);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Secret;

    fn key(secret: &str) -> GossipKey {
        GossipKey::new(&Secret::new(secret).unwrap())
    }

    fn message_bytes() -> Vec<u8> {
        let mut bytes = Vec::new();
        ChitchatMessage::Syn {
            cluster_id: "test".into(),
            digest: Default::default(),
        }
        .serialize(&mut bytes);
        bytes
    }

    async fn socket_pair(k: &GossipKey) -> (AuthSocket, AuthSocket, Arc<GossipStats>) {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let stats = Arc::new(GossipStats::default());
        (
            AuthSocket::new(a, k.clone(), Arc::default()),
            AuthSocket::new(b, k.clone(), stats.clone()),
            stats,
        )
    }

    #[tokio::test]
    async fn the_socket_drops_bad_datagrams_and_delivers_good_ones() {
        let k = key("0123456789abcdef");
        let (mut a, mut b, stats) = socket_pair(&k).await;
        let to = b.socket.local_addr().unwrap();
        let raw = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        // Garbage, a truncated datagram, one sealed with another secret, and an
        // authentic one whose content chitchat cannot decode.
        raw.send_to(b"junk", to).await.unwrap();
        let mut good = Vec::new();
        k.seal(&message_bytes(), &mut good);
        raw.send_to(&good[..good.len() - 1], to).await.unwrap();
        let mut foreign = Vec::new();
        key("another secret, long enough").seal(&message_bytes(), &mut foreign);
        raw.send_to(&foreign, to).await.unwrap();
        let mut undecodable = Vec::new();
        k.seal(b"not chitchat", &mut undecodable);
        raw.send_to(&undecodable, to).await.unwrap();
        // Then a real message.
        a.send(to, ChitchatMessage::BadCluster).await.unwrap();
        let (from, message) = b.recv().await.unwrap();
        assert_eq!(from, a.socket.local_addr().unwrap());
        assert_eq!(message, ChitchatMessage::BadCluster);
        assert_eq!(stats.rejected(), 3);
        assert_eq!(stats.malformed(), 1);
        assert_eq!(stats.accepted(), 1);
    }

    #[tokio::test]
    async fn an_authentic_datagram_that_would_inflate_too_much_is_dropped() {
        // Found by the gossip fuzz target: chitchat decompresses a whole delta before
        // reading it, so a small datagram could make it allocate hundreds of MB.
        let k = key("0123456789abcdef");
        let (mut a, mut b, stats) = socket_pair(&k).await;
        let to = b.socket.local_addr().unwrap();
        let raw = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let mut bomb = Vec::new();
        k.seal(
            &super::super::inflate::valid_bomb(super::super::inflate::MAX_INFLATED as usize + 1),
            &mut bomb,
        );
        raw.send_to(&bomb, to).await.unwrap();
        a.send(to, ChitchatMessage::BadCluster).await.unwrap();
        let (_, message) = b.recv().await.unwrap();
        assert_eq!(
            message,
            ChitchatMessage::BadCluster,
            "the bomb was not delivered"
        );
        assert_eq!(stats.malformed(), 1);
        assert_eq!(stats.accepted(), 1);
    }
}
