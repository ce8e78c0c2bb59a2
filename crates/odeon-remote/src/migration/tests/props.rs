//! Random schedules over the real state machines: proptest picks every step (sends,
//! frame deliveries in any order across links, handling, moves between any nodes,
//! timeouts), then the run settles and the end-of-run properties are checked
//! (`Sim::check_clean_end`: single host, exactly once, per-sender FIFO, asks answered,
//! forwarders collected, no stray frames). Crashes are covered by the scripted tests
//! and, exhaustively, by the model.

use proptest::prelude::*;

use super::sim::Sim;
use crate::migration::entry::MoveFailed;

/// Runs `choices` as a schedule: each picks one of the steps enabled at that moment.
fn run(sim: &mut Sim, choices: &[u16], max_moves: u64, timeouts: bool) {
    for &c in choices {
        let moves = sim.moves_started < max_moves;
        let enabled = sim.enabled(moves, timeouts);
        let Some(&step) = enabled.get(usize::from(c) % enabled.len().max(1)) else {
            break;
        };
        sim.step(step);
    }
    sim.finish();
}

fn scripts() -> impl Strategy<Value = Vec<(usize, Vec<bool>)>> {
    // Three senders of up to five messages each, on any of four nodes.
    proptest::collection::vec(
        (0usize..4, proptest::collection::vec(any::<bool>(), 1..6)),
        1..4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn random_moves_and_deliveries_keep_every_message_once_and_in_order(
        nodes in 2usize..5,
        clients in scripts(),
        choices in proptest::collection::vec(any::<u16>(), 0..400),
    ) {
        let clients = clients.into_iter().map(|(n, s)| (n % nodes, s)).collect();
        let mut sim = Sim::new(nodes, clients);
        run(&mut sim, &choices, 5, false);
        sim.check_clean_end();
        let (moved, resumed, activated, discarded) = sim.outcomes();
        prop_assert_eq!(moved, activated);
        prop_assert_eq!(resumed + discarded, 0);
    }

    #[test]
    fn refusals_and_timeouts_resume_the_source_with_nothing_lost(
        nodes in 3usize..5,
        clients in scripts(),
        choices in proptest::collection::vec(any::<u16>(), 0..400),
    ) {
        let clients = clients.into_iter().map(|(n, s)| (n % nodes, s)).collect();
        let mut sim = Sim::new(nodes, clients);
        sim.refusers = vec![nodes - 1];
        run(&mut sim, &choices, 4, true);
        sim.check_clean_end();
        let (moved, resumed, activated, _) = sim.outcomes();
        prop_assert_eq!(moved, activated);
        prop_assert_eq!(moved + resumed, usize::try_from(sim.moves_started).unwrap());
    }
}

/// The "sometimes" half of the model's properties: over a fixed set of pseudo-random
/// schedules, the protocol's paths are really taken (moves, refusals, timeouts,
/// hints, switches, collection), so the properties above are not passing vacuously.
#[test]
fn random_schedules_exercise_every_path_of_the_protocol() {
    use crate::migration::entry::Out;
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 16) as u16
    };
    let mut seen = [0usize; 6];
    for walk in 0..200 {
        let nodes = 3 + walk % 2;
        let clients = vec![(1, vec![false, true, false]), (2, vec![true, false, false])];
        let mut sim = Sim::new(nodes, clients);
        sim.refusers = vec![nodes - 1];
        let choices: Vec<u16> = (0..150).map(|_| next()).collect();
        run(&mut sim, &choices, 4, walk % 3 == 0);
        sim.check_clean_end();
        for n in 0..nodes {
            let count = |f: &dyn Fn(&Out) -> bool| sim.count(n, f);
            seen[0] += count(&|o| matches!(o, Out::Moved { .. }));
            seen[1] += count(&|o| {
                matches!(
                    o,
                    Out::Resumed {
                        why: MoveFailed::Refused(_),
                        ..
                    }
                )
            });
            seen[2] += count(&|o| {
                matches!(
                    o,
                    Out::Resumed {
                        why: MoveFailed::Timeout,
                        ..
                    }
                )
            });
            seen[3] += count(&|o| matches!(o, Out::Discarded { .. }));
            seen[4] += count(&|o| matches!(o, Out::Collected));
            seen[5] += count(&|o| {
                matches!(
                    o,
                    Out::Send {
                        frame: crate::wire::Traffic::FlushAck { .. },
                        ..
                    }
                )
            });
        }
    }
    assert!(
        seen.iter().all(|&n| n > 0),
        "moved, refused, timed out, discarded, collected, flush acks: {seen:?}"
    );
}
