//! # odeon-remote: odeon across machines
//!
//! This crate is being built in layers (DESIGN.md §3). What exists today is the link
//! layer every later one stands on:
//!
//! - [`wire`]: bounded length-prefixed frames, the postcard codec and the versioned
//!   schema of what crosses a link;
//! - [`transport`]: TCP links that open only after a mutual challenge–response proof of
//!   the cluster secret (HMAC-SHA256; the secret never crosses the wire), and a
//!   listener that refuses bad input (wrong secret, garbage, oversized or truncated
//!   frames, silence) with a logged error while it keeps serving everyone else;
//! - [`membership`]: who is in the cluster and where their links listen, with
//!   failure detection and a small replicated key-value state per node (chitchat's
//!   gossip, every datagram authenticated with the cluster secret).
//!
//! ## Mutual TLS (optional)
//!
//! [`LinkConfig::with_tls`](transport::LinkConfig::with_tls) puts mutual TLS 1.3
//! (rustls) between TCP and the HMAC handshake, which then runs inside the TLS stream.
//! The two do different jobs: TLS gives the link's traffic confidentiality and
//! integrity (the HMAC handshake alone authenticates the opening but leaves every later
//! frame readable and alterable on the wire), and it ties both ends to certificates from
//! the cluster's CA; the HMAC handshake still proves membership of the cluster, so a
//! node needs both a certificate and the secret. A peer that fails TLS (no certificate,
//! one from another CA, plaintext, garbage) is refused, logged and counted like any
//! other. Certificate requirements: [`transport::tls`]. Without TLS, links are plain
//! TCP exactly as before.
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
pub mod interface;
pub mod membership;
mod node;
pub mod transport;
pub mod wire;

pub use node::{Node, NodeBuilder, NodeError, RegistryError, SpawnError, Spawnable};
pub use transport::Secret;
