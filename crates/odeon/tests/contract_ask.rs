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

/// Blocks its worker until released: an actor that shutdown has to abandon.
struct Stuck {
    gate: std::sync::Mutex<mpsc::Receiver<()>>,
    entered: mpsc::Sender<()>,
}
impl Actor for Stuck {}
struct Block;
impl Message for Block {
    type Reply = ();
}
impl Handler<Block> for Stuck {
    fn handle(&mut self, _: Block, _: &mut Context<Self>) {
        let _ = self.entered.send(());
        let _ = self.gate.lock().unwrap().recv_timeout(HANG_GUARD);
    }
}
impl Handler<Note> for Stuck {
    fn handle(&mut self, m: Note, _: &mut Context<Self>) -> u32 {
        m.0
    }
}

/// "Wait forever", as a port of ractor's `call(.., None)` writes it: a deadline too
/// far out to represent never fires, and the ask is still answered.
#[test]
fn an_ask_with_the_largest_timeout_is_answered() {
    let system = small_system();
    let (tx, _seen) = mpsc::channel();
    let r = system.spawn(Recorder(tx));
    assert_eq!(
        system.block_on(r.ask(Note(5)).timeout(Duration::MAX)),
        Ok(5)
    );
    let lazy = System::builder()
        .workers(1)
        .ask_timeout(Duration::MAX)
        .build();
    let (tx, _seen) = mpsc::channel();
    let r = lazy.spawn(Recorder(tx));
    assert_eq!(lazy.block_on(r.ask(Note(6))), Ok(6));
    lazy.shutdown();
    system.shutdown();
}

/// README: "an `ask` gets an error, never hangs and never panics in the caller's
/// thread", and "An ask awaited on any executor, even after its system shut down,
/// returns a value or an `AskError`" — with the largest timeout too, polled before and
/// after the shutdown, to an actor the shutdown had to abandon.
#[test]
fn an_ask_with_the_largest_timeout_never_panics_across_a_shutdown() {
    use futures_util::FutureExt;

    let system = System::builder()
        .workers(2)
        .shutdown_timeout(Duration::from_millis(100))
        .build();
    let (open, gate) = mpsc::channel();
    let (entered_tx, entered) = mpsc::channel();
    let r = system.spawn(Stuck {
        gate: std::sync::Mutex::new(gate),
        entered: entered_tx,
    });
    r.tell(Block).unwrap();
    entered.recv_timeout(HANG_GUARD).unwrap();

    // Polled once while the system runs (its deadline is taken in), then again after.
    let mut before = Box::pin(r.ask(Note(1)).timeout(Duration::MAX));
    assert!((&mut before).now_or_never().is_none(), "not answered yet");
    assert!(!system.shutdown(), "the stuck actor was abandoned");

    let r2 = r.clone();
    let outcome = std::thread::spawn(move || {
        let after_poll = (&mut before).now_or_never();
        // And an ask first made after the shutdown.
        let made_after = r2.ask(Note(2)).timeout(Duration::MAX).now_or_never();
        (after_poll, made_after)
    })
    .join();
    let (after_poll, made_after) = outcome.expect("the ask panicked in its caller's thread");
    assert!(
        !matches!(after_poll, Some(Ok(_))),
        "no reply from an abandoned actor"
    );
    assert!(!matches!(made_after, Some(Ok(_))));
    open.send(()).unwrap();
}
