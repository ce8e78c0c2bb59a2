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
pub mod membership;
pub mod transport;
pub mod wire;
