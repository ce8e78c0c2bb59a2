//! An `AsyncHandler` awaits another actor's reply and a timer. While it is suspended its
//! worker runs other actors, yet the actor itself still handles one message at a time.
//!
//! The system has a single worker thread, so everything below shares that one thread.
//!
//! Run: `cargo run --release -p odeon --example async_handler`

use std::time::{Duration, Instant};

use odeon::{Actor, ActorRef, AsyncHandler, Context, Handler, Message, System};

/// How long each lookup waits on its timer.
const SLEEP: Duration = Duration::from_millis(30);

/// A synchronous actor that answers queries.
struct Db;
impl Actor for Db {}

struct Query(u32);
impl Message for Query {
    type Reply = u32;
}

impl Handler<Query> for Db {
    fn handle(&mut self, msg: Query, _cx: &mut Context<Self>) -> u32 {
        msg.0 * 10
    }
}

/// An actor with an async handler: it asks the `Db`, then sleeps, then replies.
struct Service {
    db: ActorRef<Db>,
    epoch: Instant,
    /// Set while a lookup is in progress; a second lookup starting meanwhile would panic.
    busy: bool,
}
impl Actor for Service {}

struct Lookup(u32);
impl Message for Lookup {
    type Reply = u32;
}

impl AsyncHandler<Lookup> for Service {
    async fn handle(&mut self, msg: Lookup, _cx: &mut Context<Self>) -> u32 {
        assert!(!self.busy, "two lookups overlapped");
        self.busy = true;
        let t = |epoch: Instant| epoch.elapsed().as_secs_f64() * 1e3;
        println!(
            "[{:6.2} ms] service: lookup {} starts, asks the db",
            t(self.epoch),
            msg.0
        );
        let value = self.db.ask(Query(msg.0)).await.unwrap_or(0);
        println!(
            "[{:6.2} ms] service: lookup {} got {value}, sleeps {} ms",
            t(self.epoch),
            msg.0,
            SLEEP.as_millis()
        );
        tokio::time::sleep(SLEEP).await;
        println!("[{:6.2} ms] service: lookup {} done", t(self.epoch), msg.0);
        self.busy = false;
        value
    }
}

/// A synchronous actor that counts ticks.
#[derive(Default)]
struct Ticker {
    ticks: u64,
}
impl Actor for Ticker {}

struct Tick;
impl Message for Tick {
    type Reply = u64;
}

impl Handler<Tick> for Ticker {
    fn handle(&mut self, _: Tick, _cx: &mut Context<Self>) -> u64 {
        self.ticks += 1;
        self.ticks
    }
}

fn main() {
    let system = System::builder().workers(1).build();
    let epoch = Instant::now();
    let db = system.spawn(Db);
    let service = system.spawn(Service {
        db,
        epoch,
        busy: false,
    });
    let ticker = system.spawn(Ticker::default());

    system.block_on(async {
        // Three lookups queued at once: the service takes them strictly one after another.
        let lookups: Vec<_> = (1..=3).map(|k| service.ask(Lookup(k))).collect();

        // Meanwhile the single worker is free to run the ticker.
        let mut ticks = 0;
        while epoch.elapsed() < SLEEP * 2 {
            ticks = ticker.ask(Tick).await.expect("the ticker is alive");
        }
        println!(
            "[{:6.2} ms] main: meanwhile the ticker, on the same worker, answered {ticks} asks",
            epoch.elapsed().as_secs_f64() * 1e3
        );

        let mut replies = Vec::new();
        for lookup in lookups {
            replies.push(lookup.await.expect("the service replies"));
        }
        let total = epoch.elapsed();
        println!(
            "[{:6.2} ms] main: replies {replies:?}; 3 lookups took >= 3 x {} ms: one at a time",
            total.as_secs_f64() * 1e3,
            SLEEP.as_millis()
        );
        assert!(total >= SLEEP * 3);
    });
    system.shutdown();
}
