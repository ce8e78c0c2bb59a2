//! The seam a transport plugs into: an `ActorRef` built on an `Endpoint` sends through
//! it, and every refusal comes back as a typed error carrying the message.

use std::any::Any;
use std::sync::Arc;

use odeon::remote::{Endpoint, Outgoing, Refusal};
use odeon::{
    Actor, ActorId, ActorRef, AskError, Context, Handler, Message, StopReason, System,
    SystemHandle, TellError, Terminated,
};
use parking_lot::Mutex;

struct Far;
impl Actor for Far {}
#[derive(Debug, PartialEq)]
struct Ping(u32);
impl Message for Ping {
    type Reply = u32;
}
impl Handler<Ping> for Far {
    fn handle(&mut self, p: Ping, _: &mut Context<Self>) -> u32 {
        p.0
    }
}

type Notify = Box<dyn FnOnce(Terminated) + Send>;

/// Answers asks with twice the number, refuses as told, records watches.
struct Fake {
    system: SystemHandle,
    refuse: Mutex<Option<Refusal>>,
    told: Mutex<Vec<u32>>,
    watchers: Mutex<Vec<Notify>>,
}

impl std::fmt::Debug for Fake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fake")
    }
}

impl Endpoint for Fake {
    fn id(&self) -> ActorId {
        ActorId::from_u64(77)
    }
    fn address(&self) -> (&str, u64, u64) {
        ("far", 1, 77)
    }
    fn is_alive(&self) -> bool {
        self.refuse.lock().is_none()
    }
    fn send(&self, mut out: Outgoing) -> Result<(), (Refusal, Outgoing)> {
        if let Some(why) = self.refuse.lock().clone() {
            return Err((why, out));
        }
        let n = out.message.downcast_ref::<Ping>().expect("a Ping").0;
        match out.reply.take() {
            Some(slot) => slot.reply(Box::new(n * 2)),
            None => self.told.lock().push(n),
        }
        Ok(())
    }
    fn stop(&self) {}
    fn watch(&self, _: ActorId, notify: Box<dyn FnOnce(Terminated) + Send>) {
        self.watchers.lock().push(notify);
    }
    fn unwatch(&self, _: ActorId) {}
    fn link(&self, _: ActorId) {}
    fn unlink(&self, _: ActorId) {}
    fn link_failed(&self, _: ActorId) {}
    fn system(&self) -> &SystemHandle {
        &self.system
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Default)]
struct Watcher(Vec<Terminated>);
impl Actor for Watcher {}
impl Handler<Terminated> for Watcher {
    fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
        self.0.push(t);
    }
}
struct WatchIt(ActorRef<Far>);
impl Message for WatchIt {
    type Reply = ();
}
impl Handler<WatchIt> for Watcher {
    fn handle(&mut self, m: WatchIt, cx: &mut Context<Self>) {
        cx.watch(&m.0);
    }
}
struct Seen;
impl Message for Seen {
    type Reply = Vec<Terminated>;
}
impl Handler<Seen> for Watcher {
    fn handle(&mut self, _: Seen, _: &mut Context<Self>) -> Vec<Terminated> {
        self.0.clone()
    }
}

#[test]
fn a_remote_ref_sends_through_its_endpoint_and_refusals_are_typed() {
    let system = System::new();
    let fake = Arc::new(Fake {
        system: system.handle(),
        refuse: Mutex::new(None),
        told: Mutex::new(Vec::new()),
        watchers: Mutex::new(Vec::new()),
    });
    let far: ActorRef<Far> = ActorRef::from_endpoint(fake.clone());
    assert!(!far.is_local());
    assert_eq!(far.id(), ActorId::from_u64(77));
    assert_eq!(far.clone(), far);
    assert_ne!(far, system.spawn(Far));

    far.tell(Ping(1)).unwrap();
    far.tell(Ping(2)).unwrap();
    assert_eq!(*fake.told.lock(), vec![1, 2]);
    assert_eq!(system.block_on(far.ask(Ping(21))), Ok(42));

    *fake.refuse.lock() = Some(Refusal::Unreachable);
    assert_eq!(far.tell(Ping(3)), Err(TellError::Unreachable(Ping(3))));
    assert_eq!(
        system.block_on(far.ask(Ping(3))),
        Err(AskError::Unreachable)
    );
    assert!(!far.is_alive());
    assert!(far.downgrade().upgrade().is_none());
    *fake.refuse.lock() = Some(Refusal::NotRemote);
    assert_eq!(far.tell(Ping(4)), Err(TellError::NotRemote(Ping(4))));
    assert_eq!(system.block_on(far.ask(Ping(4))), Err(AskError::NotRemote));
    *fake.refuse.lock() = Some(Refusal::Stopped);
    assert_eq!(far.tell(Ping(5)), Err(TellError::Stopped(Ping(5))));

    // Watching goes through the endpoint; its notice reaches the watcher.
    let watcher = system.spawn(Watcher::default());
    system.block_on(watcher.ask(WatchIt(far.clone()))).unwrap();
    let notify = fake
        .watchers
        .lock()
        .pop()
        .expect("the endpoint got the watch");
    notify(Terminated {
        id: far.id(),
        reason: StopReason::NodeLost,
    });
    let seen = system.block_on(watcher.ask(Seen)).unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].reason, StopReason::NodeLost);
    assert!(seen[0].reason.is_failure());
}

#[test]
fn a_local_ref_is_local_and_bypasses_the_seam() {
    let system = System::new();
    let near = system.spawn(Far);
    assert!(near.is_local());
    assert!(near.endpoint().is_none());
    assert_eq!(system.block_on(near.ask(Ping(7))), Ok(7));
}
