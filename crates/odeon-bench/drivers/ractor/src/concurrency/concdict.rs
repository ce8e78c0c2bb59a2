//! Concurrent Dictionary (Savina #9, `shared/savina.md` §3.9): W workers send reads and
//! writes, one outstanding at a time, to one dictionary actor.

use std::collections::HashMap;
use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use savina::protocol::expect_eq;
use savina::rng::JavaRandom;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, state_from_args, tell};

/// `Integer.MAX_VALUE / 4096`: keys live in `0..DATA_LIMIT`.
const DATA_LIMIT: i32 = i32::MAX / 4096;

/// Java's `Math.abs(key) % DATA_LIMIT` (`abs(MIN_VALUE)` stays negative, as in Java).
fn normalise(key: i32) -> i32 {
    key.wrapping_abs() % DATA_LIMIT
}

/// What the dictionary saw: (reads, writes, final size).
type Tally = (u64, u64, usize);

struct MasterActor;
struct DictionaryActor;
struct WorkerActor;

struct Master {
    workers: u64,
    msgs: u64,
    write_percent: i32,
    /// `DATA_MAP`, built outside the timed region; the dictionary copies it.
    data: Arc<HashMap<i32, i32>>,
    dictionary: Option<ActorRef<DictMsg>>,
    ended: u64,
    /// Handed to the dictionary, which reports when it ends.
    done: Option<oneshot::Sender<Tally>>,
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
    master: ActorRef<EndWork>,
    dictionary: ActorRef<DictMsg>,
    _exit: Exit,
}

struct EndWork;

enum DictMsg {
    Write(ActorRef<WorkerMsg>, i32, i32),
    Read(ActorRef<WorkerMsg>, i32),
    EndWork,
}

enum WorkerMsg {
    DoWork,
    Result(#[allow(dead_code)] Option<i32>),
}

impl Actor for MasterActor {
    type Msg = EndWork;
    type State = Master;
    type Arguments = Master;

    /// The Master creates the dictionary (copying `DATA_MAP`, inside the timed region as
    /// in Savina) and the workers when it starts.
    async fn pre_start(
        &self,
        myself: ActorRef<EndWork>,
        mut master: Master,
    ) -> Result<Master, ActorProcessingErr> {
        let dictionary = Dictionary {
            map: HashMap::clone(&master.data),
            reads: 0,
            writes: 0,
            done: master.done.take(),
            _exit: master.exit.enter(),
        };
        let dictionary = common::spawn(DictionaryActor, dictionary).await;
        for id in 0..master.workers {
            let seed = (id + master.msgs) as i64 + i64::from(master.write_percent);
            let worker = Worker {
                msgs: master.msgs,
                write_percent: master.write_percent,
                received: 0,
                rng: JavaRandom::new(seed),
                master: myself.clone(),
                dictionary: dictionary.clone(),
                _exit: master.exit.enter(),
            };
            let worker = common::spawn(WorkerActor, worker).await;
            tell(&worker, WorkerMsg::DoWork);
        }
        master.dictionary = Some(dictionary);
        Ok(master)
    }

    async fn handle(
        &self,
        myself: ActorRef<EndWork>,
        _: EndWork,
        st: &mut Master,
    ) -> Result<(), ActorProcessingErr> {
        st.ended += 1;
        if st.ended == st.workers {
            if let Some(dictionary) = st.dictionary.take() {
                tell(&dictionary, DictMsg::EndWork);
            }
            myself.stop(None);
        }
        Ok(())
    }
}

impl Actor for DictionaryActor {
    type Msg = DictMsg;
    type State = Dictionary;
    type Arguments = Dictionary;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<DictMsg>,
        msg: DictMsg,
        st: &mut Dictionary,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            DictMsg::Write(sender, key, value) => {
                st.writes += 1;
                st.map.insert(normalise(key), value);
                tell(&sender, WorkerMsg::Result(Some(value)));
            }
            DictMsg::Read(sender, key) => {
                st.reads += 1;
                let value = st.map.get(&normalise(key)).copied();
                tell(&sender, WorkerMsg::Result(value));
            }
            DictMsg::EndWork => {
                if let Some(done) = st.done.take() {
                    let _ = done.send((st.reads, st.writes, st.map.len()));
                }
                myself.stop(None);
            }
        }
        Ok(())
    }
}

impl Actor for WorkerActor {
    type Msg = WorkerMsg;
    type State = Worker;
    type Arguments = Worker;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<WorkerMsg>,
        _: WorkerMsg,
        st: &mut Worker,
    ) -> Result<(), ActorProcessingErr> {
        st.received += 1;
        if st.received <= st.msgs {
            if st.rng.next_int_bounded(100) < st.write_percent {
                let (key, value) = (st.rng.next_int(), st.rng.next_int());
                tell(&st.dictionary, DictMsg::Write(myself, key, value));
            } else {
                let key = st.rng.next_int();
                tell(&st.dictionary, DictMsg::Read(myself, key));
            }
        } else {
            tell(&st.master, EndWork);
            myself.stop(None);
        }
        Ok(())
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
            done: Some(done),
            exit: latch.enter(),
        };
        drop(common::spawn(MasterActor, master).await);
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
