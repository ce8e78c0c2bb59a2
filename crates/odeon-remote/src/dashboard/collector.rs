//! The sampler behind the dashboard: once a second, membership, links and actor
//! counts become a [`Snapshot`], published as JSON to the HTTP side.
//!
//! Started only with the HTTP endpoint, so a node without it pays nothing. The
//! sampler holds the node weakly: it never keeps a dropped node alive.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::{broadcast, watch};

use super::{ActorsView, EVENTS, Event, EventKind, Health, MemberView, SAMPLES, Sample, Snapshot};
use crate::Metrics;
use crate::membership::{Member, MemberEvent};
use crate::node::NodeInner;
use crate::wire::NodeId;

/// Time between samples.
pub(crate) const INTERVAL: Duration = Duration::from_secs(1);
/// How long a lost or departed member stays listed.
const FORGET_AFTER: Duration = Duration::from_secs(300);

/// The latest snapshot, as JSON: what `/api/snapshot` answers and `/api/events` streams.
pub(crate) type Latest = watch::Receiver<Arc<str>>;

/// A running sampler; dropping it stops it (and ends every event stream).
#[derive(Debug)]
pub(crate) struct Collector {
    latest: Latest,
    task: tokio::task::JoinHandle<()>,
}

impl Collector {
    /// Starts sampling on `io`: `members` are the members known now, `events` the
    /// membership changes from then on.
    pub(crate) fn start(
        io: &tokio::runtime::Handle,
        node: Weak<NodeInner>,
        me: NodeId,
        metrics: Metrics,
        members: Vec<Member>,
        events: broadcast::Receiver<MemberEvent>,
    ) -> Self {
        let mut state = State::new(me, metrics, members);
        let first: Arc<str> = state.tick(&node).into();
        let (tx, latest) = watch::channel(first);
        let task = io.spawn(run(state, node, events, tx));
        Self { latest, task }
    }

    /// A receiver of the latest snapshot's JSON.
    pub(crate) fn latest(&self) -> Latest {
        self.latest.clone()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn run(
    mut state: State,
    node: Weak<NodeInner>,
    mut events: broadcast::Receiver<MemberEvent>,
    tx: watch::Sender<Arc<str>>,
) {
    let mut ticks = tokio::time::interval(INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(e) => state.member_event(e),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::debug!(missed = n, "dashboard: membership events lagged");
                }
                Err(broadcast::error::RecvError::Closed) => {}
            },
            _ = ticks.tick() => {
                if node.strong_count() == 0 {
                    return;
                }
                let json = state.tick(&node);
                if tx.send(json.into()).is_err() {
                    return;
                }
            }
        }
    }
}

/// What gossip last said about a member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gossip {
    Up,
    Down,
    Left,
}

#[derive(Debug)]
struct Known {
    addr: String,
    gossip: Gossip,
    health: Option<Health>,
    /// When it was last seen alive (to forget lost members after a while).
    seen: Instant,
}

#[derive(Debug)]
struct State {
    me: NodeId,
    metrics: Metrics,
    members: BTreeMap<NodeId, Known>,
    samples: std::collections::VecDeque<Sample>,
    events: std::collections::VecDeque<Event>,
    /// Per (actor type, name): messages handled at the previous sample.
    #[cfg_attr(not(feature = "observe"), allow(dead_code))]
    handled: HashMap<(String, Option<String>), u64>,
    /// Per actor type: restarts at the previous sample.
    #[cfg_attr(not(feature = "observe"), allow(dead_code))]
    restarts: HashMap<String, u64>,
    last_total: Option<(u64, Instant)>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl State {
    fn new(me: NodeId, metrics: Metrics, members: Vec<Member>) -> Self {
        let mut s = Self {
            me,
            metrics,
            members: BTreeMap::new(),
            samples: Default::default(),
            events: Default::default(),
            handled: HashMap::new(),
            restarts: HashMap::new(),
            last_total: None,
        };
        for m in members {
            s.member_event(MemberEvent::Up(m));
        }
        s
    }

    fn member_event(&mut self, event: MemberEvent) {
        let (id, gossip, addr) = match event {
            MemberEvent::Up(m) => (m.node, Gossip::Up, Some(m.link_addr.to_string())),
            MemberEvent::Down(id) => (id, Gossip::Down, None),
            MemberEvent::Left(id) => (id, Gossip::Left, None),
        };
        let known = self.members.entry(id).or_insert_with(|| Known {
            addr: String::new(),
            gossip,
            health: None,
            seen: Instant::now(),
        });
        known.gossip = gossip;
        if let Some(addr) = addr {
            known.addr = addr;
        }
    }

    fn push_event(&mut self, kind: EventKind, subject: String, detail: String) {
        if self.events.len() == EVENTS {
            self.events.pop_front();
        }
        self.events.push_back(Event {
            at_ms: now_ms(),
            kind,
            subject,
            detail,
        });
    }

    /// Takes one sample and returns the whole snapshot as JSON.
    fn tick(&mut self, node: &Weak<NodeInner>) -> String {
        let node = node.upgrade();
        let mut views = vec![MemberView {
            node: self.me.to_string(),
            name: self.me.name.clone(),
            addr: node
                .as_ref()
                .map_or_else(String::new, |n| n.listen.to_string()),
            health: Health::Alive,
            me: true,
        }];
        let mut changes = Vec::new();
        let now = Instant::now();
        self.members.retain(|_, k| {
            k.health
                .is_none_or(|h| h == Health::Alive || h == Health::Suspected)
                || now.duration_since(k.seen) < FORGET_AFTER
        });
        for (id, known) in &mut self.members {
            let link = node.as_ref().and_then(|n| n.known_peer(id));
            let link_lost = link.as_ref().map(|p| p.is_lost());
            let health = match (known.gossip, link_lost) {
                (Gossip::Left, _) => Health::Left,
                (Gossip::Up, Some(true)) => Health::Lost,
                (Gossip::Up, _) => Health::Alive,
                (Gossip::Down, Some(false)) => Health::Suspected,
                (Gossip::Down, _) => Health::Lost,
            };
            if health == Health::Alive {
                known.seen = now;
            }
            if known.health != Some(health) {
                let kind = match health {
                    Health::Alive => EventKind::NodeUp,
                    Health::Suspected => EventKind::NodeSuspected,
                    Health::Lost => EventKind::NodeLost,
                    Health::Left => EventKind::NodeLeft,
                };
                changes.push((kind, id.to_string()));
                known.health = Some(health);
            }
            views.push(MemberView {
                node: id.to_string(),
                name: id.name.clone(),
                addr: known.addr.clone(),
                health,
                me: false,
            });
        }
        for (kind, subject) in changes {
            let detail = match kind {
                EventKind::NodeUp => "gossip hears from it",
                EventKind::NodeSuspected => "gossip stopped hearing from it; its link is up",
                EventKind::NodeLost => "lost",
                EventKind::NodeLeft => "left the cluster",
                EventKind::Restart => "",
            };
            self.push_event(kind, subject, detail.to_owned());
        }
        let members_alive = views.iter().filter(|v| v.health == Health::Alive).count();
        let actors = self.actors(node.as_deref());
        let total = actors.as_ref().map_or(0, |a| a.handled);
        let rate = match self.last_total {
            Some((before, at)) => {
                let secs = now.duration_since(at).as_secs_f64();
                if secs > 0.0 {
                    total.saturating_sub(before) as f64 / secs
                } else {
                    0.0
                }
            }
            None => 0.0,
        };
        self.last_total = Some((total, now));
        if self.samples.len() == SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back(Sample {
            at_ms: now_ms(),
            rate,
            handled: total,
            alive: actors.as_ref().map_or(0, |a| a.alive),
            members_alive,
        });
        let snapshot = Snapshot {
            node: self.me.to_string(),
            name: self.me.name.clone(),
            at_ms: now_ms(),
            interval_ms: INTERVAL.as_millis() as u64,
            members: views,
            actors,
            samples: self.samples.iter().cloned().collect(),
            events: self.events.iter().cloned().collect(),
            counters: self.counters(),
        };
        serde_json::to_string(&snapshot).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "dashboard: snapshot not serialisable");
            "{}".to_owned()
        })
    }

    fn counters(&self) -> BTreeMap<String, u64> {
        let (l, g, m) = (
            self.metrics.links(),
            self.metrics.gossip(),
            self.metrics.migrations(),
        );
        [
            ("handshakes_accepted", l.accepted()),
            ("handshakes_refused", l.refused()),
            ("handshakes_shed", l.shed()),
            ("accept_errors", l.accept_errors()),
            ("gossip_accepted", g.accepted()),
            ("gossip_rejected", g.rejected()),
            ("gossip_malformed", g.malformed()),
            ("gossip_oversized", g.oversized()),
            ("migrations_moved", m.moved()),
            ("migrations_refused", m.refused()),
            ("migrations_failed", m.failed()),
            ("forwarded_frames", m.forwarded_frames()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    #[cfg(not(feature = "observe"))]
    fn actors(&mut self, _node: Option<&NodeInner>) -> Option<ActorsView> {
        None
    }

    #[cfg(feature = "observe")]
    fn actors(&mut self, node: Option<&NodeInner>) -> Option<ActorsView> {
        use super::{ActorLoad, BUSIEST, DEEPEST, MailboxView, TREE_NODES};
        use odeon::observe;
        // The node's own system: several nodes of one process each show theirs. One
        // that does not observe counts nothing, and an empty table would read as "no
        // actors" rather than "not measured" (`Snapshot::actors`).
        let system = &node?.system;
        if !observe::observing(system) {
            return None;
        }
        let mut view = ActorsView {
            deepest_mailboxes: observe::deepest_mailboxes(system, DEEPEST)
                .into_iter()
                .map(|m| MailboxView {
                    actor: m.actor.to_owned(),
                    name: m.name,
                    id: m.id.as_u64(),
                    depth: m.depth,
                })
                .collect(),
            supervision: Some(tree_view(observe::supervision_tree(system, TREE_NODES))),
            ..ActorsView::default()
        };
        let mut loads = Vec::new();
        let mut restarts = Vec::new();
        for t in observe::system_tallies(system) {
            view.alive += t.alive;
            view.restarts += t.restarts;
            let before = self.restarts.insert(t.actor.to_owned(), t.restarts);
            if t.restarts > before.unwrap_or(0) {
                restarts.push((t.actor, t.restarts - before.unwrap_or(0)));
            }
            let entries = std::iter::once((None, t.unnamed_handled))
                .chain(t.named_handled.into_iter().map(|(n, c)| (Some(n), c)));
            for (name, handled) in entries {
                if name.is_none() && handled == 0 {
                    continue;
                }
                view.handled += handled;
                let key = (t.actor.to_owned(), name);
                let before = self.handled.insert(key.clone(), handled).unwrap_or(0);
                loads.push(ActorLoad {
                    actor: key.0,
                    name: key.1,
                    recent: handled.saturating_sub(before),
                    handled,
                });
            }
        }
        for (actor, n) in restarts {
            let s = if n == 1 { "" } else { "s" };
            self.push_event(
                EventKind::Restart,
                actor.to_owned(),
                format!("{n} restart{s}"),
            );
        }
        loads.sort_by(|a, b| {
            (b.recent, b.handled, &a.actor, &a.name).cmp(&(a.recent, a.handled, &b.actor, &b.name))
        });
        loads.truncate(BUSIEST);
        view.busiest = loads;
        Some(view)
    }
}

#[cfg(feature = "observe")]
fn tree_view(tree: odeon::observe::SupervisionTree) -> super::SupervisionView {
    use super::{ActorState, SupervisionNode};
    use odeon::observe::{ActorStatus, TreeNode};
    fn node(n: TreeNode) -> SupervisionNode {
        SupervisionNode {
            id: n.id.as_u64(),
            actor: n.actor.to_owned(),
            name: n.name,
            status: match n.status {
                ActorStatus::Restarting => ActorState::Restarting,
                ActorStatus::Stopping => ActorState::Stopping,
                _ => ActorState::Running,
            },
            restarts: n.restarts,
            children: n.children.into_iter().map(node).collect(),
            collapsed: n.collapsed,
        }
    }
    super::SupervisionView {
        roots: tree.roots.into_iter().map(node).collect(),
        collapsed: tree.collapsed,
        actors: tree.actors,
        bound: super::TREE_NODES,
    }
}
