//! Replying later (`DeferredHandler`, `ReplySender`), and `Context::notify` (formerly
//! `defer`).

use std::time::Duration;

use odeon::{
    Actor, AskError, Context, DeferredHandler, Handler, Message, Recipient, ReplySender,
    StopReason, System,
};

const HANG_GUARD: Duration = Duration::from_secs(10);
/// Longer than any test runs: an ask that fails must fail for its own reason.
const LONG_ASK: Duration = Duration::from_secs(120);

fn small_system() -> System {
    System::builder().workers(2).build()
}

/// Parks "get" requests until a "put" arrives; counts what it handles meanwhile.
#[derive(Default)]
struct Mailbox {
    waiting: Vec<ReplySender<String>>,
    handled: u32,
    told: u32,
}
impl Actor for Mailbox {}

struct Get;
impl Message for Get {
    type Reply = String;
}
impl DeferredHandler<Get> for Mailbox {
    fn handle(&mut self, _: Get, reply: ReplySender<String>, _: &mut Context<Self>) {
        if reply.is_ask() {
            self.waiting.push(reply);
        } else {
            self.told += 1;
            reply.send("nobody hears this".into());
        }
    }
}

struct Put(String);
impl Message for Put {
    type Reply = usize;
}
impl Handler<Put> for Mailbox {
    fn handle(&mut self, p: Put, _: &mut Context<Self>) -> usize {
        let n = self.waiting.len();
        for reply in self.waiting.drain(..) {
            reply.send(p.0.clone());
        }
        n
    }
}

struct Handled;
impl Message for Handled {
    type Reply = (u32, u32);
}
impl Handler<Handled> for Mailbox {
    fn handle(&mut self, _: Handled, _: &mut Context<Self>) -> (u32, u32) {
        self.handled += 1;
        (self.handled, self.told)
    }
}

struct Forget;
impl Message for Forget {
    type Reply = ();
}
impl Handler<Forget> for Mailbox {
    fn handle(&mut self, _: Forget, _: &mut Context<Self>) {
        self.waiting.clear();
    }
}

#[test]
fn a_later_message_answers_and_others_are_handled_meanwhile() {
    let system = small_system();
    let mailbox = system.spawn(Mailbox::default());
    let first = mailbox.ask(Get).timeout(LONG_ASK);
    let second = mailbox.ask(Get).timeout(LONG_ASK);
    // The actor is not held by the unanswered asks.
    assert_eq!(system.block_on(mailbox.ask(Handled)), Ok((1, 0)));
    assert_eq!(system.block_on(mailbox.ask(Handled)), Ok((2, 0)));
    assert_eq!(system.block_on(mailbox.ask(Put("hello".into()))), Ok(2));
    assert_eq!(system.block_on(first), Ok("hello".to_string()));
    assert_eq!(system.block_on(second), Ok("hello".to_string()));
}

#[test]
fn a_dropped_sender_fails_the_ask_with_dropped_not_a_timeout() {
    let system = small_system();
    let mailbox = system.spawn(Mailbox::default());
    let ask = mailbox.ask(Get).timeout(LONG_ASK);
    mailbox.tell(Forget).unwrap();
    let result = system.block_on(async { tokio::time::timeout(HANG_GUARD, ask).await });
    assert_eq!(result, Ok(Err(AskError::Dropped)));
}

#[test]
fn an_actor_that_stops_holding_senders_fails_their_asks() {
    let system = small_system();
    let mailbox = system.spawn(Mailbox::default());
    let ask = mailbox.ask(Get).timeout(LONG_ASK);
    // Handled: the sender is in the state now.
    assert_eq!(system.block_on(mailbox.ask(Handled)), Ok((1, 0)));
    mailbox.stop();
    assert_eq!(system.block_on(ask), Err(AskError::Dropped));
}

#[test]
fn a_tell_of_a_deferred_message_is_handled_with_a_no_op_sender() {
    let system = small_system();
    let mailbox = system.spawn(Mailbox::default());
    mailbox.tell(Get).unwrap();
    mailbox.tell(Get).unwrap();
    assert_eq!(system.block_on(mailbox.ask(Handled)), Ok((1, 2)));
    // Nothing was parked by the tells.
    assert_eq!(system.block_on(mailbox.ask(Put("x".into()))), Ok(0));
}

/// Answers from another thread, after the handler has returned.
struct Offloader;
impl Actor for Offloader {}
struct Square(u64);
impl Message for Square {
    type Reply = u64;
}
impl DeferredHandler<Square> for Offloader {
    fn handle(&mut self, s: Square, reply: ReplySender<u64>, cx: &mut Context<Self>) {
        // On the system's tokio runtime...
        cx.system().io().spawn(async move {
            tokio::task::yield_now().await;
            reply.send(s.0 * s.0);
        });
    }
}

struct Cube(u64);
impl Message for Cube {
    type Reply = u64;
}
impl DeferredHandler<Cube> for Offloader {
    fn handle(&mut self, c: Cube, reply: ReplySender<u64>, _: &mut Context<Self>) {
        // ...or on a plain thread.
        std::thread::spawn(move || reply.send(c.0 * c.0 * c.0));
    }
}

#[test]
fn a_spawned_task_or_thread_answers() {
    let system = small_system();
    let actor = system.spawn(Offloader);
    let asks: Vec<_> = (0..20u64).map(|n| actor.ask(Square(n))).collect();
    for (n, ask) in (0..20u64).zip(asks) {
        assert_eq!(system.block_on(ask.timeout(HANG_GUARD)), Ok(n * n));
    }
    assert_eq!(
        system.block_on(actor.ask(Cube(3)).timeout(HANG_GUARD)),
        Ok(27)
    );
}

#[test]
fn a_recipient_of_a_deferred_message_works() {
    let system = small_system();
    let actor = system.spawn(Offloader);
    let recipient: Recipient<Square> = actor.recipient();
    assert_eq!(
        system.block_on(recipient.ask(Square(9)).timeout(HANG_GUARD)),
        Ok(81)
    );
}

/// Panics with the sender in hand.
struct Clumsy;
impl Actor for Clumsy {}
struct Juggle;
impl Message for Juggle {
    type Reply = ();
}
impl DeferredHandler<Juggle> for Clumsy {
    fn handle(&mut self, _: Juggle, reply: ReplySender<()>, _: &mut Context<Self>) {
        let _held = reply;
        panic!("dropped everything");
    }
}

#[test]
fn a_panic_with_the_sender_in_hand_reports_a_panic() {
    let system = small_system();
    let clumsy = system.spawn(Clumsy);
    let done = clumsy.wait_stopped();
    assert_eq!(
        system.block_on(clumsy.ask(Juggle).timeout(LONG_ASK)),
        Err(AskError::Panicked)
    );
    assert_eq!(
        system.block_on(done),
        StopReason::Panicked("dropped everything".into())
    );
}

/// Counts down by sending itself one message at a time.
struct Countdown {
    left: u32,
    steps: u32,
}
impl Actor for Countdown {}
struct Step;
impl Message for Step {
    type Reply = ();
}
impl Handler<Step> for Countdown {
    fn handle(&mut self, _: Step, cx: &mut Context<Self>) {
        self.steps += 1;
        if self.left == 0 {
            return;
        }
        self.left -= 1;
        cx.notify(Step).expect("the mailbox is unbounded");
    }
}
struct Steps;
impl Message for Steps {
    type Reply = u32;
}
impl Handler<Steps> for Countdown {
    fn handle(&mut self, _: Steps, _: &mut Context<Self>) -> u32 {
        self.steps
    }
}
struct OldStep;
impl Message for OldStep {
    type Reply = ();
}
impl Handler<OldStep> for Countdown {
    #[allow(deprecated)]
    fn handle(&mut self, _: OldStep, cx: &mut Context<Self>) {
        self.steps += 100;
        cx.defer(Step).expect("the deprecated name still works");
    }
}

#[test]
fn notify_and_the_deprecated_defer_send_to_self() {
    let system = small_system();
    let countdown = system.spawn(Countdown { left: 3, steps: 0 });
    countdown.tell(Step).unwrap();
    system.run_until_quiescent();
    assert_eq!(system.block_on(countdown.ask(Steps)), Ok(4));
    countdown.tell(OldStep).unwrap();
    system.run_until_quiescent();
    assert_eq!(system.block_on(countdown.ask(Steps)), Ok(105));
}
