//! A state larger than a frame (design §5; issue 14): step 2's offer in chunks.
//!
//! The source sends the offer with its `state` empty and `chunks` set, then the state
//! in that many `MigrateChunk` frames of at most [`CHUNK`] bytes (or half the node's
//! `max_frame`, if smaller), on the same link, in order. It does so only when the
//! state exceeds half of `max_frame`, so a small move is one frame, as before.
//!
//! The target keeps the offer aside until every chunk arrived, in order, and only
//! then runs step 3 with the whole state, as if it had come in one frame: nothing
//! of the move exists at the target before that (no entry is prepared, nothing is
//! held). A chunk out of order or for an offer it does not know (the link failed
//! mid-transfer and came back: frames written to the failed link are lost) drops the
//! partial offer and refuses the move (`Decode`); a source declared lost drops it
//! too. Either way the source resumes the actor with nothing lost (step 4's abort:
//! on the refusal, or on its timeout or the target's loss), as for any move that
//! does not happen.
//!
//! **Memory**: the source holds the encoded state once and the outbox at most one
//! more copy (the chunks queued), so at most twice the state; the target holds the
//! chunks received, then the assembled state (the same buffer), then the decoded
//! state. A chunked state is at most [`MAX_STATE`] bytes: a larger offer is refused
//! at its first frame, before anything is allocated for it.
//!
//! Not in the model (design §8: chunking is a transport detail of step 2: the model's
//! offer is one atomic frame, and here the target acts only once the whole offer is
//! there, so the protocol sees exactly that).

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::node::{NodeInner, Peer};
use crate::wire::{NodeId, Traffic, WireMigrateRefusal};

/// The largest chunk sent.
pub(crate) const CHUNK: usize = 1 << 20;

/// The largest state a target accepts in chunks (1 GiB).
pub(crate) const MAX_STATE: u64 = 1 << 30;

/// An offer whose state is still arriving.
struct Partial {
    offer: Traffic<'static>,
    chunks: u32,
    next: u32,
    state: Vec<u8>,
}

/// Offers waiting for their chunks, by (source, move id).
#[derive(Default)]
pub(crate) struct Incoming(Mutex<HashMap<(NodeId, u64), Partial>>);

impl Incoming {
    /// Drops what `lost` was sending.
    pub(crate) fn node_lost(&self, lost: &NodeId) {
        self.0.lock().retain(|(from, _), _| from != lost);
    }
}

/// The chunk size for a node whose frames are at most `max_frame` bytes.
pub(crate) fn chunk_size(max_frame: usize) -> usize {
    (max_frame / 2).clamp(1, CHUNK)
}

/// Splits `frame`'s state into chunks if it is larger than half of `max_frame`:
/// returns the offer to send first (its `state` emptied, `chunks` set) and the
/// chunks to send after it, in order. Any other frame is returned as it is.
pub(crate) fn split(
    mut frame: Traffic<'static>,
    max_frame: usize,
) -> (Traffic<'static>, Vec<Traffic<'static>>) {
    let Traffic::MigrateOffer {
        migration,
        state,
        chunks,
        ..
    } = &mut frame
    else {
        return (frame, Vec::new());
    };
    if *chunks != 0 || state.len() <= max_frame / 2 {
        return (frame, Vec::new());
    }
    let migration = *migration;
    let whole = std::mem::take(state);
    let parts: Vec<Traffic<'static>> = whole
        .chunks(chunk_size(max_frame))
        .enumerate()
        .map(|(index, bytes)| Traffic::MigrateChunk {
            migration,
            index: u32::try_from(index).unwrap_or(u32::MAX),
            bytes: bytes.to_vec(),
        })
        .collect();
    *chunks = u32::try_from(parts.len()).unwrap_or(u32::MAX);
    drop(whole);
    (frame, parts)
}

/// The offer `frame` with `state` and `chunks` in place of its own, detached from
/// the bytes it was decoded from (an offer borrows nothing); `None` for any other
/// frame.
fn restate(frame: Traffic<'_>, state: Vec<u8>, chunks: u32) -> Option<Traffic<'static>> {
    let Traffic::MigrateOffer {
        migration,
        actor,
        epoch,
        mailbox,
        high_water,
        watchers,
        links,
        names,
        ..
    } = frame
    else {
        return None;
    };
    Some(Traffic::MigrateOffer {
        migration,
        actor,
        epoch,
        state,
        mailbox,
        high_water,
        watchers,
        links,
        names,
        chunks,
    })
}

impl NodeInner {
    /// An offer announcing `chunks` chunks: kept aside until they arrived.
    pub(crate) fn offer_chunked(self: &Arc<Self>, peer: &Arc<Peer>, frame: Traffic<'_>) {
        let Traffic::MigrateOffer {
            migration, chunks, ..
        } = frame
        else {
            return;
        };
        let Some(offer) = restate(frame, Vec::new(), 0) else {
            return;
        };
        let partial = Partial {
            offer,
            chunks,
            next: 0,
            state: Vec::new(),
        };
        self.offers_incoming
            .0
            .lock()
            .insert((peer.id.clone(), migration), partial);
    }

    /// One chunk of an offer's state; the last one completes the offer, which then
    /// goes through step 3 as if it had come whole.
    pub(crate) fn receive_chunk(self: &Arc<Self>, peer: &Arc<Peer>, frame: Traffic<'_>) {
        let Traffic::MigrateChunk {
            migration,
            index,
            bytes,
        } = frame
        else {
            return;
        };
        let key = (peer.id.clone(), migration);
        let complete = {
            let mut incoming = self.offers_incoming.0.lock();
            let Some(p) = incoming.get_mut(&key) else {
                drop(incoming);
                return self.refuse_chunked(peer, migration, "a chunk of an unknown offer".into());
            };
            if index != p.next || (p.state.len() + bytes.len()) as u64 > MAX_STATE {
                let why = format!("chunk {index} where {} was due", p.next);
                incoming.remove(&key);
                drop(incoming);
                return self.refuse_chunked(peer, migration, why);
            }
            p.state.extend_from_slice(&bytes);
            p.next += 1;
            if p.next < p.chunks {
                return;
            }
            incoming.remove(&key)
        };
        let Some(Partial { offer, state, .. }) = complete else {
            return;
        };
        tracing::debug!(
            migration,
            bytes = state.len(),
            "a chunked offer is complete"
        );
        if let Some(whole) = restate(offer, state, 0) {
            self.receive_offer(peer, whole);
        }
    }

    fn refuse_chunked(&self, peer: &Peer, migration: u64, why: String) {
        tracing::warn!(peer = %peer.id, migration, %why, "chunked offer refused");
        let why = WireMigrateRefusal::Decode(format!("state chunks: {why}"));
        let _ = peer.send(&Traffic::MigrateRefused { migration, why });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::WireRef;

    fn offer(state: Vec<u8>) -> Traffic<'static> {
        Traffic::MigrateOffer {
            migration: 4,
            actor: WireRef {
                node: NodeId {
                    name: "a".into(),
                    incarnation: 1,
                },
                id: 1,
                token: 2,
                actor_type: "t".into(),
            },
            epoch: 0,
            state,
            mailbox: Vec::new(),
            high_water: Vec::new(),
            watchers: Vec::new(),
            links: Vec::new(),
            names: Vec::new(),
            chunks: 0,
        }
    }

    #[test]
    fn a_state_up_to_half_a_frame_is_sent_whole() {
        let (first, rest) = split(offer(vec![1; 500]), 1000);
        assert!(rest.is_empty());
        assert!(
            matches!(first, Traffic::MigrateOffer { chunks: 0, ref state, .. } if state.len() == 500)
        );
    }

    #[test]
    fn a_larger_state_goes_in_numbered_chunks_that_fit_a_frame_and_add_up() {
        let state: Vec<u8> = (0..2_501u32).map(|i| i as u8).collect();
        let (first, rest) = split(offer(state.clone()), 1000);
        assert!(
            matches!(first, Traffic::MigrateOffer { chunks: 6, ref state, .. } if state.is_empty())
        );
        let mut joined = Vec::new();
        for (i, c) in rest.iter().enumerate() {
            let Traffic::MigrateChunk {
                migration,
                index,
                bytes,
            } = c
            else {
                panic!("{c:?}");
            };
            assert_eq!((*migration, *index as usize), (4, i));
            assert!(bytes.len() <= 500);
            joined.extend_from_slice(bytes);
        }
        assert_eq!(joined, state);
    }

    /// The target's side of a transfer cut short: a chunk missing (frames lost with a
    /// failed link) drops the partial offer at once and prepares nothing; so does the
    /// source's loss. (The source then resumes on the refusal or its timeout, as for
    /// any move that does not happen: `tests/remote_mobility_faults.rs`.)
    #[test]
    fn a_missing_chunk_or_a_lost_source_drops_the_partial_offer_and_prepares_nothing() {
        use super::super::tests::fixture::{eventually, linked};

        let (_systems, [a, b]) = linked(["chunk-a", "chunk-b"], |b| b);
        let peer = eventually(|| b.inner.known_peer(a.id())).expect("b knows a");
        let pending = || b.inner.offers_incoming.0.lock().len();
        let (first, rest) = split(offer(vec![9; 3_000]), 1_000);
        assert!(rest.len() > 2);
        b.inner.offer_chunked(&peer, first.clone());
        b.inner.receive_chunk(&peer, rest[0].clone());
        assert_eq!(pending(), 1, "waiting for the other chunks");
        // Chunk 1 was lost with a link: chunk 2 comes next.
        b.inner.receive_chunk(&peer, rest[2].clone());
        assert_eq!(pending(), 0, "the partial offer is dropped");
        b.inner.receive_chunk(&peer, rest[1].clone());
        assert_eq!(pending(), 0, "a late chunk starts nothing");
        assert!(b.inner.mobile.lock().is_empty(), "nothing prepared");
        // The source lost mid-transfer.
        b.inner.offer_chunked(&peer, first);
        assert_eq!(pending(), 1);
        b.inner.offers_incoming.node_lost(a.id());
        assert_eq!(pending(), 0);
    }
}
