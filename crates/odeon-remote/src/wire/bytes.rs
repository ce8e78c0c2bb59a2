//! `Vec<u8>` fields written as one byte string rather than a sequence of bytes.
//!
//! postcard encodes both the same way (a varint length, then the bytes, one byte per
//! `u8`), so frames do not change; but serde writes and reads a sequence one element
//! at a time, through a call per byte, while a byte string is one copy. For a moving
//! actor's state (up to a GiB, in chunks of a MiB) that is the difference between a
//! copy and millions of calls on the thread that sends or reads it.

use serde::de::{SeqAccess, Visitor};
use serde::{Deserializer, Serializer};

/// Serializes `bytes` as a byte string (`#[serde(with = "super::bytes")]`).
pub(crate) fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bytes(bytes)
}

/// Deserializes a byte string (or, from a format that writes one, a sequence of bytes).
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    d.deserialize_byte_buf(ByteBuf)
}

struct ByteBuf;

impl<'de> Visitor<'de> for ByteBuf {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a byte string")
    }

    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }

    fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        // Bounded by what the format says it holds, and never more than a frame.
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
        while let Some(b) = seq.next_element::<u8>()? {
            out.push(b);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct AsSeq {
        n: u32,
        v: Vec<u8>,
    }

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct AsBytes {
        n: u32,
        #[serde(with = "super")]
        v: Vec<u8>,
    }

    /// Frames written before this change read the same, and the other way round.
    #[test]
    fn a_byte_string_has_the_encoding_of_a_sequence_of_bytes() {
        for len in [0usize, 1, 127, 128, 300, 70_000] {
            let v: Vec<u8> = (0..len).map(|i| (i * 7 % 256) as u8).collect();
            let seq = postcard::to_stdvec(&AsSeq { n: 9, v: v.clone() }).unwrap();
            let bytes = postcard::to_stdvec(&AsBytes { n: 9, v: v.clone() }).unwrap();
            assert_eq!(seq, bytes, "length {len}");
            let back: AsBytes = postcard::from_bytes(&seq).unwrap();
            assert_eq!(back.v, v);
            let back: AsSeq = postcard::from_bytes(&bytes).unwrap();
            assert_eq!(back.v, v);
        }
    }

    /// A self-describing format that writes bytes as a sequence still reads.
    #[test]
    fn a_sequence_of_bytes_reads_as_a_byte_string() {
        let json = serde_json::to_string(&AsSeq {
            n: 1,
            v: vec![1, 2, 3],
        })
        .unwrap();
        let back: AsBytes = serde_json::from_str(&json).unwrap();
        assert_eq!(back.v, vec![1, 2, 3]);
    }
}
