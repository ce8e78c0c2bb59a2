//! Savina's concurrency benchmarks (#9–#16) this driver implements.

mod banking;
mod concdict;
mod logmap;
mod philosopher;

use savina::{Outcome, Params};

use crate::common::Variant;

pub(crate) fn run(params: &Params, variant: Variant) -> Option<Outcome> {
    Some(match params.bench().id {
        "concdict" => concdict::run(params, variant),
        "philosopher" => philosopher::run(params, variant),
        "logmap" => logmap::run(params, variant),
        "banking" => banking::run(params, variant),
        _ => return None,
    })
}
