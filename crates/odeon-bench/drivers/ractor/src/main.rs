//! The Savina suite on ractor (a peer of odeon), driven by the odeon-bench runner.
//!
//! Every iteration runs on a fresh multi-thread tokio runtime with `--threads` workers,
//! ractor's idiomatic deployment; see `README.md` for the configuration and why.

mod common;
mod micro {
    pub mod big;
    pub mod chameneos;
    pub mod counting;
    pub mod fib;
    pub mod fjcreate;
    pub mod fjthrput;
    pub mod pingpong;
    pub mod threadring;
}
mod concurrency {
    pub mod banking;
    pub mod concdict;
    pub mod logmap;
    pub mod philosopher;
}
mod parallel {
    pub mod trapezoid;
}

use savina::{Outcome, Params};

fn run(params: &Params) -> Option<Outcome> {
    Some(match params.bench().id {
        "pingpong" => micro::pingpong::run(params),
        "counting" => micro::counting::run(params),
        "fjthrput" => micro::fjthrput::run(params),
        "fjcreate" => micro::fjcreate::run(params),
        "fib" => micro::fib::run(params),
        "chameneos" => micro::chameneos::run(params),
        "big" => micro::big::run(params),
        "concdict" => concurrency::concdict::run(params),
        "philosopher" => concurrency::philosopher::run(params),
        "logmap" => concurrency::logmap::run(params),
        "banking" => concurrency::banking::run(params),
        "trapezoid" => parallel::trapezoid::run(params),
        "threadring" | "threadring503" => micro::threadring::run(params),
        _ => return None,
    })
}

fn main() {
    savina::protocol::drive("ractor", run)
}
