//! The cluster the sharing tests (`sharing_remote*.rs`) set up: members that all
//! seed from the first, a counter registered on one of them, and refs to it looked
//! up from the others.

use std::time::Duration;

use odeon::{ActorRef, RemoteActor};

use super::{Counter, Member};

/// Generous: a loaded machine is slow, but a hang must fail, not block CI.
pub const GUARD: Duration = Duration::from_secs(30);

/// Members called `names` ([`Member::start`]), started in order; every member after
/// the first is seeded with the first's address.
pub fn members<const N: usize>(names: [&str; N]) -> [Member; N] {
    let mut all: Vec<Member> = Vec::with_capacity(N);
    for name in names {
        let seeds: Vec<_> = all.first().map(Member::addr).into_iter().collect();
        all.push(Member::start(name, &seeds));
    }
    let Ok(all) = <[Member; N]>::try_from(all) else {
        unreachable!("one member per name");
    };
    all
}

/// A fresh counter on `m`, registered there as `name`.
pub fn counter_on(m: &Member, name: &str) -> ActorRef<Counter> {
    let r = m.system.spawn(Counter {
        total: 0,
        seen: Vec::new(),
    });
    m.node().register(name, &r).unwrap();
    r
}

/// The actor registered as `name` on a member `m` links with, looked up from `m`.
pub fn lookup_from<A: RemoteActor>(m: &Member, name: &str) -> ActorRef<A> {
    m.system
        .block_on(m.node().lookup::<A>(name))
        .expect("the name is found")
}
