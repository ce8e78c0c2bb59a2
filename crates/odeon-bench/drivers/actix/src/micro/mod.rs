//! Savina's micro benchmarks (#1–#8) and the 503-actor Thread Ring.

mod big;
mod chameneos;
mod counting;
mod fib;
mod fjcreate;
mod fjthrput;
mod pingpong;
mod threadring;

use savina::{Outcome, Params};

use crate::common::Variant;

pub(crate) fn run(params: &Params, variant: Variant) -> Option<Outcome> {
    Some(match params.bench().id {
        "pingpong" => pingpong::run(params, variant),
        "threadring" | "threadring503" => threadring::run(params, variant),
        "counting" => counting::run(params, variant),
        "fjthrput" => fjthrput::run(params, variant),
        "fjcreate" => fjcreate::run(params, variant),
        "fib" => fib::run(params, variant),
        "chameneos" => chameneos::run(params, variant),
        "big" => big::run(params, variant),
        _ => return None,
    })
}
