//! The unsafe paths of `sharing/` end to end, sized so that they also run under Miri
//! (`cargo +nightly miri test -p odeon --test miri_sharing`, in `.ci/run`): a batch's
//! chain of nodes pushed as one, a reservation's session future parked as
//! the actor's async handler (with its raw cell pointer) and its own node queue, and a
//! bestowed object's slot reached through a job node (its header rewritten for the
//! owner's type) on the owner's turn, then revoked; and one freed by a release job
//! after the uses queued when its last handle went.

use std::time::Duration;

use odeon::{Actor, BestowError, Bestowed, Context, Handler, Message, Serve, System};

#[derive(Default)]
struct Log {
    seen: Vec<u32>,
    lent: Option<Bestowed<Notes>>,
}
impl Actor for Log {}

struct Push(u32);
impl Message for Push {
    type Reply = ();
}
impl Handler<Push> for Log {
    fn handle(&mut self, m: Push, _: &mut Context<Self>) {
        self.seen.push(m.0);
    }
}

struct Seen;
impl Message for Seen {
    type Reply = Vec<u32>;
}
impl Handler<Seen> for Log {
    fn handle(&mut self, _: Seen, _: &mut Context<Self>) -> Vec<u32> {
        self.seen.clone()
    }
}

/// An object the actor owns and lends out.
#[derive(Default)]
struct Notes(Vec<String>);
struct Note(&'static str);
impl Message for Note {
    type Reply = usize;
}
impl Serve<Note> for Notes {
    fn serve(&mut self, m: Note) -> usize {
        self.0.push(m.0.to_owned());
        self.0.len()
    }
}

struct Lend;
impl Message for Lend {
    type Reply = Bestowed<Notes>;
}
impl Handler<Lend> for Log {
    fn handle(&mut self, _: Lend, cx: &mut Context<Self>) -> Bestowed<Notes> {
        let b = cx.bestow(Notes::default());
        self.lent = Some(b.clone());
        b
    }
}

struct Revoke;
impl Message for Revoke {
    type Reply = Vec<String>;
}
impl Handler<Revoke> for Log {
    fn handle(&mut self, _: Revoke, cx: &mut Context<Self>) -> Vec<String> {
        match self.lent.take().map(|b| b.revoke(cx)) {
            Some(Ok(notes)) => notes.0,
            _ => Vec::new(),
        }
    }
}

/// The actor drops its own handle to what it lent.
struct Forget;
impl Message for Forget {
    type Reply = ();
}
impl Handler<Forget> for Log {
    fn handle(&mut self, _: Forget, _: &mut Context<Self>) {
        self.lent = None;
    }
}

#[test]
fn batch_reservation_and_bestow_run_clean() {
    // One worker and no spares, as `miri_actor_paths`: crossbeam-epoch's stealing
    // path trips Stacked Borrows inside crossbeam itself, not in odeon.
    let system = System::builder().workers(1).max_spare_workers(0).build();
    let log = system.spawn(Log::default());

    // A batch: handled back to back, its ask answered.
    let reply = log
        .atomic(|b| {
            b.tell(Push(1)).tell(Push(2));
            b.ask(Seen)
        })
        .expect("the actor is alive");
    assert_eq!(system.block_on(reply), Ok(vec![1, 2]));

    // A reservation: ask, look, tell, then release; other mail waits meanwhile.
    system.block_on(async {
        let r = log
            .reserve()
            .lease(Duration::from_secs(60))
            .await
            .expect("granted");
        log.tell(Push(99)).expect("alive"); // waits for the release
        assert_eq!(r.ask(Seen).await, Ok(vec![1, 2]));
        r.tell(Push(3)).expect("reserved");
        r.release();
    });
    assert_eq!(system.block_on(log.ask(Seen)), Ok(vec![1, 2, 3, 99]));

    // Bestow: uses run on the owner's turn; after a revoke they fail clearly.
    let notes = system.block_on(log.ask(Lend)).expect("lent");
    notes.tell(Note("a")).expect("usable");
    assert_eq!(system.block_on(notes.ask(Note("b"))), Ok(2));
    assert_eq!(
        system.block_on(log.ask(Revoke)),
        Ok(vec!["a".to_owned(), "b".to_owned()])
    );
    assert_eq!(notes.tell(Note("c")), Err(BestowError::Revoked));

    // The last handle goes while uses are queued: they carry a pointer to the
    // object, not a count, and a release job frees it after them, on the owner's turn.
    let notes = system.block_on(log.ask(Lend)).expect("lent");
    system.block_on(log.ask(Forget)).expect("alive"); // `notes` is the only handle
    for note in ["d", "e", "f"] {
        notes.tell(Note(note)).expect("usable");
    }
    drop(notes);
    assert_eq!(system.block_on(log.ask(Seen)), Ok(vec![1, 2, 3, 99]));
    assert!(system.shutdown());
}
