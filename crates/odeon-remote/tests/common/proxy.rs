//! A test-only fault-injection proxy: a TCP (and UDP) relay placed in front of a node,
//! which other nodes reach through the node's advertised address. Without root, it
//! can do to a link what a network does: pause it (stop forwarding both ways, sockets
//! kept open, bytes held), drop bytes, delay them, cut every connection, and restore.
//!
//! UDP datagrams (gossip) to the same port are relayed always, whatever the mode: the
//! faults are on the links, so a test can check that a link's own failure detection
//! works while gossip still says the node is up.
//!
//! The proxy runs on its own small tokio runtime, so tests stay synchronous.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::sync::watch;

/// What the proxy does with the bytes of its connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Forwards both ways.
    Forward,
    /// Stops forwarding both ways; sockets stay open and unread bytes are held (the
    /// senders' TCP buffers fill up, as with a stalled peer or a silent partition).
    Pause,
    /// Reads and discards every byte.
    Drop,
    /// Closes every connection and refuses new ones (closes them at once).
    Cut,
}

#[derive(Clone, Copy, Debug)]
struct State {
    mode: Mode,
    delay: Duration,
    /// Bumped by each cut: connections of an older epoch close.
    epoch: u64,
}

/// A relay in front of one node (see the module docs).
pub struct Proxy {
    addr: SocketAddr,
    target: Arc<Mutex<Option<SocketAddr>>>,
    state: watch::Sender<State>,
    open: Arc<AtomicUsize>,
    accepted: Arc<AtomicUsize>,
    // Last: dropping the runtime ends every task and closes every socket.
    _rt: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Proxy({} -> {:?})", self.addr, *self.target.lock())
    }
}

impl Proxy {
    /// A proxy on a free loopback port, forwarding once a target is set.
    pub fn start() -> Proxy {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("fault-proxy")
            .enable_all()
            .build()
            .expect("proxy runtime");
        let (listener, udp) = rt.block_on(async {
            // TCP and UDP on the same port, as a node's link and gossip are.
            loop {
                let tcp = TcpListener::bind("127.0.0.1:0").await.expect("bind tcp");
                let port = tcp.local_addr().expect("addr").port();
                if let Ok(udp) = UdpSocket::bind(("127.0.0.1", port)).await {
                    return (tcp, udp);
                }
            }
        });
        let addr = listener.local_addr().expect("addr");
        let target = Arc::new(Mutex::new(None));
        let (state, _) = watch::channel(State {
            mode: Mode::Forward,
            delay: Duration::ZERO,
            epoch: 0,
        });
        let open = Arc::new(AtomicUsize::new(0));
        let accepted = Arc::new(AtomicUsize::new(0));
        rt.spawn(accept(
            listener,
            target.clone(),
            state.clone(),
            open.clone(),
            accepted.clone(),
        ));
        rt.spawn(relay_udp(Arc::new(udp), target.clone()));
        Proxy {
            addr,
            target,
            state,
            open,
            accepted,
            _rt: rt,
        }
    }

    /// Where nodes reach the proxied node (give it to the node's `advertise`).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where the proxy forwards to (the node's bound address).
    pub fn set_target(&self, target: SocketAddr) {
        *self.target.lock() = Some(target);
    }

    fn set(&self, f: impl FnOnce(&mut State)) {
        self.state.send_modify(f);
    }

    /// Stops forwarding both ways, keeping the connections open.
    pub fn pause(&self) {
        self.set(|s| s.mode = Mode::Pause);
    }

    /// Discards every byte from now on.
    pub fn drop_bytes(&self) {
        self.set(|s| s.mode = Mode::Drop);
    }

    /// Delays every chunk of bytes by `d` (0 to stop delaying).
    pub fn delay(&self, d: Duration) {
        self.set(|s| s.delay = d);
    }

    /// Closes every connection, and every new one until [`Proxy::restore`].
    pub fn cut(&self) {
        self.set(|s| {
            s.mode = Mode::Cut;
            s.epoch += 1;
        });
    }

    /// Forwards again (held bytes flow on; a cut's connections stay closed).
    pub fn restore(&self) {
        self.set(|s| s.mode = Mode::Forward);
    }

    /// TCP connections currently relayed (both ends not yet closed).
    pub fn open_connections(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// TCP connections accepted since the start.
    pub fn accepted_connections(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

async fn accept(
    listener: TcpListener,
    target: Arc<Mutex<Option<SocketAddr>>>,
    state: watch::Sender<State>,
    open: Arc<AtomicUsize>,
    accepted: Arc<AtomicUsize>,
) {
    loop {
        let Ok((inbound, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        accepted.fetch_add(1, Ordering::SeqCst);
        let now = *state.borrow();
        let Some(to) = *target.lock() else { continue };
        if now.mode == Mode::Cut {
            continue;
        }
        let (state, open) = (state.subscribe(), open.clone());
        tokio::spawn(async move {
            let Ok(outbound) = TcpStream::connect(to).await else {
                return;
            };
            let _ = (inbound.set_nodelay(true), outbound.set_nodelay(true));
            open.fetch_add(1, Ordering::SeqCst);
            let (in_r, in_w) = inbound.into_split();
            let (out_r, out_w) = outbound.into_split();
            let there = tokio::spawn(pump(in_r, out_w, state.clone(), now.epoch));
            let back = tokio::spawn(pump(out_r, in_w, state, now.epoch));
            let _ = tokio::join!(there, back);
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

/// Copies one direction, obeying the mode; returns (closing its halves) on end of
/// stream, an error, or a cut.
async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    mut state: watch::Receiver<State>,
    epoch: u64,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        // Paused: read nothing (bytes stay in the kernel buffers) until resumed.
        let Some(now) = unpaused(&mut state, epoch).await else {
            return;
        };
        if now.epoch != epoch {
            return;
        }
        let read = tokio::select! {
            r = from.read(&mut buf) => r.ok(),
            () = cut(&mut state, epoch) => return,
        };
        let n = match read {
            Some(0) | None => {
                let _ = to.shutdown().await;
                return;
            }
            Some(n) => n,
        };
        // Bytes read just before a pause are held until it ends.
        let Some(now) = unpaused(&mut state, epoch).await else {
            return;
        };
        if now.epoch != epoch {
            return;
        }
        if now.mode == Mode::Drop {
            continue;
        }
        if !now.delay.is_zero() {
            tokio::time::sleep(now.delay).await;
        }
        let wrote = tokio::select! {
            r = to.write_all(&buf[..n]) => r.is_ok(),
            () = cut(&mut state, epoch) => false,
        };
        if !wrote {
            return;
        }
    }
}

/// The state once it is not paused (or cut); `None` if the proxy is gone.
async fn unpaused(state: &mut watch::Receiver<State>, epoch: u64) -> Option<State> {
    state
        .wait_for(|s| s.epoch != epoch || s.mode != Mode::Pause)
        .await
        .ok()
        .map(|s| *s)
}

/// Resolves when the connections of `epoch` are cut (or the proxy is gone).
async fn cut(state: &mut watch::Receiver<State>, epoch: u64) {
    let _ = state.wait_for(|s| s.epoch != epoch).await;
}

/// Relays datagrams to the target, and the target's answers back to their senders,
/// through one socket per sender.
async fn relay_udp(front: Arc<UdpSocket>, target: Arc<Mutex<Option<SocketAddr>>>) {
    let mut by_sender: HashMap<SocketAddr, Arc<UdpSocket>> = HashMap::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let Ok((n, sender)) = front.recv_from(&mut buf).await else {
            continue;
        };
        let Some(to) = *target.lock() else { continue };
        let socket = match by_sender.get(&sender) {
            Some(s) => s.clone(),
            None => {
                let Ok(s) = UdpSocket::bind("127.0.0.1:0").await else {
                    continue;
                };
                let s = Arc::new(s);
                let (back, front) = (s.clone(), front.clone());
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    while let Ok(n) = back.recv(&mut buf).await {
                        let _ = front.send_to(&buf[..n], sender).await;
                    }
                });
                by_sender.insert(sender, s.clone());
                s
            }
        };
        let _ = socket.send_to(&buf[..n], to).await;
    }
}
