//! Length-prefixed frames with a bounded size: the lowest layer of a link.
//!
//! A frame is a 4-byte big-endian payload length, then the payload. The reader checks
//! the length against the limit *before* allocating, so an oversized or hostile prefix
//! costs nothing but an error. The writer batches: frames are appended to one buffer
//! and written with a single `write_all` per batch.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::WireError;

/// Bytes of the length prefix.
pub const PREFIX: usize = 4;

/// Reads frames from a byte stream.
#[derive(Debug)]
pub struct FrameReader<R> {
    io: R,
    buf: BytesMut,
    max_frame: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader that refuses payloads longer than `max_frame` bytes.
    pub fn new(io: R, max_frame: usize) -> Self {
        Self {
            io,
            buf: BytesMut::with_capacity(8 * 1024),
            max_frame,
        }
    }

    /// The same reader (keeping what it has buffered) with another frame limit.
    pub fn with_max_frame(mut self, max_frame: usize) -> Self {
        self.max_frame = max_frame;
        self
    }

    /// The stream it reads from.
    pub fn get_ref(&self) -> &R {
        &self.io
    }

    /// Bytes received and not yet returned as frames (part of the next frame). A
    /// caller that cancels [`next`](Self::next) (which is cancel-safe) can tell from
    /// it whether a long frame is still arriving.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next frame's payload; `Ok(None)` on a clean end of stream (between frames).
    ///
    /// # Errors
    /// [`WireError::Oversized`] for a prefix above the limit, [`WireError::Truncated`]
    /// when the stream ends inside a frame, [`WireError::Io`] for the socket's errors.
    pub async fn next(&mut self) -> Result<Option<Bytes>, WireError> {
        loop {
            if let Some(frame) = self.try_next()? {
                return Ok(Some(frame));
            }
            if self.io.read_buf(&mut self.buf).await? == 0 {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(WireError::Truncated {
                        buffered: self.buf.len(),
                    })
                };
            }
        }
    }
}

impl<R> FrameReader<R> {
    /// Appends bytes read from the stream by other means (a link's reader polling its
    /// socket directly): they come before anything read later.
    pub(crate) fn extend_buffer(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next frame if it has arrived whole, without reading: a reader that drains
    /// what one read brought in with it needs no timer or clock per frame.
    ///
    /// # Errors
    /// [`WireError::Oversized`] for a prefix above the limit.
    pub fn try_next(&mut self) -> Result<Option<Bytes>, WireError> {
        if self.buf.len() < PREFIX {
            return Ok(None);
        }
        let len = u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        if len > self.max_frame {
            return Err(WireError::Oversized {
                len,
                max: self.max_frame,
            });
        }
        if self.buf.len() >= PREFIX + len {
            self.buf.advance(PREFIX);
            return Ok(Some(self.buf.split_to(len).freeze()));
        }
        self.buf.reserve(PREFIX + len - self.buf.len());
        Ok(None)
    }
}

/// Writes frames to a byte stream, batching them.
#[derive(Debug)]
pub struct FrameWriter<W> {
    io: W,
    buf: BytesMut,
    max_frame: usize,
}

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    /// A writer that refuses to send payloads longer than `max_frame` bytes (the peer
    /// would refuse them).
    pub fn new(io: W, max_frame: usize) -> Self {
        Self {
            io,
            buf: BytesMut::with_capacity(8 * 1024),
            max_frame,
        }
    }

    /// The same writer (keeping its batch) with another frame limit.
    pub fn with_max_frame(mut self, max_frame: usize) -> Self {
        self.max_frame = max_frame;
        self
    }

    /// Appends one frame to the batch; nothing is written until [`flush`](Self::flush).
    ///
    /// # Errors
    /// [`WireError::Oversized`] if `payload` is above the limit; the batch is unchanged.
    pub fn push(&mut self, payload: &[u8]) -> Result<(), WireError> {
        if payload.len() > self.max_frame {
            return Err(WireError::Oversized {
                len: payload.len(),
                max: self.max_frame,
            });
        }
        self.buf.reserve(PREFIX + payload.len());
        self.buf.put_u32(payload.len() as u32);
        self.buf.put_slice(payload);
        Ok(())
    }

    /// Bytes batched and not yet written.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Writes the whole batch and flushes the stream.
    ///
    /// # Errors
    /// The socket's errors.
    pub async fn flush(&mut self) -> Result<(), WireError> {
        if !self.buf.is_empty() {
            self.io.write_all(&self.buf).await?;
            self.buf.clear();
        }
        self.io.flush().await?;
        Ok(())
    }

    /// Pushes one frame and flushes.
    ///
    /// # Errors
    /// As [`push`](Self::push) and [`flush`](Self::flush).
    pub async fn send(&mut self, payload: &[u8]) -> Result<(), WireError> {
        self.push(payload)?;
        self.flush().await
    }

    /// The stream it writes to.
    pub fn get_ref(&self) -> &W {
        &self.io
    }

    /// The stream, for shutting it down.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.io
    }

    /// The stream, and the bytes batched but not yet written (whole frames).
    pub fn into_parts(self) -> (W, BytesMut) {
        (self.io, self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    // The link's silence detector cancels `next` on a timer and looks at `buffered`:
    // a cancelled read keeps what it received, and a frame still arriving shows.
    #[test]
    fn a_cancelled_read_keeps_the_partial_frame() {
        rt().block_on(async {
            let (mut tx, rx) = tokio::io::duplex(64);
            let mut reader = FrameReader::new(rx, 1024);
            tx.write_all(&[0, 0, 0, 5, b'h', b'e']).await.unwrap();
            let cut = tokio::time::timeout(std::time::Duration::from_millis(50), reader.next());
            assert!(cut.await.is_err(), "the frame is not complete");
            assert_eq!(reader.buffered(), 6);
            tx.write_all(b"llo").await.unwrap();
            assert_eq!(&reader.next().await.unwrap().unwrap()[..], b"hello");
            assert_eq!(reader.buffered(), 0);
        });
    }

    #[test]
    fn frames_round_trip_in_order_whatever_the_read_sizes() {
        proptest!(ProptestConfig::with_cases(64), |(frames in proptest::collection::vec(
            proptest::collection::vec(any::<u8>(), 0..300), 0..20), chunk in 1usize..64)| {
            rt().block_on(async {
                let mut bytes = Vec::new();
                let mut w = FrameWriter::new(&mut bytes, 1024);
                for f in &frames { w.push(f).unwrap(); }
                w.flush().await.unwrap();
                // Deliver the stream in small pieces to exercise partial reads.
                let (client, mut server) = tokio::io::duplex(chunk);
                let writer = tokio::spawn(async move {
                    for piece in bytes.chunks(chunk) { server.write_all(piece).await.unwrap(); }
                });
                let mut r = FrameReader::new(client, 1024);
                let mut got = Vec::new();
                while let Some(f) = r.next().await.unwrap() { got.push(f.to_vec()); }
                writer.await.unwrap();
                prop_assert_eq!(got, frames);
                Ok(())
            })?;
        });
    }

    #[test]
    fn an_oversized_prefix_is_refused_before_allocating() {
        rt().block_on(async {
            let stream: &[u8] = &[0xff, 0xff, 0xff, 0xff, 1, 2, 3];
            let mut r = FrameReader::new(stream, 1 << 20);
            let err = r.next().await.unwrap_err();
            assert!(
                matches!(
                    err,
                    WireError::Oversized {
                        len: 0xffff_ffff,
                        max: 1048576
                    }
                ),
                "{err}"
            );
            assert!(
                r.buf.capacity() < 1 << 20,
                "no buffer was sized from the hostile prefix"
            );
        });
    }

    #[test]
    fn a_stream_cut_inside_a_frame_is_truncated_not_clean() {
        rt().block_on(async {
            let stream: &[u8] = &[0, 0, 0, 10, 1, 2, 3];
            let err = FrameReader::new(stream, 64).next().await.unwrap_err();
            assert!(matches!(err, WireError::Truncated { buffered: 7 }), "{err}");
            let cut_prefix: &[u8] = &[0, 0];
            let err = FrameReader::new(cut_prefix, 64).next().await.unwrap_err();
            assert!(matches!(err, WireError::Truncated { buffered: 2 }), "{err}");
        });
    }

    #[test]
    fn the_writer_refuses_what_the_peer_would_refuse() {
        let mut sink = Vec::new();
        let mut w = FrameWriter::new(&mut sink, 4);
        assert!(matches!(
            w.push(&[0; 5]),
            Err(WireError::Oversized { len: 5, max: 4 })
        ));
        assert_eq!(w.pending(), 0, "a refused frame leaves the batch unchanged");
        w.push(&[1, 2, 3, 4]).unwrap();
        assert_eq!(w.pending(), 8);
    }
}
