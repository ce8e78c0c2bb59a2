//! Bank Transaction (Savina #16, `shared/savina.md` §3.16): a Teller issues N
//! two-phase transfers between A accounts; a source account waits for the
//! destination's reply and stashes everything else meanwhile.
//!
//! actix has no stash; each account keeps one itself (Savina's *ManualStash* variant)
//! and replays it in arrival order once the reply is in, as Akka's `unstashAll`
//! would. Destinations always have a higher index than sources, so waits cannot form
//! a cycle.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};

use crate::common::{Live, Rt, Slot, Variant, run_system};

#[derive(Message)]
#[rtype(result = "()")]
struct Start;

#[derive(Message)]
#[rtype(result = "()")]
struct Credit {
    teller: Addr<Teller>,
    amount: f64,
    recipient: Addr<Account>,
}

#[derive(Message)]
#[rtype(result = "()")]
struct Debit {
    sender: Addr<Account>,
    amount: f64,
}

/// From a destination to its source, and from the source on to the Teller.
#[derive(Message)]
#[rtype(result = "()")]
struct Reply;

#[derive(Message)]
#[rtype(result = "()")]
struct Stop;

/// `((Double.MAX_VALUE / (A·N)) / 1000) · 1000`.
fn initial_balance(accounts: u64, transactions: u64) -> f64 {
    ((f64::MAX / (accounts * transactions) as f64) / 1000.0) * 1000.0
}

/// The Teller's transaction stream: (source, destination, amount).
fn transactions(accounts: i32, count: u64) -> impl Iterator<Item = (usize, usize, f64)> {
    let mut rng = PseudoRandom::new(123456);
    (0..count).map(move |_| {
        let src = rng.next_int_bounded((accounts / 10) * 8);
        let mut off = rng.next_int_bounded(accounts - src);
        if off == 0 {
            off = 1;
        }
        let amount = rng.next_double().abs() * 1000.0;
        (src as usize, (src + off) as usize, amount)
    })
}

struct Teller {
    rt: Rt,
    accounts: Vec<Addr<Account>>,
    account_count: usize,
    start_balance: f64,
    /// Where the accounts leave their final balances.
    balances: Arc<Mutex<Vec<f64>>>,
    me: Addr<Teller>,
    transactions: u64,
    replies: u64,
    report: Slot<u64>,
    _live: Live,
}

impl Actor for Teller {
    type Context = Context<Self>;

    /// The Teller creates its accounts when it starts.
    fn started(&mut self, _: &mut Context<Self>) {
        let balance = self.start_balance;
        self.accounts = (0..self.account_count)
            .map(|id| {
                let balances = Arc::clone(&self.balances);
                self.rt.spawn(move |ctx, live| Account {
                    id,
                    me: ctx.address(),
                    balance,
                    waiting_for: None,
                    stash: VecDeque::new(),
                    balances,
                    _live: live,
                })
            })
            .collect();
    }
}

impl Handler<Start> for Teller {
    type Result = ();
    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        let count = self.accounts.len() as i32;
        for (src, dst, amount) in transactions(count, self.transactions) {
            self.accounts[src].do_send(Credit {
                teller: self.me.clone(),
                amount,
                recipient: self.accounts[dst].clone(),
            });
        }
    }
}

impl Handler<Reply> for Teller {
    type Result = ();
    fn handle(&mut self, _: Reply, ctx: &mut Context<Self>) {
        self.replies += 1;
        if self.replies == self.transactions {
            for account in &self.accounts {
                account.do_send(Stop);
            }
            self.report.put(self.replies);
            ctx.stop();
        }
    }
}

/// A message the account could not serve while waiting for a reply.
enum Stashed {
    Credit(Credit),
    Debit(Debit),
}

struct Account {
    id: usize,
    me: Addr<Account>,
    balance: f64,
    /// The Teller to forward the awaited `Reply` to; `Some` while waiting.
    waiting_for: Option<Addr<Teller>>,
    stash: VecDeque<Stashed>,
    balances: Arc<Mutex<Vec<f64>>>,
    _live: Live,
}

impl Actor for Account {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        let mut balances = self.balances.lock().unwrap_or_else(|e| e.into_inner());
        balances[self.id] = self.balance;
    }
}

impl Account {
    fn serve(&mut self, message: Stashed) {
        match message {
            Stashed::Credit(Credit {
                teller,
                amount,
                recipient,
            }) => {
                self.balance -= amount;
                recipient.do_send(Debit {
                    sender: self.me.clone(),
                    amount,
                });
                self.waiting_for = Some(teller);
            }
            Stashed::Debit(Debit { sender, amount }) => {
                self.balance += amount;
                sender.do_send(Reply);
            }
        }
    }

    fn receive(&mut self, message: Stashed) {
        if self.waiting_for.is_some() {
            self.stash.push_back(message);
        } else {
            self.serve(message);
        }
    }
}

impl Handler<Credit> for Account {
    type Result = ();
    fn handle(&mut self, credit: Credit, _: &mut Context<Self>) {
        self.receive(Stashed::Credit(credit));
    }
}

impl Handler<Debit> for Account {
    type Result = ();
    fn handle(&mut self, debit: Debit, _: &mut Context<Self>) {
        self.receive(Stashed::Debit(debit));
    }
}

impl Handler<Reply> for Account {
    type Result = ();
    fn handle(&mut self, _: Reply, _: &mut Context<Self>) {
        if let Some(teller) = self.waiting_for.take() {
            teller.do_send(Reply);
        }
        // Replay the stash in order until a Credit makes the account wait again.
        while self.waiting_for.is_none() {
            match self.stash.pop_front() {
                Some(message) => self.serve(message),
                None => break,
            }
        }
    }
}

impl Handler<Stop> for Account {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

/// The balances after applying the stream sequentially. With Savina's huge initial
/// balance every transfer is below its precision, so they all stay unchanged.
fn reference(accounts: u64, count: u64) -> Vec<f64> {
    let mut balances = vec![initial_balance(accounts, count); accounts as usize];
    for (src, dst, amount) in transactions(accounts as i32, count) {
        balances[src] -= amount;
        balances[dst] += amount;
    }
    balances
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let a: u64 = params.get("a");
    let n: u64 = params.get("n");
    if !(10..=i32::MAX as u64).contains(&a) || n == 0 {
        // Savina draws sources from nextInt((A/10)·8), which needs A >= 10.
        return Outcome::new(Default::default(), Err("need -a >= 10 and -n >= 1".into()));
    }
    let balances = Arc::new(Mutex::new(vec![f64::NAN; a as usize]));
    let result = Slot::new();
    let start_balance = initial_balance(a, n);
    let elapsed = run_system(variant, |rt: &Rt| {
        let (teller_rt, report, balances) = (rt.clone(), result.clone(), Arc::clone(&balances));
        let teller = rt.spawn(move |ctx, live| Teller {
            rt: teller_rt,
            accounts: Vec::new(),
            account_count: a as usize,
            start_balance,
            balances,
            me: ctx.address(),
            transactions: n,
            replies: 0,
            report,
            _live: live,
        });
        teller.do_send(Start);
    });
    let expected = reference(a, n);
    let balances = balances.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let check = result.take("the Teller").and_then(|replies| {
        let wrong = balances
            .iter()
            .zip(&expected)
            .filter(|(got, want)| got.to_bits() != want.to_bits())
            .count();
        let unchanged = expected.iter().all(|&b| b == start_balance);
        if replies == n && wrong == 0 {
            Ok(format!(
                "{replies} replies; balances {}",
                if unchanged {
                    "unchanged"
                } else {
                    "match the sequential replay"
                }
            ))
        } else {
            Err(format!(
                "{replies} replies (expected {n}); {wrong} balances differ from the sequential replay"
            ))
        }
    });
    Outcome::new(elapsed, check)
}
