//! `ask` as documented: the message is sent by the call ("Sends `msg` and returns a
//! future of the reply"), so an ask dropped unpolled still delivers it; an async
//! handler that asks its own actor "waits for its deadline" (docs/coming-from.md);
//! the errors' texts.

use std::sync::mpsc;
use std::time::Duration;

use odeon::{Actor, AskError, AsyncHandler, Context, Handler, Message, System};

const HANG_GUARD: Duration = Duration::from_secs(20);

fn small_system() -> System {
    System::builder().workers(2).build()
}

struct Recorder(mpsc::Sender<u32>);
impl Actor for Recorder {}
struct Note(u32);
impl Message for Note {
    type Reply = u32;
}
impl Handler<Note> for Recorder {
    fn handle(&mut self, m: Note, _: &mut Context<Self>) -> u32 {
        let _ = self.0.send(m.0);
        m.0
    }
}

#[test]
fn an_ask_dropped_without_being_polled_still_delivers_its_message() {
    let system = small_system();
    let (tx, seen) = mpsc::channel();
    let r = system.spawn(Recorder(tx));
    drop(r.ask(Note(1)));
    let _ignored = r.ask(Note(2)); // never awaited
    assert_eq!(system.block_on(r.ask(Note(3))), Ok(3));
    let got: Vec<u32> = (0..3)
        .map(|_| seen.recv_timeout(HANG_GUARD).expect("handled"))
        .collect();
    assert_eq!(got, [1, 2, 3], "all delivered, in the order sent");
    system.shutdown();
}

/// Asks itself from an async handler: the actor is held by the handler, so the inner
/// ask cannot be handled before its deadline.
struct SelfAsker;
impl Actor for SelfAsker {}
struct Inner;
impl Message for Inner {
    type Reply = ();
}
impl Handler<Inner> for SelfAsker {
    fn handle(&mut self, _: Inner, _: &mut Context<Self>) {}
}
struct Outer(Duration);
impl Message for Outer {
    type Reply = Result<(), AskError>;
}
impl AsyncHandler<Outer> for SelfAsker {
    async fn handle(&mut self, m: Outer, cx: &mut Context<Self>) -> Result<(), AskError> {
        cx.myself().ask(Inner).timeout(m.0).await
    }
}

#[test]
fn an_async_handler_asking_its_own_actor_gets_a_timeout_not_a_hang() {
    let system = small_system();
    let a = system.spawn(SelfAsker);
    let deadline = Duration::from_millis(100);
    let outcome = system.block_on(a.ask(Outer(deadline)).timeout(HANG_GUARD));
    assert_eq!(outcome, Ok(Err(AskError::Timeout(deadline))));
    // The actor is fine afterwards, and handles the inner ask that waited.
    assert_eq!(system.block_on(a.ask(Inner).timeout(HANG_GUARD)), Ok(()));
    system.shutdown();
}

#[test]
fn ask_errors_say_what_happened() {
    assert_eq!(
        AskError::Timeout(Duration::from_millis(100)).to_string(),
        "no reply within 100ms"
    );
    assert_eq!(
        AskError::Stopped.to_string(),
        "the actor stopped before replying"
    );
    assert_eq!(
        AskError::Dropped.to_string(),
        "the reply sender was dropped without replying"
    );
    // A `std::error::Error`, so `?` works in functions returning `Box<dyn Error>`.
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(AskError::Full);
    assert_eq!(boxed.to_string(), "the actor's mailbox is full");
}
