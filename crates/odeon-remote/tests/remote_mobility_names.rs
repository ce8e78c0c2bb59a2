//! Names of a mobile actor after it moves (design §3.8; README "Mobility"): a name
//! registered on the actor's birth node, in the cluster registry or in the system's
//! own registry, keeps finding it wherever it went.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;
mod mobile_util;

use mobile_util::*;

#[test]
fn a_name_registered_on_the_birth_node_finds_the_actor_after_it_moves() {
    let nodes = cluster(&["h", "a", "b"], |b| b);
    let (h, a, b) = (&nodes[0], &nodes[1], &nodes[2]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    h.system.handle().register("local-tally", &tally).unwrap();
    // h → a → b, then back to a: the name stays on h, and each lookup resolves to
    // the actor through h's entry (its directory), wherever it runs.
    let mut sent = 0;
    for (i, next) in [a, b, a].into_iter().enumerate() {
        move_to(&tally, next);
        for (s, m) in nodes.iter().enumerate() {
            let found = lookup(m, "tally");
            let at = m.system.block_on(found.ask(Where)).unwrap();
            assert_eq!(at, next.node().id().name, "move {i}, looked up on {s}");
            send_numbered(&found, s as u32, sent..sent + 10);
        }
        // The system's registry on h holds a local ref: the stub the actor left,
        // which forwards.
        let local = h
            .system
            .handle()
            .lookup::<Tally>("local-tally")
            .expect("the local name is kept after the move");
        assert_eq!(
            h.system.block_on(local.ask(Where)).unwrap(),
            next.node().id().name
        );
        send_numbered(&local, 9, sent..sent + 10);
        sent += 10;
    }
    // Tells from other nodes may still be on their way when a's ask arrives.
    let from_a = lookup(a, "tally");
    let log = common::eventually(WAIT, || {
        let log = a.system.block_on(from_a.ask(Log)).ok()?;
        (log.len() as u64 == 4 * sent).then_some(log)
    })
    .unwrap_or_else(|| a.system.block_on(from_a.ask(Log)).unwrap());
    assert_each_once_in_order(&log, &[(0, sent), (1, sent), (2, sent), (9, sent)]);
}
