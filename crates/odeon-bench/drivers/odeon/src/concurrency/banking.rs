//! Bank Transaction (Savina #16, `shared/savina.md` §3.16): a teller issues N
//! transfers; the source account debits itself, then waits for the destination to
//! credit the amount before it handles anything else.
//!
//! The reference stashes every message that arrives while a source account waits for
//! the destination's reply (become/stash). In odeon the source's `Credit` handler is
//! an [`AsyncHandler`] that awaits an `ask` of the destination: the account handles
//! nothing else meanwhile (its later messages stay queued, in order) and no thread is
//! held. Destinations are always higher-numbered accounts, so waits cannot form a
//! cycle.

use std::sync::mpsc;

use odeon::{Actor, ActorRef, AsyncHandler, Context, Handler, Message};
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};

use super::{ASK_PATIENCE, Exit, Latch, outcome, timed};

/// The teller's generator seed.
const SEED: i64 = 123_456;

/// Savina's `INITIAL_BALANCE`: `((Double.MAX_VALUE / (A * N)) / 1000) * 1000`, with
/// Java's 32-bit `A * N`.
fn initial_balance(accounts: i32, transactions: i32) -> f64 {
    ((f64::MAX / f64::from(accounts.wrapping_mul(transactions))) / 1000.0) * 1000.0
}

/// One transfer drawn by the teller: (source, destination, amount).
fn next_transfer(random: &mut PseudoRandom, accounts: i32) -> (usize, usize, f64) {
    let src = random.next_int_bounded((accounts / 10) * 8);
    let off = match random.next_int_bounded(accounts - src) {
        0 => 1,
        off => off,
    };
    let amount = random.next_double().abs() * 1000.0;
    (src as usize, (src + off) as usize, amount)
}

/// An account's state at exit: (index, balance, credits, debits, failed asks).
type Report = (usize, f64, u64, u64, u64);

struct Teller {
    accounts: i32,
    transactions: u32,
    balance: f64,
    refs: Vec<ActorRef<Account>>,
    random: PseudoRandom,
    replies: u32,
    report: mpsc::Sender<Report>,
    exit: Exit,
}

struct Account {
    index: usize,
    balance: f64,
    credits: u64,
    debits: u64,
    failed: u64,
    report: mpsc::Sender<Report>,
    _exit: Exit,
}

impl Actor for Teller {
    fn started(&mut self, cx: &mut Context<Self>) {
        let system = cx.system();
        self.refs = (0..self.accounts as usize)
            .map(|index| {
                system.spawn(Account {
                    index,
                    balance: self.balance,
                    credits: 0,
                    debits: 0,
                    failed: 0,
                    report: self.report.clone(),
                    _exit: self.exit.enter(),
                })
            })
            .collect();
    }
}
impl Actor for Account {}

struct Start;
impl Message for Start {
    type Reply = ();
}

/// To the source account: move `amount` to `recipient`, then tell `teller`.
struct Credit {
    teller: ActorRef<Teller>,
    amount: f64,
    recipient: ActorRef<Account>,
}
impl Message for Credit {
    type Reply = ();
}

/// To the destination account; the (empty) reply completes the source's transfer.
struct Debit(f64);
impl Message for Debit {
    type Reply = ();
}

struct Reply;
impl Message for Reply {
    type Reply = ();
}

struct Stop;
impl Message for Stop {
    type Reply = ();
}

impl Handler<Start> for Teller {
    fn handle(&mut self, _: Start, cx: &mut Context<Self>) {
        for _ in 0..self.transactions {
            let (src, dst, amount) = next_transfer(&mut self.random, self.accounts);
            let _ = self.refs[src].tell(Credit {
                teller: cx.myself(),
                amount,
                recipient: self.refs[dst].clone(),
            });
        }
    }
}

impl Handler<Reply> for Teller {
    fn handle(&mut self, _: Reply, cx: &mut Context<Self>) {
        self.replies += 1;
        if self.replies == self.transactions {
            for account in &self.refs {
                let _ = account.tell(Stop);
            }
            cx.stop();
        }
    }
}

impl AsyncHandler<Credit> for Account {
    async fn handle(&mut self, msg: Credit, _: &mut Context<Self>) {
        self.credits += 1;
        self.balance -= msg.amount;
        let debited = msg.recipient.ask(Debit(msg.amount)).timeout(ASK_PATIENCE);
        if debited.await.is_err() {
            self.failed += 1;
        }
        let _ = msg.teller.tell(Reply);
    }
}

impl Handler<Debit> for Account {
    fn handle(&mut self, msg: Debit, _: &mut Context<Self>) {
        self.debits += 1;
        self.balance += msg.0;
    }
}

impl Handler<Stop> for Account {
    fn handle(&mut self, _: Stop, cx: &mut Context<Self>) {
        let _ = self.report.send((
            self.index,
            self.balance,
            self.credits,
            self.debits,
            self.failed,
        ));
        cx.stop();
    }
}

/// The transfers replayed sequentially: every account's balance, credits and debits.
/// Amounts of at most 1000 vanish against balances near 1e300, so the order in which
/// an account applies them does not change its balance.
fn reference(accounts: i32, transactions: u32, balance: f64) -> Vec<(f64, u64, u64)> {
    let mut expected = vec![(balance, 0, 0); accounts as usize];
    let mut random = PseudoRandom::new(SEED);
    for _ in 0..transactions {
        let (src, dst, amount) = next_transfer(&mut random, accounts);
        expected[src].0 -= amount;
        expected[src].1 += 1;
        expected[dst].0 += amount;
        expected[dst].2 += 1;
    }
    expected
}

pub(crate) fn run(params: &Params) -> Outcome {
    let accounts: i32 = params.get("a");
    let transactions: u32 = params.get("n");
    if accounts < 10 || transactions == 0 {
        // Fewer than 10 accounts makes the source range `(A / 10) * 8` empty.
        return Outcome::new(
            std::time::Duration::ZERO,
            Err("needs -a >= 10 and -n >= 1".into()),
        );
    }
    let balance = initial_balance(accounts, transactions as i32);
    let expected = reference(accounts, transactions, balance);
    let (tx, rx) = mpsc::channel();
    let elapsed = timed(params, |system, latch: &Latch| {
        let teller = system.spawn(Teller {
            accounts,
            transactions,
            balance,
            refs: Vec::new(),
            random: PseudoRandom::new(SEED),
            replies: 0,
            report: tx,
            exit: latch.enter(),
        });
        let _ = teller.tell(Start);
    });
    outcome(elapsed, || {
        let mut seen = vec![false; accounts as usize];
        let mut unchanged = true;
        for (index, got, credits, debits, failed) in rx.try_iter() {
            let (want, want_credits, want_debits) = expected[index];
            if failed > 0
                || (got.to_bits(), credits, debits) != (want.to_bits(), want_credits, want_debits)
            {
                return Err(format!(
                    "account {index}: balance {got}, {credits} credits, {debits} debits, \
                     {failed} failed; expected {want}, {want_credits}, {want_debits}"
                ));
            }
            unchanged &= got == balance;
            seen[index] = true;
        }
        if let Some(missing) = seen.iter().position(|s| !s) {
            return Err(format!("account {missing} sent no report"));
        }
        let balances = if unchanged {
            "unchanged"
        } else {
            "as replayed"
        };
        Ok(format!(
            "{transactions} transfers replied; balances {balances}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `shared/savina.md` §3.16: about 3.595386269724631e300, and every default
    /// transfer vanishes against it.
    #[test]
    fn the_initial_balance_absorbs_every_transfer() {
        let balance = initial_balance(1000, 50_000);
        assert!((balance / 3.595_386_269_724_631e300 - 1.0).abs() < 1e-15);
        let replayed = reference(1000, 50_000, balance);
        assert!(replayed.iter().all(|(b, _, _)| *b == balance));
        assert_eq!(replayed.iter().map(|r| r.1).sum::<u64>(), 50_000);
    }
}
