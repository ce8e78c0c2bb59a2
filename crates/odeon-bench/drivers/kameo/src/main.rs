//! The Savina suite on kameo (a peer of odeon), driven by the odeon-bench runner.

use savina::{Outcome, Params};

fn run(params: &Params) -> Option<Outcome> {
    match params.bench().id {
        _ => None,
    }
}

fn main() {
    savina::protocol::drive("kameo", run)
}
