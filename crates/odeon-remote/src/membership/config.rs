//! [`MembershipConfig`]: what a node needs to take part in membership.

use std::net::SocketAddr;
use std::time::Duration;

#[cfg(doc)]
use super::Membership;
use super::MembershipError;
use crate::defaults;
use crate::transport::Secret;
use crate::wire::NodeId;

/// How a node takes part in membership. [`MembershipConfig::new`] fills in the
/// defaults of `crate::defaults`.
#[derive(Clone, Debug)]
pub struct MembershipConfig {
    /// This node's identity.
    pub node: NodeId,
    /// The UDP address to bind the gossip socket to. Port 0 picks a free port
    /// ([`Membership::gossip_addr`] tells which). Unless [`Self::gossip_advertise`] is
    /// set, it is also the address peers gossip to, and then its IP must not be
    /// unspecified (`0.0.0.0`, `::`).
    pub gossip_addr: SocketAddr,
    /// The UDP address peers gossip to, when it is not [`Self::gossip_addr`]: needed
    /// when that is unspecified (bound to every interface), or behind a NAT or a port
    /// mapping. Its IP must not be unspecified; a port of 0 stands for the bound port.
    /// Default `None`.
    pub gossip_advertise: Option<SocketAddr>,
    /// This node's TCP listen address, published to the others.
    pub link_addr: SocketAddr,
    /// Gossip addresses of seed nodes to join through (this node's own is ignored).
    pub seeds: Vec<SocketAddr>,
    /// The cluster secret that authenticates every gossip datagram.
    pub secret: Secret,
    /// Nodes gossip only within the same cluster id. 1 to 255 bytes.
    pub cluster_id: String,
    /// Time between gossip rounds (default [`defaults::GOSSIP_INTERVAL`]).
    pub gossip_interval: Duration,
    /// Failure threshold, in multiples of a peer's mean heartbeat interval
    /// (default [`defaults::PHI_THRESHOLD`]).
    pub phi_threshold: f64,
    /// How long a down node's state is kept before it is forgotten
    /// (default [`defaults::DEAD_NODE_GRACE_PERIOD`]).
    pub dead_node_grace_period: Duration,
    /// How long a deleted key's tombstone is kept (default
    /// [`defaults::TOMBSTONE_GRACE_PERIOD`]).
    pub tombstone_grace_period: Duration,
    /// How long [`Membership::leave`] gossips the leaving mark before it stops
    /// (default [`defaults::LEAVE_GRACE`]); a few gossip rounds at least.
    pub leave_grace: Duration,
}

impl MembershipConfig {
    /// A configuration with the defaults, no seeds and the cluster id `"odeon"`.
    pub fn new(
        node: NodeId,
        gossip_addr: SocketAddr,
        link_addr: SocketAddr,
        secret: Secret,
    ) -> Self {
        Self {
            node,
            gossip_addr,
            gossip_advertise: None,
            link_addr,
            seeds: Vec::new(),
            secret,
            cluster_id: "odeon".to_owned(),
            gossip_interval: defaults::GOSSIP_INTERVAL,
            phi_threshold: defaults::PHI_THRESHOLD,
            dead_node_grace_period: defaults::DEAD_NODE_GRACE_PERIOD,
            tombstone_grace_period: defaults::TOMBSTONE_GRACE_PERIOD,
            leave_grace: defaults::LEAVE_GRACE,
        }
    }

    /// The address peers gossip to, once the socket is bound to `bound`.
    pub(super) fn advertised(&self, bound: SocketAddr) -> SocketAddr {
        match self.gossip_advertise {
            Some(a) if a.port() == 0 => SocketAddr::new(a.ip(), bound.port()),
            Some(a) => a,
            None => bound,
        }
    }

    pub(super) fn validate(&self) -> Result<(), MembershipError> {
        self.node.validate()?;
        let bad = |why: String| Err(MembershipError::Config(why));
        match self.gossip_advertise {
            None if self.gossip_addr.ip().is_unspecified() => {
                return bad(format!(
                    "gossip address {} is unspecified and no address to advertise was given",
                    self.gossip_addr
                ));
            }
            Some(a) if a.ip().is_unspecified() => {
                return bad(format!("advertised gossip address {a} is unspecified"));
            }
            _ => {}
        }
        if self.link_addr.ip().is_unspecified() || self.link_addr.port() == 0 {
            return bad(format!("link address {} cannot be dialed", self.link_addr));
        }
        if self.cluster_id.is_empty() || self.cluster_id.len() > 255 {
            return bad(format!("cluster id of {} bytes", self.cluster_id.len()));
        }
        if self.gossip_interval.is_zero() {
            return bad("zero gossip interval".to_owned());
        }
        if !(self.phi_threshold.is_finite() && self.phi_threshold > 0.0) {
            return bad(format!("phi threshold {}", self.phi_threshold));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(gossip: &str, advertise: Option<&str>) -> MembershipConfig {
        MembershipConfig {
            gossip_advertise: advertise.map(|a| a.parse().unwrap()),
            ..MembershipConfig::new(
                NodeId {
                    name: "a".into(),
                    incarnation: 1,
                },
                gossip.parse().unwrap(),
                "127.0.0.1:7400".parse().unwrap(),
                Secret::new("correct horse battery staple").unwrap(),
            )
        }
    }

    #[test]
    fn an_unspecified_gossip_address_needs_an_advertised_one() {
        assert!(config("0.0.0.0:0", None).validate().is_err());
        assert!(
            config("0.0.0.0:0", Some("0.0.0.0:7400"))
                .validate()
                .is_err()
        );
        assert!(config("0.0.0.0:0", Some("10.0.0.1:0")).validate().is_ok());
        assert!(config("127.0.0.1:0", None).validate().is_ok());
    }

    #[test]
    fn the_advertised_address_takes_the_bound_port_for_port_0() {
        let bound: SocketAddr = "0.0.0.0:7400".parse().unwrap();
        let at = |c: MembershipConfig| c.advertised(bound).to_string();
        assert_eq!(at(config("0.0.0.0:0", Some("10.0.0.1:0"))), "10.0.0.1:7400");
        assert_eq!(
            at(config("0.0.0.0:0", Some("10.0.0.1:9000"))),
            "10.0.0.1:9000"
        );
        let bound: SocketAddr = "127.0.0.1:7400".parse().unwrap();
        assert_eq!(config("127.0.0.1:0", None).advertised(bound), bound);
    }
}
