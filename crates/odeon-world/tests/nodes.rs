//! `--nodes K`: the actor world with its regions on two processes computes the same
//! world as shared memory, tick for tick (and so as the actor world on one process).

use std::path::Path;
use std::process::Command;

use odeon_world::actors::ActorWorld;
use odeon_world::shared::SharedWorld;

const EXE: &str = env!("CARGO_BIN_EXE_odeon-world");

#[test]
fn two_nodes_agree_with_shared_memory_tick_for_tick() {
    // 2,000 objects: 4 × 4 regions, two rows on each node, so that objects cross
    // between the nodes (both ways, the torus wraps) and chains of starts too.
    let objects = 2_000;
    let mut shared = SharedWorld::new(objects, 9);
    let mut actors =
        ActorWorld::on_nodes(objects, 9, 2, 2, Path::new(EXE)).expect("two nodes start");
    assert_eq!(actors.field().regions_per_side(), 4);
    let reports = actors
        .run(60, 0, |_| {})
        .expect("the world runs on two nodes");
    actors.shutdown();
    assert_eq!(reports.len(), 60);
    for r in &reports {
        assert_eq!(r.checksum, shared.step(), "checksum of tick {}", r.tick);
        assert_eq!(
            r.objects,
            shared.objects().len(),
            "population of tick {}",
            r.tick
        );
    }
}

#[test]
fn the_cli_with_two_nodes_ends_with_the_shared_checksum() {
    let line = |extra: &[&str]| {
        let out = Command::new(EXE)
            .args(["--objects", "1000", "--ticks", "30", "--seed", "4"])
            .args(extra)
            .output()
            .expect("odeon-world runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8");
        text.split_whitespace()
            .find_map(|w| w.strip_prefix("checksum="))
            .expect("a checksum")
            .to_string()
    };
    let nodes = line(&["--impl", "actors", "--nodes", "2"]);
    assert_eq!(nodes, line(&["--impl", "shared"]));
}
