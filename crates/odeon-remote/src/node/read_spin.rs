//! A link's reader polling its socket for a short while before it waits for readiness
//! (`NodeBuilder::read_spin`, off by default; issue 19).
//!
//! Why: a reader that waits in `epoll` is woken by the kernel when the peer's reply
//! arrives, and on a guest whose idle vCPUs halt that wake-up costs ~35–40 µs. A reader
//! that is still polling when the reply lands reads it at once. Polling goes straight to
//! the socket (a non-blocking `read` on a duplicate of its descriptor): tokio's
//! readiness flag is only refreshed by its I/O driver, which does not run while this
//! thread polls, so `try_read` would answer "would block" without looking.
//!
//! When: only after a read that completed an ask of this node, or while an ask to the
//! peer is outstanding (a caller waits for it), so a server's reader, or a link that
//! carries tells, never polls. The budget bounds each poll; the thread runs nothing
//! else meanwhile (other links' frames and timers of the I/O runtime wait up to the
//! budget). TLS links never poll (their bytes are not frames until decrypted).
//!
//! Bytes read here go to the frame reader's buffer, ahead of anything read later, so
//! order and framing are unchanged. End of stream and errors stop the poll and are left
//! for the ordinary read to find again (both persist on the socket).

use std::io::Read;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use crate::transport::LinkReader;
use crate::wire::FrameReader;

/// Bytes taken per `read` while polling.
const SCRATCH: usize = 16 * 1024;

/// A plain TCP link's socket, for polling reads.
pub(super) struct ReadSpin {
    sock: std::net::TcpStream,
    budget: Duration,
    scratch: Vec<u8>,
}

/// How a poll ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Polled {
    /// Bytes arrived (now in the frame reader's buffer).
    Read(usize),
    /// Nothing within the budget: wait for readiness as usual.
    Nothing,
    /// End of stream or an error: left to the ordinary read.
    Stop,
}

impl ReadSpin {
    /// `None` when `budget` is zero, the link is TLS, or the descriptor cannot be
    /// duplicated (then the reader simply never polls).
    pub(super) fn new(reader: &LinkReader, budget: Duration) -> Option<Self> {
        if budget.is_zero() {
            return None;
        }
        let tcp = reader.tcp()?;
        let fd = match tcp.as_ref().as_fd().try_clone_to_owned() {
            Ok(fd) => fd,
            Err(e) => {
                tracing::debug!(error = %e, "no polling reads on this link");
                return None;
            }
        };
        // The duplicate shares the socket's open file description, which tokio made
        // non-blocking: a read on it never blocks.
        Some(Self {
            sock: std::net::TcpStream::from(fd),
            budget,
            scratch: vec![0; SCRATCH],
        })
    }

    /// Polls the socket for up to the budget, stopping at the first bytes.
    pub(super) fn poll(&mut self, into: &mut FrameReader<LinkReader>) -> Polled {
        let start = Instant::now();
        loop {
            match (&self.sock).read(&mut self.scratch) {
                Ok(0) => return Polled::Stop,
                Ok(n) => {
                    into.extend_buffer(&self.scratch[..n]);
                    return Polled::Read(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Polled::Stop,
            }
            if start.elapsed() >= self.budget {
                return Polled::Nothing;
            }
            // Let a thread woken onto this CPU run at once (the caller, or a worker of
            // this node): a poll that held the CPU for its whole slice made every other
            // hop of the round trip wait for it (see `odeon`'s `system/spin_wait.rs`).
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport;
    use std::io::Write;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn polling_reads_what_arrives_in_order_with_what_the_reader_reads_later() {
        rt().block_on(async {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = l.local_addr().unwrap();
            let peer = std::thread::spawn(move || std::net::TcpStream::connect(addr).unwrap());
            let (ours, _) = l.accept().await.unwrap();
            let mut theirs = peer.join().unwrap();
            let (reader, _writer) = transport::stream::tcp(ours);
            assert!(ReadSpin::new(&reader, Duration::ZERO).is_none(), "off");
            let mut spin = ReadSpin::new(&reader, Duration::from_millis(1)).unwrap();
            let mut frames = FrameReader::new(reader, 1024);
            // Nothing sent: the poll gives up after its budget.
            assert_eq!(spin.poll(&mut frames), Polled::Nothing);
            // One frame and half of the next, then the rest: the poll takes the first
            // bytes, the ordinary read the rest, and the frames come out whole, in order.
            theirs.write_all(&[0, 0, 0, 2, b'h', b'i', 0, 0]).unwrap();
            let guard = Instant::now() + Duration::from_secs(30);
            let mut got = 0;
            while got < 8 {
                match spin.poll(&mut frames) {
                    Polled::Read(n) => got += n,
                    Polled::Nothing => assert!(Instant::now() < guard, "bytes never came"),
                    Polled::Stop => panic!("the stream is open"),
                }
            }
            assert_eq!(frames.try_next().unwrap().unwrap(), &b"hi"[..]);
            assert!(frames.try_next().unwrap().is_none(), "half a frame");
            theirs.write_all(&[0, 3, b'y', b'o', b'u']).unwrap();
            let f = tokio::time::timeout(Duration::from_secs(30), frames.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            assert_eq!(f, &b"you"[..]);
            // The peer closes: the poll stops and the reader sees the clean end.
            drop(theirs);
            let guard = Instant::now() + Duration::from_secs(30);
            loop {
                match spin.poll(&mut frames) {
                    Polled::Stop => break,
                    Polled::Nothing => assert!(Instant::now() < guard, "end never seen"),
                    Polled::Read(n) => panic!("{n} bytes after the close"),
                }
            }
            let end = tokio::time::timeout(Duration::from_secs(30), frames.next())
                .await
                .unwrap()
                .unwrap();
            assert!(end.is_none());
        });
    }
}
