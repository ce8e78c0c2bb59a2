//! The driver's side of faults (design §4) that the pure entry cannot see:
//! - **A send in the gap before a loss reaches the entries.** A node marks a peer
//!   lost (its link refuses frames) before it feeds the loss to every entry
//!   (`mobile_node_lost`). A frame an entry puts on that link meanwhile would be
//!   dropped; instead the entry learns the loss at once and the item goes back on its
//!   route, which now relocates (step 11) and holds it in order.
//! - **A ref whose birth node is gone.** A ref names the birth node; once that node
//!   is unknown or lost, a fresh entry cannot route to it. It relocates instead: a
//!   probe through every live node finds the host (design §4, "the birth node
//!   dies").

use std::sync::Arc;

use super::driver::{Driver, Mobile};
use super::entry::{Item, MobileEntry, Place};
use crate::node::NodeInner;
use crate::wire::{NodeId, QueuedMessage, Traffic};

impl NodeInner {
    /// `frame` for `to` was not sent. If `to` is lost (or no longer known), the entry
    /// learns it now and the item goes back on its route. Returns whether it was
    /// handled so.
    pub(crate) fn resend_after_loss(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        d: &mut Driver,
        to: &NodeId,
        frame: &Traffic<'static>,
    ) -> bool {
        let lost = self.known_peer(to).is_none_or(|p| p.is_lost());
        if !lost {
            return false;
        }
        let mut outs = d.entry.node_lost(to);
        // This node's own switch flush is not sent again: the loss ended that switch
        // (the route relocates). Messages and probes go on along the new route.
        let own_flush =
            matches!(frame, Traffic::Flush { origin, via: None, .. } if *origin == self.me);
        if !own_flush
            && let Some(item) = item_of_frame(&self.me, frame)
            && matches!(d.entry.place, Place::Away { .. } | Place::Prepared(_))
        {
            d.entry.route_push(item);
            outs.extend(d.entry.take_out());
        }
        self.perform(mobile, d, outs);
        true
    }

    /// A fresh entry for an actor whose birth node `wire.node` is unknown here (lost,
    /// or never met): it starts relocating. The probes are sent by the caller's first
    /// transition (`perform`).
    pub(crate) fn relocating_entry(
        &self,
        wire: &crate::wire::WireRef,
        peers: Vec<NodeId>,
    ) -> (MobileEntry, Vec<super::entry::Out>) {
        let mut entry = self.fresh_away(wire, peers);
        let birth = wire.node.clone();
        let outs = entry.node_lost(&birth);
        (entry, outs)
    }
}

/// The item an entry put in `frame` (one hop back), for frames that carry one.
fn item_of_frame(me: &NodeId, frame: &Traffic<'static>) -> Option<Item> {
    let msg = |seq: u64, message: &String, payload: &Vec<u8>, request: Option<u64>| {
        Item::Msg(QueuedMessage {
            message: message.clone(),
            payload: payload.clone(),
            origin: me.clone(),
            seq,
            reply: request.map(|r| (me.clone(), r)),
            hops: 0,
        })
    };
    Some(match frame {
        Traffic::MTell {
            seq,
            message,
            payload,
            ..
        } => msg(*seq, message, payload, None),
        Traffic::MAsk {
            seq,
            request,
            message,
            payload,
            ..
        } => msg(*seq, message, payload, Some(*request)),
        Traffic::Relay { msg, .. } => {
            let mut m = msg.clone();
            m.hops = m.hops.saturating_sub(1);
            Item::Msg(m)
        }
        Traffic::Flush {
            origin, nonce, via, ..
        } => Item::Flush {
            origin: origin.clone(),
            nonce: *nonce,
            via: via.clone().unwrap_or_else(|| origin.clone()),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use odeon::{Actor, Context, Handler, Message};
    use serde::{Deserialize, Serialize};

    use super::super::tests::fixture::{eventually, find, linked};
    use crate::MigrateExt;

    #[derive(Default, Serialize, Deserialize)]
    struct Notes(Vec<u32>);
    impl Actor for Notes {}
    #[derive(Serialize, Deserialize)]
    struct Note(u32);
    impl Message for Note {
        type Reply = ();
    }
    impl Handler<Note> for Notes {
        fn handle(&mut self, m: Note, _: &mut Context<Self>) {
            self.0.push(m.0);
        }
    }
    #[derive(Serialize, Deserialize)]
    struct Read;
    impl Message for Read {
        type Reply = Vec<u32>;
    }
    impl Handler<Read> for Notes {
        fn handle(&mut self, _: Read, _: &mut Context<Self>) -> Vec<u32> {
            self.0.clone()
        }
    }
    crate::mobile_actor!(Notes = "faults.Notes" { Note = "faults.Note", Read = "faults.Read" });

    /// Defect (b): a node marks a peer lost before the loss reaches its entries. A
    /// send in that gap used to be dropped on the dead link; now the entry learns the
    /// loss, relocates, and the message reaches the host.
    #[test]
    fn a_send_in_the_gap_before_a_loss_reaches_the_entries_is_not_lost() {
        let (systems, [h, t, x]) = linked(["gap-h", "gap-t", "gap-x"], |b| {
            b.lost_after(Duration::from_secs(30)).mobile::<Notes>()
        });
        let notes = systems[0].spawn(Notes::default());
        h.register("notes", &notes).unwrap();
        let from_x = find::<Notes>(&systems[2], &x, "notes");
        let moved = systems[0].block_on(notes.migrate_to(t.id()));
        assert!(moved.is_ok(), "{moved:?}");
        // x has sent nothing: its route is still the birth node h. x marks h lost
        // (its link refuses frames) but has not fed the loss to its entries yet.
        let peer = x.inner.known_peer(h.id()).expect("x knows h");
        let _ = peer.lose("test: the gap before the entries learn it", false);
        from_x.tell(Note(7)).expect("accepted");
        let got = eventually(|| {
            let got = systems[2]
                .block_on(from_x.ask(Read).timeout(Duration::from_secs(5)))
                .ok()?;
            (!got.is_empty()).then_some(got)
        });
        assert_eq!(
            got,
            Some(vec![7]),
            "the tell sent in the gap reached the host"
        );
    }
}
