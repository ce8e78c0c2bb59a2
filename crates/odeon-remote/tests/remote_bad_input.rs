//! Bad input at the node level: nothing a peer or a stranger sends stops the node or
//! loses another peer's messages.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::time::Duration;

use common::*;
use odeon::{Actor, AskError, Context, Handler, Message};
use odeon_remote::transport::{self, LinkConfig};
use odeon_remote::wire::{self, NodeId, Traffic};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;

/// The same wire name as `Counter`, with one message `Counter` does not know: what a
/// node built from other code (or an attacker) might send.
pub struct Impostor;
impl Actor for Impostor {}
#[derive(Serialize, Deserialize)]
pub struct Extra;
impl Message for Extra {
    type Reply = ();
}
impl Handler<Extra> for Impostor {
    fn handle(&mut self, _: Extra, _: &mut Context<Self>) {}
}
odeon_remote::remote_actor!(Impostor = "test.Counter" { Extra = "test.Extra" });

fn served(a: &Member, b: &Member) -> odeon::ActorRef<Counter> {
    let c = a.system.spawn(Counter {
        total: 0,
        seen: Vec::new(),
    });
    a.node().register("c", &c).unwrap();
    b.system.block_on(b.node().lookup::<Counter>("c")).unwrap()
}

#[test]
fn an_unknown_message_type_is_rejected_with_an_error_and_the_link_stays_up() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let counter = served(&a, &b);
    let impostor = b.system.block_on(b.node().lookup::<Impostor>("c")).unwrap();
    let res = b.system.block_on(impostor.ask(Extra));
    assert!(
        matches!(&res, Err(AskError::Rejected(why)) if why.contains("test.Extra")),
        "{res:?}"
    );
    // The same link goes on carrying good traffic.
    assert_eq!(b.system.block_on(counter.ask(Add(3))), Ok(3));
}

#[test]
fn garbage_from_strangers_and_malformed_frames_from_a_peer_leave_the_node_serving() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let counter = served(&a, &b);
    counter.tell(Add(1)).unwrap();
    let addr = a.addr();
    b.system.block_on(async {
        // A stranger: random bytes, then an oversized length prefix, then a truncated frame.
        for junk in [
            vec![0x5a; 64],
            vec![0xff, 0xff, 0xff, 0xff, 1, 2, 3],
            vec![0, 0, 0, 10, 1, 2],
        ] {
            let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
            s.write_all(&junk).await.unwrap();
            drop(s);
        }
        // An authenticated peer that attaches and then sends a frame that is not
        // traffic: its link is closed, nothing else.
        let me = NodeId {
            name: "mallory".into(),
            incarnation: 1,
        };
        let mut link = transport::connect(addr, &me, &LinkConfig::new(secret()))
            .await
            .unwrap();
        let attach = wire::encode(&Traffic::Attach {
            listen: "127.0.0.1:9".parse().unwrap(),
            session: 1,
            known: None,
            quiet_ms: 1_000,
        })
        .unwrap();
        link.writer.send(&attach).await.unwrap();
        let answer = link.reader.next().await.unwrap().unwrap();
        assert!(matches!(
            wire::decode::<Traffic>(&answer),
            Ok(Traffic::Attached { .. })
        ));
        link.writer.send(&[0xde, 0xad, 0xbe, 0xef]).await.unwrap();
        // The node closes that link.
        let closed = tokio::time::timeout(Duration::from_secs(5), link.reader.next()).await;
        assert!(matches!(closed, Ok(Ok(None)) | Ok(Err(_))), "{closed:?}");
    });
    // Node A still serves B, and lost none of B's messages.
    for n in 2..=10 {
        counter.tell(Add(n)).unwrap();
    }
    assert_eq!(
        b.system.block_on(counter.ask(History)),
        Ok((1..=10).collect::<Vec<_>>())
    );
    // And still accepts new peers.
    let c = Member::start("c", &[a.addr()]);
    let from_c = c.system.block_on(c.node().lookup::<Counter>("c")).unwrap();
    assert_eq!(c.system.block_on(from_c.ask(Add(0))), Ok(55));
}

#[test]
fn a_node_with_the_wrong_secret_cannot_join() {
    let a = Member::start("a", &[]);
    let system = odeon::System::new();
    let res = system.block_on(
        odeon_remote::Node::builder("intruder")
            .secret(odeon_remote::Secret::new("not the cluster secret at all").unwrap())
            .seed(a.addr())
            .start(&system.handle()),
    );
    assert!(
        matches!(res, Err(odeon_remote::NodeError::Link { .. })),
        "{res:?}"
    );
    assert!(a.node().peers().is_empty());
}
