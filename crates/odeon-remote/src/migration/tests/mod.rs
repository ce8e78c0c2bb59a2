//! The model's scenarios, driven frame by frame through the real state machines
//! (`sim.rs` is the cluster), and random schedules (`props.rs`).

mod drain;
pub(crate) mod fixture;
mod pins;
mod props;
mod sim;

use sim::{Sim, Step, id};

use crate::migration::entry::{MobileEntry, MoveFailed, Out, Place, Route};
use crate::wire::{QueuedMessage, Traffic, WireMigrateRefusal, WireRef};

/// Delivers everything on `from -> to`, one frame at a time.
fn drain(sim: &mut Sim, from: usize, to: usize) {
    while !sim.frames(from, to).is_empty() {
        sim.step(Step::Deliver(from, to));
    }
}

fn route_of(sim: &Sim, n: usize) -> Route {
    match &sim.nodes[n].entry.place {
        Place::Away { route } => route.clone(),
        other => panic!("node {n} is not away: {other:?}"),
    }
}

#[test]
fn a_move_with_no_other_senders_commits_and_the_target_runs_the_mailbox_in_order() {
    let mut sim = Sim::new(2, vec![(0, vec![false, true, false])]);
    for _ in 0..3 {
        sim.step(Step::Send(0));
    }
    sim.step(Step::Handle(0));
    sim.step(Step::Migrate(0, 1));
    assert!(matches!(sim.nodes[0].entry.place, Place::Frozen(_)));
    // Node 1's route leads straight to the source: Ready at once, no drain.
    sim.step(Step::Deliver(0, 1));
    assert!(matches!(
        sim.frames(1, 0)[..],
        [Traffic::MigrateReady { migration: 1 }]
    ));
    sim.step(Step::Deliver(1, 0));
    assert_eq!(route_of(&sim, 0), Route::Direct(id(1)));
    assert_eq!(
        sim.count(0, |o| matches!(o, Out::Moved { epoch: 1, .. })),
        1
    );
    sim.step(Step::Deliver(0, 1));
    assert!(sim.nodes[1].entry.is_host());
    assert_eq!(sim.nodes[1].mailbox.len(), 2, "the snapshot travelled");
    sim.settle();
    sim.finish();
    sim.check_clean_end();
    // The birth node keeps its entry (and the new host's pin) while the actor lives.
    assert!(sim.nodes[0].entry.exported);
    assert_eq!(sim.nodes[1].entry.epoch, 1);
}

#[test]
fn a_sender_on_a_third_node_is_hinted_flushes_switches_and_keeps_its_order() {
    let mut sim = Sim::new(3, vec![(2, vec![false, true, false, false, true, false])]);
    sim.step(Step::Migrate(0, 1));
    sim.settle();
    assert!(sim.nodes[1].entry.is_host());
    // m0 goes to the birth node, which forwards it and hints node 2.
    sim.step(Step::Send(0));
    assert!(matches!(
        sim.frames(2, 0)[..],
        [Traffic::MTell { seq: 1, .. }]
    ));
    sim.step(Step::Deliver(2, 0));
    assert!(matches!(sim.frames(0, 2)[..], [Traffic::Hint { .. }]));
    assert!(matches!(sim.frames(0, 1)[..], [Traffic::Relay { .. }]));
    // m1 still goes the old way; then the hint starts the switch.
    sim.step(Step::Send(0));
    sim.step(Step::Deliver(0, 2));
    assert!(matches!(route_of(&sim, 2), Route::Switching { .. }));
    assert!(matches!(
        sim.frames(2, 0)[..],
        [
            Traffic::MAsk { seq: 2, .. },
            Traffic::Flush { via: None, .. }
        ]
    ));
    // Sent while switching: buffered, not on any link.
    sim.step(Step::Send(0));
    assert_eq!(sim.frames(2, 0).len(), 2);
    assert!(sim.frames(2, 1).is_empty());
    drain(&mut sim, 2, 0);
    drain(&mut sim, 0, 1);
    // The owner acknowledges the flush that came last on the old path.
    assert!(matches!(
        sim.frames(1, 2)[..],
        [
            Traffic::AskAt { .. },
            Traffic::FlushAck {
                frozen_for: None,
                ..
            }
        ]
    ));
    drain(&mut sim, 1, 2);
    assert_eq!(route_of(&sim, 2), Route::Direct(id(1)));
    // The buffer goes straight to the host now; the old node is unpinned.
    assert!(matches!(
        sim.frames(2, 1)[..],
        [Traffic::MTell { seq: 3, .. }]
    ));
    assert!(matches!(sim.frames(2, 0)[..], [Traffic::Unpin { .. }]));
    sim.step(Step::Send(0));
    sim.settle();
    sim.step(Step::Send(0));
    sim.step(Step::Send(0));
    sim.settle();
    sim.finish();
    sim.check_clean_end();
}

#[test]
fn a_target_whose_route_leads_elsewhere_drains_it_before_ready() {
    let mut sim = Sim::new(3, vec![(2, vec![false, false, true]), (1, vec![false])]);
    sim.step(Step::Migrate(0, 1));
    sim.settle();
    // Node 2 sends through the birth node; the hint to it is not read yet.
    sim.step(Step::Send(0));
    sim.step(Step::Deliver(2, 0));
    sim.step(Step::Migrate(1, 2));
    sim.step(Step::Deliver(1, 2));
    assert!(matches!(sim.nodes[2].entry.place, Place::Prepared(_)));
    // Its route is Direct(0), not the source: a flush, and no Ready yet.
    assert!(sim.frames(2, 1).is_empty(), "no Ready before the drain");
    assert!(matches!(
        sim.frames(2, 0)[..],
        [Traffic::Flush { via: None, .. }]
    ));
    // Its own sender's message while prepared is held, not forwarded.
    sim.step(Step::Send(0));
    assert_eq!(sim.frames(2, 0).len(), 1);
    // The flush follows m0 through node 0 to the frozen source, which acknowledges it
    // as frozen for this move: then Ready.
    drain(&mut sim, 2, 0);
    drain(&mut sim, 0, 1);
    assert!(matches!(
        sim.frames(1, 2).last(),
        Some(Traffic::FlushAck {
            frozen_for: Some(2),
            ..
        })
    ));
    drain(&mut sim, 1, 2);
    assert!(matches!(
        sim.frames(2, 1)[..],
        [Traffic::MigrateReady { migration: 2 }]
    ));
    sim.step(Step::Send(1));
    sim.settle();
    sim.step(Step::Send(0));
    sim.settle();
    assert!(sim.nodes[2].entry.is_host());
    sim.finish();
    sim.check_clean_end();
}

#[test]
fn a_refused_move_resumes_the_source_with_snapshot_then_held_in_order() {
    let mut sim = Sim::new(
        3,
        vec![(0, vec![false, true, false]), (2, vec![true, false])],
    );
    sim.refusers = vec![1];
    sim.step(Step::Send(0));
    sim.step(Step::Send(0));
    sim.step(Step::Migrate(0, 1));
    // While frozen: a local send and a remote one are held, after the snapshot.
    sim.step(Step::Send(0));
    sim.step(Step::Send(1));
    sim.step(Step::Deliver(2, 0));
    sim.step(Step::Deliver(0, 1));
    sim.step(Step::Deliver(1, 0));
    let why = MoveFailed::Refused(WireMigrateRefusal::UnknownType {
        actor_type: "test.Actor".into(),
    });
    assert!(sim.resumed_with(0, &why));
    assert!(sim.nodes[0].entry.is_host());
    let order: Vec<(u8, u8)> = sim.nodes[0]
        .mailbox
        .iter()
        .map(|m| (m.payload[0], m.payload[1]))
        .collect();
    assert_eq!(order, [(0, 0), (0, 1), (0, 2), (1, 0)]);
    sim.step(Step::Send(1));
    sim.settle();
    sim.finish();
    sim.check_clean_end();
    assert_eq!(sim.outcomes(), (0, 1, 0, 0));
}

#[test]
fn losing_the_target_before_ready_resumes_the_source_with_nothing_lost() {
    let mut sim = Sim::new(
        3,
        vec![(0, vec![true, false]), (2, vec![false, true, false])],
    );
    sim.step(Step::Send(0));
    sim.step(Step::Send(1));
    sim.step(Step::Deliver(2, 0));
    sim.step(Step::Migrate(0, 1));
    sim.step(Step::Send(1));
    sim.step(Step::Deliver(2, 0));
    sim.crash(1);
    sim.detect(0, 1);
    sim.detect(2, 1);
    assert!(sim.resumed_with(0, &MoveFailed::TargetLost));
    assert!(sim.nodes[0].entry.is_host());
    sim.step(Step::Send(0));
    sim.step(Step::Send(1));
    sim.settle();
    for ((c, i), n) in &sim.handled {
        assert_eq!(*n, 1, "({c}, {i}) handled once");
    }
    assert_eq!(sim.handled.len(), 5, "all five messages handled");
    assert!(!sim.fifo_broken);
    assert_eq!(sim.replies.len(), 2, "both asks answered");
}

#[test]
fn a_timeout_aborts_the_move_and_the_prepared_target_discards_its_copy() {
    let mut sim = Sim::new(3, vec![(2, vec![false, true])]);
    sim.step(Step::Send(0));
    sim.settle();
    sim.step(Step::Migrate(0, 1));
    sim.step(Step::Deliver(0, 1));
    sim.step(Step::Timeout(0));
    assert!(sim.resumed_with(0, &MoveFailed::Timeout));
    // The target's Ready arrives after the abort: ignored; the abort discards.
    sim.step(Step::Send(0));
    sim.settle();
    assert_eq!(sim.outcomes(), (0, 1, 0, 1));
    sim.finish();
    sim.check_clean_end();
}

#[test]
fn a_straggler_from_a_crashed_forwarder_is_dropped_after_relocation() {
    let mut sim = Sim::new(3, vec![(2, vec![false, true, false])]);
    sim.step(Step::Migrate(0, 1));
    sim.settle();
    // m0 goes through the birth node, which forwards it to the host...
    sim.step(Step::Send(0));
    sim.step(Step::Deliver(2, 0));
    assert!(matches!(sim.frames(0, 1)[..], [Traffic::Relay { .. }]));
    // ...and crashes with m0 still on its link to the host.
    sim.crash(0);
    sim.detect(2, 0);
    assert!(matches!(route_of(&sim, 2), Route::Relocating { .. }));
    sim.step(Step::Send(0));
    drain(&mut sim, 2, 1);
    drain(&mut sim, 1, 2);
    assert_eq!(route_of(&sim, 2), Route::Direct(id(1)));
    drain(&mut sim, 2, 1);
    assert_eq!(sim.handled.len(), 0);
    sim.step(Step::Handle(1));
    // Now the crashed node's old frame arrives: older than m1, so dropped.
    sim.step(Step::Deliver(0, 1));
    assert_eq!(
        sim.count(1, |o| matches!(o, Out::Straggler { seq: 1, .. })),
        1
    );
    sim.detect(1, 0);
    sim.step(Step::Send(0));
    sim.settle();
    assert_eq!(
        sim.handled.keys().copied().collect::<Vec<_>>(),
        [(0, 1), (0, 2)]
    );
    assert!(!sim.fifo_broken);
}

#[test]
fn a_forwarder_drops_its_entry_exactly_when_its_last_pin_is_released() {
    // Node 2 switches to node 1 as host; the actor then leaves node 1 for node 0, so
    // node 1 forwards for nodes 0 and 2 until both have switched.
    let mut sim = Sim::new(3, vec![(2, vec![false; 4])]);
    sim.step(Step::Migrate(0, 1));
    sim.settle();
    sim.step(Step::Send(0));
    sim.settle();
    assert_eq!(route_of(&sim, 2), Route::Direct(id(1)));
    sim.step(Step::Migrate(1, 0));
    sim.step(Step::Send(0));
    let mut collected = 0;
    while let Some(&s) = sim
        .enabled(false, false)
        .iter()
        .find(|s| !matches!(s, Step::Send(_)))
    {
        let unpin = match s {
            Step::Deliver(f, 1) => matches!(sim.frames(f, 1)[0], Traffic::Unpin { .. }),
            _ => false,
        };
        let (pins, seen) = (sim.nodes[1].entry.pins(), sim.nodes[1].outs.len());
        sim.step(s);
        if sim.nodes[1].outs[seen..]
            .iter()
            .any(|o| matches!(o, Out::Collected))
        {
            collected += 1;
            assert!(unpin, "collected on an Unpin, not at {s:?}");
            assert_eq!(pins, 1, "exactly when the last pin goes");
        }
    }
    assert_eq!(collected, 1);
    sim.step(Step::Send(0));
    sim.step(Step::Send(0));
    sim.settle();
    sim.finish();
    sim.check_clean_end();
}

#[test]
fn a_chain_of_moves_a_b_c_a_keeps_every_message_once_and_in_order() {
    let script = vec![false, true, false, false, true, false];
    let mut sim = Sim::new(
        3,
        vec![(0, script.clone()), (1, script.clone()), (2, script)],
    );
    let send_round = |sim: &mut Sim| {
        for c in 0..3 {
            sim.step(Step::Send(c));
        }
    };
    send_round(&mut sim);
    for (from, to) in [(0, 1), (1, 2), (2, 0)] {
        sim.step(Step::Migrate(from, to));
        send_round(&mut sim);
        sim.settle();
        assert!(sim.nodes[to].entry.is_host(), "the actor is on {to}");
    }
    send_round(&mut sim);
    sim.settle();
    assert_eq!(sim.outcomes(), (3, 0, 3, 0));
    assert_eq!(sim.nodes[0].entry.epoch, 3);
    sim.finish();
    sim.check_clean_end();
}

#[test]
fn a_host_drops_a_numbered_message_not_newer_than_its_mark_and_fails_the_ask() {
    let actor = WireRef {
        node: id(0),
        id: 1,
        token: 5,
        actor_type: "t".into(),
    };
    let mut host = MobileEntry::born(actor, [id(1)]);
    let tell = |seq| Traffic::MTell {
        to: 5,
        seq,
        message: "m".into(),
        payload: vec![],
    };
    assert!(matches!(
        host.receive(&id(1), tell(2))[..],
        [Out::Deliver(_)]
    ));
    let outs = host.receive(
        &id(1),
        Traffic::MAsk {
            to: 5,
            seq: 2,
            request: 9,
            message: "m".into(),
            payload: vec![],
        },
    );
    assert!(matches!(
        &outs[..],
        [Out::Straggler { seq: 2, .. }, Out::Send { to, frame: Traffic::Reply { request: 9, .. } }]
            if *to == id(1)
    ));
    assert!(matches!(
        host.receive(&id(1), tell(3))[..],
        [Out::Deliver(_)]
    ));
}

#[test]
fn a_send_on_a_node_whose_route_is_dead_is_refused_with_the_message_back() {
    let actor = WireRef {
        node: id(0),
        id: 1,
        token: 5,
        actor_type: "t".into(),
    };
    let mut away = MobileEntry::away(id(1), actor, [id(0)]);
    let outs = away.node_lost(&id(0));
    assert!(outs.iter().any(|o| matches!(o, Out::ActorLost)), "{outs:?}");
    let err = away.send("m".into(), vec![1], None).unwrap_err();
    assert_eq!((err.message.as_str(), &err.payload[..]), ("m", &[1][..]));
}

#[test]
fn a_direct_ask_to_the_host_draws_no_ask_at_and_a_relayed_one_is_confirmed() {
    let actor = WireRef {
        node: id(0),
        id: 1,
        token: 5,
        actor_type: "t".into(),
    };
    let mut host = MobileEntry::born(actor, [id(1), id(2)]);
    let ask = |seq, request| Traffic::MAsk {
        to: 5,
        seq,
        request,
        message: "m".into(),
        payload: vec![],
    };
    // Nothing moved: the asker's binding already names the host alone, so the host
    // sends nothing back but the message into the mailbox.
    for seq in 1..=3 {
        let outs = host.receive(&id(1), ask(seq, seq));
        assert!(matches!(&outs[..], [Out::Deliver(_)]), "{outs:?}");
    }
    // An ask relayed by a forwarder (two hops): its origin learns it arrived.
    let relayed = QueuedMessage {
        message: "m".into(),
        payload: vec![],
        origin: id(2),
        seq: 1,
        reply: Some((id(2), 7)),
        hops: 2,
    };
    let outs = host.receive(
        &id(1),
        Traffic::Relay {
            to: 5,
            msg: relayed,
        },
    );
    let frames: Vec<_> = outs
        .iter()
        .filter_map(|o| match o {
            Out::Send { to, frame } => Some((to.clone(), frame.clone())),
            _ => None,
        })
        .collect();
    assert!(
        matches!(
            &frames[..],
            [(to, Traffic::AskAt { request: 7, hops: 2, confirmed: true, at })]
                if *to == id(2) && *at == id(0)
        ),
        "{frames:?}"
    );
}

#[test]
fn hop_counters_wrap_instead_of_overflowing() {
    let actor = WireRef {
        node: id(0),
        id: 1,
        token: 5,
        actor_type: "t".into(),
    };
    let mut fwd = MobileEntry::away(id(1), actor, [id(0), id(2)]);
    fwd.exported = true;
    let msg = QueuedMessage {
        message: "m".into(),
        payload: vec![],
        origin: id(2),
        seq: 1,
        reply: Some((id(2), 7)),
        hops: 255,
    };
    let outs = fwd.receive(&id(2), Traffic::Relay { to: 5, msg });
    let relayed = outs.iter().find_map(|o| match o {
        Out::Send {
            frame: Traffic::Relay { msg, .. },
            ..
        } => Some(msg.hops),
        _ => None,
    });
    assert_eq!(relayed, Some(0));
    let reported = outs.iter().find_map(|o| match o {
        Out::Send {
            frame:
                Traffic::AskAt {
                    hops,
                    confirmed: false,
                    ..
                },
            ..
        } => Some(*hops),
        _ => None,
    });
    assert_eq!(reported, Some(0));
}
