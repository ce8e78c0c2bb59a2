//! `Context::bestow` and `Bestowed<T>`: every use of a bestowed object runs on its
//! owner's turn, never at the same time as the owner's own handlers or another use
//! (macro-step), in order per user; uses fail clearly once the owner stopped or
//! revoked the object; only the owner reaches it directly; a reservation of the owner
//! holds bestowed uses back too.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use odeon::testkit::{Sim, eventually, seeds};
use odeon::{Actor, ActorRef, BestowError, Bestowed, Context, Handler, Message, Serve, System};

const GUARD: Duration = Duration::from_secs(30);

/// Counts who is inside: the owner's handler or a use of the object. Two at once
/// would mean the object escaped its owner's turn.
#[derive(Default)]
struct Inside(AtomicUsize);
impl Inside {
    fn enter(&self) {
        assert_eq!(
            self.0.fetch_add(1, Ordering::SeqCst),
            0,
            "overlap with another use"
        );
        // Stay inside a while, so that an overlap has a window to show up in.
        for _ in 0..2_000 {
            std::hint::spin_loop();
        }
    }
    fn leave(&self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Tally {
    inside: Arc<Inside>,
    seen: Vec<(u32, u32)>,
}
struct Add(u32, u32);
impl Message for Add {
    type Reply = ();
}
impl Serve<Add> for Tally {
    fn serve(&mut self, m: Add) {
        self.inside.enter();
        self.seen.push((m.0, m.1));
        self.inside.leave();
    }
}
struct Len;
impl Message for Len {
    type Reply = usize;
}
impl Serve<Len> for Tally {
    fn serve(&mut self, _: Len) -> usize {
        self.seen.len()
    }
}

struct Owner {
    inside: Arc<Inside>,
    lent: Option<Bestowed<Tally>>,
    own: u32,
}
impl Actor for Owner {}
struct Lend;
impl Message for Lend {
    type Reply = Bestowed<Tally>;
}
impl Handler<Lend> for Owner {
    fn handle(&mut self, _: Lend, cx: &mut Context<Self>) -> Bestowed<Tally> {
        let b = cx.bestow(Tally {
            inside: self.inside.clone(),
            seen: Vec::new(),
        });
        self.lent = Some(b.clone());
        b
    }
}
struct Work;
impl Message for Work {
    type Reply = ();
}
impl Handler<Work> for Owner {
    fn handle(&mut self, _: Work, _: &mut Context<Self>) {
        self.inside.enter();
        self.own += 1;
        self.inside.leave();
    }
}
/// The owner reads the object directly, on its own turn.
struct Peek;
impl Message for Peek {
    type Reply = Result<Vec<(u32, u32)>, BestowError>;
}
impl Handler<Peek> for Owner {
    fn handle(&mut self, _: Peek, cx: &mut Context<Self>) -> <Peek as Message>::Reply {
        let lent = self.lent.clone().ok_or(BestowError::Revoked)?;
        lent.with(cx, |t| t.seen.clone())
    }
}
struct Revoke;
impl Message for Revoke {
    type Reply = Result<usize, BestowError>;
}
impl Handler<Revoke> for Owner {
    fn handle(&mut self, _: Revoke, cx: &mut Context<Self>) -> Result<usize, BestowError> {
        let lent = self.lent.take().ok_or(BestowError::Revoked)?;
        lent.revoke(cx).map(|t| t.seen.len())
    }
}

fn owner(inside: &Arc<Inside>) -> Owner {
    Owner {
        inside: inside.clone(),
        lent: None,
        own: 0,
    }
}

#[test]
fn a_bestowed_handle_is_send_sync_and_clone() {
    fn check<T: Send + Sync + Clone + 'static>() {}
    check::<Bestowed<Tally>>();
    // The object itself need not be `Sync`: it is never shared.
    check::<Bestowed<std::cell::Cell<u32>>>();
}

#[test]
fn uses_from_many_threads_never_overlap_the_owner_or_each_other_and_keep_order() {
    let system = System::builder().workers(2).budget(4).build();
    let inside = Arc::new(Inside::default());
    let owner = system.spawn(owner(&inside));
    let tally = system.block_on(owner.ask(Lend)).unwrap();
    const USERS: u32 = 4;
    const USES: u32 = 500;
    let users: Vec<_> = (0..USERS)
        .map(|u| {
            let tally = tally.clone();
            std::thread::spawn(move || {
                for i in 0..USES {
                    tally.tell(Add(u, i)).unwrap();
                }
            })
        })
        .collect();
    for _ in 0..USES {
        owner.tell(Work).unwrap();
    }
    for u in users {
        u.join().unwrap();
    }
    assert_eq!(system.block_on(tally.ask(Len)), Ok((USERS * USES) as usize));
    let seen = system.block_on(owner.ask(Peek)).unwrap().unwrap();
    for u in 0..USERS {
        let mine: Vec<u32> = seen.iter().filter(|e| e.0 == u).map(|e| e.1).collect();
        assert_eq!(
            mine,
            (0..USES).collect::<Vec<_>>(),
            "user {u}'s uses out of order"
        );
    }
    system.shutdown();
}

#[test]
fn under_every_seed_uses_and_owner_messages_take_turns() {
    for seed in seeds(50) {
        let sim = Sim::new(seed);
        let inside = Arc::new(Inside::default());
        let owner = sim.spawn(owner(&inside));
        let tally = sim.block_on(owner.ask(Lend)).unwrap();
        let users: Vec<ActorRef<User>> = (0..3)
            .map(|u| {
                sim.spawn(User {
                    tally: tally.clone(),
                    id: u,
                })
            })
            .collect();
        for round in 0..4 {
            for user in &users {
                user.tell(Use(round)).unwrap();
            }
            owner.tell(Work).unwrap();
        }
        sim.run_until_idle();
        assert_eq!(sim.block_on(tally.ask(Len)), Ok(12));
    }
}

struct User {
    tally: Bestowed<Tally>,
    id: u32,
}
impl Actor for User {}
struct Use(u32);
impl Message for Use {
    type Reply = ();
}
impl Handler<Use> for User {
    fn handle(&mut self, m: Use, _: &mut Context<Self>) {
        self.tally.tell(Add(self.id, m.0)).unwrap();
    }
}

#[test]
fn after_the_owner_stops_every_use_fails_with_owner_stopped() {
    let system = System::new();
    let inside = Arc::new(Inside::default());
    let owner = system.spawn(owner(&inside));
    let tally = system.block_on(owner.ask(Lend)).unwrap();
    assert_eq!(system.block_on(tally.ask(Len)), Ok(0));
    owner.stop();
    eventually(GUARD, || !owner.is_alive());
    assert!(!tally.is_usable());
    assert_eq!(tally.tell(Add(0, 0)), Err(BestowError::OwnerStopped));
    assert_eq!(
        system.block_on(tally.ask(Len)),
        Err(BestowError::OwnerStopped)
    );
    assert_eq!(
        system.block_on(tally.atomic(|t| t.seen.len())),
        Err(BestowError::OwnerStopped)
    );
    system.shutdown();
}

#[test]
fn a_revoked_object_comes_back_to_its_owner_and_handles_fail() {
    let system = System::new();
    let inside = Arc::new(Inside::default());
    let owner = system.spawn(owner(&inside));
    let tally = system.block_on(owner.ask(Lend)).unwrap();
    tally.tell(Add(1, 1)).unwrap();
    tally.tell(Add(1, 2)).unwrap();
    assert_eq!(system.block_on(owner.ask(Revoke)), Ok(Ok(2)));
    assert!(!tally.is_usable());
    assert_eq!(tally.tell(Add(1, 3)), Err(BestowError::Revoked));
    assert_eq!(system.block_on(tally.ask(Len)), Err(BestowError::Revoked));
    system.shutdown();
}

#[test]
fn a_use_queued_before_a_revoke_fails_with_revoked() {
    let sim = Sim::new(1);
    let inside = Arc::new(Inside::default());
    let owner = sim.spawn(owner(&inside));
    let tally = sim.block_on(owner.ask(Lend)).unwrap();
    let revoke = owner.ask(Revoke);
    let late = tally.ask(Len); // queued behind the revoke
    assert_eq!(sim.block_on(revoke), Ok(Ok(0)));
    assert_eq!(sim.block_on(late), Err(BestowError::Revoked));
}

/// Another actor with the owner's handle cannot reach the object directly.
struct Thief {
    tally: Bestowed<Tally>,
}
impl Actor for Thief {}
struct Steal;
impl Message for Steal {
    type Reply = (BestowError, BestowError);
}
impl Handler<Steal> for Thief {
    fn handle(&mut self, _: Steal, cx: &mut Context<Self>) -> (BestowError, BestowError) {
        let with = self.tally.with(cx, |t| t.seen.len()).unwrap_err();
        let revoke = self.tally.revoke(cx).err().unwrap();
        (with, revoke)
    }
}

#[test]
fn only_the_owner_may_reach_or_revoke_the_object() {
    let system = System::new();
    let inside = Arc::new(Inside::default());
    let owner = system.spawn(owner(&inside));
    let tally = system.block_on(owner.ask(Lend)).unwrap();
    let thief = system.spawn(Thief {
        tally: tally.clone(),
    });
    assert_eq!(
        system.block_on(thief.ask(Steal)),
        Ok((BestowError::NotOwner, BestowError::NotOwner))
    );
    assert!(tally.is_usable());
    assert_eq!(system.block_on(tally.ask(Len)), Ok(0));
    system.shutdown();
}

#[test]
fn an_atomic_use_runs_several_operations_with_nothing_in_between() {
    let system = System::builder().workers(2).build();
    let inside = Arc::new(Inside::default());
    let owner = system.spawn(owner(&inside));
    let tally = system.block_on(owner.ask(Lend)).unwrap();
    let flood = {
        let tally = tally.clone();
        std::thread::spawn(move || {
            for i in 0..2_000 {
                tally.tell(Add(1, i)).unwrap();
            }
        })
    };
    let runs: Vec<_> = (0..50)
        .map(|k| {
            tally.atomic(move |t| {
                t.inside.enter();
                let at = t.seen.len();
                for i in 0..10 {
                    t.seen.push((2, k * 10 + i));
                }
                t.inside.leave();
                t.seen[at..].to_vec()
            })
        })
        .collect();
    for (k, run) in runs.into_iter().enumerate() {
        let run = system.block_on(run).unwrap();
        let want: Vec<(u32, u32)> = (0..10).map(|i| (2, k as u32 * 10 + i)).collect();
        assert_eq!(run, want);
    }
    flood.join().unwrap();
    system.shutdown();
}

#[test]
fn a_reservation_of_the_owner_holds_bestowed_uses_back_until_it_ends() {
    let sim = Sim::new(5);
    let inside = Arc::new(Inside::default());
    let owner = sim.spawn(owner(&inside));
    let tally = sim.block_on(owner.ask(Lend)).unwrap();
    let r = sim.block_on(owner.reserve()).unwrap();
    let mut len = tally.ask(Len);
    sim.run_until_idle();
    assert!(
        sim.poll(&mut len).is_pending(),
        "a use ran inside a reservation"
    );
    drop(r);
    assert_eq!(sim.block_on(len), Ok(0));
}

#[test]
fn the_object_is_dropped_when_the_last_handle_goes() {
    struct Dropped(Arc<Mutex<bool>>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = true;
        }
    }
    struct Keeper;
    impl Actor for Keeper {}
    struct Make(Arc<Mutex<bool>>);
    impl Message for Make {
        type Reply = Bestowed<Dropped>;
    }
    impl Handler<Make> for Keeper {
        fn handle(&mut self, m: Make, cx: &mut Context<Self>) -> Bestowed<Dropped> {
            cx.bestow(Dropped(m.0))
        }
    }
    let system = System::new();
    let keeper = system.spawn(Keeper);
    let flag = Arc::new(Mutex::new(false));
    let handle = system.block_on(keeper.ask(Make(flag.clone()))).unwrap();
    let copy = handle.clone();
    drop(handle);
    assert!(!*flag.lock().unwrap());
    drop(copy);
    assert!(*flag.lock().unwrap());
    system.shutdown();
}

/// An object that reports, when dropped, how many uses reached it.
struct Counted {
    uses: u32,
    dropped_after: Arc<Mutex<Option<u32>>>,
}
impl Drop for Counted {
    fn drop(&mut self) {
        *self.dropped_after.lock().unwrap() = Some(self.uses);
    }
}
impl Serve<Add> for Counted {
    fn serve(&mut self, _: Add) {
        self.uses += 1;
    }
}

/// Lends a `Counted` out (keeping no handle) and can be held inside a handler until
/// the test lets it go, so that uses pile up in its mailbox.
struct Holder {
    gate: Arc<Mutex<std::sync::mpsc::Receiver<()>>>,
}
impl Actor for Holder {}
struct LendCounted(Arc<Mutex<Option<u32>>>);
impl Message for LendCounted {
    type Reply = Bestowed<Counted>;
}
impl Handler<LendCounted> for Holder {
    fn handle(&mut self, m: LendCounted, cx: &mut Context<Self>) -> Bestowed<Counted> {
        cx.bestow(Counted {
            uses: 0,
            dropped_after: m.0,
        })
    }
}
struct Hold;
impl Message for Hold {
    type Reply = ();
}
impl Handler<Hold> for Holder {
    fn handle(&mut self, _: Hold, _: &mut Context<Self>) {
        let _ = self.gate.lock().unwrap().recv_timeout(GUARD);
    }
}

fn holder() -> (Holder, std::sync::mpsc::Sender<()>) {
    let (open, gate) = std::sync::mpsc::channel();
    let gate = Arc::new(Mutex::new(gate));
    (Holder { gate }, open)
}

/// Uses carry no count of the handle: the last handle can go while uses are still
/// queued, and the object must then outlive them all and be dropped after them.
#[test]
fn uses_queued_when_the_last_handle_goes_all_run_before_the_object_is_dropped() {
    let system = System::new();
    let (state, open) = holder();
    let owner = system.spawn(state);
    let dropped_after = Arc::new(Mutex::new(None));
    let counted = system
        .block_on(owner.ask(LendCounted(dropped_after.clone())))
        .unwrap();
    owner.tell(Hold).unwrap();
    for i in 0..100 {
        counted.tell(Add(0, i)).unwrap();
    }
    let copy = counted.clone();
    drop(counted);
    copy.tell(Add(0, 100)).unwrap();
    drop(copy);
    assert_eq!(
        *dropped_after.lock().unwrap(),
        None,
        "dropped while its uses were queued"
    );
    open.send(()).unwrap();
    eventually(GUARD, || dropped_after.lock().unwrap().is_some());
    assert_eq!(*dropped_after.lock().unwrap(), Some(101));
    system.shutdown();
}

/// With nothing in flight the object goes with the last handle, at once; with uses
/// dropped unrun because the owner stopped, too.
#[test]
fn the_object_goes_with_the_last_handle_when_nothing_is_in_flight_or_the_owner_stopped() {
    let system = System::new();
    let (state, open) = holder();
    let owner = system.spawn(state);

    let dropped_after = Arc::new(Mutex::new(None));
    let counted = system
        .block_on(owner.ask(LendCounted(dropped_after.clone())))
        .unwrap();
    for i in 0..10 {
        counted.tell(Add(0, i)).unwrap();
    }
    let ask = owner.ask(LendCounted(Arc::new(Mutex::new(None))));
    drop(system.block_on(ask).unwrap()); // every use above has run
    drop(counted);
    assert_eq!(*dropped_after.lock().unwrap(), Some(10));

    let dropped_after = Arc::new(Mutex::new(None));
    let counted = system
        .block_on(owner.ask(LendCounted(dropped_after.clone())))
        .unwrap();
    owner.tell(Hold).unwrap();
    for i in 0..10 {
        counted.tell(Add(0, i)).unwrap();
    }
    owner.stop(); // acted on after `Hold`: the queued uses are dropped unrun
    open.send(()).unwrap();
    eventually(GUARD, || !owner.is_alive());
    assert_eq!(*dropped_after.lock().unwrap(), None);
    drop(counted);
    assert_eq!(*dropped_after.lock().unwrap(), Some(0));
    system.shutdown();
}
