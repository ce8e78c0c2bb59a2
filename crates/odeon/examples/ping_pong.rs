//! Two actors bounce a message back and forth with `tell` until 1,000,000 messages have
//! been handled, then print the elapsed time and the cost per message.
//!
//! Run: `cargo run --release -p odeon --example ping_pong`

use std::time::{Duration, Instant};

use odeon::{Actor, ActorRef, Context, Handler, Message, System};
use tokio::sync::oneshot;

/// Messages handled in total, pings and pongs together.
const MESSAGES: u64 = 1_000_000;

/// Sends a ping, and another each time a pong comes back, until done.
struct Pinger {
    ponger: ActorRef<Ponger>,
    /// Messages sent or received so far (each one is handled once).
    messages: u64,
    started: Instant,
    done: Option<oneshot::Sender<Duration>>,
}
impl Actor for Pinger {}

/// Answers every ping with a pong.
struct Ponger {
    pinger: Option<ActorRef<Pinger>>,
    handled: u64,
}
impl Actor for Ponger {}

#[derive(Message)]
struct Ping;

#[derive(Message)]
struct Pong;

/// Tells the ponger whom to answer (sent once, before the game starts).
#[derive(Message)]
struct Connect(ActorRef<Pinger>);

/// Starts the game; the sender is told the elapsed time when it ends.
#[derive(Message)]
struct Start(oneshot::Sender<Duration>);

/// Asks the ponger how many pings it handled.
#[derive(Message)]
#[message(reply = u64)]
struct Pings;

impl Handler<Connect> for Ponger {
    fn handle(&mut self, msg: Connect, _cx: &mut Context<Self>) {
        self.pinger = Some(msg.0);
    }
}

impl Handler<Ping> for Ponger {
    fn handle(&mut self, _: Ping, _cx: &mut Context<Self>) {
        self.handled += 1;
        if let Some(pinger) = &self.pinger {
            // Fails only if the pinger has stopped, and then nobody needs the pong.
            let _ = pinger.tell(Pong);
        }
    }
}

impl Handler<Pings> for Ponger {
    fn handle(&mut self, _: Pings, _cx: &mut Context<Self>) -> u64 {
        self.handled
    }
}

impl Handler<Start> for Pinger {
    fn handle(&mut self, msg: Start, _cx: &mut Context<Self>) {
        self.done = Some(msg.0);
        self.started = Instant::now();
        let _ = self.ponger.tell(Ping);
        self.messages += 1;
    }
}

impl Handler<Pong> for Pinger {
    fn handle(&mut self, _: Pong, _cx: &mut Context<Self>) {
        self.messages += 1;
        if self.messages < MESSAGES {
            let _ = self.ponger.tell(Ping);
            self.messages += 1;
        } else if let Some(done) = self.done.take() {
            let _ = done.send(self.started.elapsed());
        }
    }
}

fn main() {
    let system = System::new();
    let ponger = system.spawn(Ponger {
        pinger: None,
        handled: 0,
    });
    let pinger = system.spawn(Pinger {
        ponger: ponger.clone(),
        messages: 0,
        started: Instant::now(),
        done: None,
    });
    ponger
        .tell(Connect(pinger.clone()))
        .expect("the ponger was just spawned");
    println!(
        "ping-pong: {MESSAGES} messages ({} round trips) between two actors",
        MESSAGES / 2
    );

    let (tx, rx) = oneshot::channel();
    pinger.tell(Start(tx)).expect("the pinger was just spawned");
    let elapsed = system
        .block_on(rx)
        .expect("the pinger reports when the game ends");

    let pongs = system
        .block_on(ponger.ask(Pings))
        .expect("the ponger is alive");
    let ns_per_msg = elapsed.as_nanos() as f64 / MESSAGES as f64;
    let per_sec = MESSAGES as f64 / elapsed.as_secs_f64();
    println!("elapsed:     {:.1} ms", elapsed.as_secs_f64() * 1e3);
    println!(
        "per message: {ns_per_msg:.0} ns ({:.1} M messages/s)",
        per_sec / 1e6
    );
    println!("the ponger handled {pongs} pings");
    system.shutdown();
}
