//! The actor world and the shared-memory world are the same world: identical
//! checksums tick for tick, for several seeds, with one and with two workers.

use odeon_world::actors::ActorWorld;
use odeon_world::shared::SharedWorld;

const OBJECTS: usize = 500;
const TICKS: u64 = 200;

fn shared(seed: u64) -> (Vec<u64>, Vec<usize>) {
    let mut w = SharedWorld::new(OBJECTS, seed);
    (0..TICKS).map(|_| (w.step(), w.objects().len())).unzip()
}

fn actors(seed: u64, workers: usize) -> (Vec<u64>, Vec<usize>) {
    let mut w = ActorWorld::new(OBJECTS, seed, workers).expect("the actor world starts");
    let reports = w.run(TICKS, 0, |_| {}).expect("the actor world runs");
    w.shutdown();
    reports.iter().map(|r| (r.checksum, r.objects)).unzip()
}

#[test]
fn actors_and_shared_memory_agree_tick_for_tick() {
    for seed in [1, 2, 3] {
        let (want, counts) = shared(seed);
        for workers in [1, 2] {
            let (got, got_counts) = actors(seed, workers);
            assert_eq!(
                got_counts, counts,
                "seed {seed}, {workers} workers: populations"
            );
            for (t, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    g,
                    w,
                    "seed {seed}, {workers} workers: checksum of tick {}",
                    t + 1
                );
            }
            assert_eq!(got.len(), want.len());
        }
    }
}

#[test]
fn the_world_lives_births_and_deaths_happen() {
    // A world where nothing is born or dies would make the comparison above weak.
    let mut w = SharedWorld::new(OBJECTS, 1);
    let first: Vec<u64> = w.objects().iter().map(|o| o.id).collect();
    let mut seen_birth = false;
    let mut seen_death = false;
    for _ in 0..TICKS {
        w.step();
        seen_birth |= w.objects().iter().any(|o| o.id >= OBJECTS as u64);
        let ids: std::collections::HashSet<u64> = w.objects().iter().map(|o| o.id).collect();
        seen_death |= first.iter().any(|id| !ids.contains(id));
    }
    assert!(seen_birth && seen_death);
    let n = w.objects().len();
    assert!(
        n > OBJECTS / 4 && n < OBJECTS * 4,
        "population {n} neither died out nor exploded"
    );
}

#[test]
fn seeds_make_different_worlds() {
    assert_ne!(shared(1).0, shared(2).0);
}

#[test]
fn a_world_of_sixteen_regions_agrees_too() {
    // 500 objects make a 2 × 2 grid of regions, where a region's left and right (and
    // upper and lower) neighbours are one region; 2,000 make 4 × 4, all eight distinct.
    let objects = 2_000;
    let mut shared = SharedWorld::new(objects, 11);
    let mut actors = ActorWorld::new(objects, 11, 2).expect("the actor world starts");
    assert_eq!(actors.field().regions_per_side(), 4);
    let reports = actors.run(60, 0, |_| {}).expect("the actor world runs");
    actors.shutdown();
    for r in &reports {
        assert_eq!(r.checksum, shared.step(), "checksum of tick {}", r.tick);
        assert_eq!(r.objects, shared.objects().len());
    }
}

#[test]
fn start_chains_longer_than_one_region_agree_on_one_worker() {
    // One worker runs two start chains (see `actors` module docs): on 4 × 4 regions each
    // chain starts eight regions one after another, and borders of a tick reach regions
    // of the other chain before their own `Start` of that tick.
    let objects = 2_000;
    let mut shared = SharedWorld::new(objects, 5);
    let mut actors = ActorWorld::new(objects, 5, 1).expect("the actor world starts");
    assert_eq!(actors.field().regions_per_side(), 4);
    let reports = actors.run(80, 0, |_| {}).expect("the actor world runs");
    actors.shutdown();
    assert_eq!(reports.len(), 80);
    for r in &reports {
        assert_eq!(r.checksum, shared.step(), "checksum of tick {}", r.tick);
        assert_eq!(r.objects, shared.objects().len());
    }
}

#[test]
fn the_dead_are_stopped_and_the_born_are_actors() {
    let mut w = ActorWorld::new(OBJECTS, 4, 2).expect("the actor world starts");
    let regions = u64::from(w.field().regions_per_side()).pow(2);
    let reports = w.run(120, 0, |_| {}).expect("the actor world runs");
    let last = reports.last().expect("120 reports").objects as u64;
    // One actor per object alive, per region, and the coordinator: no dead object's
    // actor is left running, and every newborn got one.
    assert_eq!(w.live_actors(), Some(last + regions + 1));
    w.shutdown();
}

#[test]
fn a_large_world_with_larger_regions_agrees_too() {
    // 32,768 objects make 128 × 128 cells: 8 × 8 regions of 16 × 16 cells.
    let objects = 32_768;
    let mut shared = SharedWorld::new(objects, 21);
    let mut actors = ActorWorld::new(objects, 21, 2).expect("the actor world starts");
    assert_eq!(actors.field().region_side, 16);
    let reports = actors.run(6, 0, |_| {}).expect("the actor world runs");
    actors.shutdown();
    for r in &reports {
        assert_eq!(r.checksum, shared.step(), "checksum of tick {}", r.tick);
    }
}
