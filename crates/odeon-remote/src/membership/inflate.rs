//! A bound on what an authentic gossip datagram may inflate to, checked before
//! chitchat decodes it.
//!
//! Chitchat carries a delta as a stream of blocks, each either raw or zstd-compressed
//! (up to 64 KiB once decompressed), and its decoder decompresses every block into one
//! buffer before it reads anything. Found by the `gossip` fuzz target: a 64 KB datagram
//! of 3,117 tiny compressed blocks, each 65,535 zero bytes, made the decoder allocate
//! about 465 MB and spend seconds of CPU. Only a sender that knows the cluster secret
//! gets this far (the datagram is authenticated first), but a member must not be able
//! to exhaust another's memory with one datagram. So the block headers are walked here
//! (cheaply, without decompressing) and the datagram is dropped when the sum of the
//! blocks' sizes once decompressed could exceed [`MAX_INFLATED`]. A legitimate delta
//! fits in one datagram of at most 64 KiB compressed, from blocks of at most 16 KiB
//! each before compression, far below the bound.
//!
//! Anything this walk cannot follow (bad magic, version, type, truncation) is left to
//! chitchat's decoder, which rejects it without inflating anything.

/// The most bytes the blocks of one gossip message may decompress to. Unit: bytes.
pub(crate) const MAX_INFLATED: u64 = 4 * 1024 * 1024;

/// The largest block chitchat decompresses (its buffer). Unit: bytes.
const MAX_BLOCK: u64 = u16::MAX as u64;

/// Why a message was dropped before chitchat decoded it.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("its delta would inflate to {at_least} bytes or more (at most {MAX_INFLATED} allowed)")]
pub(crate) struct TooLarge {
    /// The bound reached when the walk stopped.
    pub(crate) at_least: u64,
}

/// Checks the chitchat message `message` (the content of an authentic datagram).
pub(crate) fn check(message: &[u8]) -> Result<(), TooLarge> {
    let mut r = Reader(message);
    // Magic number (45139, little-endian), protocol version 0, message type.
    if r.u16() != Some(45_139) || r.u8() != Some(0) {
        return Ok(());
    }
    match r.u8() {
        // SynAck: a digest, then a delta.
        Some(1) if r.skip_digest().is_some() => r.check_stream(),
        // Ack: a delta.
        Some(2) => r.check_stream(),
        // Syn (a digest and the cluster id), BadCluster, or garbage: nothing inflates.
        _ => Ok(()),
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }

    /// A digest: a count, then per node its id (name, generation, gossip address) and
    /// three `u64`s.
    fn skip_digest(&mut self) -> Option<()> {
        for _ in 0..self.u16()? {
            let name = self.u16()?;
            self.take(usize::from(name) + 8)?;
            let ip = match self.u8()? {
                4 => 4,
                6 => 16,
                _ => return None,
            };
            self.take(ip + 2 + 3 * 8)?;
        }
        Some(())
    }

    /// The delta's blocks, until the end mark: 0 ends, 1 is a compressed block, 2 a raw
    /// one, each after its `u16` length.
    fn check_stream(&mut self) -> Result<(), TooLarge> {
        let mut inflated = 0u64;
        loop {
            let (Some(kind @ (1 | 2)), Some(len)) = (self.u8(), self.u16()) else {
                return Ok(());
            };
            let Some(block) = self.take(usize::from(len)) else {
                return Ok(());
            };
            inflated += if kind == 2 {
                u64::from(len)
            } else {
                decompressed_bound(block)
            };
            if inflated > MAX_INFLATED {
                return Err(TooLarge { at_least: inflated });
            }
        }
    }
}

/// What a compressed block may decompress to: the size its single zstd frame declares,
/// or chitchat's whole buffer when it declares none (or holds several frames).
fn decompressed_bound(block: &[u8]) -> u64 {
    let single_frame = zstd::zstd_safe::find_frame_compressed_size(block) == Ok(block.len());
    match zstd::zstd_safe::get_frame_content_size(block) {
        Ok(Some(size)) if single_frame => size.min(MAX_BLOCK),
        _ => MAX_BLOCK,
    }
}

/// A valid `Ack` whose delta inflates to more than `inflated` bytes: one node, then
/// `SetMaxVersion` ops, in compressed blocks of 65,535 bytes (about 100 bytes each).
/// Chitchat accepts it when nothing bounds it.
#[cfg(test)]
pub(crate) fn valid_bomb(inflated: usize) -> Vec<u8> {
    // Node op: tag 0, name "x", generation, IPv4 127.0.0.1:1, last gc, from version.
    let mut ops = vec![0, 1, 0, b'x'];
    ops.extend([0; 8]);
    ops.extend([4, 127, 0, 0, 1, 1, 0]);
    ops.extend([0; 16]);
    while ops.len() <= inflated {
        ops.push(2); // SetMaxVersion
        ops.extend(7u64.to_le_bytes());
    }
    let mut m = vec![0x53, 0xb0, 0, 2];
    for chunk in ops.chunks(u16::MAX as usize) {
        let block = zstd::bulk::compress(chunk, 3).expect("zstd compresses");
        m.push(1);
        m.extend((block.len() as u16).to_le_bytes());
        m.extend(block);
    }
    m.push(0);
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use chitchat::{ChitchatMessage, Deserializable, Serializable};

    /// An `Ack` whose delta holds `blocks` compressed blocks of 65,535 zero bytes each
    /// (`None`: as many as fit in a datagram).
    fn bomb(blocks: Option<usize>) -> Vec<u8> {
        let zeros = zstd::bulk::compress(&[0u8; 65_535], 19).unwrap();
        let room = crate::membership::auth::MAX_DATAGRAM - 1 - crate::membership::auth::TAG_LEN - 5;
        let blocks = blocks.unwrap_or(room / (3 + zeros.len()));
        let mut m = vec![0x53, 0xb0, 0, 2];
        for _ in 0..blocks {
            m.push(1);
            m.extend((zeros.len() as u16).to_le_bytes());
            m.extend(&zeros);
        }
        m.push(0);
        m
    }

    #[test]
    fn a_decompression_bomb_is_refused_before_chitchat_inflates_it() {
        // What the fuzzer found: a datagram-sized message inflating to ~120-195 MiB.
        let m = bomb(None);
        assert!(
            m.len() < crate::membership::auth::MAX_DATAGRAM,
            "fits in one datagram"
        );
        let err = check(&m).unwrap_err();
        assert!(err.at_least > MAX_INFLATED, "{err}");
        // Small deltas pass the check.
        assert_eq!(check(&bomb(Some(3))), Ok(()));
    }

    #[test]
    fn a_valid_delta_that_inflates_too_much_is_refused() {
        let m = valid_bomb(MAX_INFLATED as usize + 1);
        assert!(
            m.len() < 2_000,
            "a few hundred bytes on the wire: {}",
            m.len()
        );
        // Chitchat alone would accept it (and inflate it).
        assert!(matches!(
            ChitchatMessage::deserialize(&mut &m[..]),
            Ok(ChitchatMessage::Ack { .. })
        ));
        assert!(check(&m).is_err());
        assert_eq!(check(&valid_bomb(100_000)), Ok(()));
    }

    #[test]
    fn real_messages_pass() {
        let mut syn = Vec::new();
        ChitchatMessage::Syn {
            cluster_id: "odeon".into(),
            digest: Default::default(),
        }
        .serialize(&mut syn);
        assert_eq!(check(&syn), Ok(()));
        // A SynAck captured from a running membership (as in fuzz/corpus/gossip): a digest
        // of one node and a delta with its key-values.
        let syn_ack = include_bytes!("testdata/syn_ack.bin");
        assert_eq!(syn_ack[3], 1, "a SynAck");
        assert!(ChitchatMessage::deserialize(&mut &syn_ack[..]).is_ok());
        assert_eq!(check(syn_ack), Ok(()));
    }

    #[test]
    fn garbage_is_left_to_chitchat() {
        for m in [
            &[][..],
            &[0x53, 0xb0, 0, 1, 0xff],
            &[0x53, 0xb0, 0, 2, 1, 0xff, 0xff],
        ] {
            assert_eq!(check(m), Ok(()));
        }
    }
}
