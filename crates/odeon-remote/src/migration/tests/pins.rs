//! Issue 14: the birth node pins a sender at first contact (step 7); the pin must go
//! when that sender's entry is forgotten (step 10), whether its route still led to the
//! birth node or had switched away from it. Real nodes in one process; the pins are
//! read from the entries.

use super::fixture::{Ping, Spot, entries, eventually, find, linked};
use crate::wire::NodeId;
use crate::{MigrateExt, Node};

/// The pins `n`'s entries hold for node `of`.
fn pins_for(n: &Node, of: &NodeId) -> u32 {
    entries(n)
        .iter()
        .map(|m| m.state.lock().entry.holders.get(of).copied().unwrap_or(0))
        .sum()
}

/// h (birth node), a, x; x asks the actor (first contact at h), then, if `moved`, the
/// actor moves to a and x's next ask follows it; then x drops its ref.
fn sender_forgotten(prefix: &str, moved: bool) {
    let names = ["h", "a", "x"].map(|n| format!("{prefix}-{n}"));
    let (systems, [h, a, x]) = linked(names.each_ref().map(String::as_str), |b| b.mobile::<Spot>());
    let actor = systems[0].spawn(Spot);
    h.register("pinned", &actor).unwrap();
    let from_x = find::<Spot>(&systems[2], &x, "pinned");
    assert_eq!(systems[2].block_on(from_x.ask(Ping)), Ok(7));
    assert_eq!(pins_for(&h, x.id()), 1, "h pinned x at first contact");
    if moved {
        let m = systems[0].block_on(actor.migrate_to(a.id()));
        assert!(m.is_ok(), "{m:?}");
        assert_eq!(systems[2].block_on(from_x.ask(Ping)), Ok(7));
    }
    drop(from_x);
    eventually(|| (x.mobile_counts() == (0, 0)).then_some(())).expect("x forgets the actor");
    eventually(|| (pins_for(&h, x.id()) == 0 && pins_for(&a, x.id()) == 0).then_some(()))
        .unwrap_or_else(|| {
            panic!(
                "x's pins are released: h holds {}, a holds {}",
                pins_for(&h, x.id()),
                pins_for(&a, x.id())
            )
        });
    drop(actor);
}

#[test]
fn a_first_contact_pin_goes_when_the_sender_forgets_the_actor_at_home() {
    sender_forgotten("pin1", false);
}

#[test]
fn a_first_contact_pin_goes_when_the_sender_forgets_the_actor_after_it_moved() {
    sender_forgotten("pin2", true);
}
