//! The Savina suite on actix (a peer of odeon), driven by the odeon-bench runner: see
//! `savina::protocol` for the command line and the output, and `shared/savina.md` for
//! the workloads. Imam & Sarkar, *Savina – An Actor Benchmark Suite*, AGERE! 2014.
//!
//! Two configurations (`--variant`): `single`, every actor in one `System` on the
//! current thread (actix's fastest setup for message-bound work), and `per-core`, one
//! `Arbiter` per core (`--threads`) with actors spread round-robin. See `README.md`.

mod common;
mod concurrency;
mod micro;
mod parallel;

use savina::{Outcome, Params};

use crate::common::Variant;

fn run(params: &Params) -> Option<Outcome> {
    let variant = match Variant::of(params) {
        Ok(variant) => variant,
        Err(e) => {
            eprintln!("actix: {e}");
            std::process::exit(savina::protocol::EXIT_USAGE);
        }
    };
    micro::run(params, variant)
        .or_else(|| concurrency::run(params, variant))
        .or_else(|| parallel::run(params, variant))
}

fn main() {
    savina::protocol::drive("actix", run)
}

#[cfg(test)]
mod tests {
    use savina::{Params, catalog};

    /// Every benchmark this driver implements, at `--quick` sizes, in both variants.
    fn check(id: &str) {
        let bench = catalog::find(id).expect("a catalog id");
        for variant in ["single", "per-core"] {
            let mut params = Params::for_bench(bench, true);
            params.variant = variant.to_owned();
            params.threads = 2;
            let outcome = super::run(&params).expect("implemented");
            assert!(outcome.check.is_ok(), "{id} {variant}: {:?}", outcome.check);
        }
    }

    #[test]
    fn micro_benchmarks_validate_at_quick_sizes() {
        for id in [
            "pingpong",
            "threadring",
            "threadring503",
            "counting",
            "fjthrput",
            "fjcreate",
            "fib",
            "chameneos",
            "big",
        ] {
            check(id);
        }
    }

    #[test]
    fn concurrency_benchmarks_validate_at_quick_sizes() {
        for id in ["concdict", "philosopher", "logmap", "banking"] {
            check(id);
        }
    }

    #[test]
    fn parallel_benchmarks_validate_at_quick_sizes() {
        check("trapezoid");
    }

    #[test]
    fn unimplemented_benchmarks_say_so() {
        let params = Params::for_bench(catalog::find("sor").expect("sor"), true);
        assert!(super::run(&params).is_none());
    }
}
