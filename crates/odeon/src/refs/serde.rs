//! `ActorRef<A>` on the wire, for actors declared remote (feature `serde`).
//!
//! The encoding belongs to the transport: a ref is written as the opaque bytes its
//! [`RefCodec`](super::remote::RefCodec) returns, so the core fixes no wire format.
//! Outside a codec (see [`with_codec`](super::remote::with_codec)) both directions fail
//! with a clear error instead of producing a ref nobody can resolve.

use std::any::TypeId;

use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::remote::{RemoteActor, current_codec};
use super::{ActorRef, Target};

const NO_CODEC: &str = "an ActorRef can only be (de)serialized by an odeon-remote node";

impl<A: RemoteActor> Serialize for ActorRef<A> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let wire = current_codec(|codec| {
            let codec = codec.ok_or_else(|| NO_CODEC.to_string())?;
            match &self.target {
                Target::Local(_) => codec.export(
                    A::TYPE_NAME,
                    A::interface(),
                    Some(Box::new(self.clone())),
                    None,
                ),
                Target::Remote(r) => {
                    codec.export(A::TYPE_NAME, A::interface(), None, Some(&r.endpoint))
                }
            }
        })
        .map_err(S::Error::custom)?;
        serializer.serialize_bytes(&wire)
    }
}

impl<'de, A: RemoteActor> Deserialize<'de> for ActorRef<A> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire: Vec<u8> = serde_bytes_like(deserializer)?;
        current_codec(|codec| {
            let codec = codec.ok_or_else(|| NO_CODEC.to_string())?;
            let any = codec.import(&wire, TypeId::of::<A>(), A::TYPE_NAME, A::interface())?;
            any.downcast::<ActorRef<A>>()
                .map(|r| *r)
                .map_err(|_| format!("the codec did not return an ActorRef of {}", A::TYPE_NAME))
        })
        .map_err(D::Error::custom)
    }
}

/// Reads what `serialize_bytes` wrote, from self-describing and compact formats alike.
pub(crate) fn serde_bytes_like<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<u8>, D::Error> {
    struct Bytes;
    impl<'de> serde::de::Visitor<'de> for Bytes {
        type Value = Vec<u8>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("the bytes of an actor ref")
        }
        fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
            Ok(v.to_vec())
        }
        fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
            Ok(v)
        }
        fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<Vec<u8>, S::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(256));
            while let Some(b) = seq.next_element::<u8>()? {
                out.push(b);
            }
            Ok(out)
        }
    }
    deserializer.deserialize_bytes(Bytes)
}
