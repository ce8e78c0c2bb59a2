//! The Savina suite on actix (a peer of odeon), driven by the odeon-bench runner.

use savina::{Outcome, Params};

fn run(params: &Params) -> Option<Outcome> {
    match params.bench().id {
        _ => None,
    }
}

fn main() {
    savina::protocol::drive("actix", run)
}
