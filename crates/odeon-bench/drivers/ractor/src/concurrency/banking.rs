//! Bank Transaction (Savina #16, `shared/savina.md` §3.16): a teller sends N transfers;
//! each source account debits itself, credits the destination and waits for its
//! acknowledgement before handling anything else.
//!
//! The wait is ractor's `call` awaited inside the `Credit` handler: until the
//! destination replies, the account handles nothing, so every other message (further
//! `Credit`s and incoming `Debit`s) stays in its mailbox in order, which is what
//! Savina's stash achieves. Destinations are always above sources, so no cycle of
//! waiting accounts (no deadlock) can form.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ractor::rpc::CallResult;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use savina::protocol::expect_eq;
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, state_from_args, tell};

struct TellerActor;
struct AccountActor;

struct Teller {
    accounts: Vec<ActorRef<AccountMsg>>,
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

enum TellerMsg {
    Start,
    Reply,
}

enum AccountMsg {
    Credit(ActorRef<TellerMsg>, f64, ActorRef<AccountMsg>),
    /// Debit(amount), called by the source account; the reply is the acknowledgement.
    Debit(f64, RpcReplyPort<()>),
    Stop,
}

impl Actor for TellerActor {
    type Msg = TellerMsg;
    type State = Teller;
    type Arguments = Teller;

    /// The teller creates the accounts when it starts, as in Savina.
    async fn pre_start(
        &self,
        _: ActorRef<TellerMsg>,
        mut teller: Teller,
    ) -> Result<Teller, ActorProcessingErr> {
        for _ in 0..teller.num_accounts {
            let account = Account {
                balance: teller.initial_balance,
                initial_balance: teller.initial_balance,
                totals: Arc::clone(&teller.totals),
                _exit: teller.exit.enter(),
            };
            teller
                .accounts
                .push(common::spawn(AccountActor, account).await);
        }
        Ok(teller)
    }

    async fn handle(
        &self,
        myself: ActorRef<TellerMsg>,
        msg: TellerMsg,
        st: &mut Teller,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            TellerMsg::Start => {
                let a = st.num_accounts as i32;
                for _ in 0..st.transactions {
                    let src = st.rng.next_int_bounded((a / 10) * 8);
                    let off = match st.rng.next_int_bounded(a - src) {
                        0 => 1,
                        off => off,
                    };
                    let dst = (src + off) as usize;
                    let amount = st.rng.next_double().abs() * 1000.0;
                    let credit =
                        AccountMsg::Credit(myself.clone(), amount, st.accounts[dst].clone());
                    tell(&st.accounts[src as usize], credit);
                }
            }
            TellerMsg::Reply => {
                st.replies += 1;
                if st.replies == st.transactions {
                    for account in st.accounts.drain(..) {
                        tell(&account, AccountMsg::Stop);
                    }
                    if let Some(done) = st.done.take() {
                        let _ = done.send(st.replies);
                    }
                    myself.stop(None);
                }
            }
        }
        Ok(())
    }
}

impl Actor for AccountActor {
    type Msg = AccountMsg;
    type State = Account;
    type Arguments = Account;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<AccountMsg>,
        msg: AccountMsg,
        st: &mut Account,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            AccountMsg::Credit(teller, amount, recipient) => {
                st.balance -= amount;
                let ack = recipient
                    .call(|reply| AccountMsg::Debit(amount, reply), None)
                    .await;
                if !matches!(ack, Ok(CallResult::Success(()))) {
                    st.totals.wrong.fetch_add(1, Ordering::Relaxed);
                }
                tell(&teller, TellerMsg::Reply);
            }
            AccountMsg::Debit(amount, reply) => {
                st.balance += amount;
                let _ = reply.send(());
            }
            AccountMsg::Stop => {
                if st.balance != st.initial_balance {
                    st.totals.wrong.fetch_add(1, Ordering::Relaxed);
                }
                st.totals.stopped.fetch_add(1, Ordering::Relaxed);
                myself.stop(None);
            }
        }
        Ok(())
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
        let teller = Teller {
            accounts: Vec::new(),
            num_accounts: a,
            transactions: n,
            initial_balance,
            rng: PseudoRandom::new(123456),
            replies: 0,
            totals: Arc::clone(&totals),
            done: Some(done),
            exit: latch.enter(),
        };
        let teller = common::spawn(TellerActor, teller).await;
        tell(&teller, TellerMsg::Start);
        drop(teller);
        let replies = common::report(result).await?;
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
