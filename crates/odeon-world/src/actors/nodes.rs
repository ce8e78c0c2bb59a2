//! `--nodes K`: the actor world's regions spread over K processes on loopback.
//!
//! Process 0 runs the coordinator and starts K - 1 children (the same binary, with
//! [`child_args`]), each of which runs [`serve`]: an odeon system and an odeon-remote
//! node that lets other nodes spawn regions on it. Process 0 then spawns every region
//! where it belongs (by rows: region `i` of `R` on node `i * K / R`) and wires them as
//! in one process; the messages between regions and the coordinator (`Wire`, `Start`,
//! `Done`, and `Emigrants` for objects moving to a region of another node) cross the
//! links, serialized. An object's actor always lives on its region's node: one that
//! moves to another node's region is spawned there anew from its state, and its old
//! actor stops, inside the tick's barrier (the region counts the `Emigrants` as that
//! neighbour's border). Nothing in the rules sees which node runs what, so the
//! checksums are those of one process.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use odeon::{ActorRef, System};
use odeon_remote::{Node, Secret};

use super::region::{Region, RegionArgs};
use crate::WorldError;
use crate::rules::Field;

/// The environment variable that hands the cluster secret to the children (not on
/// their command line, where `ps` shows it).
pub const SECRET_ENV: &str = "ODEON_WORLD_SECRET";

/// How long process 0 waits for every child to link.
const LINK_GUARD: Duration = Duration::from_secs(60);

/// What a child prints on its standard output once it is linked to every other node.
pub const READY: &str = "ready";

/// The arguments that make the `odeon-world` binary run node `index` of a world of
/// `nodes` nodes (see [`serve`]) joining `join`.
///
/// ```
/// use odeon_world::actors::nodes::child_args;
///
/// let args = child_args(1, 3, "127.0.0.1:4000".parse().unwrap(), 2);
/// assert_eq!(
///     args,
///     ["--node-child", "1", "--nodes", "3", "--join", "127.0.0.1:4000", "--workers", "2"]
/// );
/// ```
pub fn child_args(index: usize, nodes: usize, join: SocketAddr, workers: usize) -> Vec<String> {
    vec![
        "--node-child".into(),
        index.to_string(),
        "--nodes".into(),
        nodes.to_string(),
        "--join".into(),
        join.to_string(),
        "--workers".into(),
        workers.to_string(),
    ]
}

fn node_name(index: usize) -> String {
    format!("world-{index}")
}

fn secret(word: &str) -> Result<Secret, WorldError> {
    Secret::new(word.as_bytes().to_vec()).map_err(|e| WorldError::Nodes(e.to_string()))
}

/// Runs node `index` of a world spread over `nodes` processes: a system with `workers`
/// workers (0: one per core) and a node linked to `join` that lets process 0 spawn
/// regions here. Reads the cluster secret from [`SECRET_ENV`]; prints [`READY`] on
/// standard output once linked to all `nodes - 1` other nodes (regions of two children
/// talk directly). Returns when standard input closes (process 0 holds it open while
/// the world runs).
///
/// # Errors
/// [`WorldError::Nodes`] if the secret is missing, the node cannot start, or the
/// other nodes are not all linked within a minute.
pub fn serve(
    index: usize,
    nodes: usize,
    join: SocketAddr,
    workers: usize,
) -> Result<(), WorldError> {
    let word = std::env::var(SECRET_ENV)
        .map_err(|_| WorldError::Nodes(format!("{SECRET_ENV} is not set")))?;
    let system = super::tuned_system(workers);
    let builder = Node::builder(node_name(index))
        .secret(secret(&word)?)
        .listen(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        .seed(join)
        .spawnable::<Region>();
    let node = system
        .block_on(builder.start(&system.handle()))
        .map_err(|e| WorldError::Nodes(e.to_string()))?;
    wait_for_peers(&node, nodes.saturating_sub(1))?;
    let mut out = std::io::stdout();
    writeln!(out, "{READY}")
        .and_then(|()| out.flush())
        .map_err(|e| WorldError::Nodes(format!("cannot tell node 0: {e}")))?;
    // Parked until process 0 closes our standard input (or dies).
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    drop(node);
    system.shutdown();
    Ok(())
}

/// Waits until `node` has `peers` live peers (links up or being set up).
fn wait_for_peers(node: &Node, peers: usize) -> Result<(), WorldError> {
    let deadline = Instant::now() + LINK_GUARD;
    while node.peers().len() < peers {
        if Instant::now() > deadline {
            return Err(WorldError::Nodes(format!(
                "{} of {peers} other nodes linked in {LINK_GUARD:?}",
                node.peers().len()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Process 0's side: its node and its children.
pub(crate) struct Cluster {
    node: Node,
    children: Vec<Child>,
    nodes: usize,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("nodes", &self.nodes)
            .finish_non_exhaustive()
    }
}

impl Cluster {
    /// Starts node 0 in `system` and `nodes - 1` children running `exe`, and waits
    /// until every child has linked.
    pub(crate) fn start(
        system: &System,
        nodes: usize,
        exe: &Path,
        workers: usize,
    ) -> Result<Self, WorldError> {
        let word = fresh_secret();
        let builder = Node::builder(node_name(0))
            .secret(secret(&word)?)
            .listen(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)));
        let node = system
            .block_on(builder.start(&system.handle()))
            .map_err(|e| WorldError::Nodes(e.to_string()))?;
        let mut cluster = Cluster {
            node,
            children: Vec::new(),
            nodes,
        };
        for index in 1..nodes {
            let child = Command::new(exe)
                .args(child_args(
                    index,
                    nodes,
                    cluster.node.listen_addr(),
                    workers,
                ))
                .env(SECRET_ENV, &word)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .map_err(|e| WorldError::Nodes(format!("cannot run {}: {e}", exe.display())))?;
            cluster.children.push(child);
        }
        // Each child says when it is linked to every other node (it gives up, and
        // exits, after `LINK_GUARD`; then its output ends without the line).
        for (i, child) in cluster.children.iter_mut().enumerate() {
            let mut line = String::new();
            if let Some(out) = child.stdout.take() {
                let _ = BufReader::new(out).read_line(&mut line);
            }
            if line.trim() != READY {
                return Err(WorldError::Nodes(format!("node {} did not link", i + 1)));
            }
        }
        wait_for_peers(&cluster.node, nodes - 1)?;
        Ok(cluster)
    }

    /// Spawns region `i` of `count` on node `i * nodes / count` (whole rows stay
    /// together when the rows divide evenly), the ones of node 0 locally.
    pub(crate) fn spawn_regions(
        &self,
        system: &System,
        field: &Arc<Field>,
        objects: usize,
        seed: u64,
        count: usize,
    ) -> Result<Vec<ActorRef<Region>>, WorldError> {
        let n = field.regions_per_side() as usize;
        (0..count)
            .map(|i| {
                let at = ((i % n) as u16, (i / n) as u16);
                let owner = i * self.nodes / count;
                if owner == 0 {
                    return Ok(system.spawn(Region::new(field.clone(), at)));
                }
                let args = RegionArgs { objects, seed, at };
                system
                    .block_on(self.node.spawn_on::<Region>(&node_name(owner), args))
                    .map_err(|e| WorldError::Nodes(format!("region {at:?}: {e}")))
            })
            .collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for child in &mut self.children {
            // Closing its standard input ends `serve`; kill it too, in case it hangs.
            drop(child.stdin.take());
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A secret for one run: loopback only, so it need only be unguessable by other
/// local users for the run's duration; std's randomly keyed hasher is enough.
fn fresh_secret() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut word = String::from("odeon-world-");
    for i in 0..4u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(i);
        h.write_u32(std::process::id());
        word.push_str(&format!("{:016x}", h.finish()));
    }
    word
}
