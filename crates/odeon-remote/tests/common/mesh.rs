//! Members for the multi-node (mobility) tests: started with the tests' secret and
//! timings plus a tuning hook, each system's node name recorded (so that an actor that
//! moves can say where it runs), and meshes of nodes that all know each other.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use odeon::SystemHandle;
use odeon_remote::{Node, NodeBuilder};

use super::{Member, eventually, secret};

/// How long a mesh may take to link up.
const MESH_WAIT: Duration = Duration::from_secs(30);

/// Which node runs on which system (every member started here, and those named with
/// [`name_node`]).
static NODE_NAMES: Mutex<Vec<(SystemHandle, String)>> = Mutex::new(Vec::new());

/// Records that `system` runs the node called `name`, for [`node_name`].
pub fn name_node(system: &SystemHandle, name: &str) {
    NODE_NAMES
        .lock()
        .unwrap()
        .push((system.clone(), name.to_string()));
}

/// The name of the node `system` runs (empty if none was recorded).
pub fn node_name(system: &SystemHandle) -> String {
    NODE_NAMES
        .lock()
        .unwrap()
        .iter()
        .find(|(s, _)| s.same_system(system))
        .map(|(_, n)| n.clone())
        .unwrap_or_default()
}

/// A member with the tests' secret, `lost_after` 1.5 s (long enough that a loaded
/// machine's pauses are not taken for a dead peer) and gossip every 100 ms, seeded with
/// `seeds`, then `tune`d; its name is recorded for [`node_name`].
pub fn start_tuned(
    name: &str,
    seeds: &[SocketAddr],
    tune: impl FnOnce(NodeBuilder) -> NodeBuilder,
) -> Member {
    let system = odeon::System::new();
    let mut b = Node::builder(name)
        .secret(secret())
        .lost_after(Duration::from_millis(1_500))
        .gossip_interval(Duration::from_millis(100));
    for s in seeds {
        b = b.seed(*s);
    }
    let node = system
        .block_on(tune(b).start(&system.handle()))
        .expect("node starts");
    name_node(&system.handle(), name);
    Member {
        system,
        node: Some(node),
    }
}

/// Waits until each of `members` links to all the others.
pub fn await_mesh(members: &[Member]) {
    let want = members.len() - 1;
    for m in members {
        eventually(MESH_WAIT, || (m.node().peers().len() == want).then_some(()))
            .expect("every node links to every other");
    }
}

/// Members called `names` that all know each other (the first seeds the others); the
/// `i`-th is tuned by `tune(i, builder)`.
pub fn mesh(names: &[&str], tune: impl Fn(usize, NodeBuilder) -> NodeBuilder) -> Vec<Member> {
    let first = start_tuned(names[0], &[], |b| tune(0, b));
    let seed = first.addr();
    let mut all = vec![first];
    for (i, n) in names.iter().enumerate().skip(1) {
        all.push(start_tuned(n, &[seed], |b| tune(i, b)));
    }
    await_mesh(&all);
    all
}
