//! Links between nodes over TCP: listening, dialing, and the authentication that
//! guards both (see [`handshake`]).
//!
//! # Layers (each only talks to the one below)
//! 1. `wire::frame`: length-prefixed, bounded frames.
//! 2. [`handshake`]: a connection becomes a [`Link`] only after both sides proved they
//!    know the cluster secret.
//! 3. [`Listener`]: accepts connections forever. Each handshake runs on its own task
//!    under a deadline, so a peer that sends garbage, the wrong secret, or nothing at
//!    all is refused, logged and counted ([`ListenerStats`]) while every other
//!    connection goes on being served.

pub mod handshake;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::defaults;
use crate::wire::NodeId;
pub use handshake::{HandshakeError, Secret};

/// How links are opened and bounded.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    /// The cluster secret both sides must prove they know.
    pub secret: Secret,
    /// The deadline of each handshake step.
    pub handshake_timeout: Duration,
    /// The largest frame accepted from an authenticated peer. Unit: bytes.
    pub max_frame: usize,
}

impl LinkConfig {
    /// The defaults of `crate::defaults` with this secret.
    pub fn new(secret: Secret) -> Self {
        Self {
            secret,
            handshake_timeout: defaults::HANDSHAKE_TIMEOUT,
            max_frame: defaults::MAX_FRAME,
        }
    }
}

/// An authenticated TCP connection to a peer node.
pub type Link = handshake::Opened<OwnedReadHalf, OwnedWriteHalf>;

/// Counts of what a listener did, for logs and tests.
#[derive(Debug, Default)]
pub struct ListenerStats {
    accepted: AtomicU64,
    refused: AtomicU64,
}

impl ListenerStats {
    /// Connections that completed the handshake.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }

    /// Connections refused or dropped during the handshake.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
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
    loop {
        let (stream, addr) = match socket.accept().await {
            Ok(pair) => pair,
            Err(e) => {
                // Per-connection accept errors (EMFILE, ECONNABORTED) must not end the loop.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (me, config, tx, stats) = (me.clone(), config.clone(), tx.clone(), stats.clone());
        tokio::spawn(async move {
            let (read, write) = stream.into_split();
            match handshake::accept(
                read,
                write,
                &me,
                &config.secret,
                config.handshake_timeout,
                config.max_frame,
            )
            .await
            {
                Ok(link) => {
                    stats.accepted.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(peer = %link.peer, %addr, "link accepted");
                    let _ = tx.send((link, addr)).await;
                }
                Err(e) => {
                    stats.refused.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(%addr, error = %e, "connection refused during the handshake");
                }
            }
        });
    }
}

/// Dials `addr` and opens an authenticated link.
///
/// # Errors
/// The connect error, or why the handshake failed.
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
    let (read, write) = stream.into_split();
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
