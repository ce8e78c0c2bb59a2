//! # odeon-remote: odeon across machines
//!
//! A [`Node`] puts an odeon `System` in a cluster: refs to its actors work from other
//! nodes with the same `ActorRef<A>` type, `tell`, `ask`, `watch` and `stop`.
//!
//! ```
//! use odeon::{Actor, Context, Handler, Message, System};
//! use odeon_remote::{Node, Secret};
//! use serde::{Deserialize, Serialize};
//!
//! struct Greeter;
//! impl Actor for Greeter {}
//! #[derive(Serialize, Deserialize)]
//! struct Hello(String);
//! impl Message for Hello { type Reply = String; }
//! impl Handler<Hello> for Greeter {
//!     fn handle(&mut self, m: Hello, _: &mut Context<Self>) -> String { format!("hello, {}", m.0) }
//! }
//! odeon_remote::remote_actor!(Greeter = "doc.Greeter" { Hello = "doc.Hello" });
//!
//! let secret = || Secret::new("a secret of 16+ bytes").unwrap();
//! let (sys_a, sys_b) = (System::new(), System::new());
//! let a = sys_a.block_on(Node::builder("a").secret(secret()).start(&sys_a.handle())).unwrap();
//! let b = sys_b
//!     .block_on(Node::builder("b").secret(secret()).seed(a.listen_addr()).start(&sys_b.handle()))
//!     .unwrap();
//! a.register("greeter", &sys_a.spawn(Greeter)).unwrap();
//! let greeter = sys_b.block_on(b.lookup::<Greeter>("greeter")).unwrap();   // on node a
//! assert!(!greeter.is_local());
//! assert_eq!(sys_b.block_on(greeter.ask(Hello("b".into()))).unwrap(), "hello, b");
//! ```
//!
//! # Layers (DESIGN.md §3)
//! - [`Node`] (`node/`): the builder, one link per peer node with reconnect and
//!   backoff, remote refs, the registry, remote spawn, remote watch, node loss;
//! - [`interface`]: [`remote_actor!`] declares which messages an actor accepts from
//!   other nodes, under stable wire names, and checks at compile time that they
//!   serialize;
//! - [`wire`]: bounded length-prefixed frames, the postcard codec and the versioned
//!   schema of what crosses a link;
//! - [`transport`]: TCP links that open only after both sides proved they know the
//!   cluster secret with a password-authenticated key exchange (SPAKE2 and key
//!   confirmation: nothing on the wire lets anyone test guesses offline), and a
//!   listener that refuses bad input (wrong secret, garbage, oversized or truncated
//!   frames, silence) with a counter and a rate-limited warning while it keeps serving
//!   everyone else, at most a bounded number of handshakes at a time;
//! - [`membership`]: who is in the cluster and where their links listen, with
//!   failure detection and a small replicated key-value state per node (chitchat's
//!   gossip, every datagram authenticated with the cluster secret).
//!
//! ## Mutual TLS (optional)
//!
//! [`LinkConfig::with_tls`](transport::LinkConfig::with_tls) puts mutual TLS 1.3
//! (rustls) between TCP and the SPAKE2 handshake, which then runs inside the TLS stream.
//! The two do different jobs: TLS gives the link's traffic confidentiality and
//! integrity (the SPAKE2 handshake alone authenticates the opening but leaves every later
//! frame readable and alterable on the wire), and it ties both ends to certificates from
//! the cluster's CA; the SPAKE2 handshake still proves membership of the cluster, so a
//! node needs both a certificate and the secret. A peer that fails TLS (no certificate,
//! one from another CA, plaintext, garbage) is refused, logged and counted like any
//! other. Certificate requirements: [`transport::tls`]. Without TLS, links are plain
//! TCP exactly as before.
//!
//! The link layer on its own:
//!
//! ```
//! use odeon_remote::transport::{self, LinkConfig, Listener, Secret};
//! use odeon_remote::wire::NodeId;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let config = LinkConfig::new(Secret::new("correct horse battery staple").unwrap());
//! let a = NodeId { name: "a".into(), incarnation: 1 };
//! let b = NodeId { name: "b".into(), incarnation: 1 };
//! let mut listener = Listener::bind("127.0.0.1:0".parse().unwrap(), a.clone(), config.clone()).await.unwrap();
//! let link = transport::connect(listener.local_addr(), &b, &config).await.unwrap();
//! assert_eq!(link.peer, a);
//! let (accepted, _addr) = listener.next().await.unwrap();
//! assert_eq!(accepted.peer, b);
//! # });
//! ```

pub mod defaults;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod interface;
pub mod membership;
mod metrics;
mod node;
mod throttle;
pub mod transport;
pub mod wire;

pub use metrics::Metrics;
pub use node::{Node, NodeBuilder, NodeError, RegistryError, SpawnError, Spawnable};
pub use transport::Secret;
