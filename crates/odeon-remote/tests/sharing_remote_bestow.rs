//! Bestowed handles across nodes (issue 16), on loopback nodes in one process, as
//! documented on `Bestowed` and `remote_object!`:
//! - a handle to an object whose type is declared with `remote_object!` travels in a
//!   remote message; each use at another node runs inside the owner's turn, one at
//!   a time with the owner's own messages;
//! - revoke and the owner's stop give the same errors as locally; a lost node gives
//!   `Unreachable`; a handle sent back to the owner's node is local again.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::collections::BTreeSet;

use common::sharing::*;
use common::*;
use odeon::{Actor, ActorRef, BestowError, Bestowed, Context, Handler, Message, Serve};
use serde::{Deserialize, Serialize};

/// A cursor over a list its owner keeps.
pub struct Cursor {
    items: Vec<u32>,
    at: usize,
}

#[derive(Serialize, Deserialize)]
pub struct Next;
impl Message for Next {
    type Reply = Option<u32>;
}
impl Serve<Next> for Cursor {
    fn serve(&mut self, _: Next) -> Option<u32> {
        let item = self.items.get(self.at).copied();
        self.at += 1;
        item
    }
}

#[derive(Serialize, Deserialize)]
pub struct Skip(pub usize);
impl Message for Skip {
    type Reply = ();
}
impl Serve<Skip> for Cursor {
    fn serve(&mut self, m: Skip) {
        self.at += m.0;
    }
}

/// Served, but not in the remote interface.
pub struct Rewind;
impl Message for Rewind {
    type Reply = ();
}
impl Serve<Rewind> for Cursor {
    fn serve(&mut self, _: Rewind) {
        self.at = 0;
    }
}

odeon_remote::remote_object!(Cursor = "test.Cursor" { Next = "test.Next", Skip = "test.Skip" });

/// Lends cursors over its lists.
#[derive(Default)]
pub struct Library {
    lent: Option<Bestowed<Cursor>>,
}
impl Actor for Library {}

#[derive(Serialize, Deserialize)]
pub struct Lend(pub Vec<u32>);
impl Message for Lend {
    type Reply = Bestowed<Cursor>;
}
impl Handler<Lend> for Library {
    fn handle(&mut self, m: Lend, cx: &mut Context<Self>) -> Bestowed<Cursor> {
        let cursor = cx.bestow(Cursor { items: m.0, at: 0 });
        self.lent = Some(cursor.clone());
        cursor
    }
}

/// Where the last lent cursor is, read by the owner itself.
#[derive(Serialize, Deserialize)]
pub struct Peek;
impl Message for Peek {
    type Reply = Option<usize>;
}
impl Handler<Peek> for Library {
    fn handle(&mut self, _: Peek, cx: &mut Context<Self>) -> Option<usize> {
        self.lent.as_ref()?.with(cx, |c| c.at).ok()
    }
}

/// The last lent cursor (the same object, for another node).
#[derive(Serialize, Deserialize)]
pub struct Current;
impl Message for Current {
    type Reply = Option<Bestowed<Cursor>>;
}
impl Handler<Current> for Library {
    fn handle(&mut self, _: Current, _: &mut Context<Self>) -> Option<Bestowed<Cursor>> {
        self.lent.clone()
    }
}

#[derive(Serialize, Deserialize)]
pub struct Revoke;
impl Message for Revoke {
    type Reply = bool;
}
impl Handler<Revoke> for Library {
    fn handle(&mut self, _: Revoke, cx: &mut Context<Self>) -> bool {
        self.lent.as_ref().is_some_and(|l| l.revoke(cx).is_ok())
    }
}

/// A handle given back: whether it is local here, and its next item.
#[derive(Serialize, Deserialize)]
pub struct GiveBack(pub Bestowed<Cursor>);
impl Message for GiveBack {
    type Reply = bool;
}
impl Handler<GiveBack> for Library {
    fn handle(&mut self, m: GiveBack, _: &mut Context<Self>) -> bool {
        m.0.is_local()
    }
}

#[derive(Serialize, Deserialize)]
pub struct Close;
impl Message for Close {
    type Reply = ();
}
impl Handler<Close> for Library {
    fn handle(&mut self, _: Close, cx: &mut Context<Self>) {
        cx.stop();
    }
}

odeon_remote::remote_actor!(Library = "test.Library" {
    Lend = "test.Lend",
    Peek = "test.Peek",
    Current = "test.Current",
    Revoke = "test.Revoke",
    GiveBack = "test.GiveBack",
    Close = "test.Close",
});

fn library_on(a: &Member) -> ActorRef<Library> {
    let r = a.system.spawn(Library::default());
    a.node().register("library", &r).unwrap();
    r
}

#[test]
fn a_bestowed_handle_used_from_another_node_runs_in_the_owners_turn() {
    let [a, b] = members(["a", "b"]);
    let library = library_on(&a);
    let remote = lookup_from::<Library>(&b, "library");

    let cursor = b.system.block_on(remote.ask(Lend(vec![1, 2, 3]))).unwrap();
    assert!(!cursor.is_local());
    assert!(cursor.is_usable());
    assert_eq!(cursor.owner(), library.id());
    assert_eq!(
        b.system.block_on(cursor.ask(Next).timeout_guard()),
        Ok(Some(1))
    );
    cursor.tell(Skip(1)).unwrap();
    assert_eq!(b.system.block_on(cursor.ask(Next)), Ok(Some(3)));
    // The owner sees, on its own turn, what the uses from node b did.
    assert_eq!(a.system.block_on(library.ask(Peek)), Ok(Some(3)));
    assert_eq!(b.system.block_on(cursor.ask(Next)), Ok(None));
    // A message outside the object's remote interface is refused at the call.
    assert_eq!(cursor.tell(Rewind), Err(BestowError::NotRemote));
    // A closure cannot travel.
    assert_eq!(
        b.system.block_on(cursor.atomic(|c| c.at)),
        Err(BestowError::Remote)
    );
    // Sent back to its owner's node, the handle is local again.
    assert_eq!(
        b.system.block_on(remote.ask(GiveBack(cursor.clone()))),
        Ok(true)
    );
}

/// A guard against a hang, for a `BestowedAsk`.
trait Guard: std::future::Future + Sized {
    fn timeout_guard(self) -> impl std::future::Future<Output = Self::Output> {
        async move {
            tokio::time::timeout(GUARD, self)
                .await
                .expect("answered in time")
        }
    }
}
impl<F: std::future::Future> Guard for F {}

#[test]
fn uses_from_two_nodes_run_one_at_a_time() {
    let [a, b, c] = members(["a", "b", "c"]);
    let library = library_on(&a);
    let from_b = lookup_from::<Library>(&b, "library");
    let cursor = b
        .system
        .block_on(from_b.ask(Lend((0..200).collect())))
        .unwrap();
    // Node c gets a handle to the same object.
    let from_c = lookup_from::<Library>(&c, "library");
    let on_c = c.system.block_on(from_c.ask(Current)).unwrap().unwrap();
    assert!(!on_c.is_local());
    let take = |io: tokio::runtime::Handle, cursor: Bestowed<Cursor>| {
        std::thread::spawn(move || {
            io.block_on(async move {
                let mut got = Vec::new();
                for _ in 0..100 {
                    got.push(cursor.ask(Next).timeout_guard().await.unwrap().unwrap());
                }
                got
            })
        })
    };
    let one = take(b.system.handle().io(), cursor.clone());
    let two = take(c.system.handle().io(), on_c);
    // The owner's own messages in between.
    for _ in 0..20 {
        let _ = a.system.block_on(library.ask(Peek));
    }
    let mut all: Vec<u32> = one.join().unwrap();
    all.extend(two.join().unwrap());
    let unique: BTreeSet<u32> = all.iter().copied().collect();
    assert_eq!(unique.len(), 200, "every item once: uses never overlapped");
    assert_eq!(unique, (0..200).collect());
    assert_eq!(a.system.block_on(library.ask(Peek)), Ok(Some(200)));
}

#[test]
fn revoke_and_owner_stop_give_the_same_errors_across_nodes() {
    let [a, b] = members(["a", "b"]);
    let library = library_on(&a);
    let remote = lookup_from::<Library>(&b, "library");

    let cursor = b.system.block_on(remote.ask(Lend(vec![1]))).unwrap();
    assert_eq!(b.system.block_on(remote.ask(Revoke)), Ok(true));
    assert_eq!(
        b.system.block_on(cursor.ask(Next).timeout_guard()),
        Err(BestowError::Revoked)
    );

    let cursor = b.system.block_on(remote.ask(Lend(vec![1]))).unwrap();
    b.system.block_on(remote.ask(Close)).unwrap();
    eventually(GUARD, || (!library.is_alive()).then_some(())).expect("stopped");
    assert_eq!(
        b.system.block_on(cursor.ask(Next).timeout_guard()),
        Err(BestowError::OwnerStopped)
    );
}

#[test]
fn a_lost_owner_node_makes_the_handle_unreachable() {
    let [mut a, b] = members(["a", "b"]);
    let _library = library_on(&a);
    let remote = lookup_from::<Library>(&b, "library");
    let cursor = b.system.block_on(remote.ask(Lend(vec![1, 2]))).unwrap();
    drop(a.node.take());
    eventually(GUARD, || (!cursor.is_usable()).then_some(())).expect("node a is lost");
    assert_eq!(cursor.tell(Next), Err(BestowError::Unreachable));
    assert_eq!(
        b.system.block_on(cursor.ask(Next).timeout_guard()),
        Err(BestowError::Unreachable)
    );
}
