//! The byte streams under a [`Link`](super::Link): plain TCP or TLS over TCP, as one
//! type each way.
//!
//! An enum rather than a boxed trait object: a plaintext link then costs exactly what it
//! did before TLS existed (owned TCP halves, static dispatch, no allocation), and the
//! variants stay private so the choice can change without touching the API.

use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
#[cfg(feature = "tls")]
use tokio::io::{ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
#[cfg(feature = "tls")]
use tokio_rustls::TlsStream;

/// The reading half of a link's connection (TCP, or TLS over TCP).
#[derive(Debug)]
pub struct LinkReader(Reader);

/// The writing half of a link's connection (TCP, or TLS over TCP).
#[derive(Debug)]
pub struct LinkWriter(Writer);

#[derive(Debug)]
enum Reader {
    Tcp(OwnedReadHalf),
    // TLS has one state for both directions, so its halves share it behind tokio's
    // split lock; TCP halves need none.
    #[cfg(feature = "tls")]
    Tls(ReadHalf<TlsStream<TcpStream>>),
}

#[derive(Debug)]
enum Writer {
    Tcp(OwnedWriteHalf),
    #[cfg(feature = "tls")]
    Tls(WriteHalf<TlsStream<TcpStream>>),
}

/// Splits a plain TCP connection.
pub(crate) fn tcp(stream: TcpStream) -> (LinkReader, LinkWriter) {
    let (r, w) = stream.into_split();
    (LinkReader(Reader::Tcp(r)), LinkWriter(Writer::Tcp(w)))
}

/// Splits an established TLS connection.
#[cfg(feature = "tls")]
pub(crate) fn tls(stream: TlsStream<TcpStream>) -> (LinkReader, LinkWriter) {
    let (r, w) = tokio::io::split(stream);
    (LinkReader(Reader::Tls(r)), LinkWriter(Writer::Tls(w)))
}

impl LinkReader {
    /// Whether the connection is encrypted with TLS.
    pub fn is_tls(&self) -> bool {
        match self.0 {
            Reader::Tcp(_) => false,
            #[cfg(feature = "tls")]
            Reader::Tls(_) => true,
        }
    }
}

impl LinkReader {
    /// The TCP read half of a plaintext link (`None` for TLS): a link's reader may
    /// poll its socket directly (`node/read_spin.rs`).
    pub(crate) fn tcp(&self) -> Option<&OwnedReadHalf> {
        match &self.0 {
            Reader::Tcp(r) => Some(r),
            #[cfg(feature = "tls")]
            Reader::Tls(_) => None,
        }
    }
}

impl LinkWriter {
    /// Whether the connection is encrypted with TLS.
    pub fn is_tls(&self) -> bool {
        match self.0 {
            Writer::Tcp(_) => false,
            #[cfg(feature = "tls")]
            Writer::Tls(_) => true,
        }
    }

    /// The TCP write half of a plaintext link, which any thread may write to without
    /// an async context (`try_write`); a TLS writer comes back unchanged.
    pub(crate) fn into_tcp(self) -> Result<OwnedWriteHalf, Self> {
        match self.0 {
            Writer::Tcp(w) => Ok(w),
            #[cfg(feature = "tls")]
            other => Err(Self(other)),
        }
    }
}

impl AsyncRead for LinkReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().0 {
            Reader::Tcp(r) => Pin::new(r).poll_read(cx, buf),
            #[cfg(feature = "tls")]
            Reader::Tls(r) => Pin::new(r).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for LinkWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match &mut self.get_mut().0 {
            Writer::Tcp(w) => Pin::new(w).poll_write(cx, buf),
            #[cfg(feature = "tls")]
            Writer::Tls(w) => Pin::new(w).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match &mut self.get_mut().0 {
            Writer::Tcp(w) => Pin::new(w).poll_write_vectored(cx, bufs),
            #[cfg(feature = "tls")]
            Writer::Tls(w) => Pin::new(w).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match &self.0 {
            Writer::Tcp(w) => w.is_write_vectored(),
            #[cfg(feature = "tls")]
            Writer::Tls(w) => w.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().0 {
            Writer::Tcp(w) => Pin::new(w).poll_flush(cx),
            #[cfg(feature = "tls")]
            Writer::Tls(w) => Pin::new(w).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().0 {
            Writer::Tcp(w) => Pin::new(w).poll_shutdown(cx),
            #[cfg(feature = "tls")]
            Writer::Tls(w) => Pin::new(w).poll_shutdown(cx),
        }
    }
}
