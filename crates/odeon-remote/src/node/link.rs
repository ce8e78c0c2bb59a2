//! The driver of one peer's link: it dials (with backoff) or takes an accepted link,
//! writes what the outbox queued in batches (idle sends write themselves, see
//! `outbox.rs`), sends heartbeats while the link is idle, reads and
//! dispatches the peer's frames, and declares the peer lost when no link is back, or
//! the link has carried nothing, for `lost_after` (see `peer.rs`).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::NodeInner;
use super::dispatch::Inbound;
use super::peer::Peer;
use super::read_spin::ReadSpin;
use crate::transport::{self, Link, LinkReader, LinkWriter};
use crate::wire::{self, FrameReader, Traffic};

/// How a link ended.
enum End {
    /// This node is leaving; the link was flushed and closed.
    Leaving,
    /// The connection failed or closed; the peer may come back.
    Down,
    /// The peer was lost: nothing more goes out on this link.
    Lost,
}

/// Aborts the reader task when the link ends, however it ends (also when the driver
/// itself is aborted), so that no socket half outlives its link.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

pub(super) async fn drive(
    node: Weak<NodeInner>,
    peer: Arc<Peer>,
    mut links: mpsc::UnboundedReceiver<Link>,
) {
    let mut closed = peer.closed();
    let mut down_since = Instant::now();
    let mut backoff = Duration::ZERO;
    let mut last_error = String::from("not dialed yet");
    loop {
        let Some(n) = node.upgrade() else { return };
        if n.is_closing() || peer.is_lost() {
            return;
        }
        let settings = n.settings.clone();
        let lost_after = settings.lost_after;
        let attempting = AtomicBool::new(false);
        let link = tokio::select! {
            biased;
            _ = closed.wait_for(|lost| *lost) => return,
            got = links.recv() => match got {
                Some(link) => link,
                None => return,
            },
            // A dial already in its handshake (slow on a loaded machine) may still
            // finish, for at most another `lost_after`: a stuck one does not hold the
            // verdict back longer.
            () = async {
                // `checked_add`: a `lost_after` of `Duration::MAX` ("never") must not
                // overflow; `sleep` takes any duration.
                match down_since.checked_add(lost_after) {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => tokio::time::sleep(lost_after).await,
                }
                if attempting.load(Ordering::Acquire) {
                    tokio::time::sleep(lost_after).await;
                }
            } => {
                n.forget_peer(&peer, &format!("no link for {lost_after:?}: {last_error}"));
                return;
            }
            dialed = async {
                tokio::time::sleep(backoff).await;
                attempting.store(true, Ordering::Release);
                dial(&n, &peer).await
            } => match dialed {
                Ok(link) => link,
                Err(why) => {
                    tracing::debug!(peer = %peer.id, error = %why, "dial failed");
                    last_error = why;
                    backoff = (backoff * 2).clamp(settings.min_backoff, settings.max_backoff);
                    continue;
                }
            },
        };
        drop(n);
        backoff = Duration::ZERO;
        let end = run_link(&node, &peer, link, &mut closed, &settings).await;
        peer.state.lock().active = false;
        match end {
            End::Leaving | End::Lost => return,
            End::Down => down_since = Instant::now(),
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
        Ok(Attached::Linked(link, session, quiet)) if !st.active && !peer.is_lost() => {
            st.active = true;
            st.remote_session = Some(session);
            st.quiet = Some(quiet);
            Ok(link)
        }
        Ok(Attached::Linked(..)) => Err("another link won".into()),
        Ok(Attached::Reset) => {
            drop(st);
            // The peer lost this node: lose it too, and link afresh at once.
            node.forget_peer(peer, "it lost this node since their last link");
            node.peer(&peer.id, Some(addr));
            Err("the peer lost this node; starting afresh".into())
        }
        Err(e) => Err(e),
    }
}

/// The listener's answer to a dialed link that it did not refuse.
enum Attached {
    /// The link is the pair's, with the listener's session and the longest it lets
    /// this node stay silent.
    Linked(Link, u64, Duration),
    /// Start afresh (see `Traffic::Reset`).
    Reset,
}

async fn attach(
    node: &Arc<NodeInner>,
    peer: &Arc<Peer>,
    addr: SocketAddr,
) -> Result<Attached, String> {
    let mut link = transport::connect(addr, &node.me, &node.link)
        .await
        .map_err(|e| e.to_string())?;
    if link.peer != peer.id {
        return Err(format!(
            "{addr} is now {} (expected {})",
            link.peer, peer.id
        ));
    }
    let known = peer.state.lock().remote_session;
    let hello = wire::encode(&Traffic::Attach {
        listen: node.listen,
        session: peer.session,
        known,
        quiet_ms: node.settings.quiet_ms(),
    })
    .map_err(|e| e.to_string())?;
    link.writer.send(&hello).await.map_err(|e| e.to_string())?;
    let answer = tokio::time::timeout(node.link.handshake_timeout, link.reader.next())
        .await
        .map_err(|_| "no answer to attach".to_string())?
        .map_err(|e| e.to_string())?
        .ok_or("closed during attach")?;
    match wire::decode::<Traffic>(&answer).map_err(|e| e.to_string())? {
        Traffic::Attached {
            session, quiet_ms, ..
        } => Ok(Attached::Linked(
            link,
            session,
            Duration::from_millis(quiet_ms.into()),
        )),
        Traffic::Reset => Ok(Attached::Reset),
        Traffic::Duplicate => Err("the peer keeps another link".into()),
        other => Err(format!("unexpected answer to attach: {other:?}")),
    }
}

/// Runs one link until it fails, the node leaves, or the peer is lost.
async fn run_link(
    node: &Weak<NodeInner>,
    peer: &Arc<Peer>,
    link: Link,
    closed: &mut watch::Receiver<bool>,
    settings: &super::Settings,
) -> End {
    let Link { reader, writer, .. } = link;
    tracing::debug!(peer = %peer.id, "link up");
    let heartbeat = super::link_heartbeat(settings.heartbeat(), peer.state.lock().quiet);
    let mut reading = AbortOnDrop(tokio::spawn(read_link(
        node.clone(),
        peer.clone(),
        reader,
        settings.lost_after,
        settings.inline_turns,
        settings.read_spin,
    )));
    let (writer, unwritten) = writer.into_parts();
    let mut sink = Sink::new(writer);
    let link_start = Instant::now();
    peer.outbox.link_up(sink.direct());
    // Whether a write was cut short: the stream may end inside a frame.
    let mut torn = false;
    let mut leftover = (!unwritten.is_empty()).then(|| unwritten.to_vec());
    let end = 'link: loop {
        // Write what is queued (at first, also what waited for this link), one batch
        // per write, until the queue is empty and direct writes may resume.
        loop {
            let batch = match leftover.take() {
                Some(bytes) => bytes,
                None => match peer.outbox.take() {
                    (Some(taken), _) => {
                        // The frames left the queue: their places are free again.
                        peer.release(taken.counted);
                        taken.bytes
                    }
                    (None, true) => break 'link End::Leaving,
                    (None, false) => break,
                },
            };
            // A write blocks while the peer does not read; the peer's loss ends it, and
            // so does the end of the reader (which is what watches for silence).
            let written = tokio::select! {
                biased;
                _ = closed.wait_for(|lost| *lost) => None,
                _ = &mut reading.0 => Some(Err(None)),
                r = sink.write_all(&batch) => Some(r.map_err(Some)),
            };
            match written {
                None => {
                    torn = true;
                    break 'link End::Lost;
                }
                Some(Err(None)) => {
                    torn = true;
                    break 'link End::Down;
                }
                Some(Err(Some(e))) => {
                    tracing::warn!(peer = %peer.id, error = %e, "link write failed");
                    break 'link End::Down;
                }
                Some(Ok(())) => peer.outbox.give_back(batch),
            }
        }
        let quiet_since = peer
            .outbox
            .last_send()
            .map_or(link_start, Instant::from_std);
        let quiet_until = quiet_since.max(link_start) + heartbeat;
        tokio::select! {
            biased;
            _ = closed.wait_for(|lost| *lost) => break End::Lost,
            _ = &mut reading.0 => break End::Down,
            () = peer.outbox.woken() => {}
            () = tokio::time::sleep_until(quiet_until) => {
                // Direct writes move `last_send` without waking us: look again.
                let last = peer.outbox.last_send().map_or(link_start, Instant::from_std);
                if last.max(link_start) + heartbeat <= Instant::now() {
                    let _ = peer.send(&Traffic::Heartbeat);
                }
            }
        }
    };
    peer.outbox.link_down();
    if matches!(end, End::Leaving) {
        sink.close().await;
    } else if matches!(end, End::Lost) && !torn {
        // Best effort: tell the peer, so that it loses this node too rather than
        // redialing into a link whose other end has forgotten everything.
        if let Ok(frame) = wire::encode_frame(&Traffic::Lost, crate::defaults::MAX_FRAME) {
            let _ = tokio::time::timeout(heartbeat, sink.write_all(&frame)).await;
        }
    }
    drop(reading);
    tracing::debug!(peer = %peer.id, "link down");
    end
}

/// The writing end of a link as the driver holds it.
enum Sink {
    /// Plain TCP: shared with the outbox, whose senders write to it directly while
    /// the link is idle (see `outbox.rs`); the driver writes only while it holds the
    /// outbox's `writing` mark, so the two never interleave.
    Tcp(Arc<OwnedWriteHalf>),
    /// TLS: written by the driver alone.
    Tls(LinkWriter),
}

impl Sink {
    fn new(writer: LinkWriter) -> Self {
        match writer.into_tcp() {
            Ok(tcp) => Self::Tcp(Arc::new(tcp)),
            Err(tls) => Self::Tls(tls),
        }
    }

    /// What the outbox may write to directly.
    fn direct(&self) -> Option<Arc<OwnedWriteHalf>> {
        match self {
            Self::Tcp(w) => Some(w.clone()),
            Self::Tls(_) => None,
        }
    }

    async fn write_all(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Self::Tcp(w) => {
                while !bytes.is_empty() {
                    match w.try_write(bytes) {
                        Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                        Ok(n) => bytes = &bytes[n..],
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            w.writable().await?;
                        }
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            }
            Self::Tls(w) => {
                w.write_all(bytes).await?;
                w.flush().await
            }
        }
    }

    /// Closes the stream once written: a TCP half shuts down when its last holder
    /// (this one, once the outbox let go) drops it.
    async fn close(self) {
        match self {
            Self::Tcp(w) => drop(w),
            Self::Tls(mut w) => {
                let _ = w.shutdown().await;
            }
        }
    }
}

/// Reads and dispatches the peer's frames, in order, until the link fails or stays
/// silent (not one byte) for `lost_after`, which loses the peer.
async fn read_link(
    node: Weak<NodeInner>,
    peer: Arc<Peer>,
    mut reader: FrameReader<LinkReader>,
    lost_after: Duration,
    inline_turns: bool,
    read_spin: Duration,
) {
    let mut heard = reader.buffered();
    let mut inbound = Inbound::default();
    // `NodeBuilder::read_spin`: poll the socket before waiting, while a reply is
    // likely next (see `read_spin.rs`).
    let mut spin = ReadSpin::new(reader.get_ref(), read_spin);
    let mut expect_reply = false;
    loop {
        if let Some(s) = spin.as_mut() {
            let asked = expect_reply || !peer.state.lock().pending.is_empty();
            if asked && reader.buffered() == 0 {
                let _ = s.poll(&mut reader);
            }
        }
        let frame = match tokio::time::timeout(lost_after, reader.next()).await {
            // Part of a long frame arrived meanwhile: a slow link, not a silent one.
            Err(_) if reader.buffered() != heard => {
                heard = reader.buffered();
                continue;
            }
            Ok(Ok(Some(f))) => f,
            Ok(Ok(None)) => return,
            Ok(Err(e)) => {
                tracing::warn!(peer = %peer.id, error = %e, "link read failed; closing it");
                return;
            }
            Err(_) => {
                if let Some(node) = node.upgrade() {
                    node.forget_peer(&peer, &format!("its link was silent for {lost_after:?}"));
                }
                return;
            }
        };
        let Some(node) = node.upgrade() else { return };
        let asks_before = match spin {
            Some(_) => peer.state.lock().pending.len(),
            None => 0,
        };
        let mut next = Some(frame);
        while let Some(frame) = next.take() {
            if frame.len() >= OFF_THREAD_FRAME {
                // A large frame (a state, or a chunk of one) is decoded and dispatched
                // on the blocking pool: decoding it here would hold up this I/O thread,
                // and with it every link's heartbeats. This reader waits for it, so the
                // link's frames are still handled in order.
                match off_thread(&node, &peer, frame, inbound).await {
                    Some(back) => inbound = back,
                    None => return,
                }
                match reader.try_next() {
                    Ok(f) => next = f,
                    Err(e) => {
                        tracing::warn!(peer = %peer.id, error = %e, "link read failed; closing it");
                        return;
                    }
                }
                continue;
            }
            // What this read brought in is delivered, and then, if every worker is
            // parked, this thread runs the first actor it made runnable instead of
            // waking one: one thread wake-up less per remote request (issue 19,
            // `odeon::remote::run_delivered`). A large frame among them stops the batch
            // and goes to the blocking pool (above).
            let mut large = None;
            let mut deliver = || {
                if !handle_frame(&node, &peer, &frame, &mut inbound) {
                    return false;
                }
                // The rest of what that read brought in, with no timer or clock per frame.
                loop {
                    match reader.try_next() {
                        Ok(Some(f)) if f.len() >= OFF_THREAD_FRAME => {
                            large = Some(f);
                            return true;
                        }
                        Ok(Some(f)) => {
                            if !handle_frame(&node, &peer, &f, &mut inbound) {
                                return false;
                            }
                        }
                        Ok(None) => return true,
                        Err(e) => {
                            tracing::warn!(peer = %peer.id, error = %e, "link read failed; closing it");
                            return false;
                        }
                    }
                }
            };
            let go_on = if inline_turns {
                odeon::remote::run_delivered(deliver)
            } else {
                deliver()
            };
            if !go_on {
                return;
            }
            next = large;
        }
        if spin.is_some() {
            // This read completed an ask: its caller may send the next one at once.
            expect_reply = peer.state.lock().pending.len() < asks_before;
        }
        heard = reader.buffered();
    }
}

/// Frames at least this long are decoded and dispatched on the blocking pool, not on
/// the link's I/O thread (`read_link`). Message frames are far smaller; a state of a
/// quarter of a MiB or more (whole in an offer, or a chunk of one) takes long enough
/// to decode, and its actor's state to decode in turn, to delay other links'
/// heartbeats when the I/O thread does it.
pub(crate) const OFF_THREAD_FRAME: usize = 256 << 10;

/// Decodes and dispatches `frame` on the blocking pool and waits for it; the reader's
/// state comes back, or `None` if the frame was malformed (or the task failed).
async fn off_thread(
    node: &Arc<NodeInner>,
    peer: &Arc<Peer>,
    frame: bytes::Bytes,
    mut inbound: Inbound,
) -> Option<Inbound> {
    let (node, peer) = (node.clone(), peer.clone());
    let task = tokio::task::spawn_blocking(move || {
        handle_frame(&node, &peer, &frame, &mut inbound).then_some(inbound)
    });
    match task.await {
        Ok(back) => back,
        Err(e) => {
            tracing::error!(error = %e, "a large frame's decoding failed");
            None
        }
    }
}

/// Decodes and dispatches one frame; `false` if it is malformed (the link closes).
fn handle_frame(
    node: &Arc<NodeInner>,
    peer: &Arc<Peer>,
    frame: &[u8],
    inbound: &mut Inbound,
) -> bool {
    #[cfg(feature = "observe")]
    if let Some(t) = &peer.traffic {
        t.received(frame.len());
    }
    match wire::decode::<Traffic>(frame) {
        Ok(t) => {
            node.dispatch(peer, t, inbound);
            true
        }
        Err(e) => {
            tracing::warn!(peer = %peer.id, error = %e, "malformed frame; closing the link");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use odeon::System;

    use crate::{Node, Secret};

    fn eventually(mut ok: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    // Item 6 of issue 13: a verdict reached while the link still works (the failure
    // detector, a false suspicion) closes the link, and the other end, told by the
    // link's last frame, loses this node too instead of keeping a half-dead link.
    #[test]
    fn a_verdict_closes_a_working_link_and_the_other_end_follows() {
        let secret = || Secret::new("a secret of 16+ bytes").unwrap();
        // Detection slow enough that only the verdict under test can act.
        let slow = Duration::from_secs(60);
        let (sa, sb) = (System::new(), System::new());
        let a = sa
            .block_on(
                Node::builder("a")
                    .secret(secret())
                    .lost_after(slow)
                    .start(&sa.handle()),
            )
            .unwrap();
        let b = sb
            .block_on(
                Node::builder("b")
                    .secret(secret())
                    .lost_after(slow)
                    .seed(a.listen_addr())
                    .start(&sb.handle()),
            )
            .unwrap();
        assert!(
            eventually(|| a.inner().known_peer(b.id()).is_some()),
            "linked"
        );
        let old = a.inner().known_peer(b.id()).expect("linked");
        b.inner().forget_by_id(a.id(), "the test declared it down");
        assert!(!b.peers().contains(a.id()));
        // Watched on `a`'s entry for `b` itself: `b` may dial again at once (it seeds
        // from `a`), and a new link can make `b` a peer again before a poll sees the gap.
        assert!(
            eventually(|| old.is_lost()),
            "the other end still holds the old link"
        );
    }

    // The netns pause-2s scenario (scripts/netns.sh) found this: gossip's phi-accrual
    // detector reported a peer down after a 2 s pause, shorter than `lost_after`, and
    // the peer was lost with everything queued to it. With its link up, gossip's word
    // is left to the link's own watch; without a link, it loses the peer at once.
    #[test]
    fn gossip_reporting_a_linked_peer_down_leaves_the_verdict_to_the_link() {
        let secret = || Secret::new("a secret of 16+ bytes").unwrap();
        let slow = Duration::from_secs(60);
        let (sa, sb) = (System::new(), System::new());
        let a = sa
            .block_on(
                Node::builder("a")
                    .secret(secret())
                    .lost_after(slow)
                    .start(&sa.handle()),
            )
            .unwrap();
        let b = sb
            .block_on(
                Node::builder("b")
                    .secret(secret())
                    .lost_after(slow)
                    .seed(a.listen_addr())
                    .start(&sb.handle()),
            )
            .unwrap();
        let linked = |n: &Node, id: &crate::wire::NodeId| {
            n.inner()
                .known_peer(id)
                .is_some_and(|p| p.state.lock().active)
        };
        assert!(eventually(|| linked(&b, a.id())), "linked");
        b.inner().gossip_down(a.id());
        assert!(
            b.peers().contains(a.id()),
            "a working link outweighs gossip"
        );
        let a_id = a.id().clone();
        drop(a);
        assert!(eventually(|| !linked(&b, &a_id)), "the link ends with a");
        assert!(
            b.peers().contains(&a_id),
            "lost_after (60 s) has not run out"
        );
        b.inner().gossip_down(&a_id);
        assert!(!b.peers().contains(&a_id), "without a link gossip decides");
    }
}
