//! Entry points for the cargo-fuzz targets in `fuzz/` (feature `fuzzing`). Not an API:
//! hidden from the docs, and free to change with the decoders it reaches.
//!
//! Each function takes the fuzzer's bytes, runs one decoder of untrusted input, and
//! panics only when that decoder breaks one of its promises (a round trip that does not
//! hold, a frame above the limit); an error for bad input is the expected outcome.

use std::io;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

use chitchat::{ChitchatMessage, Deserializable};
use tokio::io::{AsyncRead, ReadBuf};

use crate::membership::auth::GossipKey;
use crate::transport::Secret;
use crate::wire::{self, FrameReader, Handshake, Traffic, WireError, WireRef};

/// The secret the gossip target seals and opens datagrams with.
pub const GOSSIP_SECRET: &str = "odeon fuzzing secret";

/// The handshake target: whatever parses the peer's handshake messages. The one line
/// to change when the handshake's messages change (then regenerate the seeds:
/// `examples/fuzz_seeds.rs`).
pub fn handshake(data: &[u8]) {
    let _ = round_trip::<Handshake>(data);
}

/// The traffic target: one frame of an open link, and an actor ref inside a message.
pub fn traffic(data: &[u8]) {
    // Traffic borrows from its frame, so it gets a round trip of its own.
    if let Ok(value) = wire::decode::<Traffic>(data) {
        let bytes = wire::encode(&value).expect("a decoded value encodes");
        let again = wire::decode::<Traffic>(&bytes).expect("an encoded value decodes");
        assert_eq!(again, value, "round trip");
    }
    if let Ok(r) = round_trip::<WireRef>(data) {
        let _ = r.node.validate();
    }
}

/// Decodes `data` as a `T`; whatever decodes must encode and decode to itself.
fn round_trip<T>(data: &[u8]) -> Result<T, WireError>
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let value = wire::decode::<T>(data)?;
    let again = wire::decode::<T>(&wire::encode(&value).expect("a decoded value encodes"))
        .expect("an encoded value decodes");
    assert_eq!(again, value, "round trip");
    Ok(value)
}

/// The gossip target. The bytes are tried twice: as a datagram off the network (which
/// must fail authentication, since the fuzzer does not know the key), and as the
/// message inside an authentic datagram, which is the only way bytes reach chitchat's
/// decoder (`membership/socket.rs`): sealed, opened, then decoded.
pub fn gossip(data: &[u8]) {
    // Derived once: Argon2id per input held the target to ~20 inputs a second.
    static KEY: std::sync::OnceLock<GossipKey> = std::sync::OnceLock::new();
    let key =
        KEY.get_or_init(|| GossipKey::new(&Secret::new(GOSSIP_SECRET).expect("a long secret")));
    let _ = key.open(data);
    let mut datagram = Vec::with_capacity(data.len() + 64);
    key.seal(data, &mut datagram);
    match key.open(&datagram) {
        Ok(message) => {
            assert_eq!(message, data, "a sealed message opens to itself");
            // As the socket does: the inflation bound, then chitchat's decoder.
            if crate::membership::inflate::check(message).is_ok() {
                let mut rest = message;
                let _ = ChitchatMessage::deserialize(&mut rest);
            }
        }
        Err(e) => assert!(
            data.is_empty() || datagram.len() > crate::membership::auth::MAX_DATAGRAM,
            "an authentic datagram was rejected: {e}"
        ),
    }
}

/// Seals a chitchat message as the gossip socket would, with [`GOSSIP_SECRET`].
pub fn seal_gossip(secret: &Secret, message: &[u8]) -> Vec<u8> {
    let mut datagram = Vec::new();
    GossipKey::new(secret).seal(message, &mut datagram);
    datagram
}

/// The message inside an authentic datagram, or `None`.
pub fn open_gossip(secret: &Secret, datagram: &[u8]) -> Option<Vec<u8>> {
    GossipKey::new(secret)
        .open(datagram)
        .ok()
        .map(<[u8]>::to_vec)
}

/// The frame target. Byte 0 picks how many bytes each read returns (1..=64, so frames
/// arrive split anywhere), byte 1 the frame limit (0..=255 bytes: small, so that limits
/// are hit); the rest is the stream.
pub fn frames(data: &[u8]) {
    let [chunk, max, stream @ ..] = data else {
        return;
    };
    let chunk = usize::from(*chunk % 64) + 1;
    let max = usize::from(*max);
    let mut reader = FrameReader::new(
        Chunked {
            data: stream,
            chunk,
        },
        max,
    );
    let mut consumed = 0;
    loop {
        let next = {
            let mut fut = pin!(reader.next());
            match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(r) => r,
                Poll::Pending => panic!("a frame reader over ready bytes was pending"),
            }
        };
        match next {
            Ok(Some(frame)) => {
                assert!(frame.len() <= max, "frame of {} above {max}", frame.len());
                consumed += wire::frame::PREFIX + frame.len();
                assert!(consumed <= stream.len(), "more frames than bytes");
            }
            Ok(None) => {
                assert_eq!(consumed, stream.len(), "a clean end left bytes unread");
                return;
            }
            Err(_) => return,
        }
    }
}

/// A stream that is always ready and returns at most `chunk` bytes per read.
struct Chunked<'a> {
    data: &'a [u8],
    chunk: usize,
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = self.chunk.min(self.data.len()).min(buf.remaining());
        let (head, tail) = self.data.split_at(n);
        buf.put_slice(head);
        self.data = tail;
        Poll::Ready(Ok(()))
    }
}
