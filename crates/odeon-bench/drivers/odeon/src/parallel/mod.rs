//! The parallel benchmarks of Savina on odeon (`shared/savina.md` §3.17–3.30).

use savina::{Outcome, Params};

mod exited;
mod finish;

mod apsp;
mod astar;
mod bitonicsort;
mod facloc;
mod filterbank;
mod nqueenk;
mod piprecision;
mod quicksort;
mod radixsort;
mod recmatmul;
mod sieve;
mod sor;
mod uct;

/// Runs the benchmark if it belongs to this group.
pub(crate) fn run(params: &Params) -> Option<Outcome> {
    match params.bench().id {
        "apsp" => Some(apsp::run(params)),
        "astar" => Some(astar::run(params)),
        "quicksort" => Some(quicksort::run(params)),
        "radixsort" => Some(radixsort::run(params)),
        "recmatmul" => Some(recmatmul::run(params)),
        "filterbank" => Some(filterbank::run(params)),
        "nqueenk" => Some(nqueenk::run(params)),
        "bitonicsort" => Some(bitonicsort::run(params)),
        "sieve" => Some(sieve::run(params)),
        "uct" => Some(uct::run(params)),
        "sor" => Some(sor::run(params)),
        "piprecision" => Some(piprecision::run(params)),
        "facloc" => Some(facloc::run(params)),
        _ => None,
    }
}
