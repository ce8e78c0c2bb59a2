//! Links between nodes over TCP: listening, dialing, and the authentication that
//! guards both (see [`handshake`], and [`tls`] when mutual TLS is on).
//!
//! **Internal, not a stable API.** Public only for the fuzz targets and the benchmarks,
//! and hidden from the documentation; it may change in any release. Applications use
//! `Secret` and `TlsConfig` from the crate root.
//!
//! # Layers (each only talks to the one below)
//! 1. `wire::frame`: length-prefixed, bounded frames.
//! 2. [`tls`] (optional, [`LinkConfig::with_tls`]): mutual TLS over the TCP connection;
//!    both sides present a certificate from the cluster's CA and both verify.
//! 3. [`handshake`]: a connection becomes a [`Link`] only after both sides proved they
//!    know the cluster secret (SPAKE2 and key confirmation, inside the TLS stream when
//!    TLS is on).
//! 4. [`Listener`]: accepts connections forever. Each connection's TLS step and
//!    handshake run on its own task under one deadline, so a peer that sends garbage,
//!    no or the wrong certificate, the wrong secret, or nothing at all is refused and
//!    counted ([`ListenerStats`]) while every other connection goes on being served.
//!
//! # Bounded unauthenticated work
//! Strangers can open connections at will, so what each one costs is bounded: at most
//! [`LinkConfig::max_pending_handshakes`] handshakes run at once (a connection beyond
//! that is closed at once and counted as shed), each within
//! [`LinkConfig::handshake_timeout`]; a failing `accept` (out of file descriptors)
//! pauses the loop with a growing delay instead of spinning; and the warnings for all
//! of these are rate-limited ([`defaults::WARN_INTERVAL`]), the counters exact. A
//! stranger who keeps the cap full delays new links (they are retried with backoff)
//! but gets no further.
//!
//! # Security model (links and gossip)
//! The cluster secret is the one credential: every node holds the same one. Make it
//! random: [`Secret::generate`], or `odeon-node gen-secret` (32 random bytes as 64 hex
//! characters). Secrets under [`Secret::MIN_LEN`] bytes are refused, under
//! [`Secret::RECOMMENDED_LEN`] accepted with a warning.
//!
//! **Without the secret**, someone who can reach a node's port, or who sees and
//! alters its traffic:
//! - cannot open a link (SPAKE2 with key confirmation, [`handshake`]) nor have a
//!   gossip datagram accepted (HMAC, `membership`), so cannot join, impersonate a node
//!   to another, or send a message to an actor;
//! - cannot test guesses of the secret offline from a link handshake, as dialer, as
//!   listener or as eavesdropper: each connection tests at most one guess online, and
//!   is refused and counted;
//! - *can* test guesses offline against one captured gossip datagram (its tag is a MAC
//!   keyed by the secret): each guess costs an Argon2id evaluation (19 MiB, 2 passes).
//!   That stops guessing a random secret, not a weak phrase;
//! - without TLS, *can* read everything on the path (messages, names, actor ids), and
//!   an on-path attacker can alter, inject or cut frames of an established link: the
//!   handshake authenticates a link's opening, not each frame. With TLS
//!   ([`LinkConfig::with_tls`]), link traffic is encrypted and integrity-protected;
//!   gossip (UDP) stays readable either way (member names, addresses, registered
//!   names), though not forgeable, and can be replayed (harmlessly: chitchat's state
//!   only moves forward);
//! - can make a node spend bounded work: at most
//!   [`max_pending_handshakes`](LinkConfig::max_pending_handshakes) handshakes of at
//!   most [`handshake_timeout`](LinkConfig::handshake_timeout) each, frames of at most
//!   [`handshake::HANDSHAKE_MAX_FRAME`] bytes before authentication, one HMAC per
//!   datagram; refused input is counted (`Node::metrics`) and logged at a limited
//!   rate. Keeping every handshake slot busy delays new links; floods of packets are
//!   the network's to stop (firewall, rate limits).
//!
//! **With the secret** (a node of the cluster, or anyone who obtained it), a peer is
//! trusted as a member: the secret proves membership, not identity, so it can claim
//! any node name, gossip any state (including other nodes', and so addresses that
//! nodes will dial), and use the remote operations on every node: messages, watches
//! and stops to the actors whose refs it was given or that are registered (exported
//! actors are addressed by random tokens, not guessable ids; see `Node`), lookups, and
//! remote spawns of the types a node declared spawnable. It is still held to the frame
//! limit, and malformed input only closes its link. With TLS it also needs a
//! certificate from the cluster's CA. A leaked secret means a new secret on every node.

pub mod handshake;
mod secret;
pub(crate) mod stream;
#[cfg(feature = "tls")]
pub mod tls;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;

use crate::defaults;
use crate::throttle::LogThrottle;
use crate::wire::NodeId;
pub use handshake::HandshakeError;
pub use secret::Secret;
pub use stream::{LinkReader, LinkWriter};
#[cfg(feature = "tls")]
pub use tls::{TlsConfig, TlsConfigError};

/// How links are opened and bounded.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    /// The cluster secret both sides must prove they know.
    pub secret: Secret,
    /// The deadline of a link's whole opening (TLS, then the SPAKE2 handshake).
    pub handshake_timeout: Duration,
    /// How many handshakes a listener runs at once (default
    /// [`defaults::MAX_PENDING_HANDSHAKES`]); a connection accepted beyond that is
    /// closed at once. At least 1.
    pub max_pending_handshakes: usize,
    /// The largest frame accepted from an authenticated peer. Unit: bytes.
    pub max_frame: usize,
    /// Mutual TLS under the handshake; `None` (the default) for plain TCP. Both ends of
    /// a link must agree: a TLS node refuses a plaintext peer and vice versa. Only with
    /// the `tls` feature.
    #[cfg(feature = "tls")]
    pub tls: Option<TlsConfig>,
}

impl LinkConfig {
    /// The defaults of `crate::defaults` with this secret.
    pub fn new(secret: Secret) -> Self {
        Self {
            secret,
            handshake_timeout: defaults::HANDSHAKE_TIMEOUT,
            max_pending_handshakes: defaults::MAX_PENDING_HANDSHAKES,
            max_frame: defaults::MAX_FRAME,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// The same configuration with mutual TLS on (see [`tls`] for the certificates).
    #[cfg(feature = "tls")]
    pub fn with_tls(mut self, tls: TlsConfig) -> Self {
        self.tls = Some(tls);
        self
    }
}

/// An authenticated connection to a peer node, over TCP or TLS: one type either way.
pub type Link = handshake::Opened<LinkReader, LinkWriter>;

impl Link {
    /// Whether the link runs over TLS.
    pub fn is_tls(&self) -> bool {
        // Both halves come from one connection, so asking one is enough.
        self.writer.get_ref().is_tls()
    }
}

/// Counts of what a listener did, for metrics and tests.
#[derive(Debug, Default)]
pub struct ListenerStats {
    accepted: AtomicU64,
    refused: AtomicU64,
    shed: AtomicU64,
    accept_errors: AtomicU64,
}

impl ListenerStats {
    /// Connections that completed the handshake.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }

    /// Connections refused or dropped during the handshake (wrong secret, garbage,
    /// TLS failures, timeouts).
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Connections closed at once because [`LinkConfig::max_pending_handshakes`]
    /// handshakes were already running.
    pub fn shed(&self) -> u64 {
        self.shed.load(Ordering::Relaxed)
    }

    /// Times `accept` itself failed (for example, out of file descriptors).
    pub fn accept_errors(&self) -> u64 {
        self.accept_errors.load(Ordering::Relaxed)
    }
}

/// Accepts connections and hands out the authenticated ones.
#[derive(Debug)]
pub struct Listener {
    local_addr: SocketAddr,
    links: mpsc::Receiver<(Link, SocketAddr)>,
    stats: Arc<ListenerStats>,
    task: JoinHandle<()>,
}

impl Listener {
    /// Binds `addr` and starts accepting on the current tokio runtime.
    ///
    /// # Errors
    /// The socket's bind error.
    pub async fn bind(addr: SocketAddr, me: NodeId, config: LinkConfig) -> std::io::Result<Self> {
        let socket = TcpListener::bind(addr).await?;
        let local_addr = socket.local_addr()?;
        let (tx, links) = mpsc::channel(defaults::PENDING_LINKS);
        let stats = Arc::new(ListenerStats::default());
        let task = tokio::spawn(accept_loop(socket, me, config, tx, stats.clone()));
        Ok(Self {
            local_addr,
            links,
            stats,
            task,
        })
    }

    /// The address it listens on (with the port the OS chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The next authenticated link and the peer's address; `None` once closed.
    pub async fn next(&mut self) -> Option<(Link, SocketAddr)> {
        self.links.recv().await
    }

    /// What it has accepted and refused so far.
    pub fn stats(&self) -> &Arc<ListenerStats> {
        &self.stats
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn accept_loop(
    socket: TcpListener,
    me: NodeId,
    config: LinkConfig,
    tx: mpsc::Sender<(Link, SocketAddr)>,
    stats: Arc<ListenerStats>,
) {
    let pending = Arc::new(Semaphore::new(config.max_pending_handshakes.max(1)));
    let refusals = Arc::new(LogThrottle::new(defaults::WARN_INTERVAL));
    let (shedding, failing) = (
        LogThrottle::new(defaults::WARN_INTERVAL),
        LogThrottle::new(defaults::WARN_INTERVAL),
    );
    let mut backoff = defaults::MIN_ACCEPT_BACKOFF;
    loop {
        let (stream, addr) = match socket.accept().await {
            Ok(pair) => {
                backoff = defaults::MIN_ACCEPT_BACKOFF;
                pair
            }
            Err(e) => {
                // Accept errors (EMFILE, ENFILE, ECONNABORTED) must not end the loop, nor
                // spin it: with no descriptor left, accept fails at once every time.
                stats.accept_errors.fetch_add(1, Ordering::Relaxed);
                if let Some(suppressed) = failing.admit() {
                    tracing::warn!(error = %e, suppressed, ?backoff, "accept failed; pausing");
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(defaults::MAX_ACCEPT_BACKOFF);
                continue;
            }
        };
        let Ok(permit) = pending.clone().try_acquire_owned() else {
            // Closed at once: the dialer sees a reset and, if it is a node, retries
            // with backoff.
            stats.shed.fetch_add(1, Ordering::Relaxed);
            if let Some(suppressed) = shedding.admit() {
                tracing::warn!(
                    %addr,
                    suppressed,
                    max = config.max_pending_handshakes,
                    "too many pending handshakes; connection closed"
                );
            }
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (me, config, tx, stats, refusals) = (
            me.clone(),
            config.clone(),
            tx.clone(),
            stats.clone(),
            refusals.clone(),
        );
        tokio::spawn(async move {
            let opened = open_accepted(stream, &me, &config).await;
            // The handshake is over: the slot is free before the link is handed on.
            drop(permit);
            match opened {
                Ok(link) => {
                    stats.accepted.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(peer = %link.peer, %addr, "link accepted");
                    let _ = tx.send((link, addr)).await;
                }
                Err(e) => {
                    stats.refused.fetch_add(1, Ordering::Relaxed);
                    if let Some(suppressed) = refusals.admit() {
                        tracing::warn!(%addr, error = %e, suppressed, "connection refused during the handshake");
                    } else {
                        tracing::debug!(%addr, error = %e, "connection refused during the handshake");
                    }
                }
            }
        });
    }
}

/// TLS (when configured), then the handshake as the listening side, all within the
/// handshake deadline.
async fn open_accepted(
    stream: TcpStream,
    me: &NodeId,
    config: &LinkConfig,
) -> Result<Link, HandshakeError> {
    let deadline = config.handshake_timeout;
    let open = async {
        #[cfg(feature = "tls")]
        let (read, write) = match &config.tls {
            None => stream::tcp(stream),
            Some(tls) => stream::tls(tls.accept(stream).await?),
        };
        #[cfg(not(feature = "tls"))]
        let (read, write) = stream::tcp(stream);
        // The deadline is the outer one; the handshake's own is only a backstop.
        handshake::accept(read, write, me, &config.secret, deadline, config.max_frame).await
    };
    tokio::time::timeout(deadline, open)
        .await
        .map_err(|_| HandshakeError::Timeout(deadline))?
}

/// Dials `addr` and opens an authenticated link (over TLS when `config.tls` is set).
///
/// # Errors
/// The connect error, [`HandshakeError::Tls`] when the TLS handshake failed,
/// [`HandshakeError::PeerUsesTls`] or [`HandshakeError::PeerUsesPlaintext`] when one
/// side has TLS and the other not, or why the SPAKE2 handshake failed
/// ([`HandshakeError::NotAuthenticated`] for another secret).
pub async fn connect(
    addr: SocketAddr,
    me: &NodeId,
    config: &LinkConfig,
) -> Result<Link, HandshakeError> {
    let stream = tokio::time::timeout(config.handshake_timeout, TcpStream::connect(addr))
        .await
        .map_err(|_| HandshakeError::Timeout(config.handshake_timeout))?
        .map_err(crate::wire::WireError::Io)?;
    let _ = stream.set_nodelay(true);
    #[cfg(feature = "tls")]
    let (read, write) = match &config.tls {
        None => stream::tcp(stream),
        Some(tls) => stream::tls(tls.connect(stream, config.handshake_timeout).await?),
    };
    #[cfg(not(feature = "tls"))]
    let (read, write) = stream::tcp(stream);
    handshake::dial(
        read,
        write,
        me,
        &config.secret,
        config.handshake_timeout,
        config.max_frame,
    )
    .await
}
