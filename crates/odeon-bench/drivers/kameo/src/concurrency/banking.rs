//! Bank Transaction (Savina #16, `shared/savina.md` §3.16): a teller sends N transfers;
//! each source account debits itself, credits the destination and waits for its
//! acknowledgement before handling anything else.
//!
//! The wait is kameo's `ask` awaited inside the `Credit` handler: until the destination
//! replies, the account handles nothing, so every other message (further `Credit`s and
//! incoming `Debit`s) stays in its mailbox in order, which is what Savina's stash
//! achieves. Destinations are always above sources, so no cycle of waiting accounts
//! (no deadlock) can form.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kameo::actor::ActorRef;
use kameo::error::Infallible;
use kameo::message::{Context, Message};
use savina::protocol::expect_eq;
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, plain_actor, tell};

struct Teller {
    accounts: Vec<ActorRef<Account>>,
    num_accounts: usize,
    transactions: u64,
    initial_balance: f64,
    rng: PseudoRandom,
    replies: u64,
    totals: Arc<Totals>,
    done: Option<oneshot::Sender<u64>>,
    exit: Exit,
}

struct Account {
    balance: f64,
    initial_balance: f64,
    totals: Arc<Totals>,
    _exit: Exit,
}

/// Filled in by the accounts as they stop.
#[derive(Default)]
struct Totals {
    stopped: AtomicU64,
    /// Accounts whose final balance is not the initial one, and failed debits.
    wrong: AtomicU64,
}

plain_actor!(Account);

enum TellerMsg {
    Start,
    Reply,
}

enum AccountMsg {
    Credit(ActorRef<Teller>, f64, ActorRef<Account>),
    Stop,
}

/// Debit(amount), asked by the source account; the reply is the acknowledgement.
struct Debit(f64);

impl kameo::Actor for Teller {
    type Args = Self;
    type Error = Infallible;

    /// The teller creates the accounts when it starts, as in Savina.
    async fn on_start(mut teller: Self, _: ActorRef<Self>) -> Result<Self, Infallible> {
        teller.accounts = (0..teller.num_accounts)
            .map(|_| {
                common::spawn(Account {
                    balance: teller.initial_balance,
                    initial_balance: teller.initial_balance,
                    totals: Arc::clone(&teller.totals),
                    _exit: teller.exit.enter(),
                })
            })
            .collect();
        Ok(teller)
    }
}

impl Message<TellerMsg> for Teller {
    type Reply = ();

    async fn handle(&mut self, msg: TellerMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            TellerMsg::Start => {
                let a = self.num_accounts as i32;
                for _ in 0..self.transactions {
                    let src = self.rng.next_int_bounded((a / 10) * 8);
                    let off = match self.rng.next_int_bounded(a - src) {
                        0 => 1,
                        off => off,
                    };
                    let dst = (src + off) as usize;
                    let amount = self.rng.next_double().abs() * 1000.0;
                    tell(
                        &self.accounts[src as usize],
                        AccountMsg::Credit(
                            ctx.actor_ref().clone(),
                            amount,
                            self.accounts[dst].clone(),
                        ),
                    );
                }
            }
            TellerMsg::Reply => {
                self.replies += 1;
                if self.replies == self.transactions {
                    for account in self.accounts.drain(..) {
                        tell(&account, AccountMsg::Stop);
                    }
                    if let Some(done) = self.done.take() {
                        let _ = done.send(self.replies);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

impl Message<AccountMsg> for Account {
    type Reply = ();

    async fn handle(&mut self, msg: AccountMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            AccountMsg::Credit(teller, amount, recipient) => {
                self.balance -= amount;
                if recipient.ask(Debit(amount)).await.is_err() {
                    self.totals.wrong.fetch_add(1, Ordering::Relaxed);
                }
                tell(&teller, TellerMsg::Reply);
            }
            AccountMsg::Stop => {
                if self.balance != self.initial_balance {
                    self.totals.wrong.fetch_add(1, Ordering::Relaxed);
                }
                self.totals.stopped.fetch_add(1, Ordering::Relaxed);
                ctx.stop();
            }
        }
    }
}

impl Message<Debit> for Account {
    type Reply = ();

    async fn handle(&mut self, Debit(amount): Debit, _: &mut Context<Self, ()>) {
        self.balance += amount;
    }
}

pub fn run(params: &Params) -> Outcome {
    let a: usize = params.get("a");
    let n: u64 = params.get("n");
    // Java: ((Double.MAX_VALUE / (A * N)) / 1000) * 1000, A * N an int product.
    let initial_balance = ((f64::MAX / (a as f64 * n as f64)) / 1000.0) * 1000.0;
    common::run(params, |latch| async move {
        if !(10..=i32::MAX as usize).contains(&a) || n == 0 {
            return Err(
                "-a must be at least 10 (sources are drawn from 0..A/10*8) and -n at least 1"
                    .to_owned(),
            );
        }
        let (done, result) = oneshot::channel();
        let totals = Arc::new(Totals::default());
        let teller = common::spawn(Teller {
            accounts: Vec::new(),
            num_accounts: a,
            transactions: n,
            initial_balance,
            rng: PseudoRandom::new(123456),
            replies: 0,
            totals: Arc::clone(&totals),
            done: Some(done),
            exit: latch.enter(),
        });
        tell(&teller, TellerMsg::Start);
        drop(teller);
        let replies = if n == 0 {
            0
        } else {
            common::report(result).await?
        };
        latch.wait().await;
        expect_eq(
            "replies, accounts stopped, balances changed",
            (
                replies,
                totals.stopped.load(Ordering::Relaxed),
                totals.wrong.load(Ordering::Relaxed),
            ),
            (n, a as u64, 0),
        )
    })
}
