//! One peer node: its link, its outbox, and what this node is waiting on from it.
//!
//! # One link per pair
//! Either node may dial. A dialed link carries `Attach` first; the listener keeps it
//! (`Attached`) or refuses it (`Duplicate`) under the peer's lock, by one rule both
//! sides apply alike: an existing link wins, and of two racing dials the one dialed by
//! the smaller [`NodeId`] wins. So both ends always agree on the one link, and every
//! frame of the pair travels on it in order.
//!
//! # Losing a peer
//! When the link fails, the driver redials with exponential backoff. If no link is back
//! within `lost_after`, or the peer said it was leaving, the peer is lost: pending asks
//! fail with `Unreachable`, watchers of its actors get `Terminated` with
//! `StopReason::NodeLost`, and refs to its actors refuse further sends.

use std::any::Any;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use odeon::remote::ReplySlot;
use odeon::{ActorId, AskError, StopReason, Terminated};
use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::NodeInner;
use crate::interface::{DecodeReply, Interface};
use crate::transport::{self, Link};
use crate::wire::{self, NodeId, Traffic};

/// What a reply frame completes.
pub(crate) enum Pending {
    /// An actor ask: decode with the message's reply decoder.
    Ask {
        slot: ReplySlot,
        decode: DecodeReply,
    },
    /// A node request (lookup, spawn): the raw outcome.
    Raw(oneshot::Sender<Result<Vec<u8>, AskError>>),
}

/// A watch this node serves for the peer: the local watch key and the target.
pub(crate) struct Served {
    pub(crate) key: ActorId,
    pub(crate) target: Arc<dyn Any + Send + Sync>,
    pub(crate) interface: &'static Interface,
}

type Notify = Box<dyn FnOnce(Terminated) + Send>;

#[derive(Default)]
pub(crate) struct PeerState {
    pub(crate) pending: HashMap<u64, Pending>,
    /// Our actors' watches on the peer's actors: (their actor id, key) → notify.
    pub(crate) watches: HashMap<(u64, u64), Notify>,
    /// The peer's watches on our actors: (our actor id, their key).
    pub(crate) served: HashMap<(u64, u64), Served>,
    /// Links from the peer's actors to ours: (our actor id, their actor id).
    pub(crate) links: std::collections::HashSet<(u64, u64)>,
    dialing: bool,
    active: bool,
}

pub(crate) struct Peer {
    pub(crate) id: NodeId,
    listen: Mutex<Option<SocketAddr>>,
    outbox: mpsc::UnboundedSender<Vec<u8>>,
    links: mpsc::UnboundedSender<Link>,
    pub(crate) state: Mutex<PeerState>,
    lost: AtomicBool,
    driver: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Peer {
    /// A new peer and its driver task.
    pub(crate) fn start(
        node: &Arc<NodeInner>,
        id: NodeId,
        listen: Option<SocketAddr>,
    ) -> Arc<Self> {
        let (outbox, out_rx) = mpsc::unbounded_channel();
        let (links, links_rx) = mpsc::unbounded_channel();
        let peer = Arc::new(Peer {
            id,
            listen: Mutex::new(listen),
            outbox,
            links,
            state: Mutex::new(PeerState::default()),
            lost: AtomicBool::new(false),
            driver: Mutex::new(None),
        });
        let driver = node
            .io
            .spawn(drive(Arc::downgrade(node), peer.clone(), out_rx, links_rx));
        *peer.driver.lock() = Some(driver);
        peer
    }

    /// A peer that is already lost (refs to actors known to be gone use it).
    pub(crate) fn detached(id: NodeId) -> Arc<Self> {
        let (outbox, _) = mpsc::unbounded_channel();
        let (links, _) = mpsc::unbounded_channel();
        Arc::new(Peer {
            id,
            listen: Mutex::new(None),
            outbox,
            links,
            state: Mutex::new(PeerState::default()),
            lost: AtomicBool::new(true),
            driver: Mutex::new(None),
        })
    }

    /// Queues `Leaving`, then closes the link once everything before it is written.
    pub(crate) fn close_after_leaving(&self) -> Option<tokio::task::JoinHandle<()>> {
        let _ = self.send(&Traffic::Leaving);
        let _ = self.outbox.send(Vec::new());
        self.driver.lock().take()
    }

    /// Stops the driver at once, as if the process had died.
    pub(crate) fn abort(&self) {
        if let Some(d) = self.driver.lock().take() {
            d.abort();
        }
    }

    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    pub(crate) fn listen(&self) -> Option<SocketAddr> {
        *self.listen.lock()
    }

    /// Queues a frame; it is written in queue order on the pair's link.
    pub(crate) fn send(&self, traffic: &Traffic) -> Result<(), AskError> {
        if self.is_lost() {
            return Err(AskError::Unreachable);
        }
        let bytes = wire::encode(traffic).map_err(|e| AskError::Rejected(e.to_string()))?;
        self.outbox.send(bytes).map_err(|_| AskError::Unreachable)
    }

    /// Decides whether an inbound link becomes the pair's link (see module docs). On
    /// `true` the caller answers `Attached` and hands the link over.
    pub(crate) fn claim(&self, me: &NodeId, listen: SocketAddr) -> bool {
        let mut st = self.state.lock();
        if self.is_lost() || st.active || (st.dialing && *me < self.id) {
            return false;
        }
        st.active = true;
        *self.listen.lock() = Some(listen);
        true
    }

    /// Undoes a claim whose `Attached` could not be written.
    pub(crate) fn hand_over_failed(&self) {
        self.state.lock().active = false;
    }

    /// Gives a claimed link to the driver.
    pub(crate) fn hand_over(&self, link: Link) {
        if self.links.send(link).is_err() {
            self.state.lock().active = false;
        }
    }

    /// Marks the peer lost and fails everything waiting on it. Idempotent. Returns the
    /// links of its actors to ours, which the node breaks.
    pub(crate) fn lose(&self, why: &str) -> Vec<(u64, u64)> {
        if self.lost.swap(true, Ordering::AcqRel) {
            return Vec::new();
        }
        tracing::warn!(peer = %self.id, why, "peer lost");
        let (pending, watches, served, links) = {
            let mut st = self.state.lock();
            (
                std::mem::take(&mut st.pending),
                std::mem::take(&mut st.watches),
                std::mem::take(&mut st.served),
                std::mem::take(&mut st.links),
            )
        };
        for (_, p) in pending {
            match p {
                Pending::Ask { slot, .. } => slot.fail(AskError::Unreachable),
                Pending::Raw(tx) => {
                    let _ = tx.send(Err(AskError::Unreachable));
                }
            }
        }
        for ((id, _), notify) in watches {
            notify(Terminated {
                id: ActorId::from_u64(id),
                reason: StopReason::NodeLost,
            });
        }
        for (_, s) in served {
            (s.interface.ops.unwatch)(&*s.target, s.key);
        }
        links.into_iter().collect()
    }
}

async fn drive(
    node: std::sync::Weak<NodeInner>,
    peer: Arc<Peer>,
    mut outbox: mpsc::UnboundedReceiver<Vec<u8>>,
    mut links: mpsc::UnboundedReceiver<Link>,
) {
    let mut down_since = Instant::now();
    let mut backoff = Duration::ZERO;
    loop {
        let Some(n) = node.upgrade() else { return };
        if n.is_closing() {
            return;
        }
        let (lost_after, max_backoff) = (n.settings.lost_after, n.settings.max_backoff);
        let link = tokio::select! {
            biased;
            got = links.recv() => match got {
                Some(link) => link,
                None => return,
            },
            dialed = async {
                tokio::time::sleep(backoff).await;
                dial(&n, &peer).await
            } => match dialed {
                Ok(link) => link,
                Err(why) => {
                    if down_since.elapsed() >= lost_after {
                        n.forget_peer(&peer, &format!("no link for {lost_after:?}: {why}"));
                        return;
                    }
                    backoff = (backoff * 2).clamp(n.settings.min_backoff, max_backoff);
                    continue;
                }
            },
        };
        drop(n);
        backoff = Duration::ZERO;
        let leaving = run_link(&node, &peer, link, &mut outbox).await;
        peer.state.lock().active = false;
        if leaving {
            return;
        }
        down_since = Instant::now();
        if peer.is_lost() {
            return;
        }
    }
}

/// Dials the peer and attaches (see module docs).
async fn dial(node: &Arc<NodeInner>, peer: &Arc<Peer>) -> Result<Link, String> {
    let Some(addr) = peer.listen() else {
        // We only know the peer by its inbound link: wait for it to come back.
        tokio::time::sleep(node.settings.max_backoff).await;
        return Err("no known address to dial".into());
    };
    {
        let mut st = peer.state.lock();
        if st.active {
            return Err("already linked".into());
        }
        st.dialing = true;
    }
    let res = attach(node, peer, addr).await;
    let mut st = peer.state.lock();
    st.dialing = false;
    match res {
        Ok(link) if !st.active && !peer.is_lost() => {
            st.active = true;
            Ok(link)
        }
        Ok(_) => Err("another link won".into()),
        Err(e) => Err(e),
    }
}

async fn attach(node: &Arc<NodeInner>, peer: &Arc<Peer>, addr: SocketAddr) -> Result<Link, String> {
    let mut link = transport::connect(addr, &node.me, &node.link)
        .await
        .map_err(|e| e.to_string())?;
    if link.peer != peer.id {
        return Err(format!(
            "{addr} is now {} (expected {})",
            link.peer, peer.id
        ));
    }
    let hello = wire::encode(&Traffic::Attach {
        listen: node.listen,
    })
    .map_err(|e| e.to_string())?;
    link.writer.send(&hello).await.map_err(|e| e.to_string())?;
    let answer = tokio::time::timeout(node.link.handshake_timeout, link.reader.next())
        .await
        .map_err(|_| "no answer to attach".to_string())?
        .map_err(|e| e.to_string())?
        .ok_or("closed during attach")?;
    match wire::decode::<Traffic>(&answer).map_err(|e| e.to_string())? {
        Traffic::Attached { .. } => Ok(link),
        Traffic::Duplicate => Err("the peer keeps another link".into()),
        other => Err(format!("unexpected answer to attach: {other:?}")),
    }
}

/// Writes the outbox to the link until either side fails.
async fn run_link(
    node: &std::sync::Weak<NodeInner>,
    peer: &Arc<Peer>,
    link: Link,
    outbox: &mut mpsc::UnboundedReceiver<Vec<u8>>,
) -> bool {
    let Link {
        mut reader,
        mut writer,
        ..
    } = link;
    tracing::debug!(peer = %peer.id, "link up");
    let reading = {
        let (node, peer) = (node.clone(), peer.clone());
        tokio::spawn(async move {
            loop {
                let frame = match reader.next().await {
                    Ok(Some(f)) => f,
                    Ok(None) => return,
                    Err(e) => {
                        tracing::warn!(peer = %peer.id, error = %e, "link read failed; closing it");
                        return;
                    }
                };
                let Some(node) = node.upgrade() else { return };
                match wire::decode::<Traffic>(&frame) {
                    Ok(t) => node.dispatch(&peer, t),
                    Err(e) => {
                        tracing::warn!(peer = %peer.id, error = %e, "malformed frame; closing the link");
                        return;
                    }
                }
            }
        })
    };
    let mut reading = std::pin::pin!(reading);
    let mut leaving = false;
    loop {
        tokio::select! {
            frame = outbox.recv() => {
                let Some(frame) = frame else { break };
                if frame.is_empty() {
                    // The node is leaving: everything queued before this is written.
                    let _ = writer.flush().await;
                    leaving = true;
                    break;
                }
                if let Err(e) = writer.push(&frame) {
                    tracing::error!(peer = %peer.id, error = %e, "frame dropped");
                }
                // Batch whatever else is queued into one write.
                while writer.pending() < 256 * 1024 {
                    let Ok(more) = outbox.try_recv() else { break };
                    if let Err(e) = writer.push(&more) {
                        tracing::error!(peer = %peer.id, error = %e, "frame dropped");
                    }
                }
                if let Err(e) = writer.flush().await {
                    tracing::warn!(peer = %peer.id, error = %e, "link write failed");
                    break;
                }
            }
            _ = &mut reading => break,
        }
    }
    reading.abort();
    tracing::debug!(peer = %peer.id, "link down");
    leaving
}
