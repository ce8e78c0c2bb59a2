//! A peer process that pauses (SIGSTOP) longer than `lost_after` while another holds
//! refs to its actors, then resumes (SIGCONT): the README's *Delivery semantics* say
//! the other node declares it lost (pending asks fail with `Unreachable`, watchers get
//! `NodeLost`), and when it comes back the pair starts afresh, so a new node finds it
//! and its actors again, with their state.

mod common;

use std::time::Duration;

use common::Proc;

#[test]
fn a_paused_process_is_declared_lost_and_serves_again_once_resumed() {
    let wait = Duration::from_secs(60);
    let server = Proc::start(&["serve", "--name", "server"]);
    let addr = server
        .expect("listening ", wait)
        .trim_start_matches("listening ")
        .to_string();
    server.expect("registered tally", wait);

    let mut probe = Proc::start(&["probe", "--name", "probe", "--seed", &addr]);
    probe.expect("found tally", wait);
    assert_eq!(probe.expect("total ", wait), "total 55");
    probe.expect("spawned tally", wait);
    probe.expect("watching", wait);

    // The server freezes with its sockets open: only silence tells.
    server.signal("STOP");
    let (mut failed, mut terminated) = (false, false);
    while !(failed && terminated) {
        let line = probe.next_line(wait);
        match line.as_str() {
            "ask failed: the actor's node is unreachable" => failed = true,
            "terminated: its node was lost" => terminated = true,
            // An ask made just before the pause may time out first.
            l if l.starts_with("ask error: no reply within") => {}
            other => panic!("unexpected line from the probe: {other:?}"),
        }
    }
    let status = probe.child.wait().expect("the probe exits");
    assert!(status.success(), "{status:?}");

    // Resumed, the server carries on: a new node finds its tally, whose total kept
    // the first probe's 55.
    server.signal("CONT");
    let again = Proc::start(&["probe", "--name", "probe-2", "--seed", &addr]);
    again.expect("found tally", wait);
    assert_eq!(again.expect("total ", wait), "total 110");
    assert_eq!(
        again.expect("spawned tally", wait),
        "spawned tally on server with total 100"
    );
}
