//! The mobility demo itself, shared by `examples/mobility.rs` and its test
//! (`examples/tests/mobility_demo.rs`): two nodes in one process on loopback, a
//! counter born on `a`, two senders (one on each node) and ten moves a↔b.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use odeon::{ActorRef, System};
use odeon_remote::{MigrateExt, Node, Secret};

use super::counter::{Counter, GoTo, Numbered, NumberedAsk, Report, Whereabouts, name_system};

/// How long anything may take before the demo gives up (a guard, not a measurement).
const PATIENCE: Duration = Duration::from_secs(60);

/// What a run did.
#[derive(Debug)]
pub struct Summary {
    /// Messages each sender sent (sender 1 on `a`, sender 2 on `b`).
    pub sent: [u64; 2],
    /// Messages the counter counted.
    pub counted: u64,
    /// The nodes it arrived on, in order.
    pub arrivals: Vec<String>,
    /// Moves each node counted as their source (`a`, `b`).
    pub moved: [u64; 2],
}

fn start(name: &str, seed: Option<std::net::SocketAddr>) -> Result<(System, Node), String> {
    let system = System::new();
    let secret = Secret::new("demo secret: change me in production").map_err(|e| e.to_string())?;
    let mut b = Node::builder(name)
        .secret(secret)
        .gossip_interval(Duration::from_millis(100))
        .mobile::<Counter>();
    if let Some(s) = seed {
        b = b.seed(s);
    }
    let node = system
        .block_on(b.start(&system.handle()))
        .map_err(|e| format!("node {name}: {e}"))?;
    name_system(system.handle(), name);
    Ok((system, node))
}

/// Polls `f` until it answers `Some`, for at most [`PATIENCE`].
fn within<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> Result<T, String> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(v) = f() {
            return Ok(v);
        }
        if Instant::now() > deadline {
            return Err(format!("gave up waiting: {what}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends numbered messages as `sender` until `stop` is set and at least `min` went,
/// every 20th an ask whose answer is checked (the asks also pace the sender).
fn send(
    system: &System,
    to: &ActorRef<Counter>,
    sender: u32,
    min: u64,
    stop: &AtomicBool,
) -> Result<u64, String> {
    let mut n = 0;
    while n < min || !stop.load(Ordering::Acquire) {
        if n % 20 == 19 {
            let got = system
                .block_on(to.ask(NumberedAsk { sender, n }))
                .map_err(|e| format!("sender {sender}: ask {n}: {e}"))?;
            if got != n {
                return Err(format!("sender {sender}: ask {n} answered {got}"));
            }
        } else {
            to.tell(Numbered { sender, n })
                .map_err(|e| format!("sender {sender}: tell {n}: {e}"))?;
        }
        n += 1;
    }
    Ok(n)
}

/// Runs the demo: `moves` moves (a→b first, then back and forth), with each sender
/// sending at least `min` messages. Fails if any message was lost, repeated or
/// reordered, or if the counter did not go where it was sent.
pub fn run(moves: usize, min: u64) -> Result<Summary, String> {
    let (sys_a, a) = start("a", None)?;
    let (sys_b, b) = start("b", Some(a.listen_addr()))?;
    for node in [&a, &b] {
        within("the nodes link", || (node.peers().len() == 1).then_some(()))?;
    }
    let counter = sys_a.spawn(Counter::default());
    a.register("counter", &counter).map_err(|e| e.to_string())?;
    let from_b = within("b finds the counter", || {
        sys_b.block_on(b.lookup::<Counter>("counter")).ok()
    })?;
    println!("counter born on a; senders: 1 on a (local ref), 2 on b (remote ref)");
    let stop = AtomicBool::new(false);
    let (sent, moving) = std::thread::scope(|s| {
        let on_a = s.spawn(|| send(&sys_a, &counter, 1, min, &stop));
        let on_b = s.spawn(|| send(&sys_b, &from_b, 2, min, &stop));
        let moving = move_around(&sys_a, &a, &sys_b, &b, &counter, &from_b, moves);
        stop.store(true, Ordering::Release);
        let join = |h: std::thread::ScopedJoinHandle<'_, Result<u64, String>>| {
            h.join()
                .unwrap_or_else(|_| Err("a sender panicked".to_string()))
        };
        ([join(on_a), join(on_b)], moving)
    });
    moving?;
    let sent = [sent[0].clone()?, sent[1].clone()?];
    // Per-sender FIFO: a sender's Report comes after all its messages; b's after
    // a's because a's answer came first.
    sys_a
        .block_on(counter.ask(Report))
        .map_err(|e| format!("report through a: {e}"))?;
    let tally = sys_b
        .block_on(from_b.ask(Report))
        .map_err(|e| format!("report through b: {e}"))?;
    let (at, arrivals) = sys_b
        .block_on(from_b.ask(Whereabouts))
        .map_err(|e| e.to_string())?;
    let moved = [
        a.metrics().migrations().moved(),
        b.metrics().migrations().moved(),
    ];
    println!(
        "sent {} + {} = {}; counted {}; counter now on {at}; arrivals {arrivals:?}",
        sent[0],
        sent[1],
        sent[0] + sent[1],
        tally.count
    );
    for (name, node) in [("a", &a), ("b", &b)] {
        let m = node.metrics().migrations();
        let d = m.durations();
        println!(
            "node {name}: moved {}, refused {}, failed {}, forwarded {}, move p50 <= {:?}, mean {:?}",
            m.moved(),
            m.refused(),
            m.failed(),
            m.forwarded_frames(),
            d.quantile(0.5),
            d.mean()
        );
    }
    let mut problems = tally.errors.clone();
    for (i, want) in sent.iter().enumerate() {
        let sender = i as u32 + 1;
        let got = tally.next.get(&sender).copied().unwrap_or(0);
        if got != *want {
            problems.push(format!("sender {sender}: last number {got}, sent {want}"));
        }
    }
    if tally.count != sent[0] + sent[1] {
        problems.push(format!(
            "counted {} messages, {} were sent",
            tally.count,
            sent[0] + sent[1]
        ));
    }
    let expected: Vec<String> = (0..moves)
        .map(|i| if i % 2 == 0 { "b" } else { "a" }.to_string())
        .collect();
    if arrivals != expected {
        problems.push(format!("arrivals {arrivals:?}, expected {expected:?}"));
    }
    if moved[0] + moved[1] != moves as u64 {
        problems.push(format!("the nodes counted {moved:?} moves, not {moves}"));
    }
    // b first: the counter ends on a (an even number of moves), and b's route to it
    // would see a's departure as the actor's loss.
    sys_b.block_on(b.leave());
    sys_a.block_on(a.leave());
    sys_a.shutdown();
    sys_b.shutdown();
    if problems.is_empty() {
        Ok(Summary {
            sent,
            counted: tally.count,
            arrivals,
            moved,
        })
    } else {
        Err(problems.join("\n"))
    }
}

/// The moves: the first with `migrate_to` on the birth node's ref (its outcome is a
/// `Moved`), the rest with `GoTo` through b's ref (`cx.migrate_to` in the handler),
/// each once the counter arrived where the previous one sent it.
fn move_around(
    sys_a: &System,
    a: &Node,
    sys_b: &System,
    b: &Node,
    counter: &ActorRef<Counter>,
    from_b: &ActorRef<Counter>,
    moves: usize,
) -> Result<(), String> {
    for i in 0..moves {
        let (to, name) = if i % 2 == 0 { (b, "b") } else { (a, "a") };
        let t = Instant::now();
        if i == 0 {
            let moved = sys_a
                .block_on(counter.migrate_to(to.id()))
                .map_err(|e| format!("move 1: {e}"))?;
            println!(
                "move 1: {} -> {}, epoch {}, {} bytes, {} queued, {:?} freeze to commit",
                moved.from.name, moved.to.name, moved.epoch, moved.bytes, moved.queued, moved.took
            );
        } else {
            from_b
                .tell(GoTo(to.id().clone()))
                .map_err(|e| format!("move {}: {e}", i + 1))?;
        }
        within(&format!("the counter reaches {name}"), || {
            let (at, _) = sys_b.block_on(from_b.ask(Whereabouts)).ok()?;
            (at == name).then_some(())
        })?;
        if i > 0 {
            println!(
                "move {}: now on {name} ({:?} from asking)",
                i + 1,
                t.elapsed()
            );
        }
    }
    Ok(())
}
