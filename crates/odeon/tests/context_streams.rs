//! `Context::add_stream`: a stream's items reach the actor as messages, in order; a
//! bounded mailbox pushes back on the stream instead of dropping items; a stream is
//! dropped when cancelled or when its actor stops.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt};
use odeon::{Actor, Context, Handler, Message, SpawnOptions, StreamHandle, System};

const GUARD: Duration = Duration::from_secs(10);

/// Items of the streams under test, with an end marker chained after the stream.
enum Item {
    Value(u32),
    End,
}
impl Message for Item {
    type Reply = ();
}

/// Records what it receives; `Item::End` reports the record.
struct Sink {
    seen: Vec<u32>,
    done: mpsc::Sender<Vec<u32>>,
    /// Handling the first value waits for this (to hold the mailbox full).
    gate: Option<mpsc::Receiver<()>>,
}
impl Actor for Sink {}
impl Handler<Item> for Sink {
    fn handle(&mut self, item: Item, _: &mut Context<Self>) {
        match item {
            Item::Value(v) => {
                if let Some(gate) = self.gate.take() {
                    let _ = gate.recv_timeout(GUARD);
                }
                self.seen.push(v);
            }
            Item::End => {
                let _ = self.done.send(std::mem::take(&mut self.seen));
            }
        }
    }
}

/// Asks the actor to add a stream.
struct Feed(BoxStream<'static, Item>);
impl Message for Feed {
    type Reply = StreamHandle;
}
impl Handler<Feed> for Sink {
    fn handle(&mut self, feed: Feed, cx: &mut Context<Self>) -> StreamHandle {
        cx.add_stream(feed.0)
    }
}

fn sink(system: &System, opts: SpawnOptions) -> (odeon::ActorRef<Sink>, mpsc::Receiver<Vec<u32>>) {
    let (done, rx) = mpsc::channel();
    let sink = system.spawn_with(
        Sink {
            seen: Vec::new(),
            done,
            gate: None,
        },
        opts,
    );
    (sink, rx)
}

/// `values` as items, then the end marker.
fn with_end(values: impl stream::Stream<Item = u32> + Send + 'static) -> BoxStream<'static, Item> {
    values
        .map(Item::Value)
        .chain(stream::once(async { Item::End }))
        .boxed()
}

/// Sends `()` on the channel when dropped: tells the test a stream was dropped.
struct DropSignal(mpsc::Sender<()>);
impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// A stream that never yields and signals when it is dropped.
fn endless() -> (BoxStream<'static, Item>, mpsc::Receiver<()>) {
    let (tx, rx) = mpsc::channel();
    let guard = DropSignal(tx);
    let s = stream::pending::<Item>().map(move |item| {
        let _held = &guard;
        item
    });
    (s.boxed(), rx)
}

#[test]
fn items_arrive_in_the_streams_order_and_the_end_marker_last() {
    let system = System::builder().workers(2).build();
    let (sink, done) = sink(&system, SpawnOptions::new());
    let handle = system
        .block_on(sink.ask(Feed(with_end(stream::iter(0..1000)))))
        .unwrap();
    assert_eq!(
        done.recv_timeout(GUARD).unwrap(),
        (0..1000).collect::<Vec<_>>()
    );
    assert!(system.wait_quiescent(Some(GUARD)));
    assert!(handle.is_finished(), "an ended stream's task is gone");
}

#[test]
fn a_stream_may_use_tokio_timers() {
    let system = System::builder().workers(1).build();
    let (sink, done) = sink(&system, SpawnOptions::new());
    let ticks = stream::unfold(0u32, |n| async move {
        tokio::time::sleep(Duration::from_millis(1)).await;
        (n < 5).then_some((n, n + 1))
    });
    let _handle = system.block_on(sink.ask(Feed(with_end(ticks)))).unwrap();
    assert_eq!(done.recv_timeout(GUARD).unwrap(), [0, 1, 2, 3, 4]);
}

#[test]
fn a_full_bounded_mailbox_pushes_back_on_the_stream_and_nothing_is_dropped() {
    const CAPACITY: usize = 2;
    let system = System::builder().workers(2).build();
    let (open, gate) = mpsc::channel();
    let (done, finished) = mpsc::channel();
    let sink = system.spawn_with(
        Sink {
            seen: Vec::new(),
            done,
            gate: Some(gate),
        },
        SpawnOptions::new().bounded(CAPACITY),
    );
    let polled = Arc::new(AtomicUsize::new(0));
    let counter = polled.clone();
    let values = stream::iter(0..200u32).inspect(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    let _handle = system.block_on(sink.ask(Feed(with_end(values)))).unwrap();

    // The first value's handler waits at the gate. Meanwhile the stream fills the
    // mailbox and then waits for room: at most the value being handled, a full
    // mailbox and one value waiting to be sent are taken from it.
    let most = 1 + CAPACITY + 1;
    let deadline = std::time::Instant::now() + GUARD;
    while polled.load(Ordering::SeqCst) < most - 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the stream stalled early"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    // Give an implementation without backpressure time to run ahead.
    std::thread::sleep(Duration::from_millis(50));
    let taken = polled.load(Ordering::SeqCst);
    assert!(taken <= most, "{taken} values taken with the mailbox full");

    open.send(()).unwrap();
    assert_eq!(
        finished.recv_timeout(GUARD).unwrap(),
        (0..200).collect::<Vec<_>>()
    );
}

#[test]
fn cancel_drops_the_stream_and_lets_the_system_become_quiescent() {
    let system = System::builder().workers(1).build();
    let (sink, _done) = sink(&system, SpawnOptions::new());
    let (endless, dropped) = endless();
    let handle = system.block_on(sink.ask(Feed(endless))).unwrap();
    assert!(
        !system.wait_quiescent(Some(Duration::from_millis(20))),
        "a running stream is work in flight"
    );
    assert!(!handle.is_finished());
    handle.cancel();
    dropped
        .recv_timeout(GUARD)
        .expect("the cancelled stream was not dropped");
    assert!(system.wait_quiescent(Some(GUARD)));
    assert!(handle.is_finished());
    assert!(
        sink.is_alive(),
        "cancelling a stream does not stop its actor"
    );
}

#[test]
fn a_stream_is_dropped_when_its_actor_stops() {
    let system = System::builder().workers(1).build();
    let (sink, _done) = sink(&system, SpawnOptions::new());
    let (endless, dropped) = endless();
    let handle = system.block_on(sink.ask(Feed(endless))).unwrap();
    sink.stop();
    dropped
        .recv_timeout(GUARD)
        .expect("the stream outlived its actor");
    assert!(system.wait_quiescent(Some(GUARD)));
    assert!(handle.is_finished());
}

#[test]
fn a_running_stream_keeps_its_actor_alive() {
    let system = System::builder().workers(1).build();
    let (sink, _done) = sink(&system, SpawnOptions::new());
    let (endless, dropped) = endless();
    let handle = system.block_on(sink.ask(Feed(endless))).unwrap();
    let weak = sink.downgrade();
    drop(sink);
    // Time for the GC signal of the drop to be handled (with a stream that did not
    // hold a reference, the actor would be collected meanwhile).
    std::thread::sleep(Duration::from_millis(50));
    let probe = weak.upgrade().expect("collected while its stream runs");
    system
        .block_on(probe.ask(Feed(stream::empty().boxed())))
        .unwrap();
    drop(probe);
    handle.cancel();
    dropped.recv_timeout(GUARD).unwrap();
    // The stream's reference was the last one: the actor is collected now.
    assert!(system.wait_quiescent(Some(GUARD)));
    assert!(
        weak.upgrade().is_none(),
        "not collected after its stream ended"
    );
}
