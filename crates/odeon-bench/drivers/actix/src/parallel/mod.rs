//! Savina's parallelism benchmarks (#17–#30) this driver implements.

mod trapezoid;

use savina::{Outcome, Params};

use crate::common::Variant;

pub(crate) fn run(params: &Params, variant: Variant) -> Option<Outcome> {
    Some(match params.bench().id {
        "trapezoid" => trapezoid::run(params, variant),
        _ => return None,
    })
}
