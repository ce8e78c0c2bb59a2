//! A small end-to-end run of the cell's unsafe paths, sized so that it also runs under
//! Miri (`cargo +nightly miri test -p odeon --test miri_actor_paths`): raw task
//! pointers on the run queues, the async handler whose borrow of the actor's state is
//! erased while it is parked, restart in place, collection of an unreferenced actor, and
//! strong refs sharing one count of the cell's `Arc`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use odeon::{Actor, AsyncHandler, Context, Handler, Message, Strategy, SupervisorSpec, System};

struct Store {
    items: Vec<u64>,
    drops: Arc<AtomicUsize>,
}

impl Drop for Store {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

impl Actor for Store {}

struct Put(u64);
impl Message for Put {
    type Reply = usize;
}
impl Handler<Put> for Store {
    fn handle(&mut self, msg: Put, _: &mut Context<Self>) -> usize {
        self.items.push(msg.0);
        self.items.len()
    }
}

/// Parks on a oneshot, then touches the state it borrowed before parking.
struct PutLater(tokio::sync::oneshot::Receiver<u64>);
impl Message for PutLater {
    type Reply = u64;
}
impl AsyncHandler<PutLater> for Store {
    async fn handle(&mut self, msg: PutLater, _: &mut Context<Self>) -> u64 {
        let before = self.items.len();
        let v = msg.0.await.unwrap_or(0);
        self.items.push(v);
        assert_eq!(self.items.len(), before + 1, "nothing ran in between");
        self.items.iter().sum()
    }
}

struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Store {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("crash on purpose");
    }
}

/// One worker, no spares, and a generous ask deadline: Miri interprets slowly.
fn small_system() -> System {
    System::builder()
        .workers(1)
        .max_spare_workers(0)
        .ask_timeout(Duration::from_secs(600))
        .build()
}

#[test]
fn parked_async_handlers_restarts_and_collection_keep_state_sound() {
    let system = small_system();
    let drops = Arc::new(AtomicUsize::new(0));

    let store = system.spawn(Store {
        items: Vec::new(),
        drops: drops.clone(),
    });
    assert_eq!(system.block_on(store.ask(Put(1))).unwrap(), 1);
    let (tx, rx) = tokio::sync::oneshot::channel();
    let later = store.ask(PutLater(rx));
    // Queued behind the parked async handler: must not run before it completes.
    let after = store.ask(Put(100));
    tx.send(10).unwrap();
    assert_eq!(system.block_on(later).unwrap(), 11);
    assert_eq!(system.block_on(after).unwrap(), 3);

    drop(store);
    system.run_until_quiescent();
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "the unreferenced actor was freed"
    );

    let d2 = drops.clone();
    let (_sup, child) = system.supervise(SupervisorSpec::new(Strategy::OneForOne), move |c| {
        let d = d2.clone();
        c.spawn(move || Store {
            items: Vec::new(),
            drops: d.clone(),
        })
    });
    assert_eq!(system.block_on(child.ask(Put(5))).unwrap(), 1);
    child.tell(Crash).unwrap();
    assert_eq!(
        system.block_on(child.ask(Put(6))).unwrap(),
        1,
        "fresh state after restart"
    );
    assert!(system.shutdown());
}

/// Hands out `cx.myself()` on request: a strong ref made on the actor's own turn.
struct Echo {
    freed: Arc<AtomicUsize>,
}
impl Actor for Echo {}
impl Drop for Echo {
    fn drop(&mut self) {
        self.freed.fetch_add(1, Ordering::SeqCst);
    }
}
struct Me;
impl Message for Me {
    type Reply = odeon::ActorRef<Echo>;
}
impl Handler<Me> for Echo {
    fn handle(&mut self, _: Me, cx: &mut Context<Self>) -> odeon::ActorRef<Echo> {
        cx.myself()
    }
}

/// Strong refs share one count of the cell's `Arc` (`refs/mod.rs`): clones and drops on
/// several threads, a weak ref upgraded after the strong count touched zero, and
/// `myself` taken while no other strong ref exists. Under Miri a count given back
/// twice is a use-after-free and one never given back is a reported leak; everywhere,
/// `freed` checks that `myself` kept the actor alive and that it was collected after.
#[test]
fn strong_refs_share_one_cell_count_across_threads_weak_upgrades_and_myself() {
    let system = small_system();
    let freed = Arc::new(AtomicUsize::new(0));
    let echo = system.spawn(Echo {
        freed: freed.clone(),
    });
    let weak = echo.downgrade();

    let threads: Vec<_> = (0..3)
        .map(|_| {
            let mine = echo.clone();
            std::thread::spawn(move || {
                for _ in 0..20 {
                    let more = mine.clone();
                    drop(mine.clone());
                    drop(more);
                }
                mine
            })
        })
        .collect();
    let back: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    drop(back);

    // The only strong ref goes; the weak one brings the count back from zero before
    // the actor gets to collect itself (its GC signal waits behind this ask).
    let me_ask = echo.ask(Me);
    drop(echo);
    let again = weak.upgrade();
    let via_myself = system.block_on(me_ask).unwrap();
    drop(again);
    system.run_until_quiescent();
    assert_eq!(freed.load(Ordering::SeqCst), 0, "`myself` keeps it alive");
    assert!(via_myself.is_alive());

    drop(via_myself);
    system.run_until_quiescent();
    assert_eq!(
        freed.load(Ordering::SeqCst),
        1,
        "collected once the last ref went"
    );
    assert!(weak.upgrade().is_none());
    drop(weak);
    assert!(system.shutdown());
}

/// Watches another actor; counts the `Terminated` notices it handles.
struct Watcher {
    seen: Arc<AtomicUsize>,
}
impl Actor for Watcher {}
struct WatchIt(odeon::ActorRef<Store>);
impl Message for WatchIt {
    type Reply = ();
}
impl Handler<WatchIt> for Watcher {
    fn handle(&mut self, msg: WatchIt, cx: &mut Context<Self>) {
        cx.watch(&msg.0);
    }
}
impl Handler<odeon::Terminated> for Watcher {
    fn handle(&mut self, _: odeon::Terminated, _: &mut Context<Self>) {
        self.seen.fetch_add(1, Ordering::SeqCst);
    }
}

/// The paths added for issue 13: a kill drops a parked async handler (whose erased
/// borrow of the state must end before the state goes), a `Terminated` notice reaches
/// a bounded watcher outside its bound, and an actor spawned after shutdown is stopped
/// on the spawning thread, which gives back the runtime's count on its cell.
#[test]
fn kills_notices_and_spawns_after_shutdown_keep_state_sound() {
    let system = small_system();
    let drops = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    let store = system.spawn(Store {
        items: Vec::new(),
        drops: drops.clone(),
    });
    let watcher = system.spawn_with(
        Watcher { seen: seen.clone() },
        odeon::SpawnOptions::new().bounded(1),
    );
    system
        .block_on(watcher.ask(WatchIt(store.clone())))
        .unwrap();

    let (tx, rx) = tokio::sync::oneshot::channel::<u64>();
    let parked = store.ask(PutLater(rx));
    store.kill();
    assert!(system.block_on(parked).is_err(), "the handler was dropped");
    // The kill may land before the handler ran (then the queued message, holding the
    // receiver, is dropped as the actor stops), so look once the system is quiet.
    system.run_until_quiescent();
    assert!(
        tx.send(1).is_err(),
        "the receiver went with the handler or its message"
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(seen.load(Ordering::SeqCst), 1);

    let handle = system.handle();
    assert!(system.shutdown());
    let late = handle.spawn(Store {
        items: Vec::new(),
        drops: drops.clone(),
    });
    assert!(!late.is_alive());
    assert_eq!(
        drops.load(Ordering::SeqCst),
        2,
        "its state was dropped at once"
    );
    drop((late, store, watcher));
}

/// Loads its state in `on_start`, parked on a oneshot while holding the borrow of
/// its state and context (the start's future is erased like an async handler's).
struct Loader {
    source: Option<tokio::sync::oneshot::Receiver<u64>>,
    loaded: u64,
    pending: Vec<odeon::ReplySender<u64>>,
}
impl Actor for Loader {
    async fn on_start(&mut self, cx: &mut Context<Self>) -> Result<(), odeon::StartError> {
        let source = self.source.take().ok_or("started twice")?;
        self.loaded = source.await?;
        let _ = cx.id();
        Ok(())
    }
}
struct Loaded;
impl Message for Loaded {
    type Reply = u64;
}
impl odeon::DeferredHandler<Loaded> for Loader {
    fn handle(&mut self, _: Loaded, reply: odeon::ReplySender<u64>, _: &mut Context<Self>) {
        // Kept in the state, answered by the next message or dropped with the state.
        self.pending.push(reply);
    }
}
struct Flush;
impl Message for Flush {
    type Reply = ();
}
impl Handler<Flush> for Loader {
    fn handle(&mut self, _: Flush, _: &mut Context<Self>) {
        for reply in self.pending.drain(..) {
            reply.send(self.loaded);
        }
    }
}

struct Waiting;
impl Message for Waiting {
    type Reply = usize;
}
impl Handler<Waiting> for Loader {
    fn handle(&mut self, _: Waiting, _: &mut Context<Self>) -> usize {
        self.pending.len()
    }
}

#[test]
fn a_parked_start_and_deferred_replies_keep_state_sound() {
    let system = small_system();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let loader = system.spawn(Loader {
        source: Some(rx),
        loaded: 0,
        pending: Vec::new(),
    });
    let done = loader.wait_stopped();
    // Queued behind the parked start.
    let first = loader.ask(Loaded);
    loader.tell(Flush).unwrap();
    tx.send(7).unwrap();
    assert_eq!(system.block_on(first), Ok(7));
    // Held in the state when the actor stops: the ask learns the sender was dropped.
    let second = loader.ask(Loaded);
    assert_eq!(
        system.block_on(loader.ask(Waiting)),
        Ok(1),
        "`second` is held"
    );
    loader.stop();
    assert_eq!(system.block_on(second), Err(odeon::AskError::Dropped));
    assert_eq!(system.block_on(done), odeon::StopReason::Normal);
    assert!(system.shutdown());
}
