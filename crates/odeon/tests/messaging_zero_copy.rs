//! Guarantee 2 (isolation without copies): a message is moved, not copied. A large
//! buffer arrives in the handler at the very heap address it was sent from, whether it
//! goes by `tell`, `ask`, a `Recipient`, an async handler, or actor to actor; replies
//! are moved back the same way.

use std::sync::{Arc, Mutex};

use odeon::{Actor, ActorRef, AsyncHandler, Context, Handler, Message, Recipient, System};

const MIB: usize = 1 << 20;

fn system() -> System {
    System::builder().workers(2).build()
}

fn blob(seed: u8) -> Vec<u8> {
    (0..MIB).map(|i| (i as u8).wrapping_add(seed)).collect()
}

/// The heap address of a buffer and a cheap fingerprint of its contents.
fn addr(v: &[u8]) -> usize {
    v.as_ptr() as usize
}

struct Blob(Vec<u8>);
impl Message for Blob {
    type Reply = usize;
}

/// Hands the buffer back (the reply path).
struct Echo(Vec<u8>);
impl Message for Echo {
    type Reply = Vec<u8>;
}

struct AsyncBlob(Vec<u8>);
impl Message for AsyncBlob {
    type Reply = usize;
}

#[derive(Default)]
struct Sink {
    /// Addresses seen by handlers, in arrival order.
    seen: Arc<Mutex<Vec<usize>>>,
    /// Buffers kept alive so their addresses cannot be reused meanwhile.
    kept: Vec<Vec<u8>>,
}
impl Actor for Sink {}

impl Handler<Blob> for Sink {
    fn handle(&mut self, msg: Blob, _cx: &mut Context<Self>) -> usize {
        let a = addr(&msg.0);
        assert_eq!(msg.0.len(), MIB);
        self.seen.lock().unwrap().push(a);
        self.kept.push(msg.0);
        a
    }
}

impl Handler<Echo> for Sink {
    fn handle(&mut self, msg: Echo, _cx: &mut Context<Self>) -> Vec<u8> {
        self.seen.lock().unwrap().push(addr(&msg.0));
        msg.0
    }
}

impl AsyncHandler<AsyncBlob> for Sink {
    async fn handle(&mut self, msg: AsyncBlob, _cx: &mut Context<Self>) -> usize {
        tokio::task::yield_now().await;
        let a = addr(&msg.0);
        self.seen.lock().unwrap().push(a);
        self.kept.push(msg.0);
        a
    }
}

#[test]
fn a_told_buffer_arrives_at_the_address_it_was_sent_from() {
    let system = system();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = system.spawn(Sink {
        seen: seen.clone(),
        kept: Vec::new(),
    });
    let mut sent = Vec::new();
    for seed in 0..8 {
        let b = blob(seed);
        sent.push(addr(&b));
        sink.tell(Blob(b)).unwrap();
    }
    system.run_until_quiescent();
    assert_eq!(*seen.lock().unwrap(), sent);
}

#[test]
fn an_asked_buffer_arrives_at_the_address_it_was_sent_from() {
    let system = system();
    let sink = system.spawn(Sink::default());
    let b = blob(1);
    let sent = addr(&b);
    let arrived = system.block_on(sink.ask(Blob(b))).unwrap();
    assert_eq!(arrived, sent);
}

#[test]
fn a_buffer_returned_as_a_reply_is_moved_back_without_a_copy() {
    let system = system();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = system.spawn(Sink {
        seen: seen.clone(),
        kept: Vec::new(),
    });
    let b = blob(2);
    let sent = addr(&b);
    let back = system.block_on(sink.ask(Echo(b))).unwrap();
    assert_eq!(addr(&back), sent, "the reply kept the same heap buffer");
    assert_eq!(*seen.lock().unwrap(), vec![sent], "and so did the handler");
    assert_eq!(back, blob(2), "contents intact");
}

#[test]
fn a_buffer_sent_through_a_recipient_or_to_an_async_handler_is_not_copied() {
    let system = system();
    let sink = system.spawn(Sink::default());
    let rec: Recipient<Blob> = sink.recipient();
    let b = blob(3);
    let sent = addr(&b);
    assert_eq!(system.block_on(rec.ask(Blob(b))), Ok(sent));

    let b = blob(4);
    let sent = addr(&b);
    assert_eq!(system.block_on(sink.ask(AsyncBlob(b))), Ok(sent));
}

/// Forwards every buffer it gets to the next actor.
struct Relay {
    next: ActorRef<Sink>,
    seen: Arc<Mutex<Vec<usize>>>,
}
impl Actor for Relay {}
impl Handler<Blob> for Relay {
    fn handle(&mut self, msg: Blob, _cx: &mut Context<Self>) -> usize {
        let a = addr(&msg.0);
        self.seen.lock().unwrap().push(a);
        self.next.tell(msg).unwrap();
        a
    }
}

#[test]
fn a_buffer_forwarded_from_actor_to_actor_keeps_its_address_at_every_hop() {
    let system = system();
    let sink_seen = Arc::new(Mutex::new(Vec::new()));
    let relay_seen = Arc::new(Mutex::new(Vec::new()));
    let sink = system.spawn(Sink {
        seen: sink_seen.clone(),
        kept: Vec::new(),
    });
    let relay = system.spawn(Relay {
        next: sink,
        seen: relay_seen.clone(),
    });
    let mut sent = Vec::new();
    for seed in 0..4 {
        let b = blob(seed);
        sent.push(addr(&b));
        relay.tell(Blob(b)).unwrap();
    }
    system.run_until_quiescent();
    assert_eq!(*relay_seen.lock().unwrap(), sent);
    assert_eq!(*sink_seen.lock().unwrap(), sent);
}
