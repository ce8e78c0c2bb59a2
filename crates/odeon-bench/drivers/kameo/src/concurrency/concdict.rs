//! Concurrent Dictionary (Savina #9, `shared/savina.md` §3.9): W workers send reads and
//! writes, one outstanding at a time, to one dictionary actor.

use std::collections::HashMap;
use std::sync::Arc;

use kameo::actor::ActorRef;
use kameo::error::Infallible;
use kameo::message::{Context, Message};
use savina::protocol::expect_eq;
use savina::rng::JavaRandom;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, plain_actor, tell};

/// `Integer.MAX_VALUE / 4096`: keys live in `0..DATA_LIMIT`.
const DATA_LIMIT: i32 = i32::MAX / 4096;

/// Java's `Math.abs(key) % DATA_LIMIT` (`abs(MIN_VALUE)` stays negative, as in Java).
fn normalise(key: i32) -> i32 {
    key.wrapping_abs() % DATA_LIMIT
}

/// What the dictionary saw: (reads, writes, final size).
type Tally = (u64, u64, usize);

struct Master {
    workers: u64,
    msgs: u64,
    write_percent: i32,
    /// `DATA_MAP`, built outside the timed region; the dictionary copies it.
    data: Arc<HashMap<i32, i32>>,
    dictionary: Option<ActorRef<Dictionary>>,
    ended: u64,
    exit: Exit,
}

struct Dictionary {
    map: HashMap<i32, i32>,
    reads: u64,
    writes: u64,
    done: Option<oneshot::Sender<Tally>>,
    _exit: Exit,
}

struct Worker {
    msgs: u64,
    write_percent: i32,
    received: u64,
    rng: JavaRandom,
    master: ActorRef<Master>,
    dictionary: ActorRef<Dictionary>,
    _exit: Exit,
}

plain_actor!(Dictionary, Worker);

struct EndWork;

enum DictMsg {
    Write(ActorRef<Worker>, i32, i32),
    Read(ActorRef<Worker>, i32),
    EndWork,
}

enum WorkerMsg {
    DoWork,
    Result(#[allow(dead_code)] Option<i32>),
}

impl kameo::Actor for Master {
    type Args = (Self, oneshot::Sender<Tally>);
    type Error = Infallible;

    /// The Master creates the dictionary (copying `DATA_MAP`, inside the timed region as
    /// in Savina) and the workers when it starts.
    async fn on_start(
        (mut master, done): Self::Args,
        me: ActorRef<Self>,
    ) -> Result<Self, Infallible> {
        let dictionary = common::spawn(Dictionary {
            map: HashMap::clone(&master.data),
            reads: 0,
            writes: 0,
            done: Some(done),
            _exit: master.exit.enter(),
        });
        for id in 0..master.workers {
            let seed = (id + master.msgs) as i64 + i64::from(master.write_percent);
            let worker = common::spawn(Worker {
                msgs: master.msgs,
                write_percent: master.write_percent,
                received: 0,
                rng: JavaRandom::new(seed),
                master: me.clone(),
                dictionary: dictionary.clone(),
                _exit: master.exit.enter(),
            });
            tell(&worker, WorkerMsg::DoWork);
        }
        master.dictionary = Some(dictionary);
        Ok(master)
    }
}

impl Message<EndWork> for Master {
    type Reply = ();

    async fn handle(&mut self, _: EndWork, ctx: &mut Context<Self, ()>) {
        self.ended += 1;
        if self.ended == self.workers {
            if let Some(dictionary) = self.dictionary.take() {
                tell(&dictionary, DictMsg::EndWork);
            }
            ctx.stop();
        }
    }
}

impl Message<DictMsg> for Dictionary {
    type Reply = ();

    async fn handle(&mut self, msg: DictMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            DictMsg::Write(sender, key, value) => {
                self.writes += 1;
                self.map.insert(normalise(key), value);
                tell(&sender, WorkerMsg::Result(Some(value)));
            }
            DictMsg::Read(sender, key) => {
                self.reads += 1;
                let value = self.map.get(&normalise(key)).copied();
                tell(&sender, WorkerMsg::Result(value));
            }
            DictMsg::EndWork => {
                if let Some(done) = self.done.take() {
                    let _ = done.send((self.reads, self.writes, self.map.len()));
                }
                ctx.stop();
            }
        }
    }
}

impl Message<WorkerMsg> for Worker {
    type Reply = ();

    async fn handle(&mut self, _: WorkerMsg, ctx: &mut Context<Self, ()>) {
        self.received += 1;
        if self.received <= self.msgs {
            let me = ctx.actor_ref().clone();
            if self.rng.next_int_bounded(100) < self.write_percent {
                let (key, value) = (self.rng.next_int(), self.rng.next_int());
                tell(&self.dictionary, DictMsg::Write(me, key, value));
            } else {
                let key = self.rng.next_int();
                tell(&self.dictionary, DictMsg::Read(me, key));
            }
        } else {
            tell(&self.master, EndWork);
            ctx.stop();
        }
    }
}

/// The sequential reference: every worker's request stream does not depend on the
/// replies, so the reads, writes and final size follow from the generators alone.
fn expected(workers: u64, msgs: u64, write_percent: i32) -> Tally {
    let (mut reads, mut writes) = (0, 0);
    let mut new_keys = std::collections::HashSet::new();
    for id in 0..workers {
        let mut rng = JavaRandom::new((id + msgs) as i64 + i64::from(write_percent));
        for _ in 0..msgs {
            if rng.next_int_bounded(100) < write_percent {
                let key = normalise(rng.next_int());
                rng.next_int();
                writes += 1;
                if !(0..DATA_LIMIT).contains(&key) {
                    new_keys.insert(key);
                }
            } else {
                rng.next_int();
                reads += 1;
            }
        }
    }
    (reads, writes, DATA_LIMIT as usize + new_keys.len())
}

pub fn run(params: &Params) -> Outcome {
    let workers: u64 = params.get("e");
    let msgs: u64 = params.get("m");
    let write_percent: i32 = params.get("w");
    // Prepared when Savina parses its arguments, outside the timed region.
    let data: Arc<HashMap<i32, i32>> = Arc::new((0..DATA_LIMIT).map(|k| (k, k)).collect());
    let want = expected(workers, msgs, write_percent);
    common::run(params, |latch| async move {
        if workers == 0 {
            return Err("-e must be at least 1".to_owned());
        }
        let (done, result) = oneshot::channel();
        let master = Master {
            workers,
            msgs,
            write_percent,
            data,
            dictionary: None,
            ended: 0,
            exit: latch.enter(),
        };
        drop(common::spawn_with::<Master>((master, done)));
        let tally = common::report(result).await?;
        expect_eq("reads, writes, final size", tally, want)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn reference_matches_savina() {
        assert_eq!(super::expected(20, 10000, 10), (180152, 19848, 524287));
    }
}
